//! `SharedEnvironment`: one control plane for a whole test binary, and nothing left
//! behind when that binary ends, however it ends. Each case runs this very test binary
//! again as a child (its ignored `child` test) and looks at the child's processes after it
//! is gone. Like the crate's other tests these fail, never skip, without the binaries.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use kube_codegen_envtest::{Environment, SharedEnvironment};

static ENV: SharedEnvironment = SharedEnvironment::new(Environment::builder);

const MODE_ENV: &str = "KUBE_CODEGEN_ENVTEST_SHARED_CHILD";

/// The child: starts the shared environment from two tests' worth of calls, prints its
/// pids and directory, then ends as `$KUBE_CODEGEN_ENVTEST_SHARED_CHILD` says.
#[test]
#[ignore = "run as a child process by the tests below"]
fn child() {
    let Ok(mode) = std::env::var(MODE_ENV) else {
        return;
    };
    let env = ENV.get().expect("shared environment starts");
    // A second call is the same environment, not a second start.
    assert!(std::ptr::eq(env, ENV.get().unwrap()));
    let pids: Vec<String> = env.pids().iter().map(|(_, p)| p.to_string()).collect();
    println!("PIDS {} DIR {}", pids.join(","), env.dir().display());
    // The client made on the environment's own runtime serves this thread too.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let version = env.new_client().unwrap().apiserver_version().await;
        assert!(version.is_ok(), "new_client: {version:?}");
        let version = env.client().apiserver_version().await;
        assert!(version.is_ok(), "client: {version:?}");
    });
    let out = env
        .kubectl()
        .unwrap()
        .args(["get", "ns", "default"])
        .output()
        .unwrap();
    assert!(out.status.success(), "kubectl: {out:?}");
    match mode.as_str() {
        "panic" => panic!("a deliberately failing test"),
        "hang" => loop {
            std::thread::sleep(Duration::from_secs(60));
        },
        _ => {}
    }
}

struct Child {
    process: std::process::Child,
    pids: Vec<u32>,
    dir: PathBuf,
}

impl Drop for Child {
    fn drop(&mut self) {
        // A failed assertion must not leave the child (a "hang" one, say) running.
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

fn start_child(mode: &str) -> Child {
    let mut process = Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(MODE_ENV, mode)
        .stdout(Stdio::piped())
        // Piped, not inherited: the "panic" child's deliberate panic is no failure to show.
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = process.stderr.take().unwrap();
    let stderr = std::thread::spawn(move || std::io::read_to_string(stderr).unwrap_or_default());
    let mut lines = BufReader::new(process.stdout.take().unwrap()).lines();
    let Some(line) = lines
        .by_ref()
        .map_while(Result::ok)
        .find_map(|l| l.split_once("PIDS ").map(|(_, rest)| rest.to_owned()))
    else {
        panic!(
            "the child printed no pids; its stderr:\n{}",
            stderr.join().unwrap_or_default()
        );
    };
    // Keep reading: a closed pipe would fail the child's harness when it reports.
    std::thread::spawn(move || lines.for_each(drop));
    // The harness writes "test child ... " before the child's own output, on the same line.
    let (pids, dir) = line.split_once(" DIR ").unwrap();
    Child {
        process,
        pids: pids.split(',').map(|p| p.parse().unwrap()).collect(),
        dir: PathBuf::from(dir),
    }
}

/// True while `pid` is a process that has not exited (a zombie nobody reaped has exited).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(") ").map(|(_, rest)| !rest.starts_with('Z')))
        .unwrap_or(false)
}

fn wait_all_dead(pids: &[u32], within: Duration) {
    let deadline = Instant::now() + within;
    while pids.iter().any(|p| alive(*p)) {
        assert!(
            Instant::now() < deadline,
            "still running after the test binary ended: {:?}",
            pids.iter().filter(|p| alive(**p)).collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_failed_test_binary_stops_its_shared_environment() {
    let mut child = start_child("panic");
    assert_eq!(child.pids.len(), 2, "etcd and kube-apiserver");
    let status = child.process.wait().unwrap();
    assert!(!status.success(), "the child's test failed");
    // The exit hook ran before the process ended: all gone at once, directory too.
    wait_all_dead(&child.pids, Duration::from_secs(1));
    assert!(!child.dir.exists(), "{} removed", child.dir.display());
}

#[test]
fn a_passing_test_binary_stops_its_shared_environment() {
    let mut child = start_child("exit");
    assert!(child.process.wait().unwrap().success());
    wait_all_dead(&child.pids, Duration::from_secs(1));
    assert!(!child.dir.exists(), "{} removed", child.dir.display());
}

#[cfg(target_os = "linux")]
#[test]
fn a_sigkilled_test_binary_takes_its_shared_environment_along() {
    let mut child = start_child("hang");
    assert!(child.pids.iter().all(|p| alive(*p)));
    child.process.kill().unwrap(); // SIGKILL: no exit hook, no destructor runs
    child.process.wait().unwrap();
    // The kernel kills them (PR_SET_PDEATHSIG); only the directory stays.
    wait_all_dead(&child.pids, Duration::from_secs(5));
    let _ = std::fs::remove_dir_all(&child.dir);
}

#[test]
fn a_failed_start_is_reported_to_every_caller() {
    static BROKEN: SharedEnvironment = SharedEnvironment::new(|| {
        Environment::builder().apiserver_arg("--no-such-flag-for-kube-apiserver")
    });
    let first = BROKEN.get().expect_err("kube-apiserver refuses the flag");
    let text = first.to_string();
    assert!(text.contains("kube-apiserver"), "{text}");
    assert!(
        text.contains("no-such-flag"),
        "the log's tail says why: {text}"
    );
    // Not retried: the next test gets the same answer at once.
    let started = Instant::now();
    let second = BROKEN.get().expect_err("still failed");
    assert!(started.elapsed() < Duration::from_secs(1));
    assert_eq!(second.to_string(), text);
}
