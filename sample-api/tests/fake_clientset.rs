//! Every verb of the generated clientset, through the generated fake (an in-memory API
//! server behind a real kube::Client): the same code path controllers use in production.

use futures::StreamExt;
use kube::api::{
    DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use kube_codegen_runtime::client::ApplyOptions;
use kube_codegen_runtime::fake::Verb;
use kube_codegen_runtime::{DeepCopy, Error};
use sample_api::apis::insujang::v1beta1::{TestResource, TestResourceSpec};
use sample_api::apis::samplecontroller::v1alpha1::{Foo, FooSpec, FooStatus};
use sample_api::generated::applyconfigurations::samplecontroller_v1alpha1::{
    FooApplyConfiguration, FooSpecApplyConfiguration, FooStatusApplyConfiguration,
};
use sample_api::generated::fake;
use serde_json::json;

fn foo(name: &str, replicas: i32) -> Foo {
    Foo::new(
        name,
        FooSpec {
            deployment_name: format!("{name}-deploy"),
            replicas: Some(replicas),
        },
    )
}

fn foo_apply(name: &str, replicas: i32) -> FooApplyConfiguration {
    FooApplyConfiguration::new(name, "ns").with_spec(
        FooSpecApplyConfiguration::default()
            .with_deployment_name(format!("{name}-deploy"))
            .with_replicas(replicas),
    )
}

#[tokio::test]
async fn every_verb_works_against_the_fake() {
    let (cs, server) = fake::new_clientset();
    let foos = cs.samplecontroller_v1alpha1().foos("ns");

    let created = foos
        .create(&foo("a", 1), &PostParams::default())
        .await
        .unwrap();
    assert_eq!(created.metadata.namespace.as_deref(), Some("ns"));
    assert!(created.metadata.resource_version.is_some());
    assert!(
        foos.create(&foo("a", 1), &PostParams::default())
            .await
            .unwrap_err()
            .is_already_exists()
    );

    let mut generated = foo("", 1);
    generated.metadata.name = None;
    generated.metadata.generate_name = Some("gen-".into());
    let g = foos
        .create(&generated, &PostParams::default())
        .await
        .unwrap();
    assert!(g.metadata.name.as_deref().unwrap().starts_with("gen-"));

    let got = foos.get("a").await.unwrap();
    assert!(matches!(
        foos.get("nope").await.unwrap_err(),
        Error::NotFound(_)
    ));

    // update bumps resourceVersion; a stale one conflicts
    let mut next = got.deep_copy();
    next.spec.replicas = Some(2);
    let updated = foos.update(&next, &PostParams::default()).await.unwrap();
    assert_ne!(
        updated.metadata.resource_version,
        got.metadata.resource_version
    );
    assert!(
        foos.update(&got, &PostParams::default())
            .await
            .unwrap_err()
            .is_conflict()
    );

    // status semantics both ways
    let mut st = updated.clone();
    st.status = Some(FooStatus {
        available_replicas: 3,
    });
    st.spec.replicas = Some(7);
    let after_status = foos
        .update_status(&st, &PostParams::default())
        .await
        .unwrap();
    assert_eq!(after_status.spec.replicas, Some(2));
    assert_eq!(
        after_status.status,
        Some(FooStatus {
            available_replicas: 3
        })
    );
    let mut main = after_status.clone();
    main.status = Some(FooStatus {
        available_replicas: 99,
    });
    let after_main = foos.update(&main, &PostParams::default()).await.unwrap();
    assert_eq!(
        after_main.status,
        Some(FooStatus {
            available_replicas: 3
        })
    );

    // patches and apply
    let merged = foos
        .patch(
            "a",
            &Patch::Merge(json!({"spec": {"replicas": 5}})),
            &PatchParams::default(),
        )
        .await
        .unwrap();
    assert_eq!(merged.spec.replicas, Some(5));
    let applied = foos
        .apply(&foo_apply("applied", 4), &ApplyOptions::new("tester"))
        .await
        .unwrap();
    assert_eq!(applied.spec.replicas, Some(4));
    let status_apply = FooApplyConfiguration::new("applied", "ns")
        .with_status(FooStatusApplyConfiguration::default().with_available_replicas(4));
    let applied_status = foos
        .apply_status(&status_apply, &ApplyOptions::new("tester"))
        .await
        .unwrap();
    assert_eq!(
        applied_status.status,
        Some(FooStatus {
            available_replicas: 4
        })
    );

    // list with selectors, delete, delete_collection
    let mut labeled = foo("labeled", 1);
    labeled.metadata.labels = Some([("tier".to_string(), "gold".to_string())].into());
    foos.create(&labeled, &PostParams::default()).await.unwrap();
    let gold = foos
        .list(&ListParams::default().labels("tier=gold"))
        .await
        .unwrap();
    assert_eq!(gold.items.len(), 1);
    let by_name = foos
        .list(&ListParams::default().fields("metadata.name=a"))
        .await
        .unwrap();
    assert_eq!(by_name.items.len(), 1);
    foos.delete("a", &DeleteParams::default()).await.unwrap();
    assert!(foos.get("a").await.unwrap_err().is_not_found());
    foos.delete_collection(
        &DeleteParams::default(),
        &ListParams::default().labels("tier=gold"),
    )
    .await
    .unwrap();
    let left: Vec<String> = foos
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|f| f.metadata.name)
        .collect();
    assert_eq!(left.len(), 2, "{left:?}");
    assert!(!left.contains(&"labeled".to_string()));

    // the action log, as client-go's fake records it
    let verbs: Vec<Verb> = server.actions().iter().map(|a| a.verb).collect();
    for v in [
        Verb::Create,
        Verb::Get,
        Verb::Update,
        Verb::Patch,
        Verb::List,
        Verb::Delete,
        Verb::DeleteCollection,
    ] {
        assert!(verbs.contains(&v), "no {v} in {verbs:?}");
    }
    let status_updates = server
        .actions()
        .iter()
        .filter(|a| a.verb == Verb::Update && a.subresource.as_deref() == Some("status"))
        .count();
    assert_eq!(status_updates, 1);
}

#[tokio::test]
async fn watch_delivers_events_in_order() {
    let (cs, _server) = fake::new_clientset();
    let foos = cs.samplecontroller_v1alpha1().foos("ns");
    let mut events = foos.watch(&WatchParams::default(), "0").await.unwrap();
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
        match events.next().await.unwrap().unwrap() {
            WatchEvent::Added(f) => seen.push(("ADDED", f.spec.replicas)),
            WatchEvent::Modified(f) => seen.push(("MODIFIED", f.spec.replicas)),
            WatchEvent::Deleted(f) => seen.push(("DELETED", f.spec.replicas)),
            _ => {}
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
async fn reactors_inject_errors() {
    let (cs, server) = fake::new_clientset();
    server.prepend_reactor(Verb::Update, "testresources", |_| {
        Some(Err(kube::core::Status {
            code: 500,
            reason: "InternalError".into(),
            message: "injected".into(),
            ..Default::default()
        }))
    });
    let trs = cs.insujang_v1beta1().testresources("default");
    let tr = TestResource {
        types: TestResource::type_meta(),
        metadata: kube::api::ObjectMeta {
            name: Some("t".into()),
            ..Default::default()
        },
        spec: TestResourceSpec {
            command: "echo".into(),
            custom_property: "x".into(),
        },
        status: None,
    };
    let created = trs.create(&tr, &PostParams::default()).await.unwrap();
    let err = trs
        .update(&created, &PostParams::default())
        .await
        .unwrap_err();
    assert_eq!(err.status().unwrap().message, "injected");
    assert!(matches!(err, Error::Api(_)));
}
