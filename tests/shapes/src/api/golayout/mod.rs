//! A group laid out as Go teams port it: one directory per version, doc.go's markers in
//! `v1/mod.rs`, the kinds in private file modules re-exported with `pub use`.

pub mod v1;
