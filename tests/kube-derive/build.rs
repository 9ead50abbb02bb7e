//! The basic fixture's clientset, fake clientset, listers, informers, apply configurations
//! and deep copies, generated from its kube-derive kinds as they are (no marker) and
//! compiled against them (`src/lib.rs` includes them).
fn main() -> Result<(), Box<dyn std::error::Error>> {
    kube_codegen::Config::new()
        .crate_dir("../fixtures/kube-derive/basic")
        .input("src")
        .out_dir(std::env::var("OUT_DIR")?)
        .single_file("basic.rs")
        .types_prefix("crate::basic")
        .emit_rerun_if_changed(true)
        .write()?;
    Ok(())
}
