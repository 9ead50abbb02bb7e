//! +groupName=errors.example.com
//~^ WARNING has no kinds

// The version module exists, but the kind above is not inside it.
pub struct Helper;
