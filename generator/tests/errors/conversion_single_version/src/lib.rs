// The conversion hub marker on a kind with one version.
pub mod v1;
