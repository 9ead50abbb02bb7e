//! E2E: the `rbac` generator's `role.yaml` (from the `+kubebuilder:rbac` markers of the
//! fixture `generator/tests/fixtures/rbac`, equal to controller-gen's for the same markers)
//! is accepted by a real kube-apiserver and, bound to a ServiceAccount, grants exactly what
//! the markers say: the API server's own authorizer answers (SubjectAccessReviews), not a
//! reading of the YAML.

use kube_codegen::{Config, GeneratorName};
use kube_codegen_tests::*;
use serde_json::json;

const FIXTURE: &str = "generator/tests/fixtures/rbac";
const SA: &str = "widget-controller";

fn role_yaml() -> String {
    let generated = Config::new()
        .crate_dir(repo_root().join(FIXTURE))
        .generators([GeneratorName::Rbac])
        .generate()
        .unwrap_or_else(|e| panic!("generate {FIXTURE}:\n{e}"));
    let role = generated
        .files
        .iter()
        .find(|f| f.path.ends_with("role.yaml"))
        .expect("the rbac generator writes role.yaml");
    role.contents.clone()
}

/// What to ask the authorizer: a verb on a resource, or on a non-resource URL.
enum Ask<'a> {
    Resource {
        verb: &'a str,
        group: &'a str,
        resource: &'a str,
        subresource: &'a str,
        name: &'a str,
        namespace: &'a str,
    },
    Url(&'a str, &'a str),
}

/// A resource in a namespace ("" for all).
fn res<'a>(verb: &'a str, group: &'a str, resource: &'a str, namespace: &'a str) -> Ask<'a> {
    Ask::Resource {
        verb,
        group,
        resource,
        subresource: "",
        name: "",
        namespace,
    }
}

/// Whether the ServiceAccount of `sa_namespace` may: a SubjectAccessReview, so the API
/// server's authorizer answers for exactly this group, resource and subresource (no
/// client-side mapping of resource names, which needs the CRD to be installed).
fn can(sa_namespace: &str, ask: Ask) -> bool {
    let mut spec = match ask {
        Ask::Resource {
            verb,
            group,
            resource,
            subresource,
            name,
            namespace,
        } => json!({ "resourceAttributes": {
            "verb": verb, "group": group, "resource": resource, "subresource": subresource,
            "name": name, "namespace": namespace,
        }}),
        Ask::Url(verb, path) => json!({ "nonResourceAttributes": { "verb": verb, "path": path } }),
    };
    spec["user"] = json!(format!("system:serviceaccount:{sa_namespace}:{SA}"));
    spec["groups"] = json!([
        "system:serviceaccounts",
        format!("system:serviceaccounts:{sa_namespace}"),
        "system:authenticated"
    ]);
    let review = json!({
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": spec,
    });
    let out = kubectl_stdin(
        &["create", "-f", "-", "-o", "jsonpath={.status.allowed}"],
        Some(&review.to_string()),
    );
    assert!(out.success, "SubjectAccessReview failed: {}", out.stderr);
    out.stdout.trim() == "true"
}

#[tokio::test]
async fn generated_roles_are_accepted_and_grant_what_the_markers_say() {
    let role = role_yaml();
    // A namespace of this run's own: a deleted one lingers while it terminates.
    let ns = format!(
        "kcg-rbac-{}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis()
    );
    // The Role of `namespace=system` needs its namespace.
    let _ = kubectl(&["create", "namespace", "system"]);
    kubectl_ok(&["create", "namespace", &ns]);
    kubectl_ok(&["-n", &ns, "create", "serviceaccount", SA]);
    let applied = kubectl_stdin(&["apply", "-f", "-"], Some(&role));
    assert!(
        applied.success,
        "the API server refused role.yaml:\n{}{}\n{role}",
        applied.stdout, applied.stderr
    );
    let subject = format!("{ns}:{SA}");
    let manager = format!("{ns}-manager");
    let reader = format!("{ns}-secret-reader");
    kubectl_ok(&[
        "create",
        "clusterrolebinding",
        &manager,
        "--clusterrole=manager-role",
        "--serviceaccount",
        &subject,
    ]);
    kubectl_ok(&[
        "create",
        "clusterrolebinding",
        &reader,
        "--clusterrole=secret-reader",
        "--serviceaccount",
        &subject,
    ]);
    kubectl_ok(&[
        "-n",
        "system",
        "create",
        "rolebinding",
        &manager,
        "--role=manager-role",
        "--serviceaccount",
        &subject,
    ]);

    // Bindings reach the authorizer's cache through a watch: wait for the first grant.
    eventually(
        "the bindings reach the authorizer",
        std::time::Duration::from_secs(30),
        || async { Ok(can(&ns, res("list", "", "pods", "")).then_some(())) },
    )
    .await
    .unwrap();
    let can = |ask| can(&ns, ask);

    // Merged rules: pods and configmaps share get;list in the core group.
    assert!(can(res("get", "", "configmaps", "default")));
    assert!(
        !can(res("delete", "", "pods", "default")),
        "no marker grants delete on pods"
    );
    // `groups=core` is the core group, "" (controller-gen maps it the same way).
    assert!(can(res("create", "", "events", "default")));
    assert!(!can(res("get", "", "events", "default")));
    // Two markers on widgets merge their verbs; subresources keep their own.
    assert!(can(res("delete", "rbac.example.com", "widgets", "default")));
    assert!(can(res("watch", "rbac.example.com", "widgets", "default")));
    let status = |verb| Ask::Resource {
        verb,
        group: "rbac.example.com",
        resource: "widgets",
        subresource: "status",
        name: "",
        namespace: "default",
    };
    assert!(can(status("update")));
    assert!(!can(status("delete")));
    // One rule for batch and extensions jobs.
    assert!(can(res("list", "batch", "jobs", "default")));
    assert!(can(res("get", "extensions", "jobs", "default")));
    assert!(!can(res("create", "batch", "jobs", "default")));
    // `verbs=get;*` is every verb.
    assert!(can(res(
        "delete",
        "policy",
        "poddisruptionbudgets",
        "default"
    )));
    // Non-resource URLs (`/healthz` is public anyway, so `/metrics` is the one that shows).
    assert!(can(Ask::Url("get", "/metrics")));
    assert!(!can(Ask::Url("get", "/logs")));
    // `namespace=system`: a Role there, not a ClusterRole.
    assert!(can(res(
        "create",
        "coordination.k8s.io",
        "leases",
        "system"
    )));
    assert!(!can(res(
        "create",
        "coordination.k8s.io",
        "leases",
        "default"
    )));
    // `roleName=secret-reader` with `resourceNames`: only the named secrets, with the verbs
    // of each marker.
    let secret = |verb, name| Ask::Resource {
        verb,
        group: "",
        resource: "secrets",
        subresource: "",
        name,
        namespace: "default",
    };
    assert!(can(secret("get", "widget-token")));
    assert!(can(secret("get", "widget-ca")));
    assert!(!can(secret("get", "other")));
    assert!(can(secret("watch", "widget-token")));
    assert!(!can(secret("watch", "widget-ca")));

    let _ = kubectl(&["delete", "clusterrolebinding", &manager, &reader]);
    let _ = kubectl(&["-n", "system", "delete", "rolebinding", &manager]);
    let _ = kubectl_stdin(&["delete", "-f", "-"], Some(&role));
    let _ = kubectl(&["delete", "namespace", &ns, "--wait=false"]);
}
