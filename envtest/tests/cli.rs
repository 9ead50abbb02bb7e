//! The `kube-codegen-envtest` command (what `hack/testenv.sh` runs) against the pinned
//! binaries: a detached control plane's life from `up --detach` to `down`, each step run
//! as its own process, as a shell would; and the foreground `up`. Like the crate's other
//! tests these fail, never skip, without the binaries.

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, PostParams};
use kube_codegen_envtest::Binaries;

/// The command, with none of the variables it reads from a developer's shell.
fn cli() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kube-codegen-envtest"));
    for var in [
        "KUBE_CODEGEN_TESTENV_DIR",
        "KUBE_CODEGEN_TESTENV_PORT_OFFSET",
        "KUBE_CODEGEN_TESTENV_TIMEOUT",
        "KUBE_CODEGEN_ETCD_PORT",
        "KUBE_CODEGEN_ETCD_PEER_PORT",
        "KUBE_CODEGEN_APISERVER_PORT",
        "KUBE_CODEGEN_KCM_PORT",
        "KUBE_CODEGEN_APISERVER_EXTRA_ARGS",
        "KUBE_CODEGEN_KCM_EXTRA_ARGS",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

/// Runs it to the end (stdout closed too: a daemon holding the pipe would hang here).
fn run(args: &[&str], dir: &Path) -> Output {
    let out = cli()
        .args(args)
        .arg("--dir")
        .arg(dir)
        .output()
        .expect("run kube-codegen-envtest");
    eprintln!(
        "$ kube-codegen-envtest {} --dir {} -> {}\n{}{}",
        args.join(" "),
        dir.display(),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Stops the control plane in its directory when dropped, so a failing test leaves
/// nothing running.
struct DownOnDrop(PathBuf);

impl Drop for DownOnDrop {
    fn drop(&mut self) {
        let _ = cli().arg("down").arg("--dir").arg(&self.0).output();
    }
}

/// Four distinct loopback ports free right now (each bound before any is released).
fn free_ports() -> [u16; 4] {
    let listeners: Vec<TcpListener> = (0..4)
        .map(|_| TcpListener::bind("127.0.0.1:0").expect("bind"))
        .collect();
    let ports: Vec<u16> = listeners
        .iter()
        .map(|l| l.local_addr().unwrap().port())
        .collect();
    [ports[0], ports[1], ports[2], ports[3]]
}

fn port_args(ports: [u16; 4]) -> Vec<String> {
    let [etcd, peer, apiserver, kcm] = ports.map(|p| p.to_string());
    vec![
        "--etcd-port".into(),
        etcd,
        "--etcd-peer-port".into(),
        peer,
        "--apiserver-port".into(),
        apiserver,
        "--controller-manager-port".into(),
        kcm,
    ]
}

/// Exists and is not a zombie (the daemons' parent, the `up` that started them, is gone).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let state = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next());
        !matches!(state, None | Some("Z" | "X"))
    })
}

fn pid_file(dir: &Path, component: &str) -> u32 {
    std::fs::read_to_string(dir.join(format!("{component}.pid")))
        .unwrap_or_else(|e| panic!("{component}.pid: {e}"))
        .trim()
        .parse()
        .expect("a pid")
}

/// A client from the kubeconfig `up` printed, as any other program would make it.
async fn client(kubeconfig: &Path) -> kube::Client {
    let kc = kube::config::Kubeconfig::read_from(kubeconfig).expect("kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .expect("valid kubeconfig");
    kube::Client::try_from(config).expect("client")
}

async fn readyz(client: &kube::Client) -> Option<String> {
    let req = http::Request::get("/readyz").body(Vec::new()).unwrap();
    tokio::time::timeout(Duration::from_secs(5), client.request_text(req))
        .await
        .ok()?
        .ok()
}

fn foo_crd() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../sample-controller/config/crd/samplecontroller.k8s.io_foos.yaml")
}

#[tokio::test]
async fn a_detached_control_plane_lives_in_its_directory_until_down() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("control-plane");
    let _down = DownOnDrop(dir.clone());
    let ports = free_ports();
    let mut up_args: Vec<String> = [
        "up",
        "--detach",
        "--controller-manager",
        "--feature-gate",
        "ShardedListAndWatch=true",
        "--crd-file",
    ]
    .map(String::from)
    .into();
    up_args.push(foo_crd().display().to_string());
    up_args.extend(port_args(ports));
    let up_args: Vec<&str> = up_args.iter().map(String::as_str).collect();

    let out = run(&["status"], &dir);
    assert_eq!(out.status.code(), Some(1), "nothing runs yet");

    let started = Instant::now();
    let out = run(&up_args, &dir);
    assert!(out.status.success(), "up --detach failed");
    eprintln!("up --detach returned after {:.1?}", started.elapsed());
    let kubeconfig = PathBuf::from(stdout(&out).lines().last().expect("a last line"));
    assert_eq!(kubeconfig, dir.join("kubeconfig"));

    // The printed kubeconfig reaches a ready API server on the asked port, with the CRD.
    let text = std::fs::read_to_string(&kubeconfig).unwrap();
    assert!(
        text.contains(&format!("https://127.0.0.1:{}", ports[2])),
        "{text}"
    );
    let c = client(&kubeconfig).await;
    assert_eq!(readyz(&c).await.as_deref(), Some("ok"));
    let crds: Api<CustomResourceDefinition> = Api::all(c.clone());
    crds.get("foos.samplecontroller.k8s.io")
        .await
        .expect("the CRD of --crd-file is installed");
    let cms: Api<ConfigMap> = Api::namespaced(c.clone(), "default");
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("survivor".into());
    cms.create(&PostParams::default(), &cm)
        .await
        .expect("create a ConfigMap");
    // --feature-gate reached kube-apiserver: a sharded list echoes its selector.
    let selector = "shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')";
    let req = http::Request::get(format!(
        "/api/v1/namespaces/default/configmaps?shardSelector={}",
        selector
            .replace(' ', "%20")
            .replace('\'', "%27")
            .replace(',', "%2C")
    ))
    .body(Vec::new())
    .unwrap();
    let list: serde_json::Value = c.request(req).await.expect("a sharded list");
    assert_eq!(
        list["metadata"]["shardInfo"]["selector"], selector,
        "{list}"
    );

    // status: everything runs, with the pids of the pid files.
    let out = run(&["status"], &dir);
    assert_eq!(
        out.status.code(),
        Some(0),
        "status of a running control plane"
    );
    let report = stdout(&out);
    let etcd = pid_file(&dir, "etcd");
    let apiserver = pid_file(&dir, "kube-apiserver");
    let kcm = pid_file(&dir, "kube-controller-manager");
    for (name, pid) in [
        ("etcd", etcd),
        ("kube-apiserver", apiserver),
        ("kube-controller-manager", kcm),
    ] {
        assert!(
            report.contains(&format!("{name}: running (pid {pid},")),
            "{report}"
        );
        assert!(alive(pid), "{name} (pid {pid})");
    }
    assert!(report.contains("apiserver /readyz: ok"), "{report}");

    // env: what a shell evals, naming this kubeconfig and the binaries' kubectl.
    let out = run(&["env"], &dir);
    assert!(out.status.success());
    let bin = Binaries::find().expect("the binaries").dir().to_owned();
    assert_eq!(
        stdout(&out),
        format!(
            "export KUBECONFIG={}\nexport PATH={}:\"$PATH\"\n",
            kubeconfig.display(),
            bin.display()
        )
    );

    // A second up of the same control plane keeps it: same processes, same data.
    let out = run(&up_args, &dir);
    assert!(out.status.success(), "second up");
    assert_eq!(pid_file(&dir, "kube-apiserver"), apiserver);
    cms.get("survivor").await.expect("the data is kept");

    // kill-apiserver: gone, etcd and the controller manager stay, status says so.
    let out = run(&["kill-apiserver"], &dir);
    assert!(out.status.success(), "kill-apiserver");
    assert!(
        !alive(apiserver),
        "kube-apiserver still runs after kill-apiserver"
    );
    assert!(alive(etcd) && alive(kcm));
    assert_eq!(readyz(&c).await, None, "no API server to answer");
    let out = run(&["status"], &dir);
    assert_eq!(out.status.code(), Some(1), "status without an apiserver");
    assert!(
        stdout(&out).contains("kube-apiserver: stopped"),
        "{}",
        stdout(&out)
    );

    // start-apiserver: a new process, ready, on the same data; the old client works.
    let out = run(&["start-apiserver"], &dir);
    assert!(out.status.success(), "start-apiserver");
    let restarted = pid_file(&dir, "kube-apiserver");
    assert_ne!(restarted, apiserver);
    assert!(alive(restarted));
    assert_eq!(readyz(&c).await.as_deref(), Some("ok"));
    cms.get("survivor").await.expect("the data survived");
    // The log is appended to, so it tells of both starts.
    let log = std::fs::read_to_string(dir.join("kube-apiserver.log")).unwrap();
    assert!(log.len() > 1000, "{log}");

    // apiserver-restart: the two in one.
    let out = run(&["apiserver-restart"], &dir);
    assert!(out.status.success(), "apiserver-restart");
    let again = pid_file(&dir, "kube-apiserver");
    assert_ne!(again, restarted);
    assert!(!alive(restarted));
    assert_eq!(run(&["status"], &dir).status.code(), Some(0));

    // down: every process gone, the directory with it.
    let out = run(&["down"], &dir);
    assert!(out.status.success(), "down");
    for pid in [etcd, again, kcm] {
        assert!(!alive(pid), "pid {pid} survived down");
    }
    assert!(
        !dir.exists(),
        "down left {:?}",
        std::fs::read_dir(&dir).map(|d| d.count())
    );
    assert_eq!(run(&["status"], &dir).status.code(), Some(1));
    // Nothing to stop is no error.
    assert!(run(&["down"], &dir).status.success());
}

#[tokio::test]
async fn mistakes_are_reported_before_anything_starts() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("control-plane");
    let _down = DownOnDrop(dir.clone());

    let out = run(&["start-apiserver"], &dir);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no control plane was started"), "{err}");

    // A port that something else holds is named, and nothing is left running.
    // The held port is bound here first and then named: taking a free port and binding it
    // after raced with the other tests of this file starting control planes (seen once in
    // CI: AddrInUse on the bind).
    let holder = TcpListener::bind("127.0.0.1:0").expect("hold a port for the apiserver");
    let mut ports = free_ports();
    ports[2] = holder.local_addr().expect("held port").port();
    let mut args = vec!["up".to_owned(), "--detach".to_owned()];
    args.extend(port_args(ports));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run(&args, &dir);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("port 127.0.0.1:{} is in use", ports[2])),
        "{err}"
    );
    assert!(!dir.join("etcd.pid").exists());
    drop(holder);

    // Bad variables are named, not taken as 0.
    let out = cli()
        .args(["up", "--detach", "--dir"])
        .arg(&dir)
        .env("KUBE_CODEGEN_TESTENV_PORT_OFFSET", "two hundred")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("KUBE_CODEGEN_TESTENV_PORT_OFFSET"), "{err}");

    // A feature gate is NAME=true or NAME=false.
    for gate in ["ShardedListAndWatch", "ShardedListAndWatch=yes", "=true"] {
        let out = cli().args(["up", "--feature-gate", gate]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{gate}: a usage error");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--feature-gate"), "{err}");
    }

    // --dir and the ports belong to --detach.
    let out = cli()
        .args(["up", "--apiserver-port", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "a usage error");

    // The directory comes from KUBE_CODEGEN_TESTENV_DIR when there is no --dir.
    let out = cli()
        .arg("env")
        .env("KUBE_CODEGEN_TESTENV_DIR", &dir)
        .output()
        .unwrap();
    assert!(
        stdout(&out).starts_with(&format!(
            "export KUBECONFIG={}\n",
            dir.join("kubeconfig").display()
        )),
        "{}",
        stdout(&out)
    );

    let out = cli().arg("versions").output().unwrap();
    assert_eq!(
        stdout(&out),
        format!(
            "kubernetes {}\netcd {}\n",
            kube_codegen_envtest::KUBERNETES_VERSION,
            kube_codegen_envtest::ETCD_VERSION
        )
    );
}

/// SIGTERMs the foreground `up` and waits for it (also when the test fails half-way).
struct Foreground(Child);

impl Foreground {
    fn terminate(&mut self) -> ExitStatus {
        let pid = libc::pid_t::try_from(self.0.id()).expect("a pid");
        // SAFETY: kill(2) on our own child, which is not reaped before the wait below.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
        self.0.wait().expect("up exits")
    }
}

impl Drop for Foreground {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            self.terminate();
        }
    }
}

#[tokio::test]
async fn up_in_the_foreground_runs_until_sigterm_and_cleans_up() {
    let mut up = Foreground(
        cli()
            .arg("up")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start up"),
    );
    let mut lines = BufReader::new(up.0.stdout.take().unwrap()).lines();
    let kubeconfig = PathBuf::from(
        lines
            .next()
            .expect("up prints the kubeconfig path")
            .expect("utf-8"),
    );
    let dir = kubeconfig.parent().unwrap().to_owned();
    let c = client(&kubeconfig).await;
    assert_eq!(readyz(&c).await.as_deref(), Some("ok"));

    let status = up.terminate();
    assert!(status.success(), "{status}");
    assert!(!dir.exists(), "{} left behind", dir.display());
}
