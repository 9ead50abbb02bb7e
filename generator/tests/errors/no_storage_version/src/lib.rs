// Two versions, neither marked as the storage version.
pub mod v1;
pub mod v2;
