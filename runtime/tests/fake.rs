//! The fake API server, driven through a real `kube::Client`, `kube::Api` and
//! kube-runtime's `watcher`.

// Reactors return `Result<Value, kube::core::Status>`; Status is large.
#![allow(clippy::result_large_err)]

use std::collections::BTreeMap;
use std::time::Duration;

use futures::{Stream, StreamExt};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch,
    PatchParams, PostParams, PropagationPolicy, WatchEvent, WatchParams,
};
use kube::core::ObjectMeta;
use kube::runtime::watcher::{self, Event};
use kube::{Resource, ResourceExt};
use kube_codegen_runtime::fake::{Action, FakeApiServer, FakeResource, Verb, VerbFilter, errors};
use serde_json::{Value, json};

const GROUP: &str = "samplecontroller.k8s.io";

fn foo_ar() -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(GROUP, "v1alpha1", "Foo"), "foos")
}

/// A server with the sample-controller `Foo` kind (namespaced, status subresource).
fn server() -> FakeApiServer {
    let server = FakeApiServer::new();
    server.register(
        FakeResource::namespaced(GROUP, "v1alpha1", "Foo", "foos").with_status_subresource(),
    );
    server
}

fn foos(server: &FakeApiServer, ns: &str) -> Api<DynamicObject> {
    Api::namespaced_with(server.client(), ns, &foo_ar())
}

fn foo(name: &str, data: Value) -> DynamicObject {
    DynamicObject::new(name, &foo_ar()).data(data)
}

fn cm(name: &str, labels: &[(&str, &str)], data: &[(&str, &str)]) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: Some(
                labels
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
            ..Default::default()
        },
        data: Some(
            data.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        ),
        ..Default::default()
    }
}

fn rv_of<K: Resource>(obj: &K) -> u64 {
    obj.meta()
        .resource_version
        .as_deref()
        .expect("resourceVersion")
        .parse()
        .expect("numeric resourceVersion")
}

fn api_error<T: std::fmt::Debug>(r: Result<T, kube::Error>) -> Box<kube::core::Status> {
    match r {
        Err(kube::Error::Api(s)) => s,
        other => panic!("expected an API error, got {other:?}"),
    }
}

async fn next<S: Stream + Unpin>(stream: &mut S) -> S::Item {
    tokio::time::timeout(Duration::from_secs(10), stream.next())
        .await
        .expect("timed out waiting for a stream item")
        .expect("stream ended")
}

fn names<K: Resource>(items: &[K]) -> Vec<String> {
    items
        .iter()
        .map(|o| o.meta().name.clone().unwrap_or_default())
        .collect()
}

#[tokio::test]
async fn configmap_create_get_list_replace_delete() {
    let server = server();
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "ns1");

    let created = api
        .create(&PostParams::default(), &cm("a", &[], &[("k", "v1")]))
        .await
        .unwrap();
    assert_eq!(created.metadata.namespace.as_deref(), Some("ns1"));
    assert_eq!(
        created.metadata.generation, None,
        "the API server keeps no generation for ConfigMaps"
    );
    let uid = created.metadata.uid.clone().expect("uid");
    assert_eq!(uid.len(), 36);
    assert!(created.metadata.creation_timestamp.is_some());
    let rv1 = rv_of(&created);

    let got = api.get("a").await.unwrap();
    assert_eq!(got, created);

    api.create(&PostParams::default(), &cm("b", &[], &[]))
        .await
        .unwrap();
    let other_ns: Api<ConfigMap> = Api::namespaced(server.client(), "ns0");
    other_ns
        .create(&PostParams::default(), &cm("z", &[], &[]))
        .await
        .unwrap();

    let list = api.list(&ListParams::default()).await.unwrap();
    assert_eq!(names(&list.items), ["a", "b"]);
    let list_rv: u64 = list.metadata.resource_version.unwrap().parse().unwrap();
    assert!(list_rv > rv1);
    // All namespaces: ordered by namespace, then name.
    let all: Api<ConfigMap> = Api::all(server.client());
    let all = all.list(&ListParams::default()).await.unwrap();
    assert_eq!(names(&all.items), ["z", "a", "b"]);

    let mut changed = got.clone();
    changed.data = Some(BTreeMap::from([("k".to_string(), "v2".to_string())]));
    let replaced = api
        .replace("a", &PostParams::default(), &changed)
        .await
        .unwrap();
    assert!(rv_of(&replaced) > list_rv);
    assert_eq!(replaced.metadata.uid.as_deref(), Some(uid.as_str()));
    assert_eq!(
        replaced.metadata.creation_timestamp,
        created.metadata.creation_timestamp
    );
    assert_eq!(replaced.data.as_ref().unwrap()["k"], "v2");
    assert_eq!(replaced.metadata.generation, None);

    // Replacing with identical content is a no-op: the resourceVersion stays.
    let again = api
        .replace("a", &PostParams::default(), &replaced)
        .await
        .unwrap();
    assert_eq!(rv_of(&again), rv_of(&replaced));

    let deleted = api.delete("a", &DeleteParams::default()).await.unwrap();
    let deleted = deleted.left().expect("the deleted object");
    assert_eq!(deleted.name_any(), "a");
    let status = api_error(api.get("a").await);
    assert_eq!(status.code, 404);
    assert_eq!(status.reason, "NotFound");
    assert_eq!(status.message, r#"configmaps "a" not found"#);
    assert!(api.get_opt("a").await.unwrap().is_none());
    let status = api_error(api.delete("a", &DeleteParams::default()).await);
    assert_eq!(status.code, 404);
}

#[tokio::test]
async fn generate_name_already_exists_invalid_and_unregistered() {
    let server = server();
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    let template = ConfigMap {
        metadata: ObjectMeta {
            generate_name: Some("gen-".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    let a = api.create(&PostParams::default(), &template).await.unwrap();
    let b = api.create(&PostParams::default(), &template).await.unwrap();
    for o in [&a, &b] {
        let name = o.name_any();
        assert!(
            name.starts_with("gen-") && name.len() == "gen-".len() + 5,
            "{name}"
        );
    }
    assert_ne!(a.name_any(), b.name_any());

    let dup = api_error(api.create(&PostParams::default(), &a_clean(&a)).await);
    assert_eq!((dup.code, dup.reason.as_str()), (409, "AlreadyExists"));
    assert!(dup.is_already_exists());
    assert_eq!(
        dup.message,
        format!("configmaps \"{}\" already exists", a.name_any())
    );

    let invalid = api_error(
        api.create(&PostParams::default(), &ConfigMap::default())
            .await,
    );
    assert_eq!((invalid.code, invalid.reason.as_str()), (422, "Invalid"));
    assert!(
        invalid.message.contains("name or generateName is required"),
        "{}",
        invalid.message
    );

    // Creating an object that still carries a resourceVersion fails like on a real server.
    let err = api_error(
        api.create(&PostParams::default(), &{
            let mut c = a_clean(&a);
            c.metadata.name = Some("fresh".into());
            c.metadata.resource_version = Some("5".into());
            c
        })
        .await,
    );
    assert_eq!(err.code, 500);
    assert!(err.message.contains("resourceVersion should not be set"));

    // A kind nobody registered: 404 like a server without the CRD.
    let unknown = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("example.com", "v1", "Bar"),
        "bars",
    );
    let bars: Api<DynamicObject> = Api::namespaced_with(server.client(), "default", &unknown);
    let err = api_error(bars.list(&ListParams::default()).await);
    assert_eq!((err.code, err.reason.as_str()), (404, "NotFound"));
    assert_eq!(
        err.message,
        "the server could not find the requested resource"
    );
    // `Foo` has a status subresource but no scale subresource.
    let err = api_error(foos(&server, "default").get_subresource("scale", "x").await);
    assert_eq!(err.code, 404);

    // Dry run: validated and answered, not stored.
    let dry = api
        .create(
            &PostParams {
                dry_run: true,
                ..Default::default()
            },
            &cm("dry", &[], &[]),
        )
        .await
        .unwrap();
    assert_eq!(dry.name_any(), "dry");
    assert!(api.get_opt("dry").await.unwrap().is_none());
}

/// The object as a client would re-send it for create: without server-set fields.
fn a_clean(o: &ConfigMap) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: o.metadata.name.clone(),
            ..Default::default()
        },
        ..Default::default()
    }
}

#[tokio::test]
async fn stale_resource_version_conflicts() {
    let server = server();
    let api = foos(&server, "default");
    let created = api
        .create(&PostParams::default(), &foo("x", json!({"spec": {"n": 1}})))
        .await
        .unwrap();

    let mut first = created.clone();
    first.data["spec"]["n"] = json!(2);
    let updated = api
        .replace("x", &PostParams::default(), &first)
        .await
        .unwrap();
    assert_eq!(updated.data["spec"]["n"], 2);

    // A second writer still holding the original resourceVersion loses.
    let mut second = created.clone();
    second.data["spec"]["n"] = json!(3);
    let result = api.replace("x", &PostParams::default(), &second).await;
    match result {
        Err(kube::Error::Api(s)) if s.code == 409 => {
            assert_eq!(s.reason, "Conflict");
            assert_eq!(
                s.message,
                "Operation cannot be fulfilled on foos.samplecontroller.k8s.io \"x\": the object has been modified; \
                 please apply your changes to the latest version and try again"
            );
            let details = s.details.as_ref().expect("details");
            assert_eq!(
                (
                    details.name.as_str(),
                    details.group.as_str(),
                    details.kind.as_str()
                ),
                ("x", GROUP, "foos")
            );
        }
        other => panic!("expected a 409 conflict, got {other:?}"),
    }
    assert_eq!(
        api.get("x").await.unwrap().data["spec"]["n"],
        2,
        "the losing write changed nothing"
    );

    // Without a resourceVersion the update is unconditional.
    second.metadata.resource_version = None;
    let forced = api
        .replace("x", &PostParams::default(), &second)
        .await
        .unwrap();
    assert_eq!(forced.data["spec"]["n"], 3);

    // A merge patch carrying a stale resourceVersion is a conflict too.
    let stale =
        json!({"metadata": {"resourceVersion": created.resource_version()}, "spec": {"n": 4}});
    let err = api_error(
        api.patch("x", &PatchParams::default(), &Patch::Merge(&stale))
            .await,
    );
    assert_eq!(err.code, 409);

    // Update of a missing object: 404.
    let err = api_error(
        api.replace(
            "missing",
            &PostParams::default(),
            &foo("missing", json!({})),
        )
        .await,
    );
    assert_eq!(err.code, 404);
    assert_eq!(
        err.message,
        r#"foos.samplecontroller.k8s.io "missing" not found"#
    );
}

#[tokio::test]
async fn status_subresource_semantics() {
    let server = server();
    let api = foos(&server, "default");

    // Status in a create is dropped.
    let created = api
        .create(
            &PostParams::default(),
            &foo("x", json!({"spec": {"n": 1}, "status": {"ready": true}})),
        )
        .await
        .unwrap();
    assert!(created.data.get("status").is_none(), "{:?}", created.data);
    assert_eq!(created.metadata.generation, Some(1));

    // The main resource ignores status changes, and bumps the generation on spec changes.
    let mut update = created.clone();
    update.data["spec"]["n"] = json!(2);
    update.data["status"] = json!({"ready": true});
    let updated = api
        .replace("x", &PostParams::default(), &update)
        .await
        .unwrap();
    assert_eq!(updated.data["spec"]["n"], 2);
    assert!(updated.data.get("status").is_none());
    assert_eq!(updated.metadata.generation, Some(2));

    // The status endpoint changes only status: spec and labels in the body are ignored.
    let mut status_update = updated.clone();
    status_update.data["spec"]["n"] = json!(99);
    status_update.data["status"] = json!({"ready": true, "observedGeneration": 2});
    status_update
        .labels_mut()
        .insert("ignored".into(), "yes".into());
    let after_status = api
        .replace_status("x", &PostParams::default(), &status_update)
        .await
        .unwrap();
    assert_eq!(after_status.data["status"]["ready"], true);
    assert_eq!(after_status.data["spec"]["n"], 2);
    assert!(after_status.labels().get("ignored").is_none());
    assert_eq!(
        after_status.metadata.generation,
        Some(2),
        "status writes keep the generation"
    );
    assert!(rv_of(&after_status) > rv_of(&updated));

    // Status updates check the resourceVersion as well.
    let err = api_error(
        api.replace_status("x", &PostParams::default(), &status_update)
            .await,
    );
    assert_eq!(err.code, 409);

    // Patches: main resource ignores status, /status ignores the rest.
    let p = api
        .patch(
            "x",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"m": 1}, "status": {"ready": false}})),
        )
        .await
        .unwrap();
    assert_eq!(p.data["spec"], json!({"n": 2, "m": 1}));
    assert_eq!(p.data["status"]["ready"], true);
    let p = api
        .patch_status(
            "x",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"m": 2}, "status": {"ready": false}})),
        )
        .await
        .unwrap();
    assert_eq!(p.data["spec"], json!({"n": 2, "m": 1}));
    assert_eq!(
        p.data["status"],
        json!({"ready": false, "observedGeneration": 2})
    );
    assert_eq!(
        api.get_status("x").await.unwrap().data["status"]["ready"],
        false
    );

    // Built-in kinds: a Deployment's status is a subresource too.
    let deployments: Api<Deployment> = Api::namespaced(server.client(), "default");
    let mut d: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {"metadata": {"labels": {"app": "web"}}}},
        "status": {"replicas": 3}
    }))
    .unwrap();
    d = deployments
        .create(&PostParams::default(), &d)
        .await
        .unwrap();
    assert!(d.status.is_none());
    d.status = Some(serde_json::from_value(json!({"replicas": 3, "readyReplicas": 3})).unwrap());
    let d = deployments
        .replace_status("web", &PostParams::default(), &d)
        .await
        .unwrap();
    assert_eq!(d.status.as_ref().unwrap().ready_replicas, Some(3));

    // ConfigMaps have no status subresource.
    let cms: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    cms.create(&PostParams::default(), &cm("c", &[], &[]))
        .await
        .unwrap();
    assert_eq!(api_error(cms.get_status("c").await).code, 404);
}

#[tokio::test]
async fn merge_json_strategic_and_apply_patches() {
    let server = server();
    let api: Api<Deployment> = Api::namespaced(server.client(), "default");
    let d: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}}}}
    }))
    .unwrap();
    let created = api.create(&PostParams::default(), &d).await.unwrap();

    let merged = api
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"metadata": {"labels": {"tier": "front"}}, "spec": {"replicas": 2}}),
            ),
        )
        .await
        .unwrap();
    assert_eq!(merged.spec.replicas, Some(2));
    assert_eq!(merged.labels().get("app").map(String::as_str), Some("web"));
    assert_eq!(
        merged.labels().get("tier").map(String::as_str),
        Some("front")
    );
    assert_eq!(merged.metadata.generation, Some(2));
    assert!(rv_of(&merged) > rv_of(&created));

    // Merge patch null removes a key.
    let removed = api
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"tier": null}}})),
        )
        .await
        .unwrap();
    assert!(!removed.labels().contains_key("tier"));
    assert_eq!(
        removed.metadata.generation,
        Some(2),
        "metadata-only changes keep the generation"
    );

    let ops: json_patch::Patch = serde_json::from_value(json!([
        {"op": "test", "path": "/spec/replicas", "value": 2},
        {"op": "replace", "path": "/spec/replicas", "value": 5},
        {"op": "add", "path": "/metadata/annotations", "value": {"note": "json-patch"}}
    ]))
    .unwrap();
    let patched = api
        .patch("web", &PatchParams::default(), &Patch::<()>::Json(ops))
        .await
        .unwrap();
    assert_eq!(patched.spec.replicas, Some(5));
    assert_eq!(patched.annotations()["note"], "json-patch");

    // A failing JSON-patch test op is rejected and changes nothing.
    let failing: json_patch::Patch =
        serde_json::from_value(json!([{"op": "test", "path": "/spec/replicas", "value": 1}]))
            .unwrap();
    let err = api_error(
        api.patch("web", &PatchParams::default(), &Patch::<()>::Json(failing))
            .await,
    );
    assert_eq!(err.code, 422);
    assert_eq!(api.get("web").await.unwrap().spec.replicas, Some(5));

    let smp = api
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Strategic(json!({"spec": {"paused": true}})),
        )
        .await
        .unwrap();
    assert_eq!(smp.spec.paused, Some(true));
    assert_eq!(smp.spec.replicas, Some(5));

    // Patching a missing object: 404.
    let err = api_error(
        api.patch("nope", &PatchParams::default(), &Patch::Merge(json!({})))
            .await,
    );
    assert_eq!(err.code, 404);

    // Server-side apply: fieldManager is required.
    let apply_body = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"applied": "yes"}},
        "spec": {"replicas": 7}
    });
    let mut no_manager = PatchParams::apply("x");
    no_manager.field_manager = None;
    let err = api_error(
        api.patch("web", &no_manager, &Patch::Apply(&apply_body))
            .await,
    );
    assert_eq!(err.code, 422);

    // Apply on an existing object merges and records managedFields. The object was
    // created and patched without a fieldManager or User-Agent, so those writes belong to
    // `unknown` (Update), which owns spec.replicas: taking it over needs force.
    let err = api_error(
        api.patch(
            "web",
            &PatchParams::apply("my-controller"),
            &Patch::Apply(&apply_body),
        )
        .await,
    );
    assert_eq!(err.code, 409);
    assert_eq!(
        err.message,
        "Apply failed with 1 conflict: conflict with \"unknown\" using apps/v1: .spec.replicas"
    );
    let applied = api
        .patch(
            "web",
            &PatchParams::apply("my-controller").force(),
            &Patch::Apply(&apply_body),
        )
        .await
        .unwrap();
    assert_eq!(applied.spec.replicas, Some(7));
    assert_eq!(
        applied.spec.paused,
        Some(true),
        "fields the applier never owned stay"
    );
    assert_eq!(applied.labels()["applied"], "yes");
    assert_eq!(applied.labels()["app"], "web");
    let mf = applied
        .metadata
        .managed_fields
        .as_ref()
        .expect("managedFields");
    assert_eq!(mf.len(), 2, "{mf:?}");
    assert_eq!(mf[0].manager.as_deref(), Some("my-controller"));
    assert_eq!(mf[0].operation.as_deref(), Some("Apply"));
    assert_eq!(mf[0].api_version.as_deref(), Some("apps/v1"));
    assert_eq!(
        mf[0].fields_v1.as_ref().unwrap().0,
        json!({"f:metadata": {"f:labels": {"f:applied": {}}}, "f:spec": {"f:replicas": {}}})
    );
    assert_eq!(mf[1].manager.as_deref(), Some("unknown"));
    assert_eq!(mf[1].operation.as_deref(), Some("Update"));
    assert!(
        mf[1].fields_v1.as_ref().unwrap().0["f:spec"]
            .get("f:replicas")
            .is_none(),
        "force moved spec.replicas to the applier"
    );
    // Re-applying the same thing is a no-op.
    let reapplied = api
        .patch(
            "web",
            &PatchParams::apply("my-controller").force(),
            &Patch::Apply(&apply_body),
        )
        .await
        .unwrap();
    assert_eq!(rv_of(&reapplied), rv_of(&applied));

    // Apply creates missing objects (upsert), dropping status.
    let new_body = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "fresh"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "fresh"}},
                 "template": {"metadata": {"labels": {"app": "fresh"}}}},
        "status": {"replicas": 9}
    });
    let fresh = api
        .patch(
            "fresh",
            &PatchParams::apply("my-controller"),
            &Patch::Apply(&new_body),
        )
        .await
        .unwrap();
    assert_eq!(fresh.metadata.generation, Some(1));
    assert!(fresh.status.is_none());
    assert!(fresh.metadata.uid.is_some());

    // Apply to /status sets status with its own managedFields entry.
    let status_body = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "fresh"},
                             "status": {"replicas": 1, "readyReplicas": 1}});
    let fresh = api
        .patch_status(
            "fresh",
            &PatchParams::apply("my-controller"),
            &Patch::Apply(&status_body),
        )
        .await
        .unwrap();
    assert_eq!(fresh.status.as_ref().unwrap().ready_replicas, Some(1));
    let mf = fresh.metadata.managed_fields.as_ref().unwrap();
    assert_eq!(mf.len(), 2);
    assert_eq!(mf[1].subresource.as_deref(), Some("status"));

    let actions = server.actions();
    let patch_types: Vec<_> = actions
        .iter()
        .filter_map(|a| a.patch_type.as_deref())
        .collect();
    assert!(patch_types.contains(&"application/merge-patch+json"));
    assert!(patch_types.contains(&"application/json-patch+json"));
    assert!(patch_types.contains(&"application/strategic-merge-patch+json"));
    assert!(patch_types.contains(&"application/apply-patch+yaml"));
}

#[tokio::test]
async fn label_and_field_selectors_on_list_and_delete_collection() {
    let server = server();
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    for (name, app, tier) in [
        ("a", "web", "front"),
        ("b", "web", "back"),
        ("c", "db", "back"),
        ("d", "cache", ""),
    ] {
        let labels: Vec<(&str, &str)> = if tier.is_empty() {
            vec![("app", app)]
        } else {
            vec![("app", app), ("tier", tier)]
        };
        api.create(&PostParams::default(), &cm(name, &labels, &[]))
            .await
            .unwrap();
    }
    let list = |sel: &'static str| {
        let api = api.clone();
        async move {
            names(
                &api.list(&ListParams::default().labels(sel))
                    .await
                    .unwrap()
                    .items,
            )
        }
    };
    assert_eq!(list("app=web").await, ["a", "b"]);
    assert_eq!(list("app==web,tier=back").await, ["b"]);
    assert_eq!(list("app!=web").await, ["c", "d"]);
    assert_eq!(list("app in (db,cache)").await, ["c", "d"]);
    assert_eq!(list("tier notin (back)").await, ["a", "d"]);
    assert_eq!(list("tier").await, ["a", "b", "c"]);
    assert_eq!(list("!tier").await, ["d"]);
    let err = api_error(api.list(&ListParams::default().labels("app in (web")).await);
    assert_eq!(err.code, 400);

    let by_name = api
        .list(&ListParams::default().fields("metadata.name=c"))
        .await
        .unwrap();
    assert_eq!(names(&by_name.items), ["c"]);
    let not_name = api
        .list(&ListParams::default().fields("metadata.name!=c,metadata.namespace=default"))
        .await
        .unwrap();
    assert_eq!(names(&not_name.items), ["a", "b", "d"]);

    // Field selectors on arbitrary paths of a custom kind.
    let foos = foos(&server, "default");
    for (name, color) in [("f1", "Red"), ("f2", "Blue"), ("f3", "Red")] {
        foos.create(
            &PostParams::default(),
            &foo(name, json!({"spec": {"color": color}})),
        )
        .await
        .unwrap();
    }
    let red = foos
        .list(&ListParams::default().fields("spec.color=Red"))
        .await
        .unwrap();
    assert_eq!(names(&red.items), ["f1", "f3"]);
    assert_eq!(red.items[0].types.as_ref().unwrap().kind, "Foo");

    // Pagination.
    let page1 = api.list(&ListParams::default().limit(3)).await.unwrap();
    assert_eq!(names(&page1.items), ["a", "b", "c"]);
    let token = page1.metadata.continue_.clone().expect("continue token");
    assert_eq!(page1.metadata.remaining_item_count, Some(1));
    let page2 = api
        .list(&ListParams::default().limit(3).continue_token(&token))
        .await
        .unwrap();
    assert_eq!(names(&page2.items), ["d"]);
    assert!(
        page2
            .metadata
            .continue_
            .as_deref()
            .unwrap_or_default()
            .is_empty()
    );

    // Metadata-only lists and gets.
    let meta = api
        .list_metadata(&ListParams::default().labels("app=web"))
        .await
        .unwrap();
    assert_eq!(names(&meta.items), ["a", "b"]);
    assert_eq!(api.get_metadata("c").await.unwrap().labels()["app"], "db");

    // deletecollection with a selector deletes only the matches.
    let deleted = api
        .delete_collection(
            &DeleteParams::default(),
            &ListParams::default().labels("tier=back"),
        )
        .await
        .unwrap();
    let deleted = deleted.left().expect("a list of deleted objects");
    assert_eq!(names(&deleted.items), ["b", "c"]);
    assert_eq!(
        names(&api.list(&ListParams::default()).await.unwrap().items),
        ["a", "d"]
    );
}

#[tokio::test]
async fn watch_events_in_order_with_selectors() {
    let server = server();
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    let other: Api<ConfigMap> = Api::namespaced(server.client(), "other");
    api.create(
        &PostParams::default(),
        &cm("before", &[("app", "web")], &[]),
    )
    .await
    .unwrap();
    let rv = api
        .list(&ListParams::default())
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap();

    let mut all = api
        .watch(&WatchParams::default(), &rv)
        .await
        .unwrap()
        .boxed();
    let mut web = api
        .watch(&WatchParams::default().labels("app=web"), &rv)
        .await
        .unwrap()
        .boxed();
    let mut by_name = api
        .watch(&WatchParams::default().fields("metadata.name=x"), &rv)
        .await
        .unwrap()
        .boxed();

    api.create(&PostParams::default(), &cm("x", &[("app", "web")], &[]))
        .await
        .unwrap();
    other
        .create(
            &PostParams::default(),
            &cm("elsewhere", &[("app", "web")], &[]),
        )
        .await
        .unwrap();
    api.create(&PostParams::default(), &cm("y", &[("app", "db")], &[]))
        .await
        .unwrap();
    api.patch(
        "x",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"k": "v"}})),
    )
    .await
    .unwrap();
    // x stops matching app=web, then starts again.
    api.patch(
        "x",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"labels": {"app": "db"}}})),
    )
    .await
    .unwrap();
    api.patch(
        "x",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"labels": {"app": "web"}}})),
    )
    .await
    .unwrap();
    api.delete("x", &DeleteParams::default()).await.unwrap();

    let describe = |e: WatchEvent<ConfigMap>| match e {
        WatchEvent::Added(o) => format!("ADDED {}", o.name_any()),
        WatchEvent::Modified(o) => format!("MODIFIED {}", o.name_any()),
        WatchEvent::Deleted(o) => format!("DELETED {}", o.name_any()),
        WatchEvent::Bookmark(_) => "BOOKMARK".into(),
        WatchEvent::Error(e) => format!("ERROR {}", e.code),
    };
    let mut seen = Vec::new();
    for _ in 0..6 {
        seen.push(describe(next(&mut all).await.unwrap()));
    }
    assert_eq!(
        seen,
        [
            "ADDED x",
            "ADDED y",
            "MODIFIED x",
            "MODIFIED x",
            "MODIFIED x",
            "DELETED x"
        ]
    );

    let mut seen = Vec::new();
    for _ in 0..5 {
        seen.push(describe(next(&mut web).await.unwrap()));
    }
    assert_eq!(
        seen,
        ["ADDED x", "MODIFIED x", "DELETED x", "ADDED x", "DELETED x"]
    );

    let mut seen = Vec::new();
    for _ in 0..5 {
        seen.push(describe(next(&mut by_name).await.unwrap()));
    }
    assert_eq!(
        seen,
        [
            "ADDED x",
            "MODIFIED x",
            "MODIFIED x",
            "MODIFIED x",
            "DELETED x"
        ]
    );

    // Resource versions in the events increase.
    let mut replay = api
        .watch(&WatchParams::default(), &rv)
        .await
        .unwrap()
        .boxed();
    let mut last = 0;
    for _ in 0..6 {
        let rv = match next(&mut replay).await.unwrap() {
            WatchEvent::Added(o) | WatchEvent::Modified(o) | WatchEvent::Deleted(o) => rv_of(&o),
            other => panic!("unexpected {other:?}"),
        };
        assert!(rv > last);
        last = rv;
    }

    // resourceVersion "0": synthetic ADDED for the current state first.
    let mut from_zero = api
        .watch(&WatchParams::default(), "0")
        .await
        .unwrap()
        .boxed();
    let mut first = Vec::new();
    for _ in 0..2 {
        first.push(describe(next(&mut from_zero).await.unwrap()));
    }
    assert_eq!(first, ["ADDED before", "ADDED y"]);

    // timeoutSeconds ends the stream.
    let mut short = api
        .watch(
            &WatchParams::default().timeout(1),
            &server.resource_version(),
        )
        .await
        .unwrap()
        .boxed();
    let end = tokio::time::timeout(Duration::from_secs(10), short.next())
        .await
        .expect("stream should end");
    assert!(end.is_none());
}

#[tokio::test]
async fn watch_from_too_old_resource_version_is_gone() {
    let server = server();
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    let start = server.resource_version();
    server.set_event_history_limit(2);
    for name in ["a", "b", "c", "d"] {
        api.create(&PostParams::default(), &cm(name, &[], &[]))
            .await
            .unwrap();
    }
    let mut stream = api
        .watch(&WatchParams::default(), &start)
        .await
        .unwrap()
        .boxed();
    match next(&mut stream).await.unwrap() {
        WatchEvent::Error(e) => {
            assert_eq!(e.code, 410);
            assert_eq!(e.reason, "Expired");
            assert!(
                e.message.starts_with("too old resource version"),
                "{}",
                e.message
            );
        }
        other => panic!("expected a 410 error event, got {other:?}"),
    }
    // The two newest events are still there.
    let rv_b = api.get("b").await.unwrap().resource_version().unwrap();
    let mut stream = api
        .watch(&WatchParams::default(), &rv_b)
        .await
        .unwrap()
        .boxed();
    for want in ["c", "d"] {
        match next(&mut stream).await.unwrap() {
            WatchEvent::Added(o) => assert_eq!(o.name_any(), want),
            other => panic!("unexpected {other:?}"),
        }
    }
    server.compact();
    let mut stream = api
        .watch(&WatchParams::default(), &rv_b)
        .await
        .unwrap()
        .boxed();
    assert!(matches!(next(&mut stream).await.unwrap(), WatchEvent::Error(e) if e.code == 410));
}

fn describe<K: Resource>(e: &Event<K>) -> String {
    match e {
        Event::Init => "Init".into(),
        Event::InitApply(o) => {
            format!("InitApply {}", o.meta().name.as_deref().unwrap_or_default())
        }
        Event::InitDone => "InitDone".into(),
        Event::Apply(o) => format!("Apply {}", o.meta().name.as_deref().unwrap_or_default()),
        Event::Delete(o) => format!("Delete {}", o.meta().name.as_deref().unwrap_or_default()),
    }
}

#[tokio::test]
async fn kube_runtime_watcher_lists_then_watches() {
    let server = server();
    let api = foos(&server, "default");
    for name in ["a", "b"] {
        api.create(&PostParams::default(), &foo(name, json!({"spec": {}})))
            .await
            .unwrap();
    }
    let mut w = watcher::watcher(api.clone(), watcher::Config::default()).boxed();
    let mut seen = Vec::new();
    for _ in 0..4 {
        seen.push(describe(&next(&mut w).await.unwrap()));
    }
    assert_eq!(seen, ["Init", "InitApply a", "InitApply b", "InitDone"]);

    api.create(&PostParams::default(), &foo("c", json!({"spec": {}})))
        .await
        .unwrap();
    api.patch(
        "a",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"x": 1}})),
    )
    .await
    .unwrap();
    api.delete("b", &DeleteParams::default()).await.unwrap();
    let mut seen = Vec::new();
    for _ in 0..3 {
        seen.push(describe(&next(&mut w).await.unwrap()));
    }
    assert_eq!(seen, ["Apply c", "Apply a", "Delete b"]);

    // The list went through kube-runtime's real request path.
    let verbs: Vec<Verb> = server
        .actions()
        .iter()
        .filter(|a| a.resource == "foos")
        .map(|a| a.verb)
        .collect();
    let list_at = verbs.iter().position(|v| *v == Verb::List).expect("a list");
    assert!(verbs[list_at..].contains(&Verb::Watch), "{verbs:?}");

    // Streaming lists (sendInitialEvents) work too, with a label selector.
    api.patch(
        "c",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"labels": {"pick": "me"}}})),
    )
    .await
    .unwrap();
    let mut s = watcher::watcher(
        api.clone(),
        watcher::Config::default()
            .streaming_lists()
            .labels("pick=me"),
    )
    .boxed();
    let mut seen = Vec::new();
    for _ in 0..3 {
        seen.push(describe(&next(&mut s).await.unwrap()));
    }
    assert_eq!(seen, ["Init", "InitApply c", "InitDone"]);
    api.delete("c", &DeleteParams::default()).await.unwrap();
    assert_eq!(describe(&next(&mut s).await.unwrap()), "Delete c");
}

#[tokio::test]
async fn kube_runtime_watcher_relists_after_410() {
    let server = server();
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    api.create(&PostParams::default(), &cm("a", &[], &[]))
        .await
        .unwrap();
    // The server ends each watch after a second, so the watcher re-watches from its last
    // resourceVersion, which the compaction below makes too old.
    let mut w = watcher::watcher(api.clone(), watcher::Config::default().timeout(1)).boxed();
    let mut seen = Vec::new();
    for _ in 0..3 {
        seen.push(describe(&next(&mut w).await.unwrap()));
    }
    assert_eq!(seen, ["Init", "InitApply a", "InitDone"]);
    server.add(&cm("b", &[], &[])).unwrap();
    assert_eq!(describe(&next(&mut w).await.unwrap()), "Apply b");
    // Leave the watcher unpolled past the server's 1s watch timeout, then write and
    // compact: its watch ends, and the re-watch from its last resourceVersion (b's) is
    // answered with a 410, after which the watcher lists again.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    server.add(&cm("c", &[], &[])).unwrap();
    server.compact();
    let mut outcome = Vec::new();
    while outcome.last().map(String::as_str) != Some("InitDone") {
        match next(&mut w).await {
            Err(watcher::Error::WatchError(s)) => {
                assert_eq!((s.code, s.reason.as_str()), (410, "Expired"));
                outcome.push("410".to_string());
            }
            Err(e) => panic!("unexpected watcher error {e:?}"),
            Ok(e) => outcome.push(describe(&e)),
        }
        assert!(outcome.len() < 10, "{outcome:?}");
    }
    assert_eq!(
        outcome,
        [
            "410",
            "Init",
            "InitApply a",
            "InitApply b",
            "InitApply c",
            "InitDone"
        ]
    );
    let watches = server
        .actions()
        .iter()
        .filter(|a| a.verb == Verb::Watch)
        .count();
    let lists = server
        .actions()
        .iter()
        .filter(|a| a.verb == Verb::List)
        .count();
    assert_eq!(
        (lists, watches),
        (2, 2),
        "list, watch, re-watch (410), relist"
    );
}

#[tokio::test]
async fn finalizers_delay_deletion() {
    let server = server();
    let api = foos(&server, "default");
    let mut f = foo("x", json!({"spec": {}}));
    f.metadata.finalizers = Some(vec!["example.com/cleanup".into()]);
    api.create(&PostParams::default(), &f).await.unwrap();
    let rv = server.resource_version();
    let mut events = api
        .watch(&WatchParams::default(), &rv)
        .await
        .unwrap()
        .boxed();

    let pending = api
        .delete(
            "x",
            &DeleteParams {
                propagation_policy: Some(PropagationPolicy::Foreground),
                ..Default::default()
            },
        )
        .await
        .unwrap()
        .left()
        .expect("the object, still there");
    assert!(pending.metadata.deletion_timestamp.is_some());
    let still = api.get("x").await.unwrap();
    assert!(still.metadata.deletion_timestamp.is_some());
    assert!(
        matches!(next(&mut events).await.unwrap(), WatchEvent::Modified(o) if o.metadata.deletion_timestamp.is_some())
    );

    // A second delete changes nothing.
    api.delete("x", &DeleteParams::default()).await.unwrap();
    assert_eq!(
        api.get("x").await.unwrap().resource_version(),
        still.resource_version()
    );

    // New finalizers can't be added while deleting.
    let err = api_error(
        api.patch(
            "x",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": ["a", "example.com/cleanup"]}})),
        )
        .await,
    );
    assert_eq!(err.code, 422);

    // Removing the last finalizer completes the deletion.
    let mut done = still.clone();
    done.metadata.finalizers = None;
    api.replace("x", &PostParams::default(), &done)
        .await
        .unwrap();
    assert!(api.get_opt("x").await.unwrap().is_none());
    assert!(
        matches!(next(&mut events).await.unwrap(), WatchEvent::Deleted(o) if o.name_any() == "x")
    );

    // Delete preconditions.
    let y = api
        .create(&PostParams::default(), &foo("y", json!({})))
        .await
        .unwrap();
    let err = api_error(
        api.delete(
            "y",
            &DeleteParams::default().preconditions(kube::api::Preconditions {
                uid: Some("not-the-uid".into()),
                resource_version: None,
            }),
        )
        .await,
    );
    assert_eq!(err.code, 409);
    assert!(
        err.message
            .contains("Precondition failed: UID in precondition"),
        "{}",
        err.message
    );
    api.delete(
        "y",
        &DeleteParams::default().preconditions(kube::api::Preconditions {
            uid: y.uid(),
            resource_version: y.resource_version(),
        }),
    )
    .await
    .unwrap();
    assert!(api.get_opt("y").await.unwrap().is_none());
}

fn summary(a: &Action) -> String {
    format!(
        "{} {}{} ns={} name={}",
        a.verb,
        a.resource,
        a.subresource
            .as_deref()
            .map(|s| format!("/{s}"))
            .unwrap_or_default(),
        a.namespace.as_deref().unwrap_or("-"),
        a.name.as_deref().unwrap_or("-"),
    )
}

#[tokio::test]
async fn action_log_records_requests_in_order() {
    let server = server();
    let api = foos(&server, "ns1");
    let created = api
        .create(&PostParams::default(), &foo("x", json!({"spec": {"n": 1}})))
        .await
        .unwrap();
    api.get("x").await.unwrap();
    api.list(&ListParams::default().labels("a=b"))
        .await
        .unwrap();
    api.replace("x", &PostParams::default(), &created)
        .await
        .unwrap();
    api.replace_status("x", &PostParams::default(), &created)
        .await
        .unwrap();
    api.patch(
        "x",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"n": 2}})),
    )
    .await
    .unwrap();
    api.delete("x", &DeleteParams::default()).await.unwrap();
    let _ = api.get("x").await;
    let namespaces: Api<Namespace> = Api::all(server.client());
    namespaces.list(&ListParams::default()).await.unwrap();
    api.delete_collection(&DeleteParams::default(), &ListParams::default())
        .await
        .unwrap();

    let actions = server.actions();
    let got: Vec<String> = actions.iter().map(summary).collect();
    assert_eq!(
        got,
        [
            "create foos ns=ns1 name=-",
            "get foos ns=ns1 name=x",
            "list foos ns=ns1 name=-",
            "update foos ns=ns1 name=x",
            "update foos/status ns=ns1 name=x",
            "patch foos ns=ns1 name=x",
            "delete foos ns=ns1 name=x",
            "get foos ns=ns1 name=x",
            "list namespaces ns=- name=-",
            "deletecollection foos ns=ns1 name=-",
        ]
    );
    assert!(
        actions
            .iter()
            .filter(|a| a.resource == "foos")
            .all(|a| a.group == GROUP && a.version == "v1alpha1")
    );
    assert_eq!(actions[0].object.as_ref().unwrap()["spec"]["n"], 1);
    assert_eq!(actions[2].label_selector.as_deref(), Some("a=b"));
    assert_eq!(
        actions[5].patch_type.as_deref(),
        Some("application/merge-patch+json")
    );
    assert_eq!(actions[5].object, Some(json!({"spec": {"n": 2}})));
    assert!(
        actions[4].matches(Verb::Update, "foos/status")
            && actions[4].matches(VerbFilter::Any, "foos")
    );
    assert!(!actions[3].matches(Verb::Update, "foos/status"));

    server.clear_actions();
    assert!(server.actions().is_empty());
    // Direct tracker access is not an action.
    server.add(&cm("direct", &[], &[])).unwrap();
    assert!(server.actions().is_empty());
}

#[tokio::test]
async fn reactors_inject_errors_and_responses() {
    let server = server();
    let api = foos(&server, "default");
    let created = api
        .create(&PostParams::default(), &foo("x", json!({"spec": {"n": 1}})))
        .await
        .unwrap();

    server.prepend_reactor(Verb::Update, "foos", |action| {
        (action.name.as_deref() == Some("x")).then(|| {
            Err(errors::conflict(
                GROUP,
                "foos",
                "x",
                "injected by a reactor",
            ))
        })
    });
    let mut changed = created.clone();
    changed.data["spec"]["n"] = json!(2);
    let err = api_error(api.replace("x", &PostParams::default(), &changed).await);
    assert_eq!((err.code, err.reason.as_str()), (409, "Conflict"));
    assert_eq!(
        err.message,
        r#"Operation cannot be fulfilled on foos.samplecontroller.k8s.io "x": injected by a reactor"#
    );
    // "foos" also covers its status subresource.
    assert_eq!(
        api_error(
            api.replace_status("x", &PostParams::default(), &changed)
                .await
        )
        .code,
        409
    );
    // The tracker was never reached.
    assert_eq!(api.get("x").await.unwrap().data["spec"]["n"], 1);
    assert_eq!(
        api.get("x").await.unwrap().resource_version(),
        created.resource_version()
    );
    // Other verbs fall through to the tracker.
    api.patch(
        "x",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"n": 3}})),
    )
    .await
    .unwrap();
    assert_eq!(api.get("x").await.unwrap().data["spec"]["n"], 3);

    // The newest reactor runs first; a reactor can answer with an object.
    let fake_answer = serde_json::to_value(foo("x", json!({"spec": {"n": 42}}))).unwrap();
    server.prepend_reactor(Verb::Get, "*", move |_| Some(Ok(fake_answer.clone())));
    assert_eq!(api.get("x").await.unwrap().data["spec"]["n"], 42);
    server.prepend_reactor(VerbFilter::Any, "*", |_| {
        Some(Err(errors::internal_error("boom")))
    });
    let err = api_error(api.get("x").await);
    assert_eq!((err.code, err.reason.as_str()), (500, "InternalError"));
    server.clear_reactors();
    assert_eq!(api.get("x").await.unwrap().data["spec"]["n"], 3);

    // Reactors see every request, even for resources the tracker does not serve.
    let pods: Api<k8s_openapi::api::core::v1::Pod> = Api::namespaced(server.client(), "default");
    assert_eq!(
        api_error(pods.evict("p", &Default::default()).await).code,
        404,
        "not emulated by default"
    );
    server.prepend_reactor(Verb::Create, "pods/eviction", |_| {
        Some(Ok(
            json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}),
        ))
    });
    let status = pods.evict("p", &Default::default()).await.unwrap();
    assert!(status.is_success());
    let last = server.actions().pop().unwrap();
    assert_eq!(summary(&last), "create pods/eviction ns=default name=p");
    assert_eq!(last.object.unwrap()["metadata"]["name"], "p");
}

#[tokio::test]
async fn direct_tracker_access_and_discovery() {
    let server = server();
    let mut seeded = cm("seed", &[("a", "b")], &[("k", "v")]);
    seeded.metadata.namespace = Some("ns1".into());
    let stored = server.add(&seeded).unwrap();
    assert!(stored["metadata"]["uid"].is_string());
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "ns1");
    let got = api.get("seed").await.unwrap();
    assert_eq!(got.data.as_ref().unwrap()["k"], "v");
    assert_eq!(server.get::<ConfigMap>(Some("ns1"), "seed").unwrap(), got);
    assert_eq!(server.list::<ConfigMap>(None).len(), 1);
    assert!(
        server
            .get_object("", "configmaps", Some("ns1"), "seed")
            .is_some()
    );
    assert!(
        server
            .get_object("", "configmaps", Some("ns2"), "seed")
            .is_none()
    );

    // add() keeps status (tracker semantics), unlike a create through the API.
    let mut f = foo(
        "with-status",
        json!({"spec": {}, "status": {"phase": "Done"}}),
    );
    f.metadata.namespace = Some("default".into());
    server.add(&f).unwrap();
    assert_eq!(
        foos(&server, "default")
            .get("with-status")
            .await
            .unwrap()
            .data["status"]["phase"],
        "Done"
    );
    assert_eq!(server.objects(GROUP, "foos", None).len(), 1);
    assert!(
        server
            .add(&json!({"apiVersion": "v1", "kind": "Nope", "metadata": {"name": "x"}}))
            .is_err()
    );

    // remove_object bypasses finalizers.
    let removed = server
        .remove_object(GROUP, "foos", Some("default"), "with-status")
        .unwrap();
    assert_eq!(removed["metadata"]["name"], "with-status");
    assert!(server.objects(GROUP, "foos", None).is_empty());

    // Discovery, legacy and aggregated, reflects the registry.
    let discovery = kube::discovery::Discovery::new(server.client())
        .run()
        .await
        .unwrap();
    let (ar, caps) = discovery
        .resolve_gvk(&GroupVersionKind::gvk(GROUP, "v1alpha1", "Foo"))
        .expect("Foo is discoverable");
    assert_eq!(ar.plural, "foos");
    assert_eq!(caps.scope, kube::discovery::Scope::Namespaced);
    assert!(
        caps.subresources
            .iter()
            .any(|(sub, _)| sub.plural == "foos/status" || sub.plural == "status")
    );
    let aggregated = kube::discovery::Discovery::new(server.client())
        .run_aggregated()
        .await
        .unwrap();
    assert!(
        aggregated
            .resolve_gvk(&GroupVersionKind::gvk("apps", "v1", "Deployment"))
            .is_some()
    );
    assert!(
        aggregated
            .resolve_gvk(&GroupVersionKind::gvk("", "v1", "ConfigMap"))
            .is_some()
    );
    let version = server.client().apiserver_version().await.unwrap();
    assert_eq!(version.major, "1");

    // A CRD registers its served versions.
    let crd: k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition =
        serde_json::from_value(json!({
            "metadata": {"name": "bars.example.com"},
            "spec": {"group": "example.com", "scope": "Cluster",
                     "names": {"kind": "Bar", "plural": "bars"},
                     "versions": [{"name": "v1", "served": true, "storage": true,
                                   "subresources": {"status": {}}},
                                  {"name": "v0", "served": false, "storage": false}]}
        }))
        .unwrap();
    server.register_crd(&crd);
    let bar = FakeResource::cluster("example.com", "v1", "Bar", "bars").with_status_subresource();
    assert!(server.resources().contains(&bar));
    assert!(!server.resources().iter().any(|r| r.version == "v0"));
    let bars: Api<DynamicObject> = Api::all_with(
        server.client(),
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("example.com", "v1", "Bar"),
            "bars",
        ),
    );
    let b = bars
        .create(
            &PostParams::default(),
            &DynamicObject::new(
                "b",
                &ApiResource::from_gvk_with_plural(
                    &GroupVersionKind::gvk("example.com", "v1", "Bar"),
                    "bars",
                ),
            ),
        )
        .await
        .unwrap();
    assert!(
        b.metadata.namespace.is_none(),
        "cluster-scoped objects have no namespace"
    );
    assert_eq!(
        FakeResource::of::<Namespace>(),
        FakeResource::cluster("", "v1", "Namespace", "namespaces")
    );
    assert!(FakeResource::of::<Deployment>().namespaced);
    let listed: Vec<_> = bars.list(&ListParams::default()).await.unwrap().items;
    assert_eq!(names(&listed), ["b"]);
}

#[tokio::test]
async fn field_ownership_over_http_and_malformed_managed_fields() {
    let server = server();
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "ns1");

    // A create owns what it sets (an Update entry of the fieldManager); an apply of a
    // different value conflicts with it, and the Status says who and where.
    let pp = PostParams {
        field_manager: Some("creator".into()),
        ..Default::default()
    };
    api.create(&pp, &cm("owned", &[], &[("k", "v1")]))
        .await
        .unwrap();
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "owned"}, "data": {"k": "v2"}});
    let err = api_error(
        api.patch(
            "owned",
            &PatchParams::apply("applier"),
            &Patch::Apply(&body),
        )
        .await,
    );
    assert_eq!(err.code, 409);
    assert_eq!(err.reason, "Conflict");
    assert_eq!(
        err.message,
        r#"Apply failed with 1 conflict: conflict with "creator" using v1: .data.k"#
    );
    let causes = &err.details.as_ref().unwrap().causes;
    assert_eq!(
        (causes[0].reason.as_str(), causes[0].field.as_str()),
        ("FieldManagerConflict", ".data.k")
    );

    // Apply with a body of another version or kind: 400, as the API server's version check.
    let wrong = json!({"apiVersion": "v2", "kind": "ConfigMap", "metadata": {"name": "owned"}});
    let err = api_error(
        api.patch(
            "owned",
            &PatchParams::apply("applier"),
            &Patch::Apply(&wrong),
        )
        .await,
    );
    assert_eq!(
        (err.code, err.message.as_str()),
        (400, "invalid object type: /v2, Kind=ConfigMap")
    );

    // Malformed managedFields in the store: apply answers 500 (the API server's "failed
    // to decode managed fields"), updates fall back to not tracking; nothing panics.
    let mut broken: serde_json::Value =
        serde_json::to_value(cm("broken", &[], &[("k", "v")])).unwrap();
    broken["metadata"]["namespace"] = "ns1".into();
    broken["metadata"]["managedFields"] = json!([{"manager": "m", "operation": "Bogus",
        "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {}}]);
    server.add(&broken).unwrap();
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "broken"}, "data": {"k": "v2"}});
    let err = api_error(
        api.patch(
            "broken",
            &PatchParams::apply("applier"),
            &Patch::Apply(&body),
        )
        .await,
    );
    assert_eq!(err.code, 500);
    assert!(
        err.message.starts_with("failed to decode managed fields"),
        "{}",
        err.message
    );
    let patch_params = PatchParams {
        field_manager: Some("patcher".into()),
        ..Default::default()
    };
    let patched = api
        .patch(
            "broken",
            &patch_params,
            &Patch::Merge(json!({"data": {"k": "v3"}})),
        )
        .await
        .unwrap();
    assert_eq!(patched.data.unwrap()["k"], "v3");
}
