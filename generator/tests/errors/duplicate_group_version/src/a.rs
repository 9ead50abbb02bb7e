//! +groupName=errors.example.com
//! +versionName=v1

pub struct Nothing;
