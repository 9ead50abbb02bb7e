// A kind in a private module that nothing re-exports: generated code could not name it.
pub mod v1;
