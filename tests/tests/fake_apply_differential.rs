//! Differential tests of the fake API server's server-side apply: every scenario runs the
//! same sequence of applies, updates and patches against the fake
//! (`kube_codegen_runtime::fake`) and against the real kube-apiserver of the test binary's
//! control plane (kube-codegen-envtest), and after every step compares what both answered:
//!
//! - the object, without uid, resourceVersion, creationTimestamp and managedFields (and,
//!   for Deployments, the fields the real server defaults and its controllers write);
//! - managedFields: manager, operation, apiVersion, subresource, fieldsV1, and whether
//!   `time` is set (entries compared in a fixed order, since the server orders them by
//!   time at second precision);
//! - whether the write changed the resourceVersion (no-op applies must not; not for
//!   Deployments, which the deployment controller writes concurrently);
//! - errors: HTTP code, reason, message and causes (sorted: the server lists the causes
//!   of several managers in map order).
//!
//! It needs the control-plane binaries and fails, never skips, without them.

use std::fmt::Write as _;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{
    Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams,
};
use kube_codegen_runtime::fake::{FakeApiServer, FakeResource};
use kube_codegen_tests::{TestNamespace, apply_crd, env};
use serde_json::{Value, json};

const GROUP: &str = "ssa.kube-codegen.test";

/// Both clients send this User-Agent: writes without `fieldManager` belong to its first
/// segment (`ssa-diff-agent`).
const UPDATERS: [&str; 12] = [
    "u01", "u02", "u03", "u04", "u05", "u06", "u07", "u08", "u09", "u10", "u11", "u12",
];

/// 129 bytes: one more than a field manager may have.
const LONG_MANAGER: &str = "mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm";

const USER_AGENT: &str = "ssa-diff-agent/1.0 (linux/amd64) kube-codegen";

/// The test CRD: list-map, set and atomic lists, granular and atomic maps, an atomic and
/// a granular struct, a status with a list-map of conditions, two versions.
fn widget_crd() -> CustomResourceDefinition {
    let item = json!({"type": "object", "required": ["name"], "properties": {
        "name": {"type": "string"}, "value": {"type": "string"}, "weight": {"type": "integer"}}});
    let port = json!({"type": "object", "required": ["port"], "properties": {
        "port": {"type": "integer"}, "protocol": {"type": "string", "default": "TCP"},
        "name": {"type": "string"}}});
    let spec = json!({"type": "object", "properties": {
        "replicas": {"type": "integer"},
        "color": {"type": "string"},
        "size": {"type": "string"},
        "items": {"type": "array", "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"], "items": item},
        "ports": {"type": "array", "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["port", "protocol"], "items": port},
        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        "args": {"type": "array", "x-kubernetes-list-type": "atomic", "items": {"type": "string"}},
        "plain": {"type": "array", "items": {"type": "string"}},
        "selector": {"type": "object", "additionalProperties": {"type": "string"}},
        "atomicMap": {"type": "object", "x-kubernetes-map-type": "atomic",
            "additionalProperties": {"type": "string"}},
        "config": {"type": "object", "x-kubernetes-map-type": "atomic", "properties": {
            "a": {"type": "string"}, "b": {"type": "string"}}},
        "nested": {"type": "object", "properties": {
            "x": {"type": "string"}, "y": {"type": "string"},
            "deep": {"type": "object", "properties": {"z": {"type": "string"}}}}},
    }});
    let status = json!({"type": "object", "properties": {
        "phase": {"type": "string"},
        "observed": {"type": "integer"},
        "conditions": {"type": "array", "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["type"], "items": {"type": "object",
                "required": ["type"], "properties": {
                    "type": {"type": "string"}, "status": {"type": "string"}}}},
    }});
    let schema = json!({"openAPIV3Schema": {"type": "object", "properties": {
        "apiVersion": {"type": "string"}, "kind": {"type": "string"},
        "metadata": {"type": "object"}, "spec": spec, "status": status}}});
    let version = |name: &str, storage: bool| {
        json!({"name": name, "served": true, "storage": storage, "schema": schema,
            "subresources": {"status": {}}})
    };
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("widgets.{GROUP}")},
        "spec": {"group": GROUP, "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [version("v1", true), version("v2", false)]},
    }))
    .expect("valid CRD")
}

/// The kinds the scenarios write.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Widget,
    WidgetV2,
    ConfigMap,
    Deployment,
}

impl Kind {
    fn resource(self) -> ApiResource {
        let (g, v, k, p) = match self {
            Kind::Widget => (GROUP, "v1", "Widget", "widgets"),
            Kind::WidgetV2 => (GROUP, "v2", "Widget", "widgets"),
            Kind::ConfigMap => ("", "v1", "ConfigMap", "configmaps"),
            Kind::Deployment => ("apps", "v1", "Deployment", "deployments"),
        };
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(g, v, k), p)
    }
}

/// One request.
#[derive(Clone, Debug)]
enum Op {
    /// Server-side apply of `body` (apiVersion, kind and name are added).
    Apply {
        manager: &'static str,
        body: Value,
        force: bool,
        status: bool,
    },
    /// Apply of a body sent as is (for malformed bodies), or without a field manager.
    ApplyRaw {
        manager: Option<&'static str>,
        body: Value,
    },
    /// POST.
    Create { manager: &'static str, body: Value },
    /// GET, then PUT with `merge` merged into the object (RFC 7386), to the main resource
    /// or `/status`.
    Put {
        manager: &'static str,
        merge: Value,
        status: bool,
    },
    /// Merge patch.
    Merge {
        manager: &'static str,
        patch: Value,
        status: bool,
    },
    /// JSON patch.
    Json { manager: &'static str, patch: Value },
}

use Op::*;

fn apply(manager: &'static str, body: Value) -> Op {
    Apply {
        manager,
        body,
        force: false,
        status: false,
    }
}

fn force(manager: &'static str, body: Value) -> Op {
    Apply {
        manager,
        body,
        force: true,
        status: false,
    }
}

fn apply_status(manager: &'static str, body: Value) -> Op {
    Apply {
        manager,
        body,
        force: false,
        status: true,
    }
}

fn merge(manager: &'static str, patch: Value) -> Op {
    Merge {
        manager,
        patch,
        status: false,
    }
}

fn put(manager: &'static str, merge: Value) -> Op {
    Put {
        manager,
        merge,
        status: false,
    }
}

struct Scenario {
    name: &'static str,
    steps: Vec<(Kind, Op)>,
}

fn widget(steps: Vec<Op>) -> Vec<(Kind, Op)> {
    steps.into_iter().map(|o| (Kind::Widget, o)).collect()
}

fn spec(v: Value) -> Value {
    json!({ "spec": v })
}

/// A valid Deployment body (the real server validates) with the given containers.
fn deployment(containers: Value) -> Value {
    json!({"spec": {"replicas": 1, "selector": {"matchLabels": {"app": "d"}},
        "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": containers}}}})
}

fn containers(v: Value) -> Value {
    json!({"spec": {"template": {"spec": {"containers": v}}}})
}

fn scenarios() -> Vec<Scenario> {
    let s = |name, steps| Scenario { name, steps };
    vec![
        s(
            "create-by-apply",
            widget(vec![apply(
                "a",
                spec(json!({"replicas": 1, "color": "red"})),
            )]),
        ),
        s(
            "reapply-is-a-no-op",
            widget(vec![
                apply("a", spec(json!({"replicas": 1, "color": "red"}))),
                apply("a", spec(json!({"replicas": 1, "color": "red"}))),
            ]),
        ),
        s(
            "drop-a-field",
            widget(vec![
                apply("a", spec(json!({"replicas": 1, "color": "red"}))),
                apply("a", spec(json!({"replicas": 1}))),
            ]),
        ),
        s(
            "drop-everything",
            widget(vec![
                apply(
                    "a",
                    spec(json!({"replicas": 1, "nested": {"x": "1", "deep": {"z": "z"}}})),
                ),
                apply("a", json!({})),
            ]),
        ),
        s(
            "shared-ownership-then-drops",
            widget(vec![
                apply("a", spec(json!({"color": "red", "size": "s"}))),
                apply("b", spec(json!({"color": "red"}))),
                apply("a", spec(json!({"size": "s"}))),
                apply("b", json!({})),
            ]),
        ),
        s(
            "conflict",
            widget(vec![
                apply("a", spec(json!({"color": "red"}))),
                apply("b", spec(json!({"color": "blue"}))),
            ]),
        ),
        s(
            "two-conflicts-two-managers",
            widget(vec![
                apply("a", spec(json!({"color": "red", "size": "s"}))),
                apply("b", spec(json!({"replicas": 2}))),
                apply(
                    "c",
                    spec(json!({"color": "blue", "size": "l", "replicas": 3})),
                ),
            ]),
        ),
        s(
            "force-takes-ownership",
            widget(vec![
                apply("a", spec(json!({"color": "red", "size": "s"}))),
                force("b", spec(json!({"color": "blue"}))),
                apply("a", spec(json!({"size": "s"}))),
            ]),
        ),
        s(
            "list-map-two-managers",
            widget(vec![
                apply("a", spec(json!({"items": [{"name": "x", "value": "1"}]}))),
                apply("b", spec(json!({"items": [{"name": "y", "value": "2"}]}))),
                apply("a", spec(json!({"replicas": 1}))),
            ]),
        ),
        s(
            "list-map-conflict-on-item-field",
            widget(vec![
                apply("a", spec(json!({"items": [{"name": "x", "value": "1"}]}))),
                apply("b", spec(json!({"items": [{"name": "x", "value": "2"}]}))),
            ]),
        ),
        s(
            "list-map-shared-item-distinct-fields",
            widget(vec![
                apply("a", spec(json!({"items": [{"name": "x", "value": "1"}]}))),
                apply("b", spec(json!({"items": [{"name": "x", "weight": 5}]}))),
                apply("a", json!({})),
            ]),
        ),
        s(
            "list-map-order",
            widget(vec![
                apply(
                    "a",
                    spec(json!({"items": [{"name": "a"}, {"name": "b"}, {"name": "c"}]})),
                ),
                apply(
                    "b",
                    spec(json!({"items": [{"name": "d"}, {"name": "b"}, {"name": "a"}]})),
                ),
            ]),
        ),
        s(
            "list-map-compound-key",
            widget(vec![
                apply(
                    "a",
                    spec(
                        json!({"ports": [{"port": 80, "protocol": "TCP"}, {"port": 80, "protocol": "UDP"}]}),
                    ),
                ),
                apply(
                    "b",
                    spec(json!({"ports": [{"port": 80, "protocol": "UDP", "name": "dns"}]})),
                ),
                apply(
                    "a",
                    spec(json!({"ports": [{"port": 80, "protocol": "TCP"}]})),
                ),
            ]),
        ),
        s(
            "set-list",
            widget(vec![
                apply("a", spec(json!({"tags": ["x", "y"]}))),
                apply("b", spec(json!({"tags": ["z", "y"]}))),
                apply("a", spec(json!({"tags": ["x"]}))),
                apply("b", spec(json!({"tags": ["z"]}))),
            ]),
        ),
        s(
            "atomic-list-conflict",
            widget(vec![
                apply("a", spec(json!({"args": ["1", "2"]}))),
                apply("b", spec(json!({"args": ["3"]}))),
                force("b", spec(json!({"args": ["3"]}))),
            ]),
        ),
        s(
            "atomic-list-same-value-shared",
            widget(vec![
                apply("a", spec(json!({"args": ["1"]}))),
                apply("b", spec(json!({"args": ["1"]}))),
                apply("a", json!({})),
            ]),
        ),
        s(
            "list-without-type-is-atomic",
            widget(vec![
                apply("a", spec(json!({"plain": ["1"]}))),
                apply("b", spec(json!({"plain": ["1", "2"]}))),
            ]),
        ),
        s(
            "granular-map",
            widget(vec![
                apply("a", spec(json!({"selector": {"k1": "v1"}}))),
                apply("b", spec(json!({"selector": {"k2": "v2"}}))),
                apply("a", spec(json!({"replicas": 1}))),
            ]),
        ),
        s(
            "atomic-map",
            widget(vec![
                apply("a", spec(json!({"atomicMap": {"k1": "v1"}}))),
                apply("b", spec(json!({"atomicMap": {"k2": "v2"}}))),
                force("b", spec(json!({"atomicMap": {"k2": "v2"}}))),
            ]),
        ),
        s(
            "atomic-struct",
            widget(vec![
                apply("a", spec(json!({"config": {"a": "1"}}))),
                force("b", spec(json!({"config": {"b": "2"}}))),
            ]),
        ),
        s(
            "granular-struct-drop",
            widget(vec![
                apply("a", spec(json!({"nested": {"x": "1", "y": "2"}}))),
                apply("b", spec(json!({"nested": {"deep": {"z": "3"}}}))),
                apply("a", spec(json!({"nested": {"x": "1"}}))),
                apply("a", json!({})),
            ]),
        ),
        s(
            "update-after-apply-takes-ownership",
            widget(vec![
                apply("a", spec(json!({"color": "red", "size": "s"}))),
                merge("u", spec(json!({"color": "blue"}))),
                apply("a", spec(json!({"color": "red", "size": "s"}))),
            ]),
        ),
        s(
            "apply-after-create-conflicts",
            widget(vec![
                Create {
                    manager: "u",
                    body: spec(json!({"color": "red", "size": "s"})),
                },
                apply("a", spec(json!({"color": "blue"}))),
                apply("a", spec(json!({"size": "s"}))),
            ]),
        ),
        s(
            "put-takes-changed-fields-only",
            widget(vec![
                apply("a", spec(json!({"replicas": 1, "color": "red"}))),
                put("u", spec(json!({"color": "green", "size": "m"}))),
                apply("a", spec(json!({"replicas": 2}))),
            ]),
        ),
        s(
            "update-removing-a-field",
            widget(vec![
                apply("a", spec(json!({"replicas": 1, "color": "red"}))),
                merge("u", spec(json!({"color": null}))),
                apply("a", spec(json!({"replicas": 1, "color": "red"}))),
            ]),
        ),
        s(
            "json-patch-update",
            widget(vec![
                apply(
                    "a",
                    spec(json!({"items": [{"name": "x", "value": "1"}], "tags": ["t"]})),
                ),
                Json {
                    manager: "j",
                    patch: json!([{"op": "add", "path": "/spec/tags/-", "value": "u"},
                {"op": "replace", "path": "/spec/items/0/value", "value": "2"}]),
                },
                apply(
                    "a",
                    spec(json!({"items": [{"name": "x", "value": "1"}], "tags": ["t"]})),
                ),
            ]),
        ),
        s(
            "status-apply-vs-main-apply",
            widget(vec![
                apply("a", spec(json!({"replicas": 1}))),
                apply_status("s", json!({"status": {"phase": "Ready", "observed": 1}})),
                apply(
                    "a",
                    json!({"spec": {"replicas": 2}, "status": {"phase": "Ignored"}}),
                ),
                apply_status("s", json!({"status": {"phase": "Done"}})),
            ]),
        ),
        s(
            "status-conditions-two-managers",
            widget(vec![
                apply("a", spec(json!({"replicas": 1}))),
                apply_status(
                    "s1",
                    json!({"status": {"conditions": [{"type": "A", "status": "True"}]}}),
                ),
                apply_status(
                    "s2",
                    json!({"status": {"conditions": [{"type": "B", "status": "False"}]}}),
                ),
                apply_status("s1", json!({"status": {"phase": "x"}})),
                apply_status(
                    "s2",
                    json!({"status": {"conditions": [{"type": "A", "status": "False"}]}}),
                ),
            ]),
        ),
        s(
            "status-put-and-merge",
            widget(vec![
                apply("a", spec(json!({"replicas": 1}))),
                Put {
                    manager: "s",
                    merge: json!({"status": {"phase": "Running"}}),
                    status: true,
                },
                Merge {
                    manager: "s2",
                    patch: json!({"status": {"observed": 3}}),
                    status: true,
                },
                apply_status("s3", json!({"status": {"phase": "Other"}})),
            ]),
        ),
        s(
            "apply-with-another-apiversion",
            vec![
                (Kind::Widget, apply("a", spec(json!({"color": "red"})))),
                (
                    Kind::WidgetV2,
                    apply("a", spec(json!({"color": "red", "size": "l"}))),
                ),
                (Kind::WidgetV2, apply("b", spec(json!({"size": "s"})))),
                (Kind::Widget, merge("u", spec(json!({"replicas": 4})))),
                (Kind::WidgetV2, merge("u", spec(json!({"replicas": 5})))),
            ],
        ),
        s(
            "wrong-apiversion-in-body",
            vec![
                (Kind::Widget, apply("a", spec(json!({"color": "red"})))),
                (
                    Kind::Widget,
                    ApplyRaw {
                        manager: Some("a"),
                        body: json!({
                "apiVersion": format!("{GROUP}/v2"), "kind": "Widget",
                "metadata": {"name": "wrong-apiversion-in-body"}, "spec": {"color": "x"}}),
                    },
                ),
            ],
        ),
        s(
            "apply-without-field-manager",
            vec![(
                Kind::Widget,
                ApplyRaw {
                    manager: None,
                    body: json!({
                "apiVersion": format!("{GROUP}/v1"), "kind": "Widget",
                "metadata": {"name": "apply-without-field-manager"}}),
                },
            )],
        ),
        // A PUT with `managedFields: []` resets ownership (of ConfigMaps; the CRD handler
        // keeps it when nothing else changes, which the fake does not emulate), and the
        // first apply then finds the fields owned by `before-first-apply`.
        s(
            "before-first-apply",
            vec![
                (
                    Kind::ConfigMap,
                    Create {
                        manager: "u",
                        body: json!({"data": {"k": "1"}}),
                    },
                ),
                (
                    Kind::ConfigMap,
                    put("u", json!({"metadata": {"managedFields": []}})),
                ),
                (Kind::ConfigMap, apply("a", json!({"data": {"k": "2"}}))),
                (
                    Kind::ConfigMap,
                    force("a", json!({"data": {"k": "2", "j": "3"}})),
                ),
            ],
        ),
        s(
            "configmap-granular-data",
            vec![
                (
                    Kind::ConfigMap,
                    apply(
                        "a",
                        json!({"data": {"k1": "1"}, "metadata": {"labels": {"l": "a"}}}),
                    ),
                ),
                (
                    Kind::ConfigMap,
                    apply(
                        "b",
                        json!({"data": {"k2": "2"}, "metadata": {"annotations": {"n": "b"}}}),
                    ),
                ),
                (Kind::ConfigMap, apply("a", json!({"data": {"k3": "3"}}))),
                (Kind::ConfigMap, apply("b", json!({"data": {"k3": "x"}}))),
            ],
        ),
        s(
            "configmap-create-put-patch",
            vec![
                (
                    Kind::ConfigMap,
                    Create {
                        manager: "u",
                        body: json!({"data": {"k1": "1"}, "metadata": {"labels": {"l": "1"}}}),
                    },
                ),
                (Kind::ConfigMap, put("p", json!({"data": {"k2": "2"}}))),
                (
                    Kind::ConfigMap,
                    merge(
                        "m",
                        json!({"data": {"k1": "9"}, "metadata": {"labels": {"l2": "2"}}}),
                    ),
                ),
                (Kind::ConfigMap, apply("a", json!({"data": {"k1": "1"}}))),
                (Kind::ConfigMap, force("a", json!({"data": {"k1": "1"}}))),
            ],
        ),
        s(
            "deployment-containers-by-name",
            vec![
                (
                    Kind::Deployment,
                    apply("a", deployment(json!([{"name": "c1", "image": "img:1"}]))),
                ),
                (
                    Kind::Deployment,
                    apply("b", containers(json!([{"name": "c2", "image": "img:2"}]))),
                ),
                (
                    Kind::Deployment,
                    apply("b", containers(json!([{"name": "c1", "image": "img:9"}]))),
                ),
                (
                    Kind::Deployment,
                    apply(
                        "a",
                        deployment(
                            json!([{"name": "c1", "image": "img:1"}, {"name": "c3", "image": "img:3"}]),
                        ),
                    ),
                ),
            ],
        ),
        s(
            "deployment-ports-and-env",
            vec![
                (
                    Kind::Deployment,
                    apply(
                        "a",
                        deployment(json!([{"name": "c", "image": "i",
                "ports": [{"containerPort": 80}], "env": [{"name": "A", "value": "1"}]}])),
                    ),
                ),
                (
                    Kind::Deployment,
                    apply(
                        "b",
                        containers(json!([{"name": "c",
                "ports": [{"containerPort": 80, "protocol": "UDP"}], "env": [{"name": "B", "value": "2"}]}])),
                    ),
                ),
                (
                    Kind::Deployment,
                    apply(
                        "a",
                        deployment(json!([{"name": "c", "image": "i",
                "env": [{"name": "A", "value": "1"}]}])),
                    ),
                ),
            ],
        ),
        s(
            "deployment-replicas-conflict-and-force",
            vec![
                (
                    Kind::Deployment,
                    apply("a", deployment(json!([{"name": "c", "image": "i"}]))),
                ),
                (
                    Kind::Deployment,
                    apply("hpa", json!({"spec": {"replicas": 3}})),
                ),
                (
                    Kind::Deployment,
                    force("hpa", json!({"spec": {"replicas": 3}})),
                ),
                (
                    Kind::Deployment,
                    apply("a", deployment(json!([{"name": "c", "image": "i"}]))),
                ),
            ],
        ),
        s(
            "empty-list-and-map-are-owned-leaves",
            widget(vec![
                apply("a", spec(json!({"tags": [], "selector": {}, "items": []}))),
                apply("b", spec(json!({"tags": ["x"], "selector": {"k": "v"}}))),
                apply("a", spec(json!({"replicas": 1}))),
            ]),
        ),
        s(
            "null-value-in-apply",
            widget(vec![
                apply("a", spec(json!({"color": "red", "size": "s"}))),
                apply("a", spec(json!({"color": null, "size": "s"}))),
            ]),
        ),
        s(
            "force-over-two-owners",
            widget(vec![
                apply("a", spec(json!({"color": "red"}))),
                apply("b", spec(json!({"color": "red", "size": "m"}))),
                merge("u", spec(json!({"size": "l"}))),
                force("c", spec(json!({"color": "blue", "size": "xl"}))),
                apply("a", json!({})),
                apply("b", json!({})),
            ]),
        ),
        s(
            "list-map-item-owned-by-two-then-both-drop",
            widget(vec![
                apply(
                    "a",
                    spec(json!({"items": [{"name": "x", "value": "1"}, {"name": "y"}]})),
                ),
                apply("b", spec(json!({"items": [{"name": "x", "value": "1"}]}))),
                apply("a", spec(json!({"items": [{"name": "y"}]}))),
                apply("b", spec(json!({"items": []}))),
            ]),
        ),
        s(
            "status-apply-to-missing-object",
            widget(vec![apply_status("s", json!({"status": {"phase": "x"}}))]),
        ),
        s(
            "labels-and-annotations-granular",
            widget(vec![
                apply(
                    "a",
                    json!({"metadata": {"labels": {"a": "1", "shared": "s"}, "annotations": {"x": "y"}}}),
                ),
                apply(
                    "b",
                    json!({"metadata": {"labels": {"b": "2", "shared": "s"}}}),
                ),
                apply("a", json!({"metadata": {"labels": {"a": "1"}}})),
                apply("b", json!({"metadata": {"labels": {"shared": "t"}}})),
            ]),
        ),
        s(
            "deployment-status-writes-ignore-spec-and-labels",
            vec![
                // The annotations map exists from the start: the deployment controller
                // adds its revision annotation at a moment of its own, and whether a
                // write adds the map or a key decides the `.` marker.
                (Kind::Deployment, {
                    let mut body = deployment(json!([{"name": "c", "image": "i"}]));
                    body["metadata"] = json!({"annotations": {"a": "1"}});
                    apply("a", body)
                }),
                (
                    Kind::Deployment,
                    Merge {
                        manager: "m",
                        patch: json!({"metadata": {"labels": {"x": "y"}},
                "spec": {"replicas": 2}}),
                        status: true,
                    },
                ),
                (
                    Kind::Deployment,
                    Merge {
                        manager: "m",
                        patch: json!({"metadata": {"annotations": {"x": "y"}}}),
                        status: true,
                    },
                ),
            ],
        ),
        s(
            "conflicts-with-apply-and-update-managers",
            widget(vec![
                apply("a", spec(json!({"color": "red"}))),
                merge("u", spec(json!({"size": "s", "replicas": 1}))),
                apply(
                    "c",
                    spec(json!({"color": "blue", "size": "l", "replicas": 2})),
                ),
            ]),
        ),
        s(
            "writes-without-field-manager-belong-to-the-user-agent",
            widget(vec![
                Create {
                    manager: "",
                    body: spec(json!({"color": "red"})),
                },
                merge("", spec(json!({"size": "s"}))),
                put("", spec(json!({"replicas": 1}))),
                apply("a", spec(json!({"color": "blue", "size": "m"}))),
            ]),
        ),
        s(
            "field-manager-too-long",
            // kube checks the field manager of creates and patches itself; updates reach
            // the server.
            widget(vec![
                apply("a", spec(json!({"color": "red"}))),
                put(LONG_MANAGER, spec(json!({"color": "blue"}))),
            ]),
        ),
        // Twelve updaters: beyond ten `Update` entries the oldest fold into
        // `ancient-changes`.
        s(
            "update-managers-are-capped-at-ten",
            widget(
                std::iter::once(apply("a", spec(json!({"replicas": 1}))))
                    .chain(UPDATERS.iter().enumerate().map(|(i, m)| {
                        merge(m, spec(json!({"selector": {format!("k{i:02}"): "v"}})))
                    }))
                    .collect(),
            ),
        ),
        // One undeclared field per body: the server lists several in map order.
        s(
            "apply-with-an-undeclared-field-fails",
            widget(vec![apply(
                "a",
                spec(json!({"color": "red", "nested": {"x": "1", "nope": "2"}})),
            )]),
        ),
        s(
            "updates-prune-undeclared-fields",
            widget(vec![
                apply("a", spec(json!({"color": "red"}))),
                merge("u", spec(json!({"alsoBogus": true, "size": "s"}))),
                put("p", spec(json!({"nested": {"x": "1", "nope": "2"}}))),
            ]),
        ),
        s(
            "create-prunes-undeclared-fields",
            widget(vec![Create {
                manager: "c",
                body: spec(json!({"bogus": 1, "color": "red"})),
            }]),
        ),
        s(
            "schema-defaults-fill-list-map-keys",
            widget(vec![
                apply(
                    "a",
                    spec(json!({"ports": [{"port": 80}, {"port": 53, "protocol": "UDP"}]})),
                ),
                apply(
                    "b",
                    spec(json!({"ports": [{"port": 80, "protocol": "TCP", "name": "http"}]})),
                ),
                merge("u", spec(json!({"ports": [{"port": 8080}]}))),
            ]),
        ),
        // Defaults are filled into a create's body before ownership is taken: the
        // creator owns them.
        s(
            "create-owns-schema-defaults",
            widget(vec![
                Create {
                    manager: "c",
                    body: spec(json!({"ports": [{"port": 1}]})),
                },
                apply(
                    "a",
                    spec(json!({"ports": [{"port": 1, "protocol": "TCP", "name": "x"}]})),
                ),
            ]),
        ),
        // Fields the hand-written Deployment schema does not list are structs there too.
        s(
            "deployment-unlisted-struct-fields",
            vec![
                (
                    Kind::Deployment,
                    apply("a", {
                        let mut d = deployment(json!([{"name": "c", "image": "i",
                    "resources": {"limits": {"cpu": "1"}, "requests": {"memory": "1Mi"}},
                    "securityContext": {"runAsNonRoot": true, "capabilities": {"drop": ["ALL"]}}}]));
                        d["spec"]["strategy"] =
                            json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}});
                        d["spec"]["minReadySeconds"] = json!(3);
                        d
                    }),
                ),
                (
                    Kind::Deployment,
                    apply(
                        "b",
                        containers(json!([{"name": "c",
                "resources": {"limits": {"memory": "2Mi"}}}])),
                    ),
                ),
            ],
        ),
        s(
            "duplicate-list-keys-rejected",
            widget(vec![apply(
                "a",
                spec(json!({"items": [{"name": "x"}, {"name": "x"}]})),
            )]),
        ),
    ]
}

/// What one side answered to one step.
#[derive(Debug, PartialEq)]
enum Outcome {
    Ok {
        object: Value,
        managed_fields: Vec<Value>,
        rv_changed: bool,
    },
    Err {
        code: u16,
        reason: String,
        message: String,
        causes: Vec<(String, String, String)>,
    },
}

struct Side {
    client: kube::Client,
    namespace: String,
    last_rv: Option<String>,
}

fn body_for(kind: Kind, name: &str, body: &Value) -> Value {
    let ar = kind.resource();
    let mut v = json!({"apiVersion": ar.api_version, "kind": ar.kind, "metadata": {"name": name}});
    json_patch::merge(&mut v, body);
    v
}

async fn run(side: &Side, kind: Kind, name: &str, op: &Op) -> Result<DynamicObject, kube::Error> {
    let api: Api<DynamicObject> =
        Api::namespaced_with(side.client.clone(), &side.namespace, &kind.resource());
    // An empty manager sends no fieldManager: the User-Agent names the manager.
    let manager = |m: &str| (!m.is_empty()).then(|| m.to_string());
    let pp = |m: &str| PatchParams {
        field_manager: manager(m),
        ..Default::default()
    };
    match op {
        Apply {
            manager,
            body,
            force,
            status,
        } => {
            let mut p = PatchParams::apply(manager);
            p.force = *force;
            let body = body_for(kind, name, body);
            if *status {
                api.patch_status(name, &p, &Patch::Apply(&body)).await
            } else {
                api.patch(name, &p, &Patch::Apply(&body)).await
            }
        }
        ApplyRaw { manager, body } => {
            let mut p = PatchParams::apply("x");
            p.field_manager = manager.map(str::to_string);
            api.patch(name, &p, &Patch::Apply(body)).await
        }
        Create { manager, body } => {
            let obj: DynamicObject = serde_json::from_value(body_for(kind, name, body)).unwrap();
            let pp = PostParams {
                field_manager: Some(manager.to_string()).filter(|m| !m.is_empty()),
                ..Default::default()
            };
            api.create(&pp, &obj).await
        }
        Put {
            manager,
            merge,
            status,
        } => {
            let current = api.get(name).await?;
            let mut v = serde_json::to_value(&current).unwrap();
            json_patch::merge(&mut v, merge);
            let pp = PostParams {
                field_manager: Some(manager.to_string()).filter(|m| !m.is_empty()),
                ..Default::default()
            };
            let obj: DynamicObject = serde_json::from_value(v).unwrap();
            if *status {
                api.replace_status(name, &pp, &obj).await
            } else {
                api.replace(name, &pp, &obj).await
            }
        }
        Merge {
            manager,
            patch,
            status,
        } => {
            if *status {
                api.patch_status(name, &pp(manager), &Patch::Merge(patch))
                    .await
            } else {
                api.patch(name, &pp(manager), &Patch::Merge(patch)).await
            }
        }
        Json { manager, patch } => {
            let p: json_patch::Patch = serde_json::from_value(patch.clone()).unwrap();
            api.patch(name, &pp(manager), &Patch::<()>::Json(p)).await
        }
    }
}

/// Fields the real server adds to Deployments (defaulting, the deployment controller) and
/// the fake does not: the book's "Server-side apply in the fake" (docs/src/guide/server-side-apply.md).
fn strip_deployment_extras(v: &mut Value) {
    let remove = |v: &mut Value, path: &str, key: &str| {
        if let Some(Value::Object(m)) = v.pointer_mut(path) {
            m.remove(key);
        }
    };
    if let Value::Object(m) = v {
        m.remove("status");
    }
    remove(
        v,
        "/metadata/annotations",
        "deployment.kubernetes.io/revision",
    );
    if v.pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .is_some_and(|a| a.is_empty())
    {
        remove(v, "/metadata", "annotations");
    }
    for k in [
        "progressDeadlineSeconds",
        "revisionHistoryLimit",
        "strategy",
    ] {
        remove(v, "/spec", k);
    }
    remove(v, "/spec/template/metadata", "creationTimestamp");
    for k in [
        "dnsPolicy",
        "restartPolicy",
        "schedulerName",
        "securityContext",
        "terminationGracePeriodSeconds",
    ] {
        remove(v, "/spec/template/spec", k);
    }
    if let Some(Value::Array(cs)) = v.pointer_mut("/spec/template/spec/containers") {
        for c in cs {
            if let Value::Object(c) = c {
                for k in [
                    "imagePullPolicy",
                    "terminationMessagePath",
                    "terminationMessagePolicy",
                ] {
                    c.remove(k);
                }
                if c.get("resources") == Some(&json!({})) {
                    c.remove("resources");
                }
            }
        }
    }
}

fn outcome(side: &mut Side, kind: Kind, result: Result<DynamicObject, kube::Error>) -> Outcome {
    match result {
        Ok(obj) => {
            let mut v = serde_json::to_value(&obj).unwrap();
            let rv = v
                .pointer("/metadata/resourceVersion")
                .and_then(Value::as_str)
                .map(str::to_string);
            let rv_changed = rv != side.last_rv;
            side.last_rv = rv;
            let mut managed_fields: Vec<Value> = v
                .pointer("/metadata/managedFields")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .filter(|e| e["manager"] != "kube-controller-manager")
                .map(|mut e| {
                    let has_time = e.get("time").is_some_and(|t| !t.is_null());
                    if let Value::Object(m) = &mut e {
                        m.remove("time");
                        m.insert("hasTime".into(), has_time.into());
                    }
                    e
                })
                .collect();
            managed_fields.sort_by_key(|e| {
                (
                    e["operation"].to_string(),
                    e["manager"].to_string(),
                    e["subresource"].to_string(),
                    e["apiVersion"].to_string(),
                )
            });
            if let Some(Value::Object(meta)) = v.get_mut("metadata") {
                for k in [
                    "uid",
                    "resourceVersion",
                    "creationTimestamp",
                    "managedFields",
                ] {
                    meta.remove(k);
                }
            }
            if kind == Kind::Deployment {
                strip_deployment_extras(&mut v);
            }
            // The deployment controller writes Deployments at moments of its own, so
            // whether a step wrote is only compared for the other kinds.
            let rv_changed = rv_changed && kind != Kind::Deployment;
            Outcome::Ok {
                object: v,
                managed_fields,
                rv_changed,
            }
        }
        Err(kube::Error::Api(s)) => {
            let mut causes: Vec<(String, String, String)> = s
                .details
                .map(|d| {
                    d.causes
                        .into_iter()
                        .map(|c| (c.reason, c.message, c.field))
                        .collect()
                })
                .unwrap_or_default();
            causes.sort();
            Outcome::Err {
                code: s.code,
                reason: s.reason,
                message: s.message,
                causes,
            }
        }
        Err(e) => Outcome::Err {
            code: 0,
            reason: "client error".into(),
            message: e.to_string(),
            causes: vec![],
        },
    }
}

/// Runs `scenarios` against the real API server and `server`, and returns how many
/// matched and a report of the first difference of each that did not.
async fn compare(server: &FakeApiServer, scenarios: &[Scenario], prefix: &str) -> (usize, String) {
    let mut config = env().config().clone();
    config.headers.push((
        http::header::USER_AGENT,
        http::HeaderValue::from_static(USER_AGENT),
    ));
    let real_client = kube::Client::try_from(config).expect("client");
    if let Err(e) = apply_crd(&real_client, &widget_crd()).await {
        panic!("installing the test CRD: {e:?}");
    }
    let ns = TestNamespace::new(&real_client, prefix).await;
    let mut real = Side {
        client: real_client,
        namespace: ns.name.clone(),
        last_rv: None,
    };
    let fake_service = tower::ServiceBuilder::new()
        .map_request(|mut req: http::Request<kube::client::Body>| {
            req.headers_mut().insert(
                http::header::USER_AGENT,
                http::HeaderValue::from_static(USER_AGENT),
            );
            req
        })
        .service(server.service());
    let mut fake = Side {
        client: kube::Client::new(fake_service, "default"),
        namespace: ns.name.clone(),
        last_rv: None,
    };

    let mut report = String::new();
    let mut passed = 0;
    for sc in scenarios {
        real.last_rv = None;
        fake.last_rv = None;
        let mut diverged = false;
        let mut trace = Vec::new();
        for (i, (kind, op)) in sc.steps.iter().enumerate() {
            let r = run(&real, *kind, sc.name, op).await;
            let r = outcome(&mut real, *kind, r);
            let f = run(&fake, *kind, sc.name, op).await;
            let f = outcome(&mut fake, *kind, f);
            trace.push(match &r {
                Outcome::Ok {
                    rv_changed,
                    managed_fields,
                    ..
                } => {
                    let what = match (*kind == Kind::Deployment, rv_changed) {
                        (true, _) => "ok",
                        (false, true) => "written",
                        (false, false) => "no-op",
                    };
                    let managers: Vec<&str> = managed_fields
                        .iter()
                        .filter_map(|e| e["manager"].as_str())
                        .collect();
                    format!("{what} [{}]", managers.join(" "))
                }
                Outcome::Err { code, message, .. } => format!("{code} {message:?}"),
            });
            if r != f {
                diverged = true;
                let _ = writeln!(
                    report,
                    "--- {} step {i} ({kind:?} {op:?})\n  real: {}\n  fake: {}",
                    sc.name,
                    serde_json::to_string(&format!("{r:?}")).unwrap(),
                    serde_json::to_string(&format!("{f:?}")).unwrap(),
                );
                break;
            }
        }
        println!("{}: {}", sc.name, trace.join(", "));
        if !diverged {
            passed += 1;
        }
    }
    (passed, report)
}

#[tokio::test]
async fn fake_server_side_apply_matches_the_real_apiserver() {
    let server = FakeApiServer::new();
    server.register_crd(&widget_crd());
    let scenarios = scenarios();
    let (passed, report) = compare(&server, &scenarios, "ssa-diff").await;
    println!(
        "{passed}/{} scenarios match the real apiserver",
        scenarios.len()
    );
    assert!(scenarios.len() >= 30, "at least 30 scenarios");
    assert!(
        report.is_empty(),
        "{passed}/{} scenarios match; differences:\n{report}",
        scenarios.len()
    );
}

/// The scenarios of structs and scalars only, against a fake that has no schema for the
/// kind (what a fake clientset registering a bare `FakeResource` gets): objects are
/// structs there too, so they must match.
#[tokio::test]
async fn a_fake_without_the_schema_matches_for_structs_and_scalars() {
    let server = FakeApiServer::new();
    for r in FakeResource::from_crd(&widget_crd()) {
        server.register(r);
    }
    const STRUCT_ONLY: &[&str] = &[
        "create-by-apply",
        "reapply-is-a-no-op",
        "drop-a-field",
        "drop-everything",
        "shared-ownership-then-drops",
        "conflict",
        "two-conflicts-two-managers",
        "force-takes-ownership",
        "granular-struct-drop",
        "update-after-apply-takes-ownership",
        "apply-after-create-conflicts",
        "put-takes-changed-fields-only",
        "update-removing-a-field",
        "status-apply-vs-main-apply",
        "status-put-and-merge",
        "apply-with-another-apiversion",
        "null-value-in-apply",
        "force-over-two-owners",
        "labels-and-annotations-granular",
        "conflicts-with-apply-and-update-managers",
        "writes-without-field-manager-belong-to-the-user-agent",
        "atomic-list-conflict",
        "list-without-type-is-atomic",
    ];
    let scenarios: Vec<Scenario> = scenarios()
        .into_iter()
        .filter(|s| STRUCT_ONLY.contains(&s.name))
        .collect();
    assert_eq!(
        scenarios.len(),
        STRUCT_ONLY.len(),
        "every name is a scenario"
    );
    let (passed, report) = compare(&server, &scenarios, "ssa-diff-untyped").await;
    println!(
        "{passed}/{} scenarios match the real apiserver without a schema in the fake",
        scenarios.len()
    );
    assert!(
        report.is_empty(),
        "{passed}/{} scenarios match; differences:\n{report}",
        scenarios.len()
    );
}
