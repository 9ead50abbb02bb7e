//! A control plane that outlives the process that starts it, for a shell, the benchmarks
//! and fault drills by hand (`kube-codegen-envtest up --detach`, `hack/testenv.sh`). Its
//! whole state is a directory: certificates, kubeconfig, etcd data, `<component>.log`,
//! `<component>.pid`, and `state.json` with each process's command line, so that any
//! later process (`down`, `status`, `start-apiserver`) can act on it.

use std::fs;
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::environment::{
    CommandLines, KUBECONFIG, Session, TOKENS_CSV, apiserver_ready, load_config, start_process,
    tail,
};
use crate::error::{Component, Error};
use crate::pki;

const STATE: &str = "state.json";
/// Directories the processes make (etcd's data, the self-signed serving certificates of
/// kube-apiserver and kube-controller-manager).
const ETCD_DATA: &str = "etcd-data";
const CERT_DIRS: [&str; 2] = ["apiserver-certs", "kcm-certs"];
/// How long `stop` waits after SIGTERM before it sends SIGKILL (etcd and the apiserver
/// shut down cleanly in well under that), and after SIGKILL before it gives up.
const TERM_GRACE: Duration = Duration::from_secs(20);
const KILL_GRACE: Duration = Duration::from_secs(10);
/// A `/readyz` probe that takes longer than this counts as not ready.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);
const POLL: Duration = Duration::from_millis(100);

/// The loopback ports of a control plane, given to
/// [`Builder::start_detached`](crate::Builder::start_detached); an
/// [`Environment`](crate::Environment) picks free ones itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Ports {
    /// etcd's client port.
    pub etcd: u16,
    /// etcd's peer port (a one-member cluster still listens on it).
    pub etcd_peer: u16,
    /// kube-apiserver's HTTPS port.
    pub apiserver: u16,
    /// kube-controller-manager's HTTPS port (its `/healthz`); taken only when it runs.
    pub controller_manager: u16,
}

impl Ports {
    /// 23790, 23800, 16443 and 16257: not the usual 2379, 2380, 6443 and 10257, so that a
    /// developer's own cluster or a second etcd on the machine does not clash.
    pub const DEFAULT: Self = Self {
        etcd: 23790,
        etcd_peer: 23800,
        apiserver: 16443,
        controller_manager: 16257,
    };

    /// Every port shifted by `by`: a second control plane on the machine (give it a
    /// directory of its own too). `None` if a port would pass 65535.
    ///
    /// ```
    /// use kube_codegen_envtest::Ports;
    /// assert_eq!(Ports::DEFAULT.offset(200).unwrap().apiserver, 16643);
    /// assert!(Ports::DEFAULT.offset(60000).is_none());
    /// ```
    #[must_use]
    pub fn offset(self, by: u16) -> Option<Self> {
        Some(Self {
            etcd: self.etcd.checked_add(by)?,
            etcd_peer: self.etcd_peer.checked_add(by)?,
            apiserver: self.apiserver.checked_add(by)?,
            controller_manager: self.controller_manager.checked_add(by)?,
        })
    }
}

/// A control plane started by [`Builder::start_detached`](crate::Builder::start_detached),
/// addressed by its directory: from the process that started it or from any later one.
/// Dropping it does nothing; [`stop`](Self::stop) stops it.
///
/// # Examples
///
/// ```no_run
/// use kube_codegen_envtest::{DetachedEnvironment, Environment, Ports};
///
/// # async fn example() -> Result<(), kube_codegen_envtest::Error> {
/// let cp = Environment::builder()
///     .controller_manager(true)
///     .start_detached("/tmp/my-control-plane", Ports::DEFAULT.offset(500).unwrap())
///     .await?;
/// println!("KUBECONFIG={}", cp.kubeconfig_path().display());
/// // ... later, maybe from another process:
/// let cp = DetachedEnvironment::at("/tmp/my-control-plane");
/// assert!(cp.status().await.is_up());
/// cp.restart_apiserver(std::time::Duration::from_secs(60)).await?;
/// cp.stop()?;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DetachedEnvironment {
    dir: PathBuf,
}

/// What [`DetachedEnvironment::status`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DetachedStatus {
    /// Whether a control plane was started in the directory and not stopped since (its
    /// `state.json` is there).
    pub started: bool,
    /// Each component of the control plane, in start order, with its process id if it
    /// runs (all three when none was started).
    pub processes: Vec<(Component, Option<u32>)>,
    /// Whether kube-apiserver's `/readyz` said `ok`.
    pub apiserver_ready: bool,
    /// The directory of the binaries it runs, if one was started.
    pub binaries: Option<PathBuf>,
}

impl DetachedStatus {
    /// Started, every process runs, and the API server is ready.
    #[must_use]
    pub fn is_up(&self) -> bool {
        self.started && self.apiserver_ready && self.processes.iter().all(|(_, p)| p.is_some())
    }
}

impl DetachedEnvironment {
    /// The control plane whose directory is `dir` (made absolute against the current
    /// directory), whether or not one runs there: nothing is read or started yet.
    #[must_use]
    pub fn at(dir: impl Into<PathBuf>) -> Self {
        let dir = dir.into();
        let dir = std::path::absolute(&dir).unwrap_or(dir);
        Self { dir }
    }

    /// Its directory.
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Its kubeconfig (admin token, CA, server). The path is the same for every start in
    /// the directory; the contents are new each time.
    #[must_use]
    pub fn kubeconfig_path(&self) -> PathBuf {
        self.dir.join(KUBECONFIG)
    }

    /// A component's log (kept across restarts of the component, new for each start of
    /// the control plane).
    #[must_use]
    pub fn log_path(&self, component: Component) -> PathBuf {
        self.dir.join(format!("{component}.log"))
    }

    /// The ports it was started with; `None` if none was started here.
    #[must_use]
    pub fn ports(&self) -> Option<Ports> {
        self.state().ok().flatten().map(|s| s.ports)
    }

    /// The directory of the binaries it was started from (with the `kubectl` of the same
    /// version); `None` if none was started here.
    #[must_use]
    pub fn binaries_dir(&self) -> Option<PathBuf> {
        self.state().ok().flatten().map(|s| s.binaries)
    }

    /// The process id of `component` if its pid file names a live process that is that
    /// component (a stale pid file may name a recycled pid; a zombie does not count).
    #[must_use]
    pub fn pid(&self, component: Component) -> Option<u32> {
        let text = fs::read_to_string(pid_path(&self.dir, component)).ok()?;
        let pid: u32 = text.trim().parse().ok()?;
        proc::is(pid, component.binary_name()).then_some(pid)
    }

    /// Which processes run and whether the API server is ready.
    pub async fn status(&self) -> DetachedStatus {
        let state = self.state().ok().flatten();
        let components: Vec<Component> = match &state {
            Some(lines) => lines.iter().map(|l| l.component).collect(),
            None => Component::ALL.to_vec(),
        };
        let processes: Vec<_> = components.into_iter().map(|c| (c, self.pid(c))).collect();
        let apiserver_ready = match self.pid(Component::KubeApiserver) {
            Some(_) => match self.client().await {
                Ok(client) => probe(&client).await,
                Err(_) => false,
            },
            None => false,
        };
        DetachedStatus {
            started: state.is_some(),
            processes,
            apiserver_ready,
            binaries: state.map(|s| s.binaries),
        }
    }

    pub(crate) async fn is_up(&self) -> bool {
        self.status().await.is_up()
    }

    /// A client from [`kubeconfig_path`](Self::kubeconfig_path), as the admin user.
    ///
    /// # Errors
    ///
    /// [`Error::Kubeconfig`] if there is no valid kubeconfig (none was started here);
    /// [`Error::Kube`] if the client cannot be made.
    pub async fn client(&self) -> Result<kube::Client, Error> {
        let config = load_config(&self.kubeconfig_path()).await?;
        kube::Client::try_from(config).map_err(Error::kube("making a client from the kubeconfig"))
    }

    /// Stops every process (SIGTERM, then SIGKILL after 20 s; clients before the store
    /// they talk to) and removes what the control plane put in the directory (logs
    /// included), then the directory itself if nothing else is in it. Stopping what does
    /// not run is no error. Blocks until the processes are gone.
    ///
    /// # Errors
    ///
    /// [`Error::Stop`] if a process survives SIGKILL (its pid file and the directory are
    /// kept then); [`Error::Io`] if a file cannot be removed.
    pub fn stop(&self) -> Result<(), Error> {
        self.stop_processes()?;
        remove_run_files(&self.dir)?;
        let pki = pki::paths(&self.dir);
        for file in [
            self.dir.join(STATE),
            self.dir.join(KUBECONFIG),
            self.dir.join(TOKENS_CSV),
            pki.ca_crt,
            pki.ca_key,
            pki.apiserver_crt,
            pki.apiserver_key,
            pki.sa_key,
            pki.sa_pub,
        ] {
            remove_file(&file)?;
        }
        for dir in CERT_DIRS {
            remove_tree(&self.dir.join(dir))?;
        }
        // Only if empty: files of someone else's in the directory stay, and so does it.
        let _ = fs::remove_dir(&self.dir);
        Ok(())
    }

    /// Stops the processes, keeping the files.
    pub(crate) fn stop_processes(&self) -> Result<(), Error> {
        let mut first_error = None;
        // Reverse start order: clients before the store they talk to.
        for component in Component::ALL.into_iter().rev() {
            if let Err(e) = self.stop_component(component, false) {
                first_error.get_or_insert(e);
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Kills kube-apiserver with SIGKILL, as a crash would, and waits until its port is
    /// free; etcd (and the controller manager) keep running, so the data survives. For
    /// fault drills: what does a controller do while the API server is away?
    ///
    /// # Errors
    ///
    /// [`Error::Stop`] if it survives SIGKILL; [`Error::PortInUse`] if its port is still
    /// taken 10 s later (after a kube-apiserver the pid file had lost track of, if one
    /// held it, was killed too).
    pub fn kill_apiserver(&self) -> Result<(), Error> {
        self.stop_component(Component::KubeApiserver, true)?;
        let Some(ports) = self.ports() else {
            return Ok(());
        };
        let port = ports.apiserver;
        // A start right after the kill would otherwise race the old process's exit for the
        // port ("address already in use").
        if wait_until(KILL_GRACE, || !port_in_use(port)) {
            return Ok(());
        }
        // Still held: a kube-apiserver our pid file lost track of. Only ever kill that.
        for pid in proc::listeners(port) {
            if proc::is(pid, Component::KubeApiserver.binary_name()) {
                signal(pid, libc::SIGKILL);
            }
        }
        if wait_until(KILL_GRACE, || !port_in_use(port)) {
            return Ok(());
        }
        Err(Error::PortInUse { port })
    }

    /// Starts kube-apiserver again, with the command line it was first started with, if
    /// it is not running, and waits until it is ready (at most `timeout`). Its log is
    /// appended to.
    ///
    /// # Errors
    ///
    /// [`Error::NotRunning`] if no control plane was started here or etcd does not run;
    /// [`Error::Startup`] if the apiserver exits or is not ready in time, with its log's
    /// tail; [`Error::Io`] if it cannot be started; [`Error::State`] for an unreadable
    /// `state.json`.
    pub async fn start_apiserver(&self, timeout: Duration) -> Result<(), Error> {
        let deadline = Instant::now() + timeout;
        let component = Component::KubeApiserver;
        let lines = self
            .state()?
            .ok_or_else(|| self.not_running("no control plane was started"))?;
        if self.pid(Component::Etcd).is_none() {
            return Err(self.not_running("etcd is not running"));
        }
        let log = self.log_path(component);
        let mut child = None;
        if self.pid(component).is_none() {
            let started = start_process(&lines.apiserver, &self.dir, &log, Session::New)?;
            write_pid(&self.dir, component, started.id())?;
            child = Some(started);
        }
        let client = self.client().await?;
        let waited = Instant::now();
        loop {
            if probe(&client).await {
                return Ok(());
            }
            let exited = match &mut child {
                // Our child: try_wait also reaps it.
                Some(c) => c.try_wait().ok().flatten().map(|s| format!(" ({s})")),
                None => self.pid(component).is_none().then(String::new),
            };
            let problem = match exited {
                Some(status) => Some(format!("exited{status} while waiting for /readyz")),
                None => (Instant::now() > deadline)
                    .then(|| format!("was not ready (/readyz) after {:.0?}", waited.elapsed())),
            };
            if let Some(problem) = problem {
                return Err(Error::Startup {
                    component,
                    problem,
                    tail: tail(&log),
                    log,
                });
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// [`kill_apiserver`](Self::kill_apiserver), then
    /// [`start_apiserver`](Self::start_apiserver): an API server crash and recovery.
    ///
    /// # Errors
    ///
    /// As those two.
    pub async fn restart_apiserver(&self, timeout: Duration) -> Result<(), Error> {
        self.kill_apiserver()?;
        self.start_apiserver(timeout).await
    }

    /// The command lines it was started with; `None` if none was started here.
    pub(crate) fn state(&self) -> Result<Option<CommandLines>, Error> {
        let path = self.dir.join(STATE);
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(Error::State {
                    path,
                    message: e.to_string(),
                });
            }
        };
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| Error::State {
                path,
                message: format!("not what this version of kube-codegen-envtest writes: {e}"),
            })
    }

    fn not_running(&self, problem: &str) -> Error {
        Error::NotRunning {
            dir: self.dir.clone(),
            problem: problem.to_owned(),
        }
    }

    /// SIGTERM (unless `kill`), then SIGKILL if it does not exit in time.
    fn stop_component(&self, component: Component, kill: bool) -> Result<(), Error> {
        let Some(pid) = self.pid(component) else {
            remove_pid(&self.dir, component);
            return Ok(());
        };
        let gone = || !proc::alive(pid);
        if !kill {
            signal(pid, libc::SIGTERM);
            if wait_until(TERM_GRACE, || reap(pid) || gone()) {
                remove_pid(&self.dir, component);
                return Ok(());
            }
        }
        signal(pid, libc::SIGKILL);
        if wait_until(KILL_GRACE, || reap(pid) || gone()) {
            remove_pid(&self.dir, component);
            return Ok(());
        }
        Err(Error::Stop { component, pid })
    }
}

/// Writes the command lines before any process starts.
pub(crate) fn write_state(dir: &Path, lines: &CommandLines) -> Result<(), Error> {
    let path = dir.join(STATE);
    let text = serde_json::to_string_pretty(lines).map_err(|e| Error::State {
        path: path.clone(),
        message: e.to_string(),
    })?;
    fs::write(&path, text + "\n").map_err(Error::io(format!("writing {}", path.display())))
}

pub(crate) fn write_pid(dir: &Path, component: Component, pid: u32) -> Result<(), Error> {
    let path = pid_path(dir, component);
    fs::write(&path, format!("{pid}\n")).map_err(Error::io(format!("writing {}", path.display())))
}

pub(crate) fn remove_pid(dir: &Path, component: Component) {
    // Gone already is fine; anything else leaves a stale file, which `pid` sees through.
    let _ = fs::remove_file(pid_path(dir, component));
}

fn pid_path(dir: &Path, component: Component) -> PathBuf {
    dir.join(format!("{component}.pid"))
}

/// Removes what one start leaves that the next must not see: etcd's data (every start
/// from the down state is an empty cluster), the logs, the pid files.
pub(crate) fn remove_run_files(dir: &Path) -> Result<(), Error> {
    remove_tree(&dir.join(ETCD_DATA))?;
    for component in Component::ALL {
        remove_file(&dir.join(format!("{component}.log")))?;
        remove_file(&pid_path(dir, component))?;
    }
    Ok(())
}

fn remove_file(path: &Path) -> Result<(), Error> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(Error::io(format!("removing {}", path.display()))(e))
        }
        _ => Ok(()),
    }
}

fn remove_tree(path: &Path) -> Result<(), Error> {
    match fs::remove_dir_all(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(Error::io(format!("removing {}", path.display()))(e))
        }
        _ => Ok(()),
    }
}

/// True if something accepts connections on the loopback port.
pub(crate) fn port_in_use(port: u16) -> bool {
    TcpStream::connect_timeout(
        &SocketAddr::from((Ipv4Addr::LOCALHOST, port)),
        Duration::from_millis(500),
    )
    .is_ok()
}

/// `/readyz` says `ok` within [`PROBE_TIMEOUT`].
async fn probe(client: &kube::Client) -> bool {
    tokio::time::timeout(PROBE_TIMEOUT, apiserver_ready(client))
        .await
        .unwrap_or(false)
}

/// Polls `done` until it says yes (true) or `limit` passes (false).
fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if done() {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(POLL);
    }
}

fn signal(pid: u32, signal: libc::c_int) {
    if let Ok(pid) = libc::pid_t::try_from(pid) {
        // SAFETY: kill(2) has no memory effects; a pid that is gone gives ESRCH.
        unsafe {
            libc::kill(pid, signal);
        }
    }
}

/// Reaps `pid` if it is an exited child of this process (a control plane started by this
/// process, from the library); true if it was. For anyone else's process it does nothing:
/// once the starting process has exited, init reaps.
fn reap(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    let mut status = 0;
    // SAFETY: waitpid writes only the status integer we pass.
    unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) == pid }
}

/// What the process table says, from `/proc`.
#[cfg(target_os = "linux")]
mod proc {
    use std::fs;

    /// Exists and is not a zombie.
    pub(super) fn alive(pid: u32) -> bool {
        let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
            return false;
        };
        // "pid (comm) S ...": comm may hold spaces and parentheses; the state follows the
        // last ')'.
        let state = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next());
        !matches!(state, None | Some("Z" | "X"))
    }

    /// A live process whose program (argv\[0\], not the whole command line: the
    /// apiserver's flags mention etcd too) is named `name`.
    pub(super) fn is(pid: u32, name: &str) -> bool {
        let Ok(cmdline) = fs::read(format!("/proc/{pid}/cmdline")) else {
            return false;
        };
        let argv0 = cmdline.split(|b| *b == 0).next().unwrap_or_default();
        let program = argv0.rsplit(|b| *b == b'/').next().unwrap_or_default();
        program == name.as_bytes() && alive(pid)
    }

    /// The processes with a socket listening on TCP `port` (any address).
    pub(super) fn listeners(port: u16) -> Vec<u32> {
        let mut inodes = Vec::new();
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            let Ok(text) = fs::read_to_string(table) else {
                continue;
            };
            // "sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode"
            for line in text.lines().skip(1) {
                let fields: Vec<&str> = line.split_whitespace().collect();
                let (Some(local), Some(&"0A"), Some(inode)) =
                    (fields.get(1), fields.get(3), fields.get(9))
                else {
                    continue; // 0A is LISTEN
                };
                let local_port = local
                    .rsplit_once(':')
                    .and_then(|(_, p)| u16::from_str_radix(p, 16).ok());
                if local_port == Some(port) {
                    inodes.push(format!("socket:[{inode}]"));
                }
            }
        }
        if inodes.is_empty() {
            return Vec::new();
        }
        let Ok(procs) = fs::read_dir("/proc") else {
            return Vec::new();
        };
        let mut pids = Vec::new();
        for entry in procs.flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
                continue;
            };
            let Ok(fds) = fs::read_dir(entry.path().join("fd")) else {
                continue;
            };
            let holds = fds.flatten().any(|fd| {
                fs::read_link(fd.path())
                    .is_ok_and(|target| inodes.iter().any(|i| target.as_os_str() == i.as_str()))
            });
            if holds {
                pids.push(pid);
            }
        }
        pids
    }
}

/// Without `/proc`: whether a pid exists is all there is to know.
#[cfg(not(target_os = "linux"))]
mod proc {
    pub(super) fn alive(pid: u32) -> bool {
        libc::pid_t::try_from(pid).is_ok_and(|pid| {
            // SAFETY: signal 0 only checks that the process exists.
            unsafe { libc::kill(pid, 0) == 0 }
        })
    }

    pub(super) fn is(pid: u32, _name: &str) -> bool {
        alive(pid)
    }

    pub(super) fn listeners(_port: u16) -> Vec<u32> {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offset_shifts_every_port_and_refuses_to_overflow() {
        assert_eq!(
            Ports::DEFAULT.offset(700),
            Some(Ports {
                etcd: 24490,
                etcd_peer: 24500,
                apiserver: 17143,
                controller_manager: 16957,
            })
        );
        assert_eq!(Ports::DEFAULT.offset(0), Some(Ports::DEFAULT));
        assert_eq!(Ports::DEFAULT.offset(u16::MAX - 23790), None);
    }

    #[test]
    fn a_directory_without_a_control_plane_is_stopped_and_stops_quietly() {
        let dir = tempfile::tempdir().unwrap();
        let cp = DetachedEnvironment::at(dir.path());
        assert_eq!(cp.ports(), None);
        assert_eq!(cp.pid(Component::Etcd), None);
        // A pid file naming a process that is not etcd (this test) does not count.
        write_pid(dir.path(), Component::Etcd, std::process::id()).unwrap();
        assert_eq!(cp.pid(Component::Etcd), None);
        cp.stop().expect("nothing to stop");
        assert!(!dir.path().exists(), "an emptied directory is removed");
    }

    #[test]
    fn stop_keeps_files_it_did_not_make() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("kubeconfig"), "x").unwrap();
        fs::write(dir.path().join("mine.txt"), "keep").unwrap();
        DetachedEnvironment::at(dir.path()).stop().unwrap();
        assert!(!dir.path().join("kubeconfig").exists());
        assert!(dir.path().join("mine.txt").exists());
    }

    #[test]
    fn a_broken_state_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join(STATE), "{").unwrap();
        let err = DetachedEnvironment::at(dir.path()).state().unwrap_err();
        assert!(err.to_string().contains("state.json"), "{err}");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn finds_the_listener_of_a_port() {
        let l = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let port = l.local_addr().unwrap().port();
        assert!(port_in_use(port));
        assert!(proc::listeners(port).contains(&std::process::id()));
        drop(l);
        assert!(!port_in_use(port));
    }
}
