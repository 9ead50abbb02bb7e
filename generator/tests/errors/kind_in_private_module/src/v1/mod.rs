//! +groupName=errors.example.com

mod types;
