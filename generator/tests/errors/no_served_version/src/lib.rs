// A CRD with no served version.
pub mod v1;
pub mod v2;
