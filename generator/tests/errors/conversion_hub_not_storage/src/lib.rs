// The conversion hub marker on a version that is not the storage version.
pub mod v1;
pub mod v2;
