pub mod common;
pub mod embed;
pub mod golayout;
pub mod names;
pub mod v1;
