//! One environment for every test of a test binary, as a Go suite's `BeforeSuite` /
//! `TestMain` gives controller-runtime's envtest: Rust test binaries have no such hook,
//! and a `static` is never dropped, so this type owns the start and the stop.

use std::sync::{Mutex, Once, OnceLock, PoisonError};

use crate::environment::{Builder, Environment};
use crate::error::Error;

/// An [`Environment`] shared by the tests of one test binary: started by the first test
/// that asks ([`get`](Self::get)), stopped when the process exits. Starting a control
/// plane takes seconds; a binary whose tests can share one (each in its own namespace,
/// installing the CRDs it needs) pays that once instead of per test.
///
/// Put it in a `static`:
///
/// ```no_run
/// use kube_codegen_envtest::{Environment, SharedEnvironment};
///
/// static ENV: SharedEnvironment =
///     SharedEnvironment::new(|| Environment::builder().crd_dir("config/crd"));
///
/// #[tokio::test]
/// async fn creates_a_foo() {
///     let env = ENV.get().expect("control plane");
///     let client = env.new_client().expect("client"); // this test's own connections
///     // ... create objects in a namespace of the test's own, assert ...
/// }
/// ```
///
/// **Stopping.** A `static` is never dropped, so the environment is stopped by a
/// process-exit hook (`atexit`), which runs when the test harness exits, whether tests
/// passed, failed or panicked. On Linux the processes are moreover started by a thread
/// that lives as long as the test binary and asked to die with it (`PR_SET_PDEATHSIG`), so
/// a test binary killed outright (SIGKILL, a CI timeout) leaves no etcd or kube-apiserver
/// behind either; only its temporary directory stays then.
///
/// **What a test cannot do with it** is what needs `&mut Environment`:
/// [`kill_apiserver`](Environment::kill_apiserver), [`restart_apiserver`](Environment::restart_apiserver)
/// and [`stop`](Environment::stop). A test that crashes the API server owns an
/// [`Environment`] of its own.
pub struct SharedEnvironment {
    builder: fn() -> Builder,
    env: OnceLock<Result<Environment, String>>,
}

impl std::fmt::Debug for SharedEnvironment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedEnvironment")
            .field("env", &self.env.get())
            .finish_non_exhaustive()
    }
}

/// The shared environments started in this process, for the exit hook.
static STARTED: Mutex<Vec<&'static Environment>> = Mutex::new(Vec::new());
static HOOK: Once = Once::new();

impl SharedEnvironment {
    /// A shared environment that `builder` configures; nothing starts until
    /// [`get`](Self::get).
    #[must_use]
    pub const fn new(builder: fn() -> Builder) -> Self {
        Self {
            builder,
            env: OnceLock::new(),
        }
    }

    /// The environment, started on the first call (the callers that come meanwhile wait
    /// for it). It is started on a thread of its own, with a tokio runtime that keeps
    /// serving [`Environment::client`] for the life of the process; a test had better use
    /// [`Environment::new_client`].
    ///
    /// Blocks the calling thread until the environment runs, which is fine in a
    /// `#[tokio::test]` (its runtime has nothing else to do meanwhile).
    ///
    /// # Errors
    ///
    /// [`Error::SharedStart`] with the start's error (see [`Builder::start`]), for this
    /// and every later call: a start that failed is not retried, so each test of the
    /// binary fails with the cause rather than spending a timeout of its own.
    pub fn get(&'static self) -> Result<&'static Environment, Error> {
        let started = self.env.get_or_init(|| {
            let env = start_on_own_thread((self.builder)()).map_err(|e| e.to_string())?;
            Ok(env)
        });
        match started {
            Ok(env) => {
                register_for_exit(env);
                Ok(env)
            }
            Err(message) => Err(Error::SharedStart {
                message: message.clone(),
            }),
        }
    }
}

/// Starts the environment on a thread that then keeps its runtime (and so
/// [`Environment::client`]) running until the process exits; the processes are tied to
/// that thread's life, which is the process's.
fn start_on_own_thread(mut builder: Builder) -> Result<Environment, Error> {
    builder.die_with_thread = true;
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    std::thread::Builder::new()
        .name("kube-codegen-envtest-shared".into())
        .spawn(move || {
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => {
                    let _ = tx.send(Err(Error::io("building a tokio runtime")(e)));
                    return;
                }
            };
            runtime.block_on(async move {
                let started = builder.start().await;
                let ok = started.is_ok();
                let _ = tx.send(started);
                if ok {
                    std::future::pending::<()>().await;
                }
            });
        })
        .map_err(Error::io("starting the shared environment's thread"))?;
    rx.recv().unwrap_or_else(|_| {
        Err(Error::SharedStart {
            message: "its thread ended without an answer".into(),
        })
    })
}

fn register_for_exit(env: &'static Environment) {
    let mut started = STARTED.lock().unwrap_or_else(PoisonError::into_inner);
    if started.iter().any(|e| std::ptr::eq(*e, env)) {
        return;
    }
    started.push(env);
    drop(started);
    HOOK.call_once(|| {
        // SAFETY: `stop_all` is an `extern "C" fn()` that never unwinds (it catches).
        // If registration fails (only when the table is full) the PDEATHSIG tie still
        // stops the processes at exit; only the directory would stay.
        unsafe {
            libc::atexit(stop_all);
        }
    });
}

extern "C" fn stop_all() {
    let _ = std::panic::catch_unwind(|| {
        let started = std::mem::take(&mut *STARTED.lock().unwrap_or_else(PoisonError::into_inner));
        for env in started {
            env.stop_shared();
        }
    });
}
