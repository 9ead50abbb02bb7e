pub mod common;
pub mod embed;
pub mod golayout;
pub mod v1;
