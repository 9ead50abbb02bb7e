//! E2E: every verb of the generated clientset, against the real control plane: one of its
//! own per test, from kube-codegen-envtest (the demonstration that the e2e suite can move
//! onto it).

use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use kube_codegen_envtest::Environment;
use kube_codegen_runtime::apply::ObjectMetaApplyConfiguration;
use kube_codegen_runtime::client::ApplyOptions;
use kube_codegen_runtime::{DeepCopy, Error};
use kube_codegen_tests::*;
use sample_api::Clientset;
use sample_api::apis::insujang::v1beta1::{TestResource, TestResourceSpec};
use sample_api::apis::samplecontroller::v1alpha1::{Foo, FooSpec, FooStatus};
use sample_api::generated::applyconfigurations::samplecontroller_v1alpha1::{
    FooApplyConfiguration, FooSpecApplyConfiguration, FooStatusApplyConfiguration,
};
use serde_json::json;

/// A control plane of the test's own (kube-codegen-envtest: a few seconds to start, and
/// tests run in parallel) with the sample API's CRDs as generated now, and a namespace in
/// it. Dropping it stops the control plane.
struct TestEnv {
    name: String,
    _env: Environment,
}

async fn setup(prefix: &str) -> (Clientset, TestEnv) {
    let mut builder = Environment::builder();
    for f in kube_codegen::Config::from_crate(repo_root().join("sample-api"))
        .unwrap()
        .generate()
        .unwrap()
        .files
    {
        if kube_codegen_tests::is_crd_file(&f) {
            // Foo converts between its versions through a webhook: this process's.
            let crd = kube_codegen_tests::parse_crd(&f.contents);
            builder = builder.crd(if kube_codegen_tests::conversion::uses_webhook(&crd) {
                kube_codegen_tests::conversion::pointed_at_test_webhook(&crd)
            } else {
                crd
            });
        }
    }
    // CRDs are Established and served when start() returns.
    let env = builder.start().await.expect("control plane");
    let client = env.client();
    let ns: Namespace = serde_json::from_value(json!({ "metadata": { "name": prefix } })).unwrap();
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await
        .expect("create namespace");
    let ns = TestEnv {
        name: prefix.to_owned(),
        _env: env,
    };
    (Clientset::new(client), ns)
}

/// client-go's typed clients never make their callers write TypeMeta: the codec writes
/// the type's apiVersion and kind into what it sends. Ours do the same, so a Foo built
/// with `..Default::default()` (apiVersion and kind empty, which the API server refuses
/// with "Object 'Kind' is missing") goes through every verb that sends an object, and an
/// apply configuration without them is applied.
#[tokio::test]
async fn objects_built_with_default_get_their_api_version_and_kind() {
    let (cs, ns) = setup("clientset-typemeta").await;
    let foos = cs.samplecontroller_v1alpha1().foos(&ns.name);
    let bare = |replicas: i32, resource_version: Option<String>| Foo {
        metadata: ObjectMeta {
            name: Some("bare".into()),
            resource_version,
            ..Default::default()
        },
        spec: FooSpec {
            deployment_name: "bare-deploy".into(),
            replicas: Some(replicas),
        },
        ..Default::default()
    };
    assert_eq!(
        bare(1, None).types,
        Default::default(),
        "TypeMeta left empty"
    );

    let created = foos
        .create(&bare(1, None), &PostParams::default())
        .await
        .expect("create of a Default-built Foo");
    assert_eq!(created.types, Foo::type_meta());

    let updated = foos
        .update(
            &bare(2, created.metadata.resource_version.clone()),
            &PostParams::default(),
        )
        .await
        .expect("update of a Default-built Foo");
    assert_eq!(updated.spec.replicas, Some(2));

    let mut with_status = bare(2, updated.metadata.resource_version.clone());
    with_status.status = Some(FooStatus {
        available_replicas: 2,
    });
    let st = foos
        .update_status(&with_status, &PostParams::default())
        .await
        .expect("update_status of a Default-built Foo");
    assert_eq!(st.status.map(|s| s.available_replicas), Some(2));

    // A merge patch that is a whole Default-built object states apiVersion and kind "".
    let patched = foos
        .patch(
            "bare",
            &Patch::Merge(&bare(3, None)),
            &PatchParams::default(),
        )
        .await
        .expect("merge patch of a Default-built Foo");
    assert_eq!(patched.spec.replicas, Some(3));

    // An apply configuration built from Default has neither; the server requires both.
    let config = FooApplyConfiguration {
        metadata: Some(ObjectMetaApplyConfiguration::named("applied")),
        ..Default::default()
    }
    .with_spec(
        FooSpecApplyConfiguration::default()
            .with_deployment_name("applied-deploy")
            .with_replicas(4),
    );
    let applied = foos
        .apply(&config, &ApplyOptions::new("typemeta-test"))
        .await
        .expect("apply of a Default-built apply configuration");
    assert_eq!(applied.types, Foo::type_meta());
    assert_eq!(applied.spec.replicas, Some(4));
    let status = FooApplyConfiguration {
        metadata: Some(ObjectMetaApplyConfiguration::named("applied")),
        ..Default::default()
    }
    .with_status(FooStatusApplyConfiguration::default().with_available_replicas(4));
    let applied = foos
        .apply_status(&status, &ApplyOptions::new("typemeta-test"))
        .await
        .expect("apply_status of a Default-built apply configuration");
    assert_eq!(applied.status.map(|s| s.available_replicas), Some(4));
}

fn foo(name: &str, replicas: i32) -> Foo {
    Foo::new(
        name,
        FooSpec {
            deployment_name: format!("{name}-deploy"),
            replicas: Some(replicas),
        },
    )
}

#[tokio::test]
async fn foo_verbs_round_trip_through_the_real_apiserver() {
    let (cs, ns) = setup("clientset-foo").await;
    let foos = cs.samplecontroller_v1alpha1().foos(&ns.name);

    // create, and AlreadyExists on a second create
    let created = foos
        .create(&foo("a", 1), &PostParams::default())
        .await
        .unwrap();
    assert_eq!(created.spec.replicas, Some(1));
    assert!(created.metadata.uid.is_some());
    let again = foos
        .create(&foo("a", 1), &PostParams::default())
        .await
        .unwrap_err();
    assert!(again.is_already_exists(), "{again:?}");

    // get, NotFound
    let got = foos.get("a").await.unwrap();
    assert_eq!(got.metadata.uid, created.metadata.uid);
    assert!(matches!(
        foos.get("missing").await.unwrap_err(),
        Error::NotFound(_)
    ));

    // update, then Conflict on a stale resourceVersion
    let mut fresh = got.deep_copy();
    fresh.spec.replicas = Some(2);
    let updated = foos.update(&fresh, &PostParams::default()).await.unwrap();
    assert_eq!(updated.spec.replicas, Some(2));
    let mut stale = got.clone();
    stale.spec.replicas = Some(3);
    let conflict = foos
        .update(&stale, &PostParams::default())
        .await
        .unwrap_err();
    assert!(conflict.is_conflict(), "{conflict:?}");

    // update_status changes status only
    let mut with_status = updated.clone();
    with_status.status = Some(FooStatus {
        available_replicas: 2,
    });
    with_status.spec.replicas = Some(9);
    let st = foos
        .update_status(&with_status, &PostParams::default())
        .await
        .unwrap();
    assert_eq!(
        st.status,
        Some(FooStatus {
            available_replicas: 2
        })
    );
    assert_eq!(
        st.spec.replicas,
        Some(2),
        "update_status must not change spec"
    );

    // patch: merge and JSON patch
    let merged = foos
        .patch(
            "a",
            &Patch::Merge(json!({"spec": {"replicas": 4}})),
            &PatchParams::default(),
        )
        .await
        .unwrap();
    assert_eq!(merged.spec.replicas, Some(4));
    let jsonp: json_patch_ops::Ops = serde_json::from_value(
        json!([{"op": "replace", "path": "/spec/deploymentName", "value": "renamed"}]),
    )
    .unwrap();
    let patched = foos
        .patch("a", &Patch::Json::<()>(jsonp), &PatchParams::default())
        .await
        .unwrap();
    assert_eq!(patched.spec.deployment_name, "renamed");

    // Invalid: the generated maximum is enforced
    let invalid = foos
        .create(&foo("too-many", 11), &PostParams::default())
        .await
        .unwrap_err();
    assert!(invalid.is_invalid(), "{invalid:?}");

    // list with a label selector
    let mut labeled = foo("labeled", 1);
    labeled.metadata.labels = Some([("tier".to_string(), "gold".to_string())].into());
    foos.create(&labeled, &PostParams::default()).await.unwrap();
    let gold = foos
        .list(&ListParams::default().labels("tier=gold"))
        .await
        .unwrap();
    assert_eq!(
        gold.items
            .iter()
            .map(|f| f.metadata.name.clone().unwrap())
            .collect::<Vec<_>>(),
        ["labeled"]
    );
    assert_eq!(
        foos.list(&ListParams::default()).await.unwrap().items.len(),
        2
    );

    // delete, then NotFound
    foos.delete("a", &DeleteParams::default()).await.unwrap();
    let gone = eventually("a deleted", Duration::from_secs(10), || async {
        Ok(match foos.get("a").await {
            Err(e) if e.is_not_found() => Some(()),
            _ => None,
        })
    })
    .await;
    gone.unwrap();
}

fn foo_apply(namespace: &str, replicas: i32) -> FooApplyConfiguration {
    FooApplyConfiguration::new("shared", namespace).with_spec(
        FooSpecApplyConfiguration::default()
            .with_deployment_name("shared-deploy")
            .with_replicas(replicas),
    )
}

#[tokio::test]
async fn apply_with_two_field_managers_conflicts_and_force_takes_over() {
    let (cs, ns) = setup("clientset-apply").await;
    let foos = cs.samplecontroller_v1alpha1().foos(&ns.name);
    let first = foos
        .apply(&foo_apply(&ns.name, 1), &ApplyOptions::new("manager-one"))
        .await
        .unwrap();
    assert_eq!(first.spec.replicas, Some(1));

    // A second manager setting the same field to another value conflicts...
    let err = foos
        .apply(&foo_apply(&ns.name, 2), &ApplyOptions::new("manager-two"))
        .await
        .unwrap_err();
    let conflict = err
        .conflict()
        .unwrap_or_else(|| panic!("expected a field-manager conflict, got {err:?}"));
    assert_eq!(conflict.managers(), ["manager-one"], "{err:?}");
    assert!(conflict.fields().contains(&".spec.replicas"), "{err:?}");

    // ...until it forces, and then it owns the field.
    let forced = foos
        .apply(
            &foo_apply(&ns.name, 2),
            &ApplyOptions::new("manager-two").force(),
        )
        .await
        .unwrap();
    assert_eq!(forced.spec.replicas, Some(2));
    let managers: Vec<String> = forced
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .filter_map(|m| m.manager)
        .collect();
    assert!(
        managers.contains(&"manager-two".to_string()),
        "{managers:?}"
    );

    // apply_status through the status subresource
    let status = FooApplyConfiguration::new("shared", &ns.name)
        .with_status(FooStatusApplyConfiguration::default().with_available_replicas(1));
    let applied = foos
        .apply_status(&status, &ApplyOptions::new("status-manager").force())
        .await
        .unwrap();
    assert_eq!(
        applied.status,
        Some(FooStatus {
            available_replicas: 1
        })
    );
}

#[tokio::test]
async fn watch_sees_added_modified_deleted_in_order() {
    let (cs, ns) = setup("clientset-watch").await;
    let foos = cs.samplecontroller_v1alpha1().foos(&ns.name);
    let rv = foos
        .list(&ListParams::default())
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap_or_default();
    let mut events = foos
        .watch(&WatchParams::default().timeout(30), &rv)
        .await
        .unwrap();
    let created = foos
        .create(&foo("w", 1), &PostParams::default())
        .await
        .unwrap();
    let mut next = created.clone();
    next.spec.replicas = Some(2);
    foos.update(&next, &PostParams::default()).await.unwrap();
    foos.delete("w", &DeleteParams::default()).await.unwrap();

    let mut seen = vec![];
    while seen.len() < 3 {
        let event = tokio::time::timeout(Duration::from_secs(20), events.next())
            .await
            .expect("event in time")
            .expect("stream open")
            .unwrap();
        match event {
            WatchEvent::Added(f) => seen.push(("ADDED", f.spec.replicas)),
            WatchEvent::Modified(f) => seen.push(("MODIFIED", f.spec.replicas)),
            WatchEvent::Deleted(f) => seen.push(("DELETED", f.spec.replicas)),
            WatchEvent::Bookmark(_) => {}
            WatchEvent::Error(e) => panic!("watch error {e:?}"),
        }
    }
    assert_eq!(
        seen,
        [
            ("ADDED", Some(1)),
            ("MODIFIED", Some(2)),
            ("DELETED", Some(2))
        ]
    );
}

#[tokio::test]
async fn delete_collection_honours_the_label_selector() {
    let (cs, ns) = setup("clientset-collection").await;
    let trs = cs.insujang_v1beta1().testresources(&ns.name);
    for (name, team) in [("a", "red"), ("b", "red"), ("c", "blue")] {
        let mut tr = TestResource {
            types: TestResource::type_meta(),
            spec: TestResourceSpec {
                command: "echo hi".into(),
                custom_property: team.into(),
            },
            ..Default::default()
        };
        tr.metadata.name = Some(name.into());
        tr.metadata.labels = Some([("team".to_string(), team.to_string())].into());
        trs.create(&tr, &PostParams::default()).await.unwrap();
    }
    trs.delete_collection(
        &DeleteParams::default(),
        &ListParams::default().labels("team=red"),
    )
    .await
    .unwrap();
    let left = eventually("red ones deleted", Duration::from_secs(10), || async {
        let names: Vec<String> = trs
            .list(&ListParams::default())
            .await?
            .items
            .into_iter()
            .filter_map(|t| t.metadata.name)
            .collect();
        Ok((names.len() == 1).then_some(names))
    })
    .await
    .unwrap();
    assert_eq!(left, ["c"]);

    // TestResource has no status subresource: status is part of the object (the tutorial's "HANDLED").
    let mut c = trs.get("c").await.unwrap();
    c.status = Some("HANDLED".into());
    let handled = trs.update(&c, &PostParams::default()).await.unwrap();
    assert_eq!(handled.status.as_deref(), Some("HANDLED"));

    // Across namespaces, list sees it too.
    let all = cs
        .insujang_v1beta1()
        .testresources_all_namespaces()
        .list(&ListParams::default().labels("team=blue"))
        .await
        .unwrap();
    assert!(
        all.items
            .iter()
            .any(|t| t.metadata.namespace.as_deref() == Some(ns.name.as_str()))
    );
}

/// JSON patch operations (RFC 6902), the type `Patch::Json` takes.
mod json_patch_ops {
    pub type Ops = json_patch::Patch;
}
