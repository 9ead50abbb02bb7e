//! Compiling an imported crate in a test: its Cargo.toml names crates.io versions; here it
//! gets the workspace's runtime and the dependency set kubernetes_versions.rs builds, so the
//! import tests and that one share their builds.

use std::path::Path;

/// Replace the crate's Cargo.toml (its `generate` input is `input`) with one on the
/// workspace's runtime, with the workspace's Cargo.lock beside it.
pub fn use_workspace_runtime(krate: &Path, input: &str) {
    let workspace = std::fs::canonicalize("..").unwrap();
    let runtime = workspace.join("runtime");
    std::fs::write(
        krate.join("Cargo.toml"),
        format!(
            "[package]\nname = \"imported\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\n\
             [lib]\ndoctest = false\n\n\
             [package.metadata.kube-codegen]\ninput = [{input:?}]\n\n\
             [dependencies]\n\
             kube-codegen-runtime = {{ path = {runtime:?}, features = [\"fake\"] }}\n\
             k8s-openapi = {{ version = \"0.29\", default-features = false, features = [\"std\", \"v1_37\"] }}\n\
             kube = {{ version = \"5\", default-features = false, features = [\"client\", \"rustls-tls\", \"ring\", \"runtime\"] }}\n\
             serde = {{ version = \"1\", features = [\"derive\"] }}\n\
             serde_json = \"1\"\n\n[workspace]\n",
        ),
    )
    .unwrap();
    std::fs::copy(workspace.join("Cargo.lock"), krate.join("Cargo.lock")).unwrap();
}
