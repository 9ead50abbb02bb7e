//! E2E: the real sample-controller binary against the real control plane, running as a
//! ServiceAccount bound only to the generated least-privilege RBAC.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Event;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube_codegen_tests::*;
use sample_api::apis::insujang::v1beta1::{TestResource, TestResourceSpec};
use sample_api::apis::samplecontroller::v1alpha1::{Foo, FooSpec};
use serde_json::json;

const SA_NAMESPACE: &str = "sample-controller";

/// A kubeconfig for the controller's ServiceAccount: same server and CA, SA token.
fn service_account_kubeconfig(tag: u16) -> (PathBuf, String) {
    // Tests run in parallel: two concurrent client-side applies of the same objects can
    // conflict, so one test at a time sets up the ServiceAccount.
    static SETUP: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = SETUP.lock().unwrap_or_else(|e| e.into_inner());
    let config = repo_root().join("sample-controller/config");
    for f in ["namespace.yaml", "rbac/role.yaml", "rbac.yaml"] {
        kubectl_ok(&[
            "apply",
            "--server-side",
            "--force-conflicts",
            "--field-manager=e2e",
            "-f",
            config.join(f).to_str().unwrap(),
        ]);
    }
    let token = kubectl_ok(&[
        "create",
        "token",
        "sample-controller",
        "-n",
        SA_NAMESPACE,
        "--duration=2h",
    ]);
    let admin: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(kubeconfig()).unwrap()).unwrap();
    let cluster = admin["clusters"][0]["cluster"].clone();
    let kc = json!({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "test", "cluster": serde_json::to_value(&cluster).unwrap()}],
        "users": [{"name": "sample-controller", "user": {"token": token.trim()}}],
        "contexts": [{"name": "sa", "context": {"cluster": "test", "user": "sample-controller"}}],
        "current-context": "sa",
    });
    let path = std::env::temp_dir().join(format!("sample-controller-sa-{tag}.kubeconfig"));
    std::fs::write(&path, serde_yaml::to_string(&kc).unwrap()).unwrap();
    (path, token.trim().to_owned())
}

struct Controller {
    child: Child,
    token: String,
    metrics: u16,
    health: u16,
    log: PathBuf,
}

impl Controller {
    fn start(extra: &[&str]) -> Controller {
        let (metrics, health) = (free_port(), free_port());
        let (kubeconfig, token) = service_account_kubeconfig(metrics);
        let log = std::env::temp_dir().join(format!("sample-controller-{metrics}.log"));
        let child = Command::new(faults::controller_binary())
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .args([
                "--metrics-addr",
                &format!("127.0.0.1:{metrics}"),
                "--health-addr",
                &format!("127.0.0.1:{health}"),
            ])
            .args(extra)
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("start sample-controller");
        Controller {
            child,
            token,
            metrics,
            health,
            log,
        }
    }

    fn get(&self, port: u16, path: &str) -> Option<(u16, String)> {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
        write!(s, "GET {path} HTTP/1.1\r\nhost: x\r\n\r\n").ok()?;
        let mut out = String::new();
        s.read_to_string(&mut out).ok()?;
        let code = out.split_whitespace().nth(1)?.parse().ok()?;
        Some((
            code,
            out.split("\r\n\r\n").nth(1).unwrap_or_default().to_owned(),
        ))
    }

    async fn wait_ready(&self) {
        eventually("controller /readyz", Duration::from_secs(60), || async {
            Ok((self.get(self.health, "/readyz").map(|r| r.0) == Some(200)).then_some(()))
        })
        .await
        .unwrap_or_else(|e| {
            panic!(
                "{e}\n{}",
                std::fs::read_to_string(&self.log).unwrap_or_default()
            )
        });
    }

    fn logs(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// SIGTERM, and the exit status.
    fn terminate(mut self) -> std::process::ExitStatus {
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status();
        for _ in 0..300 {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        panic!(
            "sample-controller did not exit within 30s of SIGTERM\n{}",
            self.logs()
        );
    }
}

impl Drop for Controller {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}

async fn install_crds(client: &kube::Client) {
    let dir = repo_root().join("sample-controller/config/crd");
    for entry in std::fs::read_dir(dir).unwrap() {
        apply_crd(
            client,
            &parse_crd(&std::fs::read_to_string(entry.unwrap().path()).unwrap()),
        )
        .await
        .unwrap();
    }
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
async fn sample_controller_converges_foos_as_the_go_one_does() {
    converges(&[]).await;
}

/// The same scenario with the Foo controller on the runtime's controller builder.
#[tokio::test]
async fn the_builder_based_foo_controller_converges_the_same() {
    converges(&["--foo-controller", "builder"]).await;
}

/// The Deployments cached as JSON and decoded on every lister read: the controller must
/// see the same objects (replica changes, ownership) as with the typed cache.
#[tokio::test]
async fn the_foo_controller_converges_the_same_with_compact_deployments() {
    converges(&["--deployment-cache", "compact"]).await;
}

async fn converges(extra: &[&str]) {
    let client = client().await;
    install_crds(&client).await;
    let ns = TestNamespace::new(&client, "sample").await;
    let mut args = vec!["--namespace", &ns.name, "--workers", "2"];
    args.extend_from_slice(extra);
    let controller = Controller::start(&args);
    controller.wait_ready().await;

    let foos: Api<Foo> = Api::namespaced(client.clone(), &ns.name);
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), &ns.name);

    // 1. A Foo gets its Deployment, controlled by it.
    let created = foos
        .create(&PostParams::default(), &foo("example", 1))
        .await
        .unwrap();
    let d = eventually("deployment created", Duration::from_secs(30), || async {
        Ok(deployments.get_opt("example-deploy").await?)
    })
    .await
    .unwrap_or_else(|e| panic!("{e}\n{}", controller.logs()));
    let owner = &d.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.uid.as_str(), owner.controller),
        ("Foo", created.metadata.uid.as_deref().unwrap(), Some(true))
    );
    assert_eq!(d.spec.replicas, Some(1));
    let managers: Vec<_> = d
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .filter_map(|m| m.manager.clone())
        .collect();
    assert!(
        managers.contains(&"sample-controller".to_string()),
        "{managers:?}"
    );

    // 2. Replicas follow the Foo.
    foos.patch(
        "example",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 2}})),
    )
    .await
    .unwrap();
    eventually(
        "deployment scaled to 2",
        Duration::from_secs(30),
        || async {
            Ok((deployments.get("example-deploy").await?.spec.replicas == Some(2)).then_some(()))
        },
    )
    .await
    .unwrap();

    // 3. Pods become ready (fake kubelet), and the Foo's status reports it.
    let kubelet = FakeKubelet::register(&client, "fake-node-1").await.unwrap();
    let selector = "app=nginx,controller=example";
    eventually(
        "two pods ready and foo status 2",
        Duration::from_secs(90),
        || async {
            kubelet.make_pods_ready(&ns.name, selector).await?;
            let f = foos.get("example").await?;
            Ok((f.status.map(|s| s.available_replicas) == Some(2)).then_some(()))
        },
    )
    .await
    .unwrap_or_else(|e| panic!("{e}\n{}", controller.logs()));

    // 4. A Deployment someone else owns is left alone, with a Warning event.
    let mut foreign = sample_controller::foo::new_deployment(&foo("taken", 1));
    foreign.metadata.owner_references = None;
    let foreign = deployments
        .create(&PostParams::default(), &foreign)
        .await
        .unwrap();
    foos.create(&PostParams::default(), &foo("taken", 3))
        .await
        .unwrap();
    let out = eventually(
        "ErrResourceExists event",
        Duration::from_secs(30),
        || async {
            let out = kubectl(&[
                "get",
                "events",
                "-n",
                &ns.name,
                "--field-selector",
                "involvedObject.name=taken,reason=ErrResourceExists",
                "-o",
                "jsonpath={.items[*].message}",
            ]);
            Ok((out.success && !out.stdout.is_empty()).then_some(out.stdout))
        },
    )
    .await
    .unwrap();
    assert!(
        out.contains("Resource \"taken-deploy\" already exists and is not managed by Foo"),
        "{out}"
    );
    let untouched = deployments.get("taken-deploy").await.unwrap();
    // kube-controller-manager writes its status, so compare what the controller could touch.
    assert_eq!(
        untouched.spec.replicas, foreign.spec.replicas,
        "the foreign Deployment was scaled"
    );
    assert_eq!(
        untouched.metadata.owner_references, None,
        "the foreign Deployment was adopted"
    );
    let writers: Vec<_> = untouched
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .filter_map(|m| m.manager.clone())
        .collect();
    assert!(
        !writers.contains(&"sample-controller".to_string()),
        "sample-controller wrote the foreign Deployment: {writers:?}"
    );
    let described = kubectl_ok(&["describe", "foo", "taken", "-n", &ns.name]);
    assert!(described.contains("ErrResourceExists"), "{described}");

    // A Synced event for the good one, visible to kubectl.
    let events: Api<Event> = Api::namespaced(client.clone(), &ns.name);
    let synced = events
        .list(&ListParams::default().fields("involvedObject.name=example,reason=Synced"))
        .await
        .unwrap();
    assert!(!synced.items.is_empty(), "no Synced event");

    // 5. Deleting the Foo garbage-collects its Deployment (kube-controller-manager's GC).
    foos.delete("example", &DeleteParams::background())
        .await
        .unwrap();
    eventually(
        "deployment garbage-collected",
        Duration::from_secs(60),
        || async {
            Ok(deployments
                .get_opt("example-deploy")
                .await?
                .is_none()
                .then_some(()))
        },
    )
    .await
    .unwrap();

    // Metrics show the queue and reconciles; the request counter is there too.
    let (code, metrics) = controller.get(controller.metrics, "/metrics").unwrap();
    assert_eq!(code, 200);
    for series in [
        "workqueue_adds_total{name=\"foos\"}",
        "controller_reconcile_total{controller=\"foo\",result=\"success\"}",
        "rest_client_requests_total",
    ] {
        assert!(metrics.contains(series), "missing {series} in\n{metrics}");
    }
    // Which loop reconciled the Foos: the builder counts under controller-runtime's names.
    let builder_successes = metrics
        .lines()
        .find_map(|l| {
            l.strip_prefix(
                "controller_runtime_reconcile_total{controller=\"foos\",result=\"success\"} ",
            )
        })
        .and_then(|n| n.parse::<u64>().ok())
        .unwrap_or(0);
    if extra.contains(&"builder") {
        assert!(
            builder_successes > 0,
            "the builder reconciled nothing:\n{metrics}"
        );
    } else {
        assert_eq!(builder_successes, 0, "{metrics}");
    }

    // Graceful shutdown: exit 0 on SIGTERM.
    let logs_path = controller.log.clone();
    let status = controller.terminate();
    assert!(
        status.success(),
        "exit status {status:?}\n{}",
        std::fs::read_to_string(logs_path).unwrap_or_default()
    );
}

/// The sample-controller tutorial (kubernetes/sample-controller's README, and the walk-through
/// in the project's seeds) with its own kubectl commands, word for word but for `-n`:
/// apply `foo.yaml` (v1alpha1), see the Deployment, scale it with
/// `kubectl patch foo example-foo --type merge -p '{"spec":{"replicas":2}}'`, read the
/// status with jsonpath, delete, and be refused a Deployment another owner has. kubectl
/// talks to the *preferred* version, v1beta1 (beta outranks alpha), converted by the
/// webhook: so v1beta1 must keep every path v1alpha1 has. When it moved `spec.replicas`,
/// the patch was pruned (`Warning: unknown field "spec.replicas"`) and the Deployment
/// stayed at one replica.
#[tokio::test]
async fn the_tutorials_kubectl_commands_work_against_the_preferred_version() {
    let client = client().await;
    install_crds(&client).await;
    let ns = TestNamespace::new(&client, "seed").await;
    let controller = Controller::start(&["--namespace", &ns.name, "--controllers", "foo"]);
    controller.wait_ready().await;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), &ns.name);
    let foo_yaml = repo_root().join("sample-controller/config/examples/foo.yaml");
    let foo_yaml = foo_yaml.to_str().unwrap();
    let n = ["-n", ns.name.as_str()];
    let run = |args: &[&str]| {
        let out = kubectl(&[args, &n[..]].concat());
        assert!(
            out.success && !out.stderr.contains("Warning"),
            "kubectl {args:?}:\n{}{}",
            out.stdout,
            out.stderr
        );
        out.stdout
    };

    // kubectl's Foo is v1beta1, the preferred version.
    run(&["apply", "-f", foo_yaml]);
    assert_eq!(
        run(&["get", "foo", "example-foo", "-o", "jsonpath={.apiVersion}"]),
        "samplecontroller.k8s.io/v1beta1"
    );
    let replicas = |want: i32| {
        let deployments = deployments.clone();
        async move {
            eventually(
                &format!("deployment example-foo at {want} replicas"),
                Duration::from_secs(30),
                || async {
                    Ok(deployments
                        .get_opt("example-foo")
                        .await?
                        .filter(|d| d.spec.replicas == Some(want))
                        .map(|_| ()))
                },
            )
            .await
        }
    };
    replicas(1)
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", controller.logs()));
    assert!(run(&["get", "deploy"]).contains("example-foo"));

    // Scale through kubectl: the patch reaches spec.replicas and the Deployment follows.
    run(&[
        "patch",
        "foo",
        "example-foo",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"replicas":2}}"#,
    ]);
    assert_eq!(
        run(&[
            "get",
            "foo",
            "example-foo",
            "-o",
            "jsonpath={.spec.replicas}"
        ]),
        "2"
    );
    replicas(2)
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", controller.logs()));
    let columns = run(&["get", "foo", "example-foo"]);
    assert!(
        columns.lines().nth(1).is_some_and(|l| l
            .split_whitespace()
            .collect::<Vec<_>>()
            .starts_with(&["example-foo", "example-foo", "2"])),
        "{columns}"
    );

    // The status, as the tutorial reads it.
    let kubelet = FakeKubelet::register(&client, "fake-node-seed")
        .await
        .unwrap();
    eventually(
        "status.availableReplicas 2",
        Duration::from_secs(90),
        || async {
            kubelet
                .make_pods_ready(&ns.name, "app=nginx,controller=example-foo")
                .await?;
            let status = run(&["get", "foo", "example-foo", "-o", "jsonpath={.status}"]);
            Ok((status == r#"{"availableReplicas":2}"#).then_some(()))
        },
    )
    .await
    .unwrap_or_else(|e| panic!("{e}\n{}", controller.logs()));

    // Delete: the Deployment goes with its owner.
    run(&["delete", "-f", foo_yaml]);
    eventually(
        "deployment garbage-collected",
        Duration::from_secs(60),
        || async {
            Ok(deployments
                .get_opt("example-foo")
                .await?
                .is_none()
                .then_some(()))
        },
    )
    .await
    .unwrap();

    // A Deployment of that name that the Foo does not own is left alone, with an event.
    run(&["create", "deployment", "example-foo", "--image=nginx"]);
    run(&["apply", "-f", foo_yaml]);
    let out = eventually(
        "ErrResourceExists event",
        Duration::from_secs(30),
        || async {
            let out = kubectl(&[
                "get",
                "events",
                "-n",
                &ns.name,
                "--field-selector",
                "involvedObject.name=example-foo,reason=ErrResourceExists",
                "-o",
                "jsonpath={.items[*].message}",
            ]);
            Ok((out.success && !out.stdout.is_empty()).then_some(out.stdout))
        },
    )
    .await
    .unwrap();
    assert!(
        out.contains("Resource \"example-foo\" already exists and is not managed by Foo"),
        "{out}"
    );
    run(&["delete", "-f", foo_yaml]);
    run(&["delete", "deploy", "example-foo"]);
    let status = controller.terminate();
    assert!(status.success(), "exit status {status:?}");
}

#[tokio::test]
async fn testresource_is_handled_and_the_service_account_cannot_read_secrets() {
    let client = client().await;
    install_crds(&client).await;
    let ns = TestNamespace::new(&client, "tutorial").await;
    let controller = Controller::start(&["--namespace", &ns.name, "--controllers", "testresource"]);
    controller.wait_ready().await;
    let trs: Api<TestResource> = Api::namespaced(client.clone(), &ns.name);
    let mut tr = TestResource {
        types: TestResource::type_meta(),
        spec: TestResourceSpec {
            command: "echo Hello World!".into(),
            custom_property: "asdasd=1234".into(),
        },
        ..Default::default()
    };
    tr.metadata.name = Some("example-tr".into());
    trs.create(&PostParams::default(), &tr).await.unwrap();
    eventually("HANDLED", Duration::from_secs(30), || async {
        Ok((trs.get("example-tr").await?.status.as_deref() == Some("HANDLED")).then_some(()))
    })
    .await
    .unwrap_or_else(|e| panic!("{e}\n{}", controller.logs()));
    let events = kubectl_ok(&[
        "get",
        "events",
        "-n",
        &ns.name,
        "--field-selector",
        "reason=ObjectHandled",
        "-o",
        "name",
    ]);
    assert!(!events.trim().is_empty());
    // The builder-based controller reports under controller-runtime's metric names.
    let (code, metrics) = controller
        .get(controller.metrics, "/metrics")
        .expect("/metrics answers");
    assert_eq!(code, 200);
    let successes = metrics
        .lines()
        .find_map(|l| {
            l.strip_prefix(
                "controller_runtime_reconcile_total{controller=\"testresources\",result=\"success\"} ",
            )
        })
        .and_then(|n| n.parse::<u64>().ok())
        .unwrap_or_else(|| panic!("no reconcile counter in /metrics:\n{metrics}"));
    assert!(successes >= 1, "{metrics}");

    // Least privilege: the ServiceAccount may do its job and nothing more.
    let sa = format!("system:serviceaccount:{SA_NAMESPACE}:sample-controller");
    for (verb, resource, expected) in [
        ("list", "foos.samplecontroller.k8s.io", "yes"),
        ("create", "deployments.apps", "yes"),
        ("patch", "deployments.apps", "yes"),
        ("get", "secrets", "no"),
        ("list", "secrets", "no"),
        ("delete", "deployments.apps", "no"),
        ("create", "pods", "no"),
    ] {
        let out = kubectl(&["auth", "can-i", verb, resource, "--as", &sa, "-n", &ns.name]);
        assert_eq!(
            out.stdout.trim(),
            expected,
            "can-i {verb} {resource}: {}{}",
            out.stdout,
            out.stderr
        );
    }
    // The token and kubeconfig never reach the logs.
    assert!(controller.token.len() > 20);
    assert!(
        !controller.logs().contains(&controller.token),
        "the token was logged"
    );
    assert!(
        !controller.logs().contains("sample-controller-sa-"),
        "the kubeconfig path was logged"
    );
    let status = controller.terminate();
    assert!(status.success());
}
