pub mod insujang;
pub mod samplecontroller;
