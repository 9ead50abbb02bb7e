//! E2E: Foo in two versions on the real API server, converted by the generated conversions
//! through the runtime's conversion webhook (served by this process on 127.0.0.1 over TLS,
//! with a CA the test makes: `kube_codegen_tests::conversion`).
//!
//! v1beta1 is the storage version and the hub (v1alpha1's fields and `spec.minReadySeconds`);
//! v1alpha1 is a spoke, without `minReadySeconds`. Objects written in one version
//! are read, listed, watched and patched in the other with their values intact; data only
//! v1beta1 holds survives updates through v1alpha1; a storage-version migration leaves etcd
//! on v1beta1.

use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::ByteString;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use kube_codegen_tests::*;
use sample_api::apis::samplecontroller::{v1alpha1, v1beta1};
use serde_json::{Value, json};

const DATA: &str = "samplecontroller.k8s.io/conversion-data";

/// Held by every test here for its whole run: the migration test switches the Foo CRD's
/// storage version back and forth, and another test applying the generated CRD meanwhile
/// would switch it under its feet.
static FOO_CRD: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn foo_crd() -> CustomResourceDefinition {
    parse_crd(
        &std::fs::read_to_string(
            repo_root().join("sample-controller/config/crd/samplecontroller.k8s.io_foos.yaml"),
        )
        .unwrap(),
    )
}

fn alpha(name: &str, replicas: i32) -> v1alpha1::Foo {
    v1alpha1::Foo::new(
        name,
        v1alpha1::FooSpec {
            deployment_name: format!("{name}-deploy"),
            replicas: Some(replicas),
        },
    )
}

fn beta(name: &str, replicas: i32, min_ready_seconds: Option<i32>) -> v1beta1::Foo {
    v1beta1::Foo::new(
        name,
        v1beta1::FooSpec {
            deployment_name: format!("{name}-deploy"),
            replicas: Some(replicas),
            min_ready_seconds,
        },
    )
}

/// A v1beta1 Foo's (replicas, minReadySeconds).
type Scale = (Option<i32>, Option<i32>);

fn scale(f: &v1beta1::Foo) -> Scale {
    (f.spec.replicas, f.spec.min_ready_seconds)
}

#[tokio::test]
async fn objects_read_list_watch_and_patch_across_versions() {
    let _crd = FOO_CRD.lock().await;
    let client = client().await;
    apply_crd(&client, &foo_crd()).await.unwrap();
    let reviews_before = conversion::sample_webhook().metrics.requests(true);
    let ns = TestNamespace::new(&client, "conversion").await;
    let old: Api<v1alpha1::Foo> = Api::namespaced(client.clone(), &ns.name);
    let new: Api<v1beta1::Foo> = Api::namespaced(client.clone(), &ns.name);
    let pp = PostParams::default();

    // Written in v1alpha1, read in v1beta1: the same fields, no minReadySeconds.
    old.create(&pp, &alpha("a", 3)).await.unwrap();
    let a = new.get("a").await.unwrap();
    assert_eq!(a.types.api_version, "samplecontroller.k8s.io/v1beta1");
    assert_eq!(a.spec.deployment_name, "a-deploy");
    assert_eq!(scale(&a), (Some(3), None));

    // Written in v1beta1 with what v1alpha1 cannot hold, read in v1alpha1.
    new.create(&pp, &beta("b", 2, Some(30))).await.unwrap();
    let b = old.get("b").await.unwrap();
    assert_eq!(b.spec.replicas, Some(2));
    assert!(
        b.metadata
            .annotations
            .as_ref()
            .is_some_and(|a| a[DATA].contains("\"minReadySeconds\":30")),
        "{:?}",
        b.metadata.annotations
    );

    // Lists in both versions.
    let mut olds: Vec<(String, Option<i32>)> = old
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|f| (f.metadata.name.unwrap(), f.spec.replicas))
        .collect();
    olds.sort();
    assert_eq!(olds, [("a".into(), Some(3)), ("b".into(), Some(2))]);
    let list = new.list(&ListParams::default()).await.unwrap();
    let mut news: Vec<(String, Scale)> = list
        .items
        .iter()
        .map(|f| (f.metadata.name.clone().unwrap(), scale(f)))
        .collect();
    news.sort();
    assert_eq!(
        news,
        [
            ("a".into(), (Some(3), None)),
            ("b".into(), (Some(2), Some(30)))
        ]
    );

    // A v1alpha1 watch sees a v1beta1 patch, converted.
    let rv = list.metadata.resource_version.unwrap();
    let mut watch = old
        .watch(&WatchParams::default().timeout(30), &rv)
        .await
        .unwrap()
        .boxed();
    new.patch(
        "a",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 5}})),
    )
    .await
    .unwrap();
    let seen = tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(ev) = watch.try_next().await.unwrap() {
            if let WatchEvent::Modified(f) = ev
                && f.metadata.name.as_deref() == Some("a")
            {
                return f;
            }
        }
        panic!("watch ended")
    })
    .await
    .expect("the v1alpha1 watch sees the change");
    assert_eq!(seen.types.api_version, "samplecontroller.k8s.io/v1alpha1");
    assert_eq!(seen.spec.replicas, Some(5));

    // Updates through v1alpha1 keep what only v1beta1 holds: a merge patch...
    old.patch(
        "b",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 4}})),
    )
    .await
    .unwrap();
    assert_eq!(scale(&new.get("b").await.unwrap()), (Some(4), Some(30)));
    // ...and a read-modify-write replace.
    let mut b = old.get("b").await.unwrap();
    b.spec.deployment_name = "b-renamed".into();
    old.replace("b", &pp, &b).await.unwrap();
    let b = new.get("b").await.unwrap();
    assert_eq!(b.spec.deployment_name, "b-renamed");
    assert_eq!(scale(&b), (Some(4), Some(30)));
    assert_eq!(
        b.metadata.annotations.as_ref().and_then(|a| a.get(DATA)),
        None,
        "the hub keeps no conversion data"
    );

    // Server-side apply through v1alpha1, then a v1beta1 read.
    old.patch(
        "c",
        &PatchParams::apply(MANAGER),
        &Patch::Apply(json!({
            "apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
            "metadata": {"name": "c"}, "spec": {"deploymentName": "c-deploy", "replicas": 7},
        })),
    )
    .await
    .unwrap();
    assert_eq!(scale(&new.get("c").await.unwrap()), (Some(7), None));

    let answered = conversion::sample_webhook().metrics.requests(true) - reviews_before;
    assert!(answered > 0, "the API server converted through the webhook");
}

/// The apiVersion an object is stored with in etcd (CRs are stored as JSON), read through
/// etcd's gRPC gateway.
fn stored_api_version(namespace: &str, name: &str) -> Result<String> {
    let key = format!("/registry/samplecontroller.k8s.io/foos/{namespace}/{name}");
    let body = json!({"key": serde_json::to_value(ByteString(key.into_bytes()))?}).to_string();
    let out = Command::new("curl")
        .args(["-sf", "--max-time", "10", "-X", "POST"])
        .arg(format!("{}/v3/kv/range", env().etcd_url()))
        .args(["-d", &body])
        .output()
        .context("curl")?;
    if !out.status.success() {
        bail!("etcd range: {}", String::from_utf8_lossy(&out.stderr));
    }
    let answer: Value = serde_json::from_slice(&out.stdout)?;
    let value = answer
        .pointer("/kvs/0/value")
        .cloned()
        .context("no such key in etcd")?;
    let bytes: ByteString = serde_json::from_value(value)?;
    let stored: Value = serde_json::from_slice(&bytes.0)?;
    Ok(stored["apiVersion"].as_str().unwrap_or_default().to_owned())
}

/// Waits until new writes are stored in `version`: the API server switches a CRD's storage
/// a moment after the update, so probe with a throwaway object.
async fn wait_storage(old: &Api<v1alpha1::Foo>, namespace: &str, version: &str) {
    let want = format!("samplecontroller.k8s.io/{version}");
    eventually(
        &format!("writes stored as {version}"),
        Duration::from_secs(60),
        || async {
            old.create(&PostParams::default(), &alpha("probe", 1))
                .await?;
            let stored = stored_api_version(namespace, "probe")?;
            old.delete("probe", &Default::default()).await?;
            // Deleted for real before the next probe reuses the name.
            eventually("probe deleted", Duration::from_secs(10), || async {
                Ok(old.get_opt("probe").await?.is_none().then_some(()))
            })
            .await?;
            Ok((stored == want).then_some(()))
        },
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn storage_version_migration_leaves_etcd_on_v1beta1() {
    let _crd = FOO_CRD.lock().await;
    let client = client().await;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let generated = foo_crd();
    // The CRD as it was before v1beta1 became the storage version.
    let mut before = generated.clone();
    for v in &mut before.spec.versions {
        v.storage = v.name == "v1alpha1";
    }
    apply_crd(&client, &before).await.unwrap();
    let ns = TestNamespace::new(&client, "migration").await;
    let old: Api<v1alpha1::Foo> = Api::namespaced(client.clone(), &ns.name);
    wait_storage(&old, &ns.name, "v1alpha1").await;
    let names = ["m0", "m1", "m2"];
    for (i, name) in names.iter().enumerate() {
        old.create(&PostParams::default(), &alpha(name, i as i32 + 1))
            .await
            .unwrap();
        assert_eq!(
            stored_api_version(&ns.name, name).unwrap(),
            "samplecontroller.k8s.io/v1alpha1"
        );
    }

    // v1beta1 becomes the storage version: new writes go to v1beta1, old objects stay.
    let crd = apply_crd(&client, &generated).await.unwrap();
    let stored = crd
        .status
        .and_then(|s| s.stored_versions)
        .unwrap_or_default();
    assert!(stored.contains(&"v1alpha1".to_owned()), "{stored:?}");
    wait_storage(&old, &ns.name, "v1beta1").await;
    assert_eq!(
        stored_api_version(&ns.name, "m0").unwrap(),
        "samplecontroller.k8s.io/v1alpha1"
    );

    // The migration: read every Foo and write it back unchanged (what
    // kube-storage-version-migrator does); the API server stores each in v1beta1.
    let all: Api<v1beta1::Foo> = Api::all(client.clone());
    for foo in all.list(&ListParams::default()).await.unwrap().items {
        let (ns_name, name) = (
            foo.metadata.namespace.clone().unwrap(),
            foo.metadata.name.clone().unwrap(),
        );
        let api: Api<v1beta1::Foo> = Api::namespaced(client.clone(), &ns_name);
        // Others may write meanwhile: a conflict means it was just written, in v1beta1.
        match api.replace(&name, &PostParams::default(), &foo).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 409 || s.code == 404 => {}
            Err(e) => panic!("migrating {ns_name}/{name}: {e}"),
        }
    }
    for (i, name) in names.iter().enumerate() {
        assert_eq!(
            stored_api_version(&ns.name, name).unwrap(),
            "samplecontroller.k8s.io/v1beta1",
            "{name} is not stored as v1beta1 after the migration"
        );
        // Values intact through the migration.
        assert_eq!(
            old.get(name).await.unwrap().spec.replicas,
            Some(i as i32 + 1)
        );
    }
    // Nothing is stored as v1alpha1 any more: drop it from storedVersions.
    crds.patch_status(
        "foos.samplecontroller.k8s.io",
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"storedVersions": ["v1beta1"]}})),
    )
    .await
    .unwrap();
    let crd = crds.get("foos.samplecontroller.k8s.io").await.unwrap();
    assert_eq!(
        crd.status.and_then(|s| s.stored_versions),
        Some(vec!["v1beta1".to_owned()])
    );
}

fn curl(ca: &std::path::Path, url: &str, body: Option<&str>) -> Option<String> {
    let mut cmd = Command::new("curl");
    cmd.args(["-sf", "--max-time", "5", "--cacert"])
        .arg(ca)
        .arg(url);
    if let Some(b) = body {
        cmd.args(["-H", "Content-Type: application/json", "-d", b]);
    }
    let out = cmd.output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

#[tokio::test]
async fn the_sample_controller_serves_the_webhook_and_refuses_bad_certificates() {
    let _crd = FOO_CRD.lock().await;
    let client = client().await;
    apply_crd(&client, &foo_crd()).await.unwrap();
    let ns = TestNamespace::new(&client, "conversion-binary").await;
    let dir = std::env::temp_dir().join(format!(
        "kube-codegen-e2e-binary-webhook-{}",
        std::process::id()
    ));
    conversion::make_certs(&dir).unwrap();
    let port = free_port();
    let common = |cert_dir: &std::path::Path| {
        let mut cmd = Command::new(faults::controller_binary());
        cmd.arg("--kubeconfig")
            .arg(kubeconfig())
            .args(["--namespace", &ns.name])
            .args(["--metrics-addr", &format!("127.0.0.1:{}", free_port())])
            .args(["--health-addr", &format!("127.0.0.1:{}", free_port())])
            .args(["--conversion-webhook-addr", &format!("127.0.0.1:{port}")])
            .arg("--conversion-webhook-cert-dir")
            .arg(cert_dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped());
        cmd
    };

    // A cert dir without certificates: the process stops at once, naming the file.
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let out = tokio::task::spawn_blocking({
        let mut cmd = common(&empty);
        move || cmd.output().unwrap()
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "must not start:\n{stderr}");
    assert!(
        stderr.contains("conversion webhook TLS: cannot read certificate")
            && stderr.contains("tls.crt"),
        "{stderr}"
    );

    // With certificates: it answers reviews while running its controllers, and stops on SIGTERM.
    let child = common(&dir).spawn().unwrap();
    let ca = dir.join("ca.crt");
    let url = format!("https://127.0.0.1:{port}");
    eventually("the webhook answers", Duration::from_secs(30), || async {
        Ok(curl(&ca, &format!("{url}/healthz"), None))
    })
    .await
    .unwrap();
    let review = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
        "request": {"uid": "x", "desiredAPIVersion": "samplecontroller.k8s.io/v1alpha1", "objects": [{
            "apiVersion": "samplecontroller.k8s.io/v1beta1", "kind": "Foo",
            "metadata": {"name": "f", "namespace": "default"},
            "spec": {"deploymentName": "f", "replicas": 4},
        }]},
    });
    let answer =
        curl(&ca, &format!("{url}/convert"), Some(&review.to_string())).expect("a review answer");
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(
        answer["response"]["result"]["status"], "Success",
        "{answer}"
    );
    assert_eq!(answer["response"]["uid"], "x");
    assert_eq!(
        answer["response"]["convertedObjects"][0]["spec"],
        json!({"deploymentName": "f", "replicas": 4})
    );
    let metrics = curl(&ca, &format!("{url}/metrics"), None).unwrap();
    assert!(
        metrics.contains(
            "controller_runtime_webhook_requests_total{code=\"200\",path=\"/convert\"} 1"
        ),
        "{metrics}"
    );
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let out = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "exit after SIGTERM: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(dir);
}
