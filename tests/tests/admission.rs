//! E2E: the real API server calls the runtime's admission webhooks over TLS. The sample
//! controller's defaulter and validator for v1beta1 Foo (`sample_controller::admission`)
//! are served as the controller serves them, with the conversion webhook on the same port
//! (`sample_controller::conversion::bind`), on 127.0.0.1 with a certificate from a CA the
//! test makes, and registered with the sample controller's generated
//! MutatingWebhookConfiguration and ValidatingWebhookConfiguration
//! (config/webhook/manifests.yaml, from the markers on its webhook), their Service replaced
//! by a `url` and `caBundle` pointing at it and limited to the test's namespace.
//!
//! Shown: a defaulted field appears on create (and on a dry-run create, which persists
//! nothing); an invalid object is refused with the API server's 422, the validator's
//! message and field path, as `kubectl` prints it; warnings reach the client; an update is
//! validated against the old object; a create through v1alpha1 is converted to v1beta1
//! for the webhooks (matchPolicy Equivalent) and defaulted; and, with the webhook down,
//! `failurePolicy: Ignore` lets a create through while `Fail` refuses it; the API server
//! recovers when the webhook restarts and when its certificate is rotated (to another CA)
//! under the running server.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use anyhow::Result;
use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use kube::api::{Api, DeleteParams, PostParams};
use kube_codegen_runtime::webhook::{AdmissionOutcome, Metrics};
use kube_codegen_tests::*;
use sample_api::apis::samplecontroller::{v1alpha1, v1beta1};
use serde_json::json;

use sample_controller::admission::{MUTATE_PATH as MUTATE, VALIDATE_PATH as VALIDATE};

/// The process's admission webhook, started on first use on a thread of its own.
struct Hook {
    base: String,
    ca_pem: Vec<u8>,
    metrics: Arc<Metrics>,
}

fn hook() -> &'static Hook {
    static HOOK: OnceLock<Hook> = OnceLock::new();
    HOOK.get_or_init(|| {
        let dir =
            std::env::temp_dir().join(format!("kube-codegen-e2e-admission-{}", std::process::id()));
        conversion::make_certs(&dir).expect("webhook certificates");
        let (tx, rx) = std::sync::mpsc::channel();
        let cert_dir = dir.clone();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("webhook runtime");
            rt.block_on(async move {
                // The sample controller's webhooks, as `--webhook-addr` serves them.
                let server =
                    sample_controller::conversion::bind("127.0.0.1:0".parse().unwrap(), &cert_dir)
                        .await
                        .expect("webhooks start");
                tx.send((server.local_addr(), server.metrics())).unwrap();
                server.run(std::future::pending()).await.unwrap();
            });
        });
        let (addr, metrics) = rx.recv().expect("webhook address");
        Hook {
            base: format!("https://{addr}"),
            ca_pem: std::fs::read(dir.join("ca.crt")).expect("ca.crt"),
            metrics,
        }
    })
}

/// One webhook of a configuration, as the `webhook` generator writes it from
/// `+kubebuilder:webhook` markers, with a `url` and `caBundle` instead of the Service and
/// a namespaceSelector limiting it to the test's namespace (for the tests that point it
/// elsewhere).
fn webhook(name: &str, path: &str, namespace: &str) -> serde_json::Value {
    let hook = hook();
    json!({
        "name": name,
        "admissionReviewVersions": ["v1"],
        "clientConfig": {
            "url": format!("{}{path}", hook.base),
            "caBundle": serde_json::to_value(ByteString(hook.ca_pem.clone())).unwrap(),
        },
        "failurePolicy": "Fail",
        "sideEffects": "None",
        "timeoutSeconds": 10,
        "matchPolicy": "Equivalent",
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}},
        "rules": [{
            "apiGroups": ["samplecontroller.k8s.io"],
            "apiVersions": ["v1beta1"],
            "operations": ["CREATE", "UPDATE"],
            "resources": ["foos"],
        }],
    })
}

/// sample-controller's generated webhook configurations (config/webhook/manifests.yaml,
/// from the `+kubebuilder:webhook` markers on its webhook), renamed for this test, each
/// webhook's Service replaced by [`hook`]'s `url` and CA and limited to `namespace`.
fn generated_configurations(suffix: &str, namespace: &str) -> Result<Vec<serde_json::Value>> {
    use serde::Deserialize;
    let text = std::fs::read_to_string(
        repo_root().join("sample-controller/config/webhook/manifests.yaml"),
    )?;
    let hook = hook();
    let mut out = vec![];
    for doc in serde_yaml::Deserializer::from_str(&text) {
        let mut config = serde_json::Value::deserialize(doc)?;
        let name = config["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        config["metadata"]["name"] = json!(format!("{name}-{suffix}"));
        for w in config["webhooks"].as_array_mut().into_iter().flatten() {
            let path = w["clientConfig"]["service"]["path"].clone();
            w["clientConfig"] = json!({
                "url": format!("{}{}", hook.base, path.as_str().unwrap_or_default()),
                "caBundle": serde_json::to_value(ByteString(hook.ca_pem.clone()))?,
            });
            w["namespaceSelector"] =
                json!({"matchLabels": {"kubernetes.io/metadata.name": namespace}});
        }
        out.push(config);
    }
    Ok(out)
}

fn foo(name: &str, deployment: &str, replicas: Option<i32>) -> v1beta1::Foo {
    v1beta1::Foo::new(
        name,
        v1beta1::FooSpec {
            deployment_name: deployment.into(),
            replicas,
            min_ready_seconds: None,
        },
    )
}

fn status(e: kube::Error) -> kube::core::Status {
    match e {
        kube::Error::Api(s) => *s,
        other => panic!("expected an API error, got {other}"),
    }
}

#[tokio::test]
async fn the_api_server_calls_the_defaulter_and_validator_over_tls() -> Result<()> {
    let client = client().await;
    let ns = TestNamespace::new(&client, "admission").await;
    let suffix = ns.name.clone();
    let mutating: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    let validating: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    let pp = PostParams::default();
    let mut names = vec![];
    for config in generated_configurations(&suffix, &ns.name)? {
        names.push((config["kind"].clone(), config["metadata"]["name"].clone()));
        if config["kind"] == "MutatingWebhookConfiguration" {
            mutating
                .create(&pp, &serde_json::from_value(config)?)
                .await?;
        } else {
            validating
                .create(&pp, &serde_json::from_value(config)?)
                .await?;
        }
    }
    assert_eq!(names.len(), 2, "one configuration of each kind: {names:?}");
    let foos: Api<v1beta1::Foo> = Api::namespaced(client.clone(), &ns.name);

    // The API server picks new configurations up within a second or so: until both
    // answer, dry runs.
    let dry = dry_run();
    eventually("the webhooks to be called", Duration::from_secs(30), || {
        let foos = foos.clone();
        let dry = dry.clone();
        async move {
            let defaulted = foos.create(&dry, &foo("probe", "probe", None)).await?;
            let refused = foos.create(&dry, &foo("probe", "Bad", None)).await.is_err();
            Ok((defaulted.spec.replicas == Some(1) && refused).then_some(()))
        }
    })
    .await?;

    // A dry-run create sees the default and persists nothing.
    let seen = foos.create(&dry, &foo("dry", "dry-deploy", None)).await?;
    assert_eq!(seen.spec.replicas, Some(1));
    assert!(
        foos.get_opt("dry").await?.is_none(),
        "a dry run persists nothing"
    );

    // A defaulted field appears on create, and is stored.
    let created = foos.create(&pp, &foo("a", "a-deploy", None)).await?;
    assert_eq!(created.spec.replicas, Some(1));
    assert_eq!(foos.get("a").await?.spec.replicas, Some(1));
    // A value given is kept.
    let created = foos.create(&pp, &foo("b", "b-deploy", Some(3))).await?;
    assert_eq!(created.spec.replicas, Some(3));

    // An invalid object: the server's 422 with the validator's message and field path.
    let s = status(
        foos.create(&pp, &foo("bad", "Bad_Name", None))
            .await
            .unwrap_err(),
    );
    assert_eq!((s.code, s.reason.as_str()), (422, "Invalid"), "{s:?}");
    assert_eq!(
        s.message,
        "admission webhook \"vfoo-v1beta1.kb.io\" denied the request: Foo.samplecontroller.k8s.io \"bad\" is invalid: spec.deploymentName: Invalid value: \"Bad_Name\": must be a lowercase DNS label"
    );
    let causes = s.details.expect("details").causes;
    assert_eq!(causes.len(), 1);
    assert_eq!(causes[0].field, "spec.deploymentName");
    assert_eq!(causes[0].reason, "FieldValueInvalid");
    assert!(foos.get_opt("bad").await?.is_none());

    // As kubectl prints it; and a warning reaches the client.
    let manifest = |name: &str, deployment: &str, replicas: i32| {
        json!({
            "apiVersion": "samplecontroller.k8s.io/v1beta1", "kind": "Foo",
            "metadata": {"name": name, "namespace": ns.name},
            "spec": {"deploymentName": deployment, "replicas": replicas},
        })
        .to_string()
    };
    let out = kubectl_stdin(
        &["create", "-f", "-"],
        Some(&manifest("bad", "Bad_Name", 2)),
    );
    assert!(!out.success);
    assert!(
        out.stderr.contains(
            "The Foo \"bad\" is invalid: spec.deploymentName: Invalid value: \"Bad_Name\": must be a lowercase DNS label"
        ),
        "{}",
        out.stderr
    );
    let out = kubectl_stdin(
        &["create", "-f", "-"],
        Some(&manifest("big", "big-deploy", 7)),
    );
    assert!(out.success, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("Warning: spec.replicas: 7 replicas of big-deploy may not fit the cluster"),
        "{}",
        out.stderr
    );

    // Updates are validated against the old object: the name may not change...
    let mut a = foos.get("a").await?;
    a.spec.deployment_name = "a-renamed".into();
    let s = status(foos.replace("a", &pp, &a).await.unwrap_err());
    assert_eq!(s.code, 422);
    assert!(
        s.message
            .ends_with("spec.deploymentName: Invalid value: \"a-renamed\": field is immutable"),
        "{}",
        s.message
    );
    // ...the rest may, and an update is defaulted too.
    let mut a = foos.get("a").await?;
    a.spec.replicas = None;
    a.spec.min_ready_seconds = Some(4);
    let updated = foos.replace("a", &pp, &a).await?;
    assert_eq!(
        (updated.spec.replicas, updated.spec.min_ready_seconds),
        (Some(1), Some(4))
    );

    // A create through v1alpha1 reaches the v1beta1 webhooks converted (matchPolicy
    // Equivalent), and the default comes back through the conversion.
    let old: Api<v1alpha1::Foo> = Api::namespaced(client.clone(), &ns.name);
    let created = old
        .create(
            &pp,
            &v1alpha1::Foo::new(
                "c",
                v1alpha1::FooSpec {
                    deployment_name: "c-deploy".into(),
                    replicas: None,
                },
            ),
        )
        .await?;
    assert_eq!(created.spec.replicas, Some(1));

    let m = &hook().metrics;
    assert!(m.admission_reviews(MUTATE, AdmissionOutcome::Allowed) >= 6);
    assert!(m.admission_reviews(VALIDATE, AdmissionOutcome::Denied) >= 3);
    assert_eq!(m.admission_reviews(MUTATE, AdmissionOutcome::Errored), 0);
    assert_eq!(m.admission_reviews(VALIDATE, AdmissionOutcome::Errored), 0);

    let dp = DeleteParams::default();
    for (kind, name) in names {
        let name = name.as_str().unwrap_or_default();
        if kind == "MutatingWebhookConfiguration" {
            mutating.delete(name, &dp).await?;
        } else {
            validating.delete(name, &dp).await?;
        }
    }
    Ok(())
}

/// A webhook that cannot be reached: `failurePolicy: Ignore` lets the create through
/// (undefaulted), `Fail` refuses it with the API server's "failed calling webhook" error.
/// The configurations point at a loopback port nothing listens on.
#[tokio::test]
async fn failure_policy_decides_when_the_webhook_is_down() -> Result<()> {
    let client = client().await;
    let pp = PostParams::default();
    let mutating: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    let dead = format!("https://127.0.0.1:{}", free_port());
    let mut cases = vec![];
    for policy in ["Ignore", "Fail"] {
        let ns = TestNamespace::new(&client, &format!("admission-{}", policy.to_lowercase())).await;
        let mut hook = webhook("mfoo.kb.io", MUTATE, &ns.name);
        hook["clientConfig"]["url"] = json!(format!("{dead}{MUTATE}"));
        hook["failurePolicy"] = json!(policy);
        hook["timeoutSeconds"] = json!(2);
        let name = format!("down-{}", ns.name);
        mutating
            .create(
                &pp,
                &serde_json::from_value(json!({"metadata": {"name": name}, "webhooks": [hook]}))?,
            )
            .await?;
        cases.push((policy, ns, name));
    }
    // Wait until the Fail configuration is in force (it refuses), then check both.
    let (_, fail_ns, _) = &cases[1];
    let fail: Api<v1beta1::Foo> = Api::namespaced(client.clone(), &fail_ns.name);
    let dry = dry_run();
    eventually(
        "the Fail webhook to be in force",
        Duration::from_secs(30),
        || {
            let fail = fail.clone();
            let dry = dry.clone();
            async move {
                Ok(fail
                    .create(&dry, &foo("probe", "probe", None))
                    .await
                    .is_err()
                    .then_some(()))
            }
        },
    )
    .await?;
    let (_, ignore_ns, _) = &cases[0];
    let ignore: Api<v1beta1::Foo> = Api::namespaced(client.clone(), &ignore_ns.name);
    let created = ignore.create(&pp, &foo("a", "a-deploy", None)).await?;
    assert_eq!(created.spec.replicas, None, "let through, not defaulted");
    let s = status(
        fail.create(&pp, &foo("a", "a-deploy", None))
            .await
            .unwrap_err(),
    );
    assert_eq!(s.code, 500, "{s:?}");
    assert!(
        s.message.contains("failed calling webhook \"mfoo.kb.io\""),
        "{}",
        s.message
    );
    for (_, _, name) in &cases {
        mutating.delete(name, &DeleteParams::default()).await?;
    }
    Ok(())
}

/// The sample controller's webhook server on `addr` with the certificate in `dir`, running
/// until the returned sender fires.
async fn serve(
    addr: std::net::SocketAddr,
    dir: &std::path::Path,
) -> Result<(
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<Result<(), kube_codegen_runtime::webhook::WebhookError>>,
)> {
    let server = sample_controller::conversion::bind(addr, dir).await?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(server.run(async {
        let _ = stopped.await;
    }));
    Ok((stop, running))
}

/// A mutating configuration `name` calling the server on `addr` by URL, trusting the CA in
/// `ca_dir`.
fn url_configuration(
    name: &str,
    namespace: &str,
    addr: std::net::SocketAddr,
    ca_dir: &std::path::Path,
) -> Result<MutatingWebhookConfiguration> {
    let mut hook = webhook("mfoo.kb.io", MUTATE, namespace);
    hook["clientConfig"] = json!({
        "url": format!("https://{addr}{MUTATE}"),
        "caBundle": serde_json::to_value(ByteString(std::fs::read(ca_dir.join("ca.crt"))?))?,
    });
    Ok(serde_json::from_value(
        json!({"metadata": {"name": name}, "webhooks": [hook]}),
    )?)
}

fn dry_run() -> PostParams {
    PostParams {
        dry_run: true,
        ..PostParams::default()
    }
}

/// A dry-run create came back defaulted (`Some`), or not yet.
async fn defaulted(foos: Api<v1beta1::Foo>) -> Result<Option<()>> {
    let created = foos
        .create(&dry_run(), &foo("probe", "probe", None))
        .await?;
    Ok((created.spec.replicas == Some(1)).then_some(()))
}

/// A dry-run create was refused because the API server failed calling the webhook.
async fn refused_by_webhook(foos: Api<v1beta1::Foo>) -> Result<Option<()>> {
    Ok(
        match foos.create(&dry_run(), &foo("probe", "probe", None)).await {
            Err(e) => status(e)
                .message
                .contains("failed calling webhook \"mfoo.kb.io\"")
                .then_some(()),
            Ok(_) => None,
        },
    )
}

/// The webhook stops and starts again on its port (a rollout, a crash): meanwhile a `Fail`
/// webhook refuses creates, and once it serves again the API server's calls succeed on new
/// connections (its pooled ones died with the old process's listener).
#[tokio::test]
async fn the_api_server_recovers_when_the_webhook_restarts() -> Result<()> {
    let client = client().await;
    let ns = TestNamespace::new(&client, "admission-restart").await;
    let dir = std::env::temp_dir().join(format!(
        "kube-codegen-e2e-admission-restart-{}",
        std::process::id()
    ));
    conversion::make_certs(&dir)?;
    let addr: std::net::SocketAddr = format!("127.0.0.1:{}", free_port()).parse()?;
    let (stop, running) = serve(addr, &dir).await?;

    let name = format!("restart-{}", ns.name);
    let mutating: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    mutating
        .create(
            &PostParams::default(),
            &url_configuration(&name, &ns.name, addr, &dir)?,
        )
        .await?;
    let foos: Api<v1beta1::Foo> = Api::namespaced(client.clone(), &ns.name);
    eventually("the webhook to default", Duration::from_secs(30), || {
        defaulted(foos.clone())
    })
    .await?;

    stop.send(()).ok();
    running.await??;
    assert!(
        refused_by_webhook(foos.clone()).await?.is_some(),
        "a `Fail` webhook that is down refuses creates"
    );

    let (stop, running) = serve(addr, &dir).await?;
    eventually(
        "the restarted webhook to default",
        Duration::from_secs(30),
        || defaulted(foos.clone()),
    )
    .await?;
    stop.send(()).ok();
    running.await??;
    mutating.delete(&name, &DeleteParams::default()).await?;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// The serving certificate is rotated mid-run to one from another CA (a cert-manager
/// renewal after a CA rotation, a re-issued Secret volume): the running server picks the new
/// files up without a restart, and once the configurations' `caBundle` names only the new
/// CA, the API server's calls succeed, so they are served with the new certificate (the old
/// one would fail verification against that bundle).
#[tokio::test]
async fn the_api_server_recovers_when_the_certificate_is_rotated() -> Result<()> {
    let client = client().await;
    let ns = TestNamespace::new(&client, "admission-rotate").await;
    let root = std::env::temp_dir().join(format!(
        "kube-codegen-e2e-admission-rotate-{}",
        std::process::id()
    ));
    let (old, new, serving) = (root.join("old"), root.join("new"), root.join("serving"));
    conversion::make_certs(&old)?;
    conversion::make_certs(&new)?;
    std::fs::create_dir_all(&serving)?;
    for f in ["tls.crt", "tls.key"] {
        std::fs::copy(old.join(f), serving.join(f))?;
    }
    let addr: std::net::SocketAddr = format!("127.0.0.1:{}", free_port()).parse()?;
    let (stop, running) = serve(addr, &serving).await?;

    let name = format!("rotate-{}", ns.name);
    let mutating: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    mutating
        .create(
            &PostParams::default(),
            &url_configuration(&name, &ns.name, addr, &old)?,
        )
        .await?;
    let foos: Api<v1beta1::Foo> = Api::namespaced(client.clone(), &ns.name);
    eventually("the webhook to default", Duration::from_secs(30), || {
        defaulted(foos.clone())
    })
    .await?;

    // The bundle first: once it names only the new CA, the old certificate fails
    // verification and the `Fail` webhook refuses creates (so the API server's calls from
    // here on are checked against the new CA, not made on a connection pooled before).
    let mut current = mutating.get(&name).await?;
    current.webhooks = url_configuration(&name, &ns.name, addr, &new)?.webhooks;
    mutating
        .replace(&name, &PostParams::default(), &current)
        .await?;
    eventually(
        "the API server to refuse the old certificate",
        Duration::from_secs(30),
        || refused_by_webhook(foos.clone()),
    )
    .await?;
    // Then the files, rotated in place, each replaced whole (a temporary file renamed over
    // it), as a Secret volume's update is seen. The server re-reads them on its interval
    // (10 s by default), without a restart.
    for f in ["tls.key", "tls.crt"] {
        let tmp = serving.join(format!(".{f}.new"));
        std::fs::copy(new.join(f), &tmp)?;
        std::fs::rename(&tmp, serving.join(f))?;
    }
    eventually(
        "the webhook to default with the rotated certificate",
        Duration::from_secs(60),
        || defaulted(foos.clone()),
    )
    .await?;
    assert!(!running.is_finished(), "served without a restart");
    stop.send(()).ok();
    running.await??;
    mutating.delete(&name, &DeleteParams::default()).await?;
    let _ = std::fs::remove_dir_all(&root);
    Ok(())
}
