//! The envtest crate against the pinned binaries (cached by `hack/testenv.sh build`, which
//! `hack/test.sh` runs first). These fail, never skip, when the binaries are missing.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use k8s_openapi::api::core::v1::{ConfigMap, ServiceAccount};
use kube::api::{Api, ApiResource, DynamicObject, PostParams};
use kube::core::GroupVersionKind;
use kube_codegen_envtest::{Binaries, Component, Environment, Error};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("envtest/ has a parent")
        .to_owned()
}

/// The sample API's Foo CRD without its `conversion` stanza: Foo converts between its two
/// versions through a webhook these tests do not run (with no stanza the API server only
/// rewrites apiVersion, which is all these tests need).
fn foo_crd() -> PathBuf {
    let source = repo_root().join("sample-controller/config/crd/samplecontroller.k8s.io_foos.yaml");
    let mut crd: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(&source).expect("the Foo CRD")).unwrap();
    crd["spec"]
        .as_mapping_mut()
        .expect("a spec")
        .remove("conversion");
    let path = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("envtest-foos-{}.yaml", std::process::id()));
    std::fs::write(&path, serde_yaml::to_string(&crd).unwrap()).unwrap();
    path
}

fn foos(env: &Environment) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("samplecontroller.k8s.io", "v1alpha1", "Foo");
    Api::namespaced_with(env.client(), "default", &ApiResource::from_gvk(&gvk))
}

fn foo(name: &str) -> DynamicObject {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "samplecontroller.k8s.io/v1alpha1",
        "kind": "Foo",
        "metadata": {"name": name},
        "spec": {"deploymentName": format!("{name}-deploy"), "replicas": 1},
    }))
    .expect("a Foo")
}

fn config_map(name: &str, value: &str) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name.into());
    cm.data = Some([("value".to_owned(), value.to_owned())].into());
    cm
}

/// True while `pid` names a process that has not been reaped.
fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

#[tokio::test]
async fn installs_crds_and_serves_their_objects() {
    let started = Instant::now();
    let env = Environment::builder()
        .crd_file(foo_crd())
        .start()
        .await
        .expect("environment starts");
    eprintln!(
        "environment with one CRD started in {:.1?}",
        started.elapsed()
    );

    // Established and in discovery when start() returns: no retry needed here.
    let api = foos(&env);
    api.create(&PostParams::default(), &foo("example"))
        .await
        .expect("create a Foo");
    let got = api.get("example").await.expect("read the Foo back");
    assert_eq!(got.data["spec"]["deploymentName"], "example-deploy");
    // The CRD's schema is enforced: replicas has minimum 1.
    let mut bad = foo("bad");
    bad.data["spec"]["replicas"] = serde_json::json!(0);
    let err = api
        .create(&PostParams::default(), &bad)
        .await
        .expect_err("the CRD's validation rejects replicas: 0");
    assert!(err.to_string().contains("replicas"), "{err}");

    // The kubeconfig on disk works for other processes (same server, CA and token).
    let kubeconfig =
        kube::config::Kubeconfig::read_from(env.kubeconfig_path()).expect("kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .expect("valid kubeconfig");
    assert_eq!(
        config.cluster_url.to_string().trim_end_matches('/'),
        env.apiserver_url()
    );
    let other: Api<DynamicObject> = Api::namespaced_with(
        kube::Client::try_from(config).expect("client"),
        "default",
        &ApiResource::from_gvk(&GroupVersionKind::gvk(
            "samplecontroller.k8s.io",
            "v1alpha1",
            "Foo",
        )),
    );
    other
        .get("example")
        .await
        .expect("the kubeconfig's client sees the Foo");

    let dir = env.dir().to_owned();
    let pids = env.pids();
    assert_eq!(
        pids.iter().map(|(c, _)| *c).collect::<Vec<_>>(),
        [Component::Etcd, Component::KubeApiserver]
    );
    env.stop().await.expect("stop");
    for (component, pid) in pids {
        assert!(
            !alive(pid),
            "{component} (pid {pid}) still runs after stop()"
        );
    }
    assert!(!dir.exists(), "{} not removed", dir.display());
}

#[tokio::test]
async fn parallel_environments_are_isolated() {
    let started = Instant::now();
    let (a, b) = tokio::join!(
        Environment::builder().crd_file(foo_crd()).start(),
        // The other one also runs the controller manager: its serviceaccount controller
        // makes the `default` ServiceAccount, which a plain API server never has.
        Environment::builder().controller_manager(true).start(),
    );
    let (a, b) = (a.expect("first starts"), b.expect("second starts"));
    eprintln!(
        "two environments started in parallel in {:.1?}",
        started.elapsed()
    );
    assert_ne!(a.apiserver_url(), b.apiserver_url());
    assert_ne!(a.dir(), b.dir());

    let a_cms: Api<ConfigMap> = Api::namespaced(a.client(), "default");
    let b_cms: Api<ConfigMap> = Api::namespaced(b.client(), "default");
    a_cms
        .create(&PostParams::default(), &config_map("same-name", "a"))
        .await
        .expect("create in a");
    b_cms
        .create(&PostParams::default(), &config_map("same-name", "b"))
        .await
        .expect("create in b: its own etcd, no conflict");
    let value = |cm: ConfigMap| cm.data.unwrap_or_default()["value"].clone();
    assert_eq!(value(a_cms.get("same-name").await.expect("a's")), "a");
    assert_eq!(value(b_cms.get("same-name").await.expect("b's")), "b");

    // Only a has the CRD.
    foos(&a)
        .list(&Default::default())
        .await
        .expect("a serves Foos");
    assert!(
        foos(&b).list(&Default::default()).await.is_err(),
        "b has no Foo CRD"
    );

    // Only b runs the controllers.
    let b_sas: Api<ServiceAccount> = Api::namespaced(b.client(), "default");
    assert!(b_sas.get_opt("default").await.expect("get").is_some());
    assert_eq!(b.pids().len(), 3);
    let a_sas: Api<ServiceAccount> = Api::namespaced(a.client(), "default");
    assert!(a_sas.get_opt("default").await.expect("get").is_none());
}

#[tokio::test]
async fn dropping_during_a_panic_stops_the_processes() {
    /// The pids and directory of the environment that was running when the test panicked.
    type Seen = Option<(Vec<(Component, u32)>, PathBuf)>;
    let seen: Arc<Mutex<Seen>> = Arc::default();
    let record = seen.clone();
    let task = tokio::spawn(async move {
        let env = Environment::builder()
            .start()
            .await
            .expect("environment starts");
        *record.lock().unwrap() = Some((env.pids(), env.dir().to_owned()));
        panic!("a failing test");
    });
    let join = task.await.expect_err("the task panicked");
    assert!(join.is_panic());
    let (pids, dir) = seen
        .lock()
        .unwrap()
        .take()
        .expect("the environment had started");
    assert_eq!(pids.len(), 2);
    for (component, pid) in pids {
        assert!(!alive(pid), "{component} (pid {pid}) survived the panic");
    }
    assert!(!dir.exists(), "{} survived the panic", dir.display());
}

#[tokio::test]
async fn a_missing_binary_says_how_to_build_it() {
    let empty = tempfile::tempdir().expect("tempdir");
    let err = Binaries::from_dir(empty.path()).expect_err("no binaries there");
    let text = err.to_string();
    assert!(
        matches!(
            err,
            Error::MissingBinary {
                component: Component::Etcd,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        text.contains(&empty.path().join("etcd").display().to_string()),
        "{text}"
    );
    assert!(text.contains("kube-codegen-envtest build"), "{text}");

    // A directory with etcd and kube-apiserver but no controller manager: fine until it is
    // asked for, then the error names it, before anything starts.
    let found = Binaries::find().expect("hack/testenv.sh build has cached the binaries");
    let partial = tempfile::tempdir().expect("tempdir");
    for name in ["etcd", "kube-apiserver"] {
        std::os::unix::fs::symlink(found.dir().join(name), partial.path().join(name)).unwrap();
    }
    let bins = Binaries::from_dir(partial.path()).expect("etcd and kube-apiserver suffice");
    assert!(bins.kube_controller_manager().is_none());
    let err = Environment::builder()
        .binaries(bins)
        .controller_manager(true)
        .start()
        .await
        .expect_err("no kube-controller-manager");
    assert!(
        matches!(
            err,
            Error::MissingBinary {
                component: Component::KubeControllerManager,
                ..
            }
        ),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_bad_crd_file_is_named_before_anything_starts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("crds.yaml");
    std::fs::write(
        &file,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: not-a-crd\n",
    )
    .unwrap();
    let started = Instant::now();
    let err = Environment::builder()
        .crd_dir(dir.path())
        .start()
        .await
        .expect_err("a ConfigMap is not a CRD");
    let text = err.to_string();
    assert!(text.contains(&file.display().to_string()), "{text}");
    assert!(text.contains("document 1"), "{text}");
    assert!(text.contains("ConfigMap"), "{text}");
    // Nothing was started: an API server start takes seconds.
    assert!(
        started.elapsed().as_secs() < 2,
        "took {:?}",
        started.elapsed()
    );

    let empty = tempfile::tempdir().expect("tempdir");
    let err = Environment::builder()
        .crd_dir(empty.path())
        .start()
        .await
        .expect_err("an empty CRD directory is a mistake, not a no-op");
    assert!(err.to_string().contains("no *.yaml"), "{err}");
}

#[tokio::test]
async fn a_process_that_exits_is_reported_with_its_log() {
    let err = Environment::builder()
        .apiserver_arg("--no-such-flag=1")
        .start()
        .await
        .expect_err("kube-apiserver refuses an unknown flag");
    let Error::Startup {
        component,
        ref problem,
        ref tail,
        ..
    } = err
    else {
        panic!("expected a startup error, got {err:?}");
    };
    assert_eq!(component, Component::KubeApiserver);
    assert!(problem.contains("exited"), "{problem}");
    // The tail of the apiserver's own log says why.
    assert!(tail.contains("no-such-flag"), "{tail}");
    assert!(err.to_string().contains("no-such-flag"), "{err}");
}

#[tokio::test]
async fn the_apiserver_restarts_with_its_data_and_the_same_client_works() {
    let mut env = Environment::builder()
        .crd_file(foo_crd())
        .start()
        .await
        .expect("environment starts");
    let api = foos(&env);
    api.create(&PostParams::default(), &foo("survivor"))
        .await
        .expect("create a Foo");
    let before = env.pids()[1];

    env.kill_apiserver().expect("kill");
    assert!(
        !alive(before.1),
        "kube-apiserver still runs after kill_apiserver"
    );
    assert!(
        api.get("survivor").await.is_err(),
        "a request while the apiserver is down fails"
    );

    let started = Instant::now();
    env.start_apiserver(std::time::Duration::from_secs(60))
        .await
        .expect("the apiserver comes back");
    eprintln!("kube-apiserver restarted in {:.1?}", started.elapsed());
    let after = env.pids()[1];
    assert_eq!(after.0, Component::KubeApiserver);
    assert_ne!(after.1, before.1);
    // etcd kept the data, the CRD is served again, and the client made before still works.
    let got = api
        .get("survivor")
        .await
        .expect("the Foo survived the restart");
    assert_eq!(got.data["spec"]["deploymentName"], "survivor-deploy");
}
