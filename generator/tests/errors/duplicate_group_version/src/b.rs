//! +groupName=errors.example.com
//! +versionName=v1
//~^^ WARNING has no kinds
//~^^^ ERROR declared twice

pub struct Nothing;
