//! Groups and resources named as Kubernetes allows but Rust does not: a first label that
//! starts with a digit or is a keyword, plurals that are keywords or start with a digit.
//! Generated names for them are identifiers all the same (`_1password_v1`, `self_`,
//! `r#type`); this crate compiling with `#![deny(warnings)]` is the test.

pub mod crate_group;
pub mod digit_group;
pub mod self_group;
pub mod super_group;
