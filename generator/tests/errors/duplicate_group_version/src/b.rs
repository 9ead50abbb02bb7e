//! +groupName=errors.example.com
//! +versionName=v1
//~^^ ERROR declared twice

pub struct Nothing;
