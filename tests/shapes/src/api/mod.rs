pub mod common;
pub mod v1;
