//! The event recorder against the fake API server: client-go's Event fields, identical-event
//! counting, similar-event combining, the spam filter, and the number of API writes.

// Reactors return the fake server's `Result<Value, Status>` (as in tests/fake.rs).
#![allow(clippy::result_large_err)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use k8s_openapi::api::core::v1::{Event, Node, ObjectReference, Pod};
use kube_codegen_runtime::events::{
    CorrelatorOptions, EventType, Recorded, Recorder, Reporter, object_ref,
};
use kube_codegen_runtime::fake::{Action, FakeApiServer, Verb, errors};
use serde_json::json;

fn add_pod(server: &FakeApiServer, name: &str) -> ObjectReference {
    server
        .add(&json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}}))
        .unwrap();
    let pod: Pod = server.get(Some("default"), name).unwrap();
    object_ref(&pod)
}

fn events(server: &FakeApiServer) -> Vec<Event> {
    server.list::<Event>(None)
}

/// Requests to core/v1 events with this verb.
fn event_actions(server: &FakeApiServer, verb: Verb) -> Vec<Action> {
    server
        .actions()
        .into_iter()
        .filter(|a| a.group.is_empty() && a.matches(verb, "events"))
        .collect()
}

fn writes(server: &FakeApiServer) -> usize {
    event_actions(server, Verb::Create).len()
        + event_actions(server, Verb::Patch).len()
        + event_actions(server, Verb::Update).len()
}

#[tokio::test]
async fn event_has_client_go_fields() {
    let server = FakeApiServer::new();
    let reference = add_pod(&server, "web");
    let recorder = Recorder::new(
        server.client(),
        Reporter::new("foo-controller").with_instance("foo-controller-7d9f"),
    );

    let recorded = recorder
        .event(
            &reference,
            EventType::Warning,
            "FailedSync",
            "backend unreachable",
        )
        .await
        .unwrap();
    let Recorded::Created(returned) = recorded else {
        panic!("expected a create, got {recorded:?}")
    };

    let all = events(&server);
    assert_eq!(all.len(), 1);
    let ev = &all[0];
    assert_eq!(ev.metadata.name, returned.metadata.name);
    assert_eq!(ev.metadata.namespace.as_deref(), Some("default"));
    let name = ev.metadata.name.as_deref().unwrap();
    let suffix = name.strip_prefix("web.").expect("named <object>.<suffix>");
    assert!(
        !suffix.is_empty() && suffix.chars().all(|c| c.is_ascii_hexdigit()),
        "{name}"
    );

    assert_eq!(ev.involved_object, reference);
    assert_eq!(ev.involved_object.kind.as_deref(), Some("Pod"));
    assert_eq!(ev.involved_object.api_version.as_deref(), Some("v1"));
    assert!(ev.involved_object.uid.is_some());
    assert!(ev.involved_object.resource_version.is_some());
    assert_eq!(ev.type_.as_deref(), Some("Warning"));
    assert_eq!(ev.reason.as_deref(), Some("FailedSync"));
    assert_eq!(ev.message.as_deref(), Some("backend unreachable"));
    assert_eq!(ev.count, Some(1));
    let source = ev.source.as_ref().unwrap();
    assert_eq!(source.component.as_deref(), Some("foo-controller"));
    assert_eq!(source.host.as_deref(), Some("foo-controller-7d9f"));
    assert_eq!(ev.reporting_component.as_deref(), Some("foo-controller"));
    assert_eq!(
        ev.reporting_instance.as_deref(),
        Some("foo-controller-7d9f")
    );
    assert!(ev.first_timestamp.is_some());
    assert_eq!(ev.first_timestamp, ev.last_timestamp);
    assert!(ev.event_time.is_none());
    let raw = server
        .get_object("", "events", Some("default"), name)
        .unwrap();
    assert!(raw.get("eventTime").is_none_or(|t| t.is_null()), "{raw}");
}

#[tokio::test]
async fn cluster_scoped_objects_get_events_in_default() {
    let server = FakeApiServer::new();
    server
        .add(&json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}}))
        .unwrap();
    let node: Node = server.get(None, "node-1").unwrap();
    let recorder = Recorder::new(server.client(), "node-controller");

    recorder
        .event(
            &object_ref(&node),
            EventType::Normal,
            "Ready",
            "node is ready",
        )
        .await
        .unwrap();

    let all = events(&server);
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].metadata.namespace.as_deref(), Some("default"));
    assert!(all[0].involved_object.namespace.is_none());
    assert_eq!(all[0].involved_object.kind.as_deref(), Some("Node"));
    assert!(
        all[0]
            .metadata
            .name
            .as_deref()
            .unwrap()
            .starts_with("node-1.")
    );
}

#[tokio::test]
async fn identical_events_are_counted_on_one_object() {
    let server = FakeApiServer::new();
    let reference = add_pod(&server, "web");
    let recorder = Recorder::new(server.client(), "foo-controller");

    let first = recorder
        .event(&reference, EventType::Normal, "Synced", "synced")
        .await
        .unwrap();
    let second = recorder
        .event(&reference, EventType::Normal, "Synced", "synced")
        .await
        .unwrap();
    let third = recorder
        .event(&reference, EventType::Normal, "Synced", "synced")
        .await
        .unwrap();
    assert!(matches!(first, Recorded::Created(_)));
    let (Recorded::Updated(second), Recorded::Updated(third)) = (second, third) else {
        panic!("expected updates")
    };
    assert_eq!(second.count, Some(2));
    assert_eq!(third.count, Some(3));
    assert_eq!(third.metadata.name, first.event().unwrap().metadata.name);
    assert_eq!(
        third.first_timestamp,
        first.event().unwrap().first_timestamp
    );

    let all = events(&server);
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].count, Some(3));

    // The updates are merge patches of count, lastTimestamp and message only.
    let patches = event_actions(&server, Verb::Patch);
    assert_eq!(patches.len(), 2);
    assert_eq!(
        patches[0].patch_type.as_deref(),
        Some("application/merge-patch+json")
    );
    let body = patches[1].object.as_ref().unwrap().as_object().unwrap();
    let mut keys: Vec<&str> = body.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["count", "lastTimestamp", "message"]);
    assert_eq!(body["count"], 3);

    // A different message, type or object is a different event.
    recorder
        .event(&reference, EventType::Normal, "Synced", "synced again")
        .await
        .unwrap();
    recorder
        .event(&reference, EventType::Warning, "Synced", "synced")
        .await
        .unwrap();
    let other = add_pod(&server, "db");
    recorder
        .event(&other, EventType::Normal, "Synced", "synced")
        .await
        .unwrap();
    assert_eq!(events(&server).len(), 4);
}

#[tokio::test(start_paused = true)]
async fn hot_loop_costs_the_spam_burst_then_catches_up() {
    let server = FakeApiServer::new();
    let reference = add_pod(&server, "web");
    let recorder = Recorder::new(server.client(), "foo-controller");

    let mut created = 0;
    let mut updated = 0;
    let mut dropped = 0;
    for _ in 0..100 {
        match recorder
            .event(
                &reference,
                EventType::Warning,
                "FailedSync",
                "backend unreachable",
            )
            .await
            .unwrap()
        {
            Recorded::Created(_) => created += 1,
            Recorded::Updated(_) => updated += 1,
            Recorded::Dropped => dropped += 1,
        }
    }
    // client-go's spam filter: a burst of 25 per source and object.
    assert_eq!((created, updated, dropped), (1, 24, 75));
    let all = events(&server);
    assert_eq!(all.len(), 1, "one Event object for 100 identical events");
    assert_eq!(all[0].count, Some(25));
    assert_eq!(event_actions(&server, Verb::Create).len(), 1);
    assert_eq!(event_actions(&server, Verb::Patch).len(), 24);
    assert_eq!(writes(&server), 25, "naive recording would write 100 times");

    // Still within the refill interval: dropped.
    tokio::time::advance(Duration::from_secs(200)).await;
    let r = recorder
        .event(
            &reference,
            EventType::Warning,
            "FailedSync",
            "backend unreachable",
        )
        .await
        .unwrap();
    assert!(matches!(r, Recorded::Dropped));
    // One token back after 5 minutes: the next write carries every occurrence so far.
    tokio::time::advance(Duration::from_secs(100)).await;
    let r = recorder
        .event(
            &reference,
            EventType::Warning,
            "FailedSync",
            "backend unreachable",
        )
        .await
        .unwrap();
    let Recorded::Updated(ev) = r else {
        panic!("expected an update, got {r:?}")
    };
    assert_eq!(ev.count, Some(102));
    assert_eq!(events(&server)[0].count, Some(102));
    assert_eq!(writes(&server), 26);
}

#[tokio::test]
async fn hot_loop_without_spam_limit_gives_the_exact_count() {
    let server = FakeApiServer::new();
    let reference = add_pod(&server, "web");
    let options = CorrelatorOptions {
        spam_burst: 1000,
        ..CorrelatorOptions::default()
    };
    let recorder = Recorder::with_options(server.client(), "foo-controller", options);
    for _ in 0..100 {
        recorder
            .event(&reference, EventType::Normal, "Synced", "synced")
            .await
            .unwrap();
    }
    let all = events(&server);
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].count, Some(100));
    assert_eq!(event_actions(&server, Verb::Create).len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_identical_events_still_make_one_object() {
    let server = FakeApiServer::new();
    let reference = add_pod(&server, "web");
    let options = CorrelatorOptions {
        spam_burst: 1000,
        ..CorrelatorOptions::default()
    };
    let recorder = Recorder::with_options(server.client(), "foo-controller", options);
    let tasks: Vec<_> = (0..50)
        .map(|_| {
            let (recorder, reference) = (recorder.clone(), reference.clone());
            tokio::spawn(async move {
                recorder
                    .event(&reference, EventType::Normal, "Synced", "synced")
                    .await
                    .unwrap()
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let all = events(&server);
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].count, Some(50));
}

#[tokio::test]
async fn fire_and_forget_is_written_in_the_background() {
    let server = FakeApiServer::new();
    let reference = add_pod(&server, "web");
    let recorder = Recorder::new(server.client(), "foo-controller");
    for _ in 0..10 {
        recorder.record(&reference, EventType::Normal, "Synced", "synced");
    }
    recorder.record(&reference, EventType::Normal, "Other", "other");
    recorder.flush().await;

    let mut all = events(&server);
    all.sort_by_key(|e| e.reason.clone());
    assert_eq!(all.len(), 2);
    assert_eq!(all[0].reason.as_deref(), Some("Other"));
    assert_eq!(all[1].count, Some(10));
    assert_eq!(writes(&server), 11);
}

#[tokio::test]
async fn expired_event_is_created_again() {
    let server = FakeApiServer::new();
    let reference = add_pod(&server, "web");
    let recorder = Recorder::new(server.client(), "foo-controller");

    let first = recorder
        .event(&reference, EventType::Normal, "Synced", "synced")
        .await
        .unwrap();
    let name = first.event().unwrap().metadata.name.clone().unwrap();
    // The Event expires (TTL) behind the recorder's back.
    server
        .remove_object("", "events", Some("default"), &name)
        .unwrap();
    server.clear_actions();

    let again = recorder
        .event(&reference, EventType::Normal, "Synced", "synced")
        .await
        .unwrap();
    let Recorded::Created(ev) = again else {
        panic!("expected a create, got {again:?}")
    };
    assert_eq!(ev.count, Some(2));
    let verbs: Vec<Verb> = server.actions().into_iter().map(|a| a.verb).collect();
    assert_eq!(verbs, [Verb::Patch, Verb::Create]);
    assert_eq!(events(&server).len(), 1);

    // And counting goes on from there.
    let next = recorder
        .event(&reference, EventType::Normal, "Synced", "synced")
        .await
        .unwrap();
    assert!(matches!(next, Recorded::Updated(ev) if ev.count == Some(3)));
}

#[tokio::test]
async fn write_errors_are_returned_and_the_occurrence_still_counts() {
    let server = FakeApiServer::new();
    let reference = add_pod(&server, "web");
    let recorder = Recorder::new(server.client(), "foo-controller");

    let fail = Arc::new(AtomicUsize::new(1));
    let f = fail.clone();
    server.prepend_reactor(Verb::Create, "events", move |_| {
        (f.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok())
        .then(|| Err(errors::internal_error("etcd is down")))
    });

    let err = recorder
        .event(&reference, EventType::Normal, "Synced", "synced")
        .await
        .unwrap_err();
    assert_eq!(err.status().map(|s| s.code), Some(500));
    assert!(events(&server).is_empty());

    let ok = recorder
        .event(&reference, EventType::Normal, "Synced", "synced")
        .await
        .unwrap();
    assert!(
        matches!(ok, Recorded::Created(ev) if ev.count == Some(2)),
        "both occurrences are counted"
    );
    assert_eq!(events(&server).len(), 1);
}

#[tokio::test]
async fn similar_events_are_combined() {
    let server = FakeApiServer::new();
    let reference = add_pod(&server, "web");
    let recorder = Recorder::new(server.client(), "foo-controller");

    for i in 0..12 {
        recorder
            .event(
                &reference,
                EventType::Warning,
                "FailedScheduling",
                format!("0/{i} nodes available"),
            )
            .await
            .unwrap();
    }
    // 9 distinct messages, then one combined event counting the rest.
    let all = events(&server);
    assert_eq!(all.len(), 10);
    let combined: Vec<&Event> = all
        .iter()
        .filter(|e| {
            e.message
                .as_deref()
                .is_some_and(|m| m.starts_with("(combined from similar events): "))
        })
        .collect();
    assert_eq!(combined.len(), 1);
    assert_eq!(
        combined[0].message.as_deref(),
        Some("(combined from similar events): 0/11 nodes available")
    );
    assert_eq!(combined[0].count, Some(3));
    assert_eq!(writes(&server), 12);
}

#[tokio::test]
async fn spam_filter_is_per_object() {
    let server = FakeApiServer::new();
    let web = add_pod(&server, "web");
    let db = add_pod(&server, "db");
    let recorder = Recorder::new(server.client(), "foo-controller");

    let mut dropped = 0;
    for i in 0..30 {
        // Different reasons: neither counting nor combining applies.
        if let Recorded::Dropped = recorder
            .event(&web, EventType::Normal, format!("Reason{i}"), "m")
            .await
            .unwrap()
        {
            dropped += 1;
        }
    }
    assert_eq!(dropped, 5);
    assert_eq!(events(&server).len(), 25);
    let r = recorder
        .event(&db, EventType::Normal, "Reason", "m")
        .await
        .unwrap();
    assert!(matches!(r, Recorded::Created(_)));

    // A recorder with another component has its own budget.
    let other = Recorder::new(server.client(), "bar-controller");
    assert!(matches!(
        other
            .event(&web, EventType::Normal, "Reason", "m")
            .await
            .unwrap(),
        Recorded::Created(_)
    ));
}
