// Two modules declare the same group and version.
pub mod a;
pub mod b;
