//! The `conversion` generator on `tests/fixtures/conversion` (Widget v1 -> hub v2, every
//! shape it handles): snapshots of the generated conversions and of the CRD's webhook
//! conversion, and cargo checks of the fixture compiled with its generated code: it builds
//! with the hand-written conversions, and without them the build fails with a message that
//! names the fields and the functions to write.

use std::path::{Path, PathBuf};
use std::process::Command;

use kube_codegen::Config;

// Shared with the other tests; `tree` is not needed here.
#[allow(dead_code)]
mod common;
use common::copy_dir;

const FIXTURE: &str = "tests/fixtures/conversion";

fn generated() -> kube_codegen::Generated {
    Config::from_crate(FIXTURE)
        .unwrap()
        .generate()
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn snapshots_of_the_conversions_and_the_crd() {
    let g = generated();
    let file = |end: &str| {
        g.files
            .iter()
            .find(|f| f.path.ends_with(end))
            .unwrap_or_else(|| panic!("no {end}"))
            .contents
            .clone()
    };
    insta::assert_snapshot!("conversion__conversion.rs", file("conversion.rs"));
    let crd = file("conversion.example.com_widgets.yaml");
    insta::assert_snapshot!("conversion__crd.yaml", crd);
    // caBundle is the base64 of the file `ca-bundle-from` names.
    let crd: serde_json::Value = serde_yaml::from_str(&crd).unwrap();
    let ca = std::fs::read(Path::new(FIXTURE).join("ca.crt")).unwrap();
    let bundle: k8s_openapi::ByteString = serde_json::from_value(
        crd["spec"]["conversion"]["webhook"]["clientConfig"]["caBundle"].clone(),
    )
    .unwrap();
    assert_eq!(bundle.0, ca);
    // The spoke is not the storage version; the hub is.
    let storage: Vec<(&str, bool)> = crd["spec"]["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["name"].as_str().unwrap(), v["storage"].as_bool().unwrap()))
        .collect();
    assert_eq!(storage, [("v2", true), ("v1", false)]);
}

#[test]
fn kinds_not_opted_in_get_no_conversion_module_and_no_webhook() {
    // The multiversion fixture has two versions and no hub marker.
    let g = Config::new()
        .crate_dir("tests/fixtures/multiversion")
        .generate()
        .unwrap();
    assert!(!g.files.iter().any(|f| f.path.ends_with("conversion.rs")));
    let crd = &g
        .files
        .iter()
        .find(|f| f.path.extension().is_some_and(|e| e == "yaml"))
        .unwrap()
        .contents;
    assert!(!crd.contains("conversion:"), "{crd}");
}

/// The fixture with its generated code as a crate, checked by cargo; `edit` changes the
/// copy first. Shares the target directory of tests/kubernetes_versions.rs (same
/// dependencies), so the dependencies are built once.
fn check(name: &str, edit: impl FnOnce(&Path)) -> std::process::Output {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("kubernetes_versions");
    let krate = root.join(name);
    let _ = std::fs::remove_dir_all(&krate);
    copy_dir(&Path::new(FIXTURE).join("src"), &krate.join("src"));
    std::fs::copy(Path::new(FIXTURE).join("ca.crt"), krate.join("ca.crt")).unwrap();
    std::fs::copy(
        Path::new(FIXTURE).join("Cargo.toml"),
        krate.join("Cargo.toml"),
    )
    .unwrap();
    Config::from_crate(&krate).unwrap().write().unwrap();
    let lib = krate.join("src/lib.rs");
    let text = std::fs::read_to_string(&lib).unwrap();
    std::fs::write(
        &lib,
        format!("{text}\n#[rustfmt::skip]\n#[deny(missing_docs)]\npub mod generated;\n"),
    )
    .unwrap();
    edit(&krate);
    let workspace = std::fs::canonicalize("..").unwrap();
    let runtime = workspace.join("runtime");
    let manifest = std::fs::read_to_string(krate.join("Cargo.toml")).unwrap();
    std::fs::write(
        krate.join("Cargo.toml"),
        format!(
            "{manifest}\n[dependencies]\n\
             kube-codegen-runtime = {{ path = {runtime:?}, features = [\"fake\"] }}\n\
             k8s-openapi = {{ version = \"0.29\", default-features = false, features = [\"std\", \"v1_37\"] }}\n\
             kube = {{ version = \"5\", default-features = false, features = [\"client\", \"rustls-tls\", \"ring\", \"runtime\"] }}\n\
             serde = {{ version = \"1\", features = [\"derive\"] }}\n\
             serde_json = \"1\"\n\n[workspace]\n",
        ),
    )
    .unwrap();
    std::fs::copy(workspace.join("Cargo.lock"), krate.join("Cargo.lock")).unwrap();
    Command::new(env!("CARGO"))
        .args(["check", "--offline", "--quiet"])
        .current_dir(&krate)
        .env("CARGO_TARGET_DIR", root.join("target"))
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap()
}

#[test]
fn generated_conversions_compile_and_missing_manual_ones_are_named_by_the_compiler() {
    // With the hand-written conversions: it builds, every shape included.
    let out = check("conversion-complete", |_| {});
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Without them: the build fails at the generated call, naming fields and functions.
    let out = check("conversion-missing", |krate| {
        let lib = krate.join("src/lib.rs");
        let text = std::fs::read_to_string(&lib).unwrap();
        std::fs::write(&lib, text.replace("mod manual;", "")).unwrap();
    });
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "must not build");
    for needle in [
        "Widget v1 needs hand-written conversions to and from its hub v2: implement `WidgetV1ManualConversion` for `v1::Widget`",
        "write `fn widget_spec_legacy_flag_to_hub`: `WidgetSpec.legacy_flag` (v1) has no field of that name and type in the hub's `WidgetSpec` (v2)",
        "write `fn widget_spec_replicas_from_hub`",
        "write `fn size_to_hub`: variant `Size::Medium` has no variant of that name and shape in `Size` (v2)",
        "write `fn owner_to_hub`: `Owner` of v2 is marked `+k8s:conversion-gen=false`",
    ] {
        assert!(stderr.contains(needle), "missing {needle:?} in:\n{stderr}");
    }

    // One function left out: rustc names it.
    let out = check("conversion-one-missing", |krate| {
        let manual = krate.join("src/manual.rs");
        let text = std::fs::read_to_string(&manual).unwrap();
        let start = text.find("    fn widget_spec_legacy_flag_to_hub").unwrap();
        let end = start + text[start..].find("{}\n").unwrap() + 3;
        std::fs::write(&manual, format!("{}{}", &text[..start], &text[end..])).unwrap();
    });
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "must not build");
    assert!(
        stderr
            .contains("not all trait items implemented, missing: `widget_spec_legacy_flag_to_hub`"),
        "{stderr}"
    );
}
