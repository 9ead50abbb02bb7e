//! controller-gen's `crd:` options (issue 28, class 5), each settable in the crate's Cargo
//! metadata, on the command line and in `Config`, with the same CRD from each, and taken by
//! `import go` as a Go project's Makefile writes them: `maxDescLen` (0 writes no
//! `description` key at all), `generateEmbeddedObjectMeta`, `allowDangerousTypes`,
//! `headerFile` and `year` (the header as YAML comments at the top of every CRD file, as
//! controller-gen v0.23.0's `crd` generator writes `headerFile` before the document), and
//! `ignoreUnexportedFields` (an `import go` option: Rust fields are serialized whatever
//! their visibility).

use std::path::{Path, PathBuf};

use kube_codegen::{Config, CrdOptions, GoImportOptions, GoPackageInput, KubernetesVersion};

const LIB: &str = "//! +groupName=options.example.com\n//! +versionName=v1\n\n\
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;\n\
    use kube::core::TypeMeta;\nuse serde::{Deserialize, Serialize};\n\n\
    /// A thing.\n/// +genclient\n/// +kubebuilder:object:root=true\n\
    #[derive(Clone, Serialize, Deserialize)]\npub struct Thing {\n    #[serde(flatten)]\n    \
    pub types: TypeMeta,\n    pub metadata: ObjectMeta,\n    pub spec: ThingSpec,\n}\n\n\
    /// The spec.\n#[derive(Clone, Serialize, Deserialize)]\npub struct ThingSpec {\n    \
    /// A ratio.\n    pub ratio: f64,\n    \
    /// The pod to run.\n    \
    /// +kubebuilder:validation:XValidation:rule=\"has(self.metadata.labels)\",message=\"labels\"\n    \
    pub template: k8s_openapi::api::core::v1::PodTemplateSpec,\n}\n";

const HEADER: &str = "# Copyright YEAR The Authors.\n#\n# SPDX-License-Identifier: Apache-2.0\n";

/// A crate of [`LIB`] with `metadata` lines, and the header file beside it.
fn krate(metadata: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("thing");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"thing\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
             [package.metadata.kube-codegen]\n{metadata}"
        ),
    )
    .unwrap();
    std::fs::write(dir.join("src/lib.rs"), LIB).unwrap();
    std::fs::write(dir.join("header.yaml.txt"), HEADER).unwrap();
    (tmp, dir)
}

/// The CRD file's text `config` generates.
fn crd_text(config: Config) -> Result<String, String> {
    let generated = config
        .emit_rust(false)
        .generate()
        .map_err(|e| e.to_string())?;
    Ok(generated
        .files
        .iter()
        .find(|f| f.path.extension().is_some_and(|e| e == "yaml"))
        .expect("a CRD")
        .contents
        .clone())
}

/// What every way of setting the options must give.
fn check_options_applied(yaml: &str) {
    assert!(
        yaml.starts_with(&format!(
            "{}\n# Copyright 2026 The Authors.\n#\n# SPDX-License-Identifier: Apache-2.0\n",
            kube_codegen::YAML_HEADER
        )),
        "{yaml}"
    );
    // maxDescLen=0: no description key anywhere (the pod template's thousands included).
    assert!(!yaml.contains("description"), "{yaml}");
    let crd: serde_json::Value =
        serde_json::to_value(serde_yaml::from_str::<serde_yaml::Value>(yaml).unwrap()).unwrap();
    let spec = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"];
    // allowDangerousTypes (kube-codegen's default): the float is a number.
    assert_eq!(spec["ratio"]["type"], "number");
    // generateEmbeddedObjectMeta: the template's metadata has the fields a rule may read.
    assert_eq!(
        spec["template"]["properties"]["metadata"]["properties"]["labels"]["type"],
        "object"
    );
}

const METADATA: &str = "max-description-len = 0\ngenerate-embedded-object-meta = true\n\
    crd-header-file = \"header.yaml.txt\"\ncrd-header-year = \"2026\"\n";

#[test]
fn crd_options_in_cargo_metadata() {
    let (_tmp, dir) = krate(METADATA);
    check_options_applied(&crd_text(Config::from_crate(&dir).unwrap()).unwrap());
    // allow-dangerous-types = false refuses the float at its field, as controller-gen
    // without crd:allowDangerousTypes=true.
    let (_tmp, dir) = krate(&format!("{METADATA}allow-dangerous-types = false\n"));
    let err = crd_text(Config::from_crate(&dir).unwrap()).expect_err("a float");
    assert!(err.contains("lib.rs:23:"), "{err}");
    assert!(err.contains("allow-dangerous-types = false"), "{err}");
}

#[test]
fn crd_options_in_config() {
    let (_tmp, dir) = krate("");
    let by_methods = crd_text(
        Config::from_crate(&dir)
            .unwrap()
            .max_description_len(0)
            .generate_embedded_object_meta(true)
            .crd_header_file("header.yaml.txt")
            .crd_header_year("2026"),
    )
    .unwrap();
    check_options_applied(&by_methods);
    // As a Makefile writes them.
    let options: CrdOptions = "crd:crdVersions=v1,maxDescLen=0,generateEmbeddedObjectMeta=true,allowDangerousTypes=true,headerFile=header.yaml.txt,year=2026"
        .parse()
        .unwrap();
    let by_options = crd_text(Config::from_crate(&dir).unwrap().crd_options(&options)).unwrap();
    assert_eq!(by_options, by_methods);
    let err = crd_text(
        Config::from_crate(&dir)
            .unwrap()
            .allow_dangerous_types(false),
    )
    .expect_err("a float");
    assert!(err.contains("a float"), "{err}");
    // Options controller-gen does not have, or values it would not take, are refused.
    for bad in [
        "crd:crdVersions=v1beta1",
        "crd:maxDescLen=x",
        "crd:trivialVersions=true",
    ] {
        assert!(bad.parse::<CrdOptions>().is_err(), "{bad}");
    }
}

/// The command line gives the CRD the metadata gives; a header line that is not a YAML
/// comment is an error at its line, and nothing is written.
#[test]
fn crd_options_on_the_command_line() {
    let (tmp, dir) = krate("");
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_kube-codegen"))
            .args(args)
            .current_dir(tmp.path())
            .output()
            .unwrap()
    };
    let out = run(&[
        "generate",
        "thing",
        "--generators",
        "crd",
        "--max-description-len",
        "0",
        "--generate-embedded-object-meta",
        "--crd-header-file",
        "thing/header.yaml.txt",
        "--crd-header-year",
        "2026",
        "--allow-dangerous-types",
        "true",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written =
        std::fs::read_to_string(dir.join("crds/options.example.com_things.yaml")).unwrap();
    check_options_applied(&written);
    let (_tmp2, meta_dir) = krate(METADATA);
    assert_eq!(
        written,
        crd_text(Config::from_crate(&meta_dir).unwrap()).unwrap()
    );

    let out = run(&["generate", "thing", "--allow-dangerous-types", "false"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("a float"));

    std::fs::write(dir.join("go-header.txt"), "/*\nCopyright YEAR.\n*/\n").unwrap();
    std::fs::remove_dir_all(dir.join("crds")).unwrap();
    let out = run(&[
        "generate",
        "thing",
        "--crd-header-file",
        "thing/go-header.txt",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("go-header.txt:1:1"), "{stderr}");
    assert!(stderr.contains("not a YAML comment"), "{stderr}");
    assert!(!dir.join("crds").exists());
}

const GO: &str = "// +groupName=options.example.com\npackage v1\n\n\
    import metav1 \"k8s.io/apimachinery/pkg/apis/meta/v1\"\n\n\
    // +kubebuilder:object:root=true\ntype Thing struct {\n\
    \tmetav1.TypeMeta `json:\",inline\"`\n\
    \tmetav1.ObjectMeta `json:\"metadata,omitempty\"`\n\
    \tSpec ThingSpec `json:\"spec\"`\n}\n\n\
    // ThingSpec is the spec.\ntype ThingSpec struct {\n\
    \t// Ratio is a ratio.\n\
    \tRatio float64 `json:\"ratio\"`\n\
    \t// cache has a JSON tag but is unexported.\n\
    \tcache string `json:\"cache,omitempty\"`\n\
    \tlock string\n}\n";

/// `import go` of [`GO`] with `options`; the imported crate's Cargo.toml and CRD text.
fn import(
    options: &str,
) -> (
    tempfile::TempDir,
    kube_codegen::GoImported,
    String,
    Result<String, String>,
) {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("header.yaml.txt"), HEADER).unwrap();
    let out = tmp.path().join("ported");
    let dir = tmp.path().join("v1");
    let mut crd: CrdOptions = options.parse().unwrap();
    if let Some(h) = &crd.header_file {
        crd.header_file = Some(tmp.path().join(h));
    }
    let imported = kube_codegen::import_go(
        &[GoPackageInput {
            files: vec![(dir.join("types.go"), GO.to_owned())],
            dir,
            import_path: Some("options.example.com/api/v1".into()),
        }],
        &GoImportOptions {
            out: out.clone(),
            crate_name: "ported".into(),
            kubernetes: KubernetesVersion::NEWEST,
            runtime: kube_codegen::RuntimeSource::registry(),
            crd,
            conversion_hub: false,
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    imported.write().unwrap();
    let cargo = std::fs::read_to_string(out.join("Cargo.toml")).unwrap();
    let crd = crd_text(Config::from_crate(&out).unwrap());
    (tmp, imported, cargo, crd)
}

fn spec_of(yaml: &str) -> serde_json::Value {
    let crd: serde_json::Value =
        serde_json::to_value(serde_yaml::from_str::<serde_yaml::Value>(yaml).unwrap()).unwrap();
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        .clone()
}

#[test]
fn import_go_takes_crd_options_into_the_crates_metadata() {
    let (_tmp, imported, cargo, crd) = import(
        "crd:crdVersions=v1,maxDescLen=0,allowDangerousTypes=true,headerFile=header.yaml.txt,year=2026",
    );
    assert!(cargo.contains("max-description-len = 0\n"), "{cargo}");
    assert!(
        cargo.contains("crd-header-file = \"../header.yaml.txt\"\n"),
        "{cargo}"
    );
    assert!(cargo.contains("crd-header-year = \"2026\"\n"), "{cargo}");
    assert!(!cargo.contains("allow-dangerous-types"), "{cargo}");
    let crd = crd.unwrap();
    assert!(crd.contains("\n# Copyright 2026 The Authors.\n"), "{crd}");
    assert!(!crd.contains("description"), "{crd}");
    // Without ignoreUnexportedFields, controller-gen puts an unexported field with a JSON
    // tag in the schema (the untagged one it refuses; the port leaves it out): so does the
    // port, with a warning at the Go field.
    let spec = spec_of(&crd);
    assert_eq!(spec["ratio"]["type"], "number");
    assert_eq!(spec["cache"]["type"], "string", "{spec}");
    assert!(spec.get("lock").is_none(), "{spec}");
    let warnings = imported.render_warnings();
    assert!(
        warnings.contains("unexported field `cache` has a JSON tag")
            && warnings.contains("types.go:18:"),
        "{warnings}"
    );

    let (_tmp, imported, _, crd) =
        import("crd:allowDangerousTypes=true,ignoreUnexportedFields=true");
    let spec = spec_of(&crd.unwrap());
    assert!(spec.get("cache").is_none(), "{spec}");
    assert!(!imported.render_warnings().contains("unexported field"));

    // Without allowDangerousTypes, controller-gen refuses the float; so does the import
    // (it never writes a crate `generate` refuses), at the Go type, and writes nothing.
    let panicked = std::panic::catch_unwind(|| import("crd")).expect_err("a float");
    let err = panicked
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(
        err.contains("a float") && err.contains("types.go:14:6"),
        "{err}"
    );
}

/// A header file that is not YAML comments stops `import go` too, before anything is
/// written.
#[test]
fn import_go_refuses_a_header_that_is_not_yaml_comments() {
    let tmp = tempfile::tempdir().unwrap();
    let header = tmp.path().join("boilerplate.go.txt");
    std::fs::write(&header, "/*\nCopyright YEAR.\n*/\n").unwrap();
    let out = tmp.path().join("ported");
    let dir = tmp.path().join("v1");
    let err = kube_codegen::import_go(
        &[GoPackageInput {
            files: vec![(dir.join("types.go"), GO.to_owned())],
            dir,
            import_path: None,
        }],
        &GoImportOptions {
            out: out.clone(),
            crate_name: "ported".into(),
            kubernetes: KubernetesVersion::NEWEST,
            runtime: kube_codegen::RuntimeSource::registry(),
            crd: CrdOptions {
                header_file: Some(header),
                ..CrdOptions::default()
            },
            conversion_hub: false,
        },
    )
    .expect_err("a Go comment as CRD header");
    assert!(err.to_string().contains("boilerplate.go.txt:1:1"), "{err}");
    assert!(!Path::new(&out).exists());
}

/// The command line: `import go --crd-options` as a Makefile writes them, into the new
/// crate's metadata, and a bad option refused before anything is written.
#[test]
fn import_go_takes_crd_options_on_the_command_line() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("v1")).unwrap();
    std::fs::write(tmp.path().join("v1/types.go"), GO).unwrap();
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_kube-codegen"))
            .args(args)
            .current_dir(tmp.path())
            .output()
            .unwrap()
    };
    let out = run(&[
        "import",
        "go",
        "v1",
        "--out",
        "ported",
        "--crd-options",
        "crd:maxDescLen=0,generateEmbeddedObjectMeta=true,allowDangerousTypes=true,ignoreUnexportedFields=true",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cargo = std::fs::read_to_string(tmp.path().join("ported/Cargo.toml")).unwrap();
    assert!(
        cargo.contains("max-description-len = 0\ngenerate-embedded-object-meta = true\n"),
        "{cargo}"
    );
    let out = run(&[
        "import",
        "go",
        "v1",
        "--out",
        "other",
        "--crd-options",
        "crd:trivialVersions=true",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("trivialVersions"), "{stderr}");
    assert!(!tmp.path().join("other").exists());
}
