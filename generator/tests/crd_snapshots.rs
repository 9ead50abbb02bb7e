//! CRD snapshots of the fixture crates in `tests/fixtures/`.
//!
//! Each fixture is a tiny crate that is parsed, never compiled. Every generated file is
//! snapshotted as `<fixture>__<file name>`, and generation must be byte-for-byte stable.
//! Run `INSTA_UPDATE=always cargo test -p kube-codegen --test crd_snapshots` (or
//! `cargo insta review`) after an intended change, and read every changed snapshot.

use std::path::{Path, PathBuf};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};
use kube_codegen::{Config, Generated, GeneratedFile};

/// A config for a fixture: with its Cargo.toml metadata if it has a Cargo.toml.
fn config(name: &str) -> Config {
    let dir = PathBuf::from("tests/fixtures").join(name);
    if dir.join("Cargo.toml").exists() {
        Config::from_crate(&dir).expect("fixture Cargo.toml is valid")
    } else {
        Config::new().crate_dir(&dir)
    }
}

fn generate(name: &str) -> Generated {
    match config(name).generate() {
        Ok(g) => g,
        Err(e) => panic!("fixture `{name}` failed to generate:\n{e}"),
    }
}

/// Walk a schema and fail on anything a structural schema may not contain.
fn assert_structural(path: &str, s: &JSONSchemaProps) {
    assert!(s.ref_path.is_none(), "{path}: $ref");
    assert!(s.not.is_none(), "{path}: not");
    // allOf appears when a field and its type both bound a value (as controller-gen keeps
    // both); a structural schema allows only value validations in it.
    for (i, part) in s.all_of.iter().flatten().enumerate() {
        let bare = JSONSchemaProps {
            type_: None,
            description: None,
            default: None,
            nullable: None,
            title: None,
            properties: None,
            items: None,
            additional_properties: None,
            x_kubernetes_preserve_unknown_fields: None,
            x_kubernetes_embedded_resource: None,
            x_kubernetes_int_or_string: None,
            x_kubernetes_list_type: None,
            x_kubernetes_list_map_keys: None,
            x_kubernetes_map_type: None,
            x_kubernetes_validations: None,
            ..part.clone()
        };
        assert_eq!(
            &bare, part,
            "{path}.allOf[{i}]: more than value validations"
        );
    }
    let int_or_string = s.x_kubernetes_int_or_string == Some(true);
    let preserve = s.x_kubernetes_preserve_unknown_fields == Some(true);
    assert!(
        s.type_.is_some() || int_or_string || preserve,
        "{path}: node has no type, is not int-or-string and does not preserve unknown fields"
    );
    for (what, list) in [("oneOf", &s.one_of), ("anyOf", &s.any_of)] {
        for (i, alt) in list.iter().flatten().enumerate() {
            let only_required = alt
                == &JSONSchemaProps {
                    required: alt.required.clone(),
                    ..Default::default()
                };
            let int_or_string_pair = int_or_string
                && what == "anyOf"
                && [Some("integer"), Some("string")].contains(&alt.type_.as_deref())
                && alt
                    == &JSONSchemaProps {
                        type_: alt.type_.clone(),
                        ..Default::default()
                    };
            assert!(
                only_required || int_or_string_pair,
                "{path}.{what}[{i}]: {alt:?}"
            );
        }
    }
    // Rules the API server adds on top of structural-ness.
    assert!(
        s.unique_items != Some(true),
        "{path}: uniqueItems: true is forbidden"
    );
    if s.x_kubernetes_list_type.as_deref() == Some("set")
        && let Some(JSONSchemaPropsOrArray::Schema(item)) = &s.items
        && item.type_.as_deref() == Some("object")
    {
        assert_eq!(
            item.x_kubernetes_map_type.as_deref(),
            Some("atomic"),
            "{path}: set items must be atomic"
        );
    }
    if s.x_kubernetes_embedded_resource == Some(true) {
        assert_eq!(
            s.type_.as_deref(),
            Some("object"),
            "{path}: embedded resource must be an object"
        );
    }
    for (k, p) in s.properties.iter().flatten() {
        assert_structural(&format!("{path}.{k}"), p);
    }
    match &s.items {
        Some(JSONSchemaPropsOrArray::Schema(item)) => assert_structural(&format!("{path}[]"), item),
        Some(JSONSchemaPropsOrArray::Schemas(_)) => panic!("{path}: tuple items"),
        None => assert!(
            s.type_.as_deref() != Some("array"),
            "{path}: array without items"
        ),
    }
    if let Some(JSONSchemaPropsOrBool::Schema(v)) = &s.additional_properties {
        assert_structural(&format!("{path}{{}}"), v);
        assert!(
            s.properties.is_none(),
            "{path}: both properties and additionalProperties"
        );
    }
}

/// Snapshot every file of a fixture; check stability and structure on the way.
fn snapshot_fixture(name: &str, expected_files: &[&str]) {
    let first = generate(name);
    let second = generate(name);
    assert_eq!(
        first.files, second.files,
        "{name}: generating twice must give identical bytes"
    );

    // The CRDs; generated Rust (elsewhere) is not this test's business.
    let crd_dir = config(name).crd_output_dir();
    let crds: Vec<&GeneratedFile> = first
        .files
        .iter()
        .filter(|f| f.path.starts_with(&crd_dir))
        .collect();
    let names: Vec<String> = crds
        .iter()
        .map(|f| {
            assert_eq!(
                f.path.parent(),
                Some(crd_dir.as_path()),
                "{name}: {} is not directly in the CRD dir",
                f.path.display()
            );
            f.path.file_name().unwrap().to_string_lossy().into_owned()
        })
        .collect();
    assert_eq!(names, expected_files, "{name}: generated CRDs");

    for (file, file_name) in crds.iter().zip(&names) {
        assert!(
            file.contents.starts_with(kube_codegen::YAML_HEADER),
            "{file_name}: header"
        );
        assert!(
            file.contents.ends_with('\n'),
            "{file_name}: trailing newline"
        );
        let crd: CustomResourceDefinition = serde_yaml::from_str(&file.contents).expect("a CRD");
        for v in &crd.spec.versions {
            let schema = v
                .schema
                .as_ref()
                .and_then(|s| s.open_api_v3_schema.as_ref())
                .expect("schema");
            assert_structural(&format!("{}/{}", crd.spec.group, v.name), schema);
        }
        assert_eq!(
            crd.spec.versions.iter().filter(|v| v.storage).count(),
            1,
            "{file_name}: one storage version"
        );
        insta::assert_snapshot!(format!("{name}__{file_name}"), file.contents);
    }
}

#[test]
fn testresource() {
    snapshot_fixture("testresource", &["insujang.github.io_testresources.yaml"]);
}

#[test]
fn foo() {
    snapshot_fixture("foo", &["samplecontroller.k8s.io_foos.yaml"]);
    // Cargo.toml metadata moved the CRD dir.
    assert_eq!(
        config("foo").crd_output_dir(),
        Path::new("tests/fixtures/foo/config/crd")
    );
}

#[test]
fn multiversion() {
    snapshot_fixture("multiversion", &["stable.example.com_crontabs.yaml"]);
}

#[test]
fn enums() {
    snapshot_fixture("enums", &["enums.example.com_shapes.yaml"]);
}

#[test]
fn maps_flatten_embedded() {
    snapshot_fixture("maps_flatten_embedded", &["apps.example.com_apps.yaml"]);
}

#[test]
fn validation() {
    snapshot_fixture("validation", &["widgets.example.com_widgets.yaml"]);
}

/// controller-gen's markers beyond the basics, and other tools' markers beside them.
#[test]
fn markers_controller_gen() {
    snapshot_fixture(
        "markers_controller_gen",
        &["things.example.com_things.yaml"],
    );
    // Markers of other tools that kube-codegen knows (markers::FOREIGN: `+patchStrategy`,
    // `+kubebuilder:docs-gen:`, `+operator-sdk:`, code-generator's `+k8s:deepcopy-gen`) pass
    // without a word; `+default=ref(...)`, ours but not evaluated, is a warning.
    let g = generate("markers_controller_gen");
    let warned: Vec<(String, usize)> = g
        .warnings
        .iter()
        .map(|w| (w.marker.clone().unwrap_or_default(), w.loc.line))
        .collect();
    let expected = ["default=ref(DefaultPolicy)"];
    assert_eq!(
        warned.iter().map(|(m, _)| m.as_str()).collect::<Vec<_>>(),
        expected,
        "{warned:?}"
    );
    assert!(g.warnings.iter().all(|w| !w.is_error() && w.hint.is_some()));
}

#[test]
fn shapes() {
    snapshot_fixture("shapes", &["shapes.example.com_shapes.yaml"]);
}

/// The `spec` schema of the only version of a CRD, as JSON.
fn spec_schema(crd_yaml: &str) -> serde_json::Value {
    let crd: serde_json::Value = serde_yaml::from_str(crd_yaml).expect("a CRD");
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"].clone()
}

/// The `shapes` fixture is the Rust port of `shapes/controller-gen/api/v1/types.go`; its
/// schema equals controller-gen's for the Go original (`controller-gen/out/`, regenerated
/// by `controller-gen/regen.sh`) but for the differences listed here, each with its reason.
/// Each listed difference must still be there, so the list cannot go stale.
#[test]
fn shapes_match_controller_gen() {
    let dir = Path::new("tests/fixtures/shapes/controller-gen/out");
    let golden = std::fs::read_to_string(dir.join("shapes.example.com_shapes.yaml"))
        .expect("controller-gen's CRD (run tests/fixtures/shapes/controller-gen/regen.sh)");
    let generated = generate("shapes");
    let ours = generated
        .files
        .iter()
        .find(|f| f.path.ends_with("shapes.example.com_shapes.yaml"))
        .expect("the CRD");
    let theirs = spec_schema(&golden);
    let mut ours = spec_schema(&ours.contents);
    let props = ours["properties"].as_object_mut().expect("properties");
    // (pointer below `spec.properties`, the value controller-gen has there, why we differ)
    let differences: &[(&str, Option<serde_json::Value>, &str)] = &[
        (
            "/fixed/minItems",
            None,
            "serde reads exactly N items into `[T; N]`; Go's decoder drops extra items and zero-fills missing ones",
        ),
        ("/fixed/maxItems", None, "as minItems"),
        ("/fixedBytes/minItems", None, "as fixed"),
        ("/fixedBytes/maxItems", None, "as fixed"),
        (
            "/fixedBytes/items/format",
            None,
            "Rust's u8 maps to `format: int32` (README, Type mapping); Go's byte has no format",
        ),
        (
            "/version/description",
            None,
            "controller-gen drops the doc of a TextMarshaler type; we keep it",
        ),
    ];
    let mut props = serde_json::Value::Object(std::mem::take(props));
    for (pointer, golden_value, why) in differences {
        let (parent, key) = pointer.rsplit_once('/').expect("a pointer");
        let node = props
            .pointer_mut(parent)
            .and_then(|n| n.as_object_mut())
            .unwrap_or_else(|| panic!("{pointer}: no such node in our schema"));
        let ours_value = node.remove(key);
        assert!(
            ours_value.is_some() && ours_value != *golden_value,
            "{pointer} is no longer a difference ({why}): drop it from the list"
        );
        if let Some(v) = golden_value {
            node.insert(key.to_owned(), v.clone());
        }
    }
    ours["properties"] = props;
    let mut diffs = vec![];
    json_diff("", &ours, &theirs, &mut diffs);
    assert!(
        diffs.is_empty(),
        "our schema for the shapes fixture differs from controller-gen's for the Go original:\n{}",
        diffs.join("\n")
    );
}

/// Where two JSON values differ, as `pointer: ours != theirs` lines.
fn json_diff(
    at: &str,
    ours: &serde_json::Value,
    theirs: &serde_json::Value,
    out: &mut Vec<String>,
) {
    use serde_json::Value;
    match (ours, theirs) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for k in keys {
                let (x, y) = (a.get(k), b.get(k));
                match (x, y) {
                    (Some(x), Some(y)) => json_diff(&format!("{at}/{k}"), x, y, out),
                    _ => out.push(format!("{at}/{k}: ours {x:?} != controller-gen's {y:?}")),
                }
            }
        }
        _ if ours != theirs => out.push(format!("{at}: ours {ours} != controller-gen's {theirs}")),
        _ => {}
    }
}

/// The CRDs committed in sample-api are what the generator makes of it now.
#[test]
fn sample_api_crds_are_up_to_date() {
    let config = Config::from_crate("../sample-api").unwrap();
    let crd_dir = config.crd_output_dir();
    let mut report = config.check().unwrap();
    for list in [&mut report.stale, &mut report.missing, &mut report.extra] {
        list.retain(|p| p.starts_with(&crd_dir));
    }
    assert!(
        report.is_clean(),
        "sample-api/crds is out of date; run `cargo run -p kube-codegen -- generate sample-api`:\n{report}"
    );
}

/// kube-derive input (`tests/fixtures/kube-derive/` at the repository root): each CRD as
/// `generate` writes it, stable across runs. These follow kube-derive's `crd()` (the test
/// crate `tests/kube-derive` compares them with it), so they are not checked for structure:
/// kube-derive writes `{}` for a `serde_json::Value`.
#[test]
fn kube_derive() {
    for fixture in [
        "basic",
        "edge",
        "kube_complex_enum",
        "kube_enum",
        "kube_mixed_enum",
        "kube_schema",
        "kube_typed_subresource",
        "multi",
    ] {
        let dir = Path::new("../tests/fixtures/kube-derive").join(fixture);
        let config = Config::new().crate_dir(&dir).emit_rust(false);
        let first = config
            .generate()
            .unwrap_or_else(|e| panic!("{fixture}:\n{e}"));
        let second = config.generate().expect("generated once");
        assert_eq!(first.files, second.files, "{fixture}: stable");
        assert!(!first.files.is_empty(), "{fixture}: no CRD");
        for f in &first.files {
            let file_name = f.path.file_name().unwrap().to_string_lossy();
            insta::assert_snapshot!(format!("kube_derive_{fixture}__{file_name}"), f.contents);
        }
    }
}
