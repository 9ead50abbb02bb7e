//! `import go` maps Kubernetes' named types that are not structs (`corev1.ResourceList`,
//! `metav1.ConditionStatus`) by data read from their Go sources:
//! `generator/src/import/go/k8s-named-types.json`. This test reads k8s.io/api and
//! k8s.io/apimachinery at the version the test control plane runs (downloaded with
//! `go mod download`, as the control plane's build does) and fails when the committed data
//! differs from what they say; `KUBE_CODEGEN_BLESS=1` rewrites it.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The apimachinery packages whose types API packages use.
const APIMACHINERY: &[&str] = &[
    "pkg/apis/meta/v1",
    "pkg/types",
    "pkg/api/resource",
    "pkg/util/intstr",
    "pkg/runtime",
];

fn module_dir(module: &str, version: &str) -> PathBuf {
    let out = Command::new("go")
        .args(["mod", "download", "-json", &format!("{module}@{version}")])
        .env("GOFLAGS", "-mod=mod")
        .env("GOTOOLCHAIN", "local")
        .output()
        .expect("Go is installed (hack/test.sh needs it for the control plane)");
    assert!(
        out.status.success(),
        "go mod download {module}@{version}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let info: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("go mod download -json");
    PathBuf::from(info["Dir"].as_str().expect("Dir"))
}

fn go_files(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut files: Vec<(PathBuf, String)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "go"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect();
    files.sort();
    files
}

/// Every directory below `root` holding Go files, relative.
fn package_dirs(root: &Path, rel: &Path, out: &mut Vec<PathBuf>) {
    let dir = root.join(rel);
    let mut has_go = false;
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            let name = p.file_name().unwrap().to_owned();
            if name != "testdata" {
                package_dirs(root, &rel.join(name), out);
            }
        } else if p.extension().is_some_and(|e| e == "go") {
            has_go = true;
        }
    }
    if has_go && !rel.as_os_str().is_empty() {
        out.push(rel.to_owned());
    }
}

#[test]
fn kubernetes_named_types_are_fresh() {
    let version = kube_codegen_envtest::KUBERNETES_VERSION.replacen("v1.", "v0.", 1);
    let api = module_dir("k8s.io/api", &version);
    let machinery = module_dir("k8s.io/apimachinery", &version);
    let mut packages = vec![];
    let mut dirs = vec![];
    package_dirs(&api, Path::new(""), &mut dirs);
    for rel in dirs {
        let import = format!("k8s.io/api/{}", rel.display());
        packages.push((import, go_files(&api.join(&rel))));
    }
    for rel in APIMACHINERY {
        packages.push((
            format!("k8s.io/apimachinery/{rel}"),
            go_files(&machinery.join(rel)),
        ));
    }
    let source = format!(
        "k8s.io/api {version} and k8s.io/apimachinery {version} (tests/tests/k8s_named_types.rs)"
    );
    let data = kube_codegen::__private::extract_k8s_named_types(&source, &packages)
        .expect("the Kubernetes sources parse");
    let text = serde_json::to_string_pretty(&data).unwrap() + "\n";
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../generator/src/import/go/k8s-named-types.json");
    if std::env::var_os("KUBE_CODEGEN_BLESS").is_some() {
        std::fs::write(&path, &text).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap();
    assert!(
        committed == text,
        "{} is not what k8s.io/api and apimachinery {version} say: rerun with KUBE_CODEGEN_BLESS=1",
        path.display()
    );
    // The types `import go` must map to what they are, as the issue that asked for this
    // data found them in real APIs.
    for (pkg, name) in [
        ("k8s.io/api/core/v1", "ResourceName"),
        ("k8s.io/api/core/v1", "ResourceList"),
        ("k8s.io/api/core/v1", "ConditionStatus"),
        ("k8s.io/api/core/v1", "PullPolicy"),
        ("k8s.io/api/core/v1", "Protocol"),
        ("k8s.io/api/core/v1", "PodPhase"),
        ("k8s.io/apimachinery/pkg/apis/meta/v1", "ConditionStatus"),
        ("k8s.io/apimachinery/pkg/types", "UID"),
    ] {
        assert!(
            data.packages
                .get(pkg)
                .is_some_and(|p| p.types.contains_key(name)),
            "{pkg}.{name} is missing"
        );
    }
}
