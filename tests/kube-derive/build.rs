//! The basic and edge fixtures' clientset, fake clientset, listers, informers, apply configurations
//! and deep copies, generated from its kube-derive kinds as they are (no marker) and
//! compiled against them (`src/lib.rs` includes them).
fn main() -> Result<(), Box<dyn std::error::Error>> {
    for fixture in ["basic", "edge"] {
        kube_codegen::Config::new()
            .crate_dir(format!("../fixtures/kube-derive/{fixture}"))
            .input("src")
            // One directory each: a run prunes what it did not write in its own.
            .out_dir(format!("{}/{fixture}", std::env::var("OUT_DIR")?))
            .single_file("generated.rs")
            .types_prefix(format!("crate::{fixture}"))
            .emit_rerun_if_changed(true)
            .write()?;
    }
    Ok(())
}
