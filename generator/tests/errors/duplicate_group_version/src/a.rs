//! +groupName=errors.example.com
//! +versionName=v1
//~^^ WARNING has no kinds

pub struct Nothing;
