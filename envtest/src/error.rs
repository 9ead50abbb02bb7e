//! The one error type of the crate.

use std::fmt;
use std::path::PathBuf;

/// A process of the control plane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Component {
    /// `etcd`, the store.
    Etcd,
    /// `kube-apiserver`.
    KubeApiserver,
    /// `kube-controller-manager` (only with [`Builder::controller_manager`](crate::Builder::controller_manager)).
    KubeControllerManager,
}

impl Component {
    /// Every component, in start order.
    pub const ALL: [Self; 3] = [Self::Etcd, Self::KubeApiserver, Self::KubeControllerManager];

    /// The executable's file name.
    #[must_use]
    pub const fn binary_name(self) -> &'static str {
        match self {
            Self::Etcd => "etcd",
            Self::KubeApiserver => "kube-apiserver",
            Self::KubeControllerManager => "kube-controller-manager",
        }
    }
}

impl fmt::Display for Component {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.binary_name())
    }
}

/// Everything that can go wrong while finding or building the binaries, starting the
/// control plane, or installing CRDs. Each variant names the file, process or object at
/// fault; the ones a user can fix carry the fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A control-plane executable is not where it was looked for.
    #[error("{component} not found at {}\n  hint: {hint}", path.display())]
    MissingBinary {
        /// Which executable.
        component: Component,
        /// Where it was expected.
        path: PathBuf,
        /// How to get it.
        hint: String,
    },
    /// A helper executable (`kubectl`) is not next to the control-plane binaries.
    #[error("{name} not found at {}\n  hint: {hint}", path.display())]
    MissingTool {
        /// Its file name.
        name: &'static str,
        /// Where it was expected.
        path: PathBuf,
        /// How to get it.
        hint: String,
    },
    /// A [`SharedEnvironment`](crate::SharedEnvironment) failed to start; every test that
    /// asks for it gets this, with the first attempt's error (it is not retried).
    #[error("the shared environment did not start: {message}")]
    SharedStart {
        /// The error of the one start attempt, as text.
        message: String,
    },
    /// Building the pinned binaries from Go modules failed.
    #[error("building Kubernetes {version} from Go modules: {message}")]
    Build {
        /// The Kubernetes version being built.
        version: &'static str,
        /// What failed (the command and its output).
        message: String,
    },
    /// A file-system or process operation failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done, with the path.
        what: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// Generating the throwaway certificates failed.
    #[error("generating certificates: {0}")]
    Certificates(String),
    /// A process exited or did not become ready in time.
    #[error(
        "{component} {problem} (log {}); last lines:\n{tail}",
        log.display()
    )]
    Startup {
        /// The process at fault.
        component: Component,
        /// What happened ("exited with status 1 while waiting for /readyz", "not ready after 60 s").
        problem: String,
        /// Its log file (removed with the environment; the tail is quoted here).
        log: PathBuf,
        /// The last lines of its log.
        tail: String,
    },
    /// A CRD source could not be read or is not a CustomResourceDefinition.
    #[error("{source_name}: {message}")]
    Crd {
        /// The file (or `<yaml #n>` for a string given to [`Builder::crd_yaml`](crate::Builder::crd_yaml)), with the document number.
        source_name: String,
        /// What is wrong.
        message: String,
    },
    /// A CRD was created but did not become `Established` and served in time.
    #[error("CustomResourceDefinition {name} {problem}")]
    CrdNotReady {
        /// The CRD's name.
        name: String,
        /// What the server said, or that it timed out.
        problem: String,
    },
    /// The kubeconfig written for the environment could not be loaded.
    #[error("loading kubeconfig {}: {source}", path.display())]
    Kubeconfig {
        /// The kubeconfig file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: kube::config::KubeconfigError,
    },
    /// A port a [detached](crate::DetachedEnvironment) control plane is to listen on is
    /// taken by a process it did not start.
    #[error(
        "port {HOST}:{port} is in use by something else (not by a process of this control \
         plane's directory); stop that, or choose other ports (`--port-offset`, \
         KUBE_CODEGEN_TESTENV_PORT_OFFSET)",
        HOST = "127.0.0.1"
    )]
    PortInUse {
        /// The port.
        port: u16,
    },
    /// A [detached](crate::DetachedEnvironment) control plane lacks what an operation
    /// needs (it was never started, or etcd is not running).
    #[error("{problem} in {}; start it with `up`", dir.display())]
    NotRunning {
        /// The control plane's directory.
        dir: PathBuf,
        /// What is missing.
        problem: String,
    },
    /// A process of a [detached](crate::DetachedEnvironment) control plane did not exit
    /// after SIGKILL.
    #[error("{component} (pid {pid}) did not exit after SIGKILL")]
    Stop {
        /// The process at fault.
        component: Component,
        /// Its process id.
        pid: u32,
    },
    /// A [detached](crate::DetachedEnvironment) control plane's `state.json` could not be
    /// read.
    #[error("reading {}: {message}", path.display())]
    State {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// A request to the API server failed.
    #[error("{what}: {source}")]
    Kube {
        /// What was being done.
        what: String,
        /// The underlying error.
        #[source]
        source: kube::Error,
    },
}

impl Error {
    pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> Self {
        let what = what.into();
        move |source| Self::Io { what, source }
    }

    pub(crate) fn kube(what: impl Into<String>) -> impl FnOnce(kube::Error) -> Self {
        let what = what.into();
        move |source| Self::Kube { what, source }
    }
}
