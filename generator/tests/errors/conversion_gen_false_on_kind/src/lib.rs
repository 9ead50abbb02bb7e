// A kind cannot opt out of its own conversion; a bad value on a type.
pub mod v1;
pub mod v2;
