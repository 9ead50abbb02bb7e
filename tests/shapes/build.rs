//! The build.rs integration users copy: generate into OUT_DIR, include! in lib.rs.
// ANCHOR: build
fn main() -> Result<(), Box<dyn std::error::Error>> {
    kube_codegen::Config::new()
        .input("src/api")
        .out_dir(std::env::var("OUT_DIR")?)
        .single_file("kube_codegen.rs")
        .emit_rerun_if_changed(true)
        .write()?;
    Ok(())
}
// ANCHOR_END: build
