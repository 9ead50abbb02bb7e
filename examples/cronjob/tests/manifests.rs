//! The manifests `kube-codegen generate` writes for the port, compared with the Go project's
//! (go-project/config, controller-gen v0.21.0 with the Makefile's options), as the API server
//! reads them: YAML parsed, a CRD's versions by name. What differs, and why, is in
//! KNOWN-DIFFERENCES.md; each difference is asserted here, so the list cannot go stale.

use std::path::{Path, PathBuf};

use serde_json::Value;

fn krate() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn yaml_docs(path: &Path) -> Vec<Value> {
    use serde::Deserialize;
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_yaml::Deserializer::from_str(&text)
        .map(|d| Value::deserialize(d).expect("YAML"))
        .filter(|v| !v.is_null())
        .collect()
}

fn one_doc(path: &Path) -> Value {
    let mut docs = yaml_docs(path);
    assert_eq!(docs.len(), 1, "{}", path.display());
    docs.remove(0)
}

/// kustomize's patch of maps (the CRD patches of config/crd/patches are nothing else): the
/// patch's maps merged into the base's, its other values replacing.
fn merge(base: &mut Value, patch: &Value) {
    match (base, patch) {
        (Value::Object(b), Value::Object(p)) => {
            for (k, v) in p {
                merge(b.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
        (b, p) => *b = p.clone(),
    }
}

/// A CRD as the API server reads it: its versions keyed by name (controller-gen lists them
/// by name, kube-codegen by priority, as kubectl does; the API server orders them itself), and
/// without controller-gen's version annotation, which kube-codegen does not write.
fn normalized(mut crd: Value) -> Value {
    if let Some(versions) = crd["spec"]["versions"].as_array_mut() {
        versions.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    }
    if let Some(a) = crd["metadata"]["annotations"].as_object_mut() {
        a.remove("controller-gen.kubebuilder.io/version");
        if a.is_empty() {
            crd["metadata"]
                .as_object_mut()
                .unwrap()
                .remove("annotations");
        }
    }
    crd
}

/// The Go project's CRD as kustomize installs it: config/crd/bases plus
/// config/crd/patches/webhook_in_cronjobs.yaml (the conversion webhook).
fn with_conversion_patch(base: &Path) -> Value {
    let mut crd = one_doc(base);
    merge(
        &mut crd,
        &one_doc(&krate().join("go-project/config/crd/patches/webhook_in_cronjobs.yaml")),
    );
    normalized(crd)
}

/// The paths (`a.b[name].c`) where `a` and `b` differ, leaves only.
fn differences(a: &Value, b: &Value, at: String, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let (va, vb) = (
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                );
                differences(va, vb, format!("{at}.{k}"), out);
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (va, vb)) in x.iter().zip(y).enumerate() {
                let key = va["name"].as_str().map_or(i.to_string(), str::to_owned);
                differences(va, vb, format!("{at}[{key}]"), out);
            }
        }
        _ if a != b => out.push(at),
        _ => {}
    }
}

fn ours_crd() -> Value {
    normalized(one_doc(&krate().join(
        "config/crd/bases/batch.tutorial.kubebuilder.io_cronjobs.yaml",
    )))
}

/// Against controller-gen on the same Go API and Kubernetes 1.37 (hack/regen-controller-gen.sh):
/// equal, keyword for keyword, the conversion stanza included.
#[test]
fn the_crd_is_controller_gens_for_the_same_kubernetes() {
    let reference = with_conversion_patch(&krate().join("hack/controller-gen/crd-k8s-1.37.yaml"));
    let mut diff = vec![];
    differences(&ours_crd(), &reference, String::new(), &mut diff);
    assert!(
        diff.is_empty(),
        "the CRD differs from controller-gen's at {diff:#?}"
    );
}

/// Against the project's own config/ (Kubernetes 1.36's types): the one difference is in
/// `jobTemplate`, the embedded batch/v1 JobTemplateSpec, which is Kubernetes 1.37's in the
/// port (KNOWN-DIFFERENCES.md). Everything of the project's own types is equal.
#[test]
fn the_crd_differs_from_the_projects_only_in_the_embedded_kubernetes_types() {
    let project = with_conversion_patch(
        &krate().join("go-project/config/crd/bases/batch.tutorial.kubebuilder.io_cronjobs.yaml"),
    );
    let mut diff = vec![];
    differences(&ours_crd(), &project, String::new(), &mut diff);
    let embedded = |p: &String| {
        ["v1", "v2"].iter().any(|v| {
            p.starts_with(&format!(
                ".spec.versions[{v}].schema.openAPIV3Schema.properties.spec.properties.jobTemplate.properties.spec."
            ))
        })
    };
    let elsewhere: Vec<&String> = diff.iter().filter(|p| !embedded(p)).collect();
    assert!(
        elsewhere.is_empty(),
        "differences outside jobTemplate: {elsewhere:#?}"
    );
    // And there are some: Kubernetes 1.37 added fields to JobSpec (`scheduling`) and PodSpec.
    assert!(
        diff.iter()
            .any(|p| p.ends_with(".jobTemplate.properties.spec.properties.scheduling")),
        "{diff:#?}"
    );
}

/// config/rbac/role.yaml, from the `+kubebuilder:rbac` markers on `controller::reconcile`
/// (Go's are on `Reconcile`): the project's ClusterRole, rule for rule.
#[test]
fn the_role_is_the_projects() {
    assert_eq!(
        yaml_docs(&krate().join("config/rbac/role.yaml")),
        yaml_docs(&krate().join("go-project/config/rbac/role.yaml"))
    );
}

/// config/webhook/manifests.yaml, from the `+kubebuilder:webhook` markers on the webhooks'
/// impls (src/webhook/v1.rs, v2.rs): the project's configurations, webhook for webhook.
#[test]
fn the_webhook_configurations_are_the_projects() {
    assert_eq!(
        yaml_docs(&krate().join("config/webhook/manifests.yaml")),
        yaml_docs(&krate().join("go-project/config/webhook/manifests.yaml"))
    );
}
