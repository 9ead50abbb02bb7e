pub mod golayout;
pub mod v1;
