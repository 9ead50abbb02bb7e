// All versions of a kind share one CRD, so one scope.
pub mod v1;
pub mod v2;
