// A kind opts into conversion, but no webhook is configured for its CRD.
pub mod v1;
pub mod v2;
