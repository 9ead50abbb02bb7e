pub mod common;
pub mod golayout;
pub mod v1;
