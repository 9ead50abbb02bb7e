//! The Go project's e2e suite needs kind and container images; its intent, here: the manager
//! binary (`cronjob-manager`) against the test control plane, with leader election and its
//! webhooks served over TLS: it reconciles a CronJob, holds the Go manager's Lease, converts
//! between v1 and v2 for the API server (a v1 object read as v2), and answers `/healthz` and
//! `/metrics` on its webhook port, and, as the Go manager, on listeners of their own
//! (`--health-probe-bind-address`, `--metrics-bind-address`, plain HTTP).

mod support;

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use cronjob::apis::batch::{v1, v2};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;
use support::*;

/// The manager process, killed when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Prints the manager's log when the test fails.
struct PrintOnPanic(std::path::PathBuf);

impl Drop for PrintOnPanic {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "cronjob-manager's log:\n{}",
                std::fs::read_to_string(&self.0).unwrap_or_default()
            );
        }
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `curl` over plain HTTP: (status code, body); the code is 0 when nothing answered.
fn curl_http(url: &str) -> (u16, String) {
    let out = Command::new("curl")
        .args(["-sS", "--max-time", "5", "-w", "\n%{http_code}", url])
        .output()
        .expect("curl");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", "0"));
    (code.trim().parse().unwrap_or(0), body.to_owned())
}

/// `curl` over TLS to the manager, trusting the test CA.
fn curl(url: &str) -> Option<String> {
    let out = Command::new("curl")
        .args(["-sSf", "--max-time", "5", "--cacert"])
        .arg(hook().cert_dir.join("ca.crt"))
        .arg(url)
        .output()
        .expect("curl");
    if !out.status.success() {
        eprintln!("curl {url}: {}", String::from_utf8_lossy(&out.stderr));
    }
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

#[tokio::test]
async fn the_manager_reconciles_converts_and_serves_over_tls() {
    let env = ENV.get().expect("control plane");
    let client = client();
    let port = free_port();
    let base = format!("https://127.0.0.1:{port}");
    let probes = format!("http://127.0.0.1:{}", free_port());
    let metrics_base = format!("http://127.0.0.1:{}", free_port());
    // The manager's log (tracing writes to stdout), printed if the test fails.
    let log = std::env::temp_dir().join(format!("cronjob-manager-{}.log", std::process::id()));
    let _print = PrintOnPanic(log.clone());
    let _manager = Running(
        Command::new(env!("CARGO_BIN_EXE_cronjob-manager"))
            .arg("--kubeconfig")
            .arg(env.kubeconfig_path())
            .args([
                "--leader-elect",
                "--webhook-host",
                "127.0.0.1",
                "--webhook-port",
            ])
            .arg(port.to_string())
            .arg("--webhook-cert-path")
            .arg(&hook().cert_dir)
            .arg("--health-probe-bind-address")
            .arg(probes.trim_start_matches("http://"))
            .arg("--metrics-bind-address")
            .arg(metrics_base.trim_start_matches("http://"))
            .stdout(Stdio::from(std::fs::File::create(&log).unwrap()))
            .stderr(Stdio::inherit())
            .spawn()
            .expect("cronjob-manager starts"),
    );
    eventually(
        "the manager's /healthz",
        Duration::from_secs(60),
        || async { (curl(&format!("{base}/healthz")).as_deref() == Some("ok")).then_some(()) },
    )
    .await;
    // The probes' own listener: alive, and ready once the caches have synced.
    eventually("the probes' /readyz", Duration::from_secs(60), || async {
        (curl_http(&format!("{probes}/readyz")) == (200, "ok".into())).then_some(())
    })
    .await;
    assert_eq!(curl_http(&format!("{probes}/healthz")), (200, "ok".into()));
    assert_eq!(curl_http(&format!("{probes}/metrics")).0, 404);

    // The API server converts through the manager's /convert from now on.
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.patch(
        "cronjobs.batch.tutorial.kubebuilder.io",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"conversion": {"webhook": {"clientConfig": {
            "url": format!("{base}/convert"), "caBundle": ca_bundle()}}}}})),
    )
    .await
    .unwrap();

    let ns = namespace(&client, "manager").await;
    let v1s: Api<v1::CronJob> = Api::namespaced(client.clone(), &ns);
    let mut c = v1::CronJob::new(
        "managed",
        v1::CronJobSpec {
            schedule: "30 2 * * 1-5".into(),
            ..Default::default()
        },
    );
    c.metadata.namespace = Some(ns.clone());
    v1s.create(&PostParams::default(), &c).await.unwrap();

    // Reconciled by the manager's controller, which leads.
    eventually(
        "the CronJob reconciled",
        Duration::from_secs(60),
        || async {
            let c = v1s.get("managed").await.ok()?;
            c.status
                .conditions
                .iter()
                .any(|c| c.type_ == "Available" && c.reason == "AllJobsCompleted")
                .then_some(())
        },
    )
    .await;
    let lease = Api::<Lease>::namespaced(client.clone(), "default")
        .get("80807133.tutorial.kubebuilder.io")
        .await
        .expect("the manager's Lease");
    assert!(lease.spec.and_then(|s| s.holder_identity).is_some());

    // Read as v2 through the manager's conversion webhook.
    let v2s: Api<v2::CronJob> = Api::namespaced(client.clone(), &ns);
    let as_v2 = eventually(
        "the CronJob read as v2",
        Duration::from_secs(30),
        || async { v2s.get("managed").await.ok() },
    )
    .await;
    let s = &as_v2.spec.schedule;
    assert_eq!(
        (
            s.minute.as_deref(),
            s.hour.as_deref(),
            s.day_of_month.as_deref(),
            s.day_of_week.as_deref()
        ),
        (Some("30"), Some("2"), None, Some("1-5"))
    );
    let metrics = curl(&format!("{base}/metrics")).expect("/metrics");
    assert!(
        metrics.contains("kube_codegen_conversion_reviews_total"),
        "{metrics}"
    );
    // The metrics listener: the controller's reconciles (at least the one above), its
    // queue, and the webhooks' conversions.
    let (code, metrics) = curl_http(&format!("{metrics_base}/metrics"));
    assert_eq!(code, 200, "{metrics}");
    // Every reconcile, whatever its result (a scheduled CronJob's is a requeue-after).
    let reconciles: f64 = metrics
        .lines()
        .filter(|l| {
            l.starts_with("controller_runtime_reconcile_total{")
                && l.contains(r#"controller="cronjob""#)
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum();
    assert!(reconciles >= 1.0, "{metrics}");
    for family in [
        "workqueue_adds_total{name=\"cronjob\"}",
        "kube_codegen_conversion_reviews_total",
    ] {
        assert!(metrics.contains(family), "{family} missing:\n{metrics}");
    }
    assert_eq!(curl_http(&format!("{metrics_base}/healthz")).0, 404);
}

/// A bind address the Go manager would refuse is refused, naming the flag; `0` turns the
/// listener off (nothing answers there).
#[test]
fn a_bad_bind_address_is_refused() {
    let out = Command::new(env!("CARGO_BIN_EXE_cronjob-manager"))
        .args(["--metrics-bind-address", "localhost"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--metrics-bind-address") && err.contains("\"localhost\""),
        "{err}"
    );
}
