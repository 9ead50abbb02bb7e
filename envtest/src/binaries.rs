//! Finding, and building from Go modules, the pinned control-plane binaries: the one
//! place that pins their versions and builds them (kube-codegen's `hack/testenv.sh` runs
//! this crate's command). They live in
//! `${KUBE_CODEGEN_CACHE:-~/.cache/kube-codegen}/k8s-<version>/bin`, outside any clone, so
//! every checkout and test run on the machine shares one build.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::error::{Component, Error};

/// The Kubernetes release the binaries are built from. The Rust side of kube-codegen
/// uses k8s-openapi's `v1_37`; the server stays on the same minor.
pub const KUBERNETES_VERSION: &str = "v1.37.2";

/// The etcd server release: the one `k8s.io/kubernetes` [`KUBERNETES_VERSION`] itself
/// requires in its go.mod. It must not be higher: etcd is built in the same Go module as
/// the Kubernetes commands, so a higher pin would also upgrade the apiserver's etcd client.
pub const ETCD_VERSION: &str = "v3.7.0";

/// Environment variable naming a directory that holds `etcd` and `kube-apiserver` (and
/// optionally `kube-controller-manager`); it wins over the cache.
pub const BIN_DIR_ENV: &str = "KUBE_CODEGEN_ENVTEST_BIN";

/// Environment variable naming the cache root (default `~/.cache/kube-codegen`).
pub const CACHE_ENV: &str = "KUBE_CODEGEN_CACHE";

/// How to get the binaries, in a form that works where this crate came from: built from a
/// kube-codegen checkout (a path dependency, as `kube-codegen init` writes one from a
/// checkout), that checkout's commands; from the registry, the published command.
pub(crate) fn hint() -> String {
    let how = match checkout() {
        Some(dir) => format!(
            "`kube-codegen-envtest build`, from the kube-codegen checkout this crate comes from: \
             `{0}/hack/testenv.sh build`, or `cargo install --path {0}/envtest --features cli` \
             for the command",
            dir.display()
        ),
        None => {
            "`kube-codegen-envtest build` (`cargo install kube-codegen-envtest --features cli` \
                 installs it)"
                .to_owned()
        }
    };
    format!(
        "build the pinned binaries once (needs Go, about 6-8 min on 2 cores) with {how}; or point \
         KUBE_CODEGEN_ENVTEST_BIN at a directory holding etcd and kube-apiserver"
    )
}

/// The kube-codegen checkout this crate was built from, if it was built from one that is
/// still there (a registry package has no `hack/testenv.sh` beside it).
fn checkout() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).parent()?;
    dir.join("hack/testenv.sh")
        .is_file()
        .then(|| dir.to_owned())
}

/// The cache root: `$KUBE_CODEGEN_CACHE`, else `$HOME/.cache/kube-codegen`.
#[must_use]
pub fn cache_root() -> PathBuf {
    if let Some(dir) = std::env::var_os(CACHE_ENV) {
        return PathBuf::from(dir);
    }
    let home = std::env::var_os("HOME").map_or_else(std::env::temp_dir, PathBuf::from);
    home.join(".cache").join("kube-codegen")
}

/// The directory the pinned binaries are cached in:
/// `<cache root>/k8s-v1.37.2/bin` (see [`cache_root`]).
#[must_use]
pub fn cache_bin_dir() -> PathBuf {
    version_dir().join("bin")
}

fn version_dir() -> PathBuf {
    cache_root().join(format!("k8s-{KUBERNETES_VERSION}"))
}

/// Where the control-plane executables are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binaries {
    dir: PathBuf,
    etcd: PathBuf,
    kube_apiserver: PathBuf,
    kube_controller_manager: Option<PathBuf>,
    kubectl: Option<PathBuf>,
}

impl Binaries {
    /// Finds the binaries: in the directory named by `KUBE_CODEGEN_ENVTEST_BIN` if it is
    /// set, else in the cache ([`cache_bin_dir`]). Never builds.
    ///
    /// # Errors
    ///
    /// [`Error::MissingBinary`] naming the path looked at and how to get the binaries.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// let bins = kube_codegen_envtest::Binaries::find()?;
    /// println!("kube-apiserver: {}", bins.kube_apiserver().display());
    /// # Ok::<(), kube_codegen_envtest::Error>(())
    /// ```
    pub fn find() -> Result<Self, Error> {
        match std::env::var_os(BIN_DIR_ENV) {
            Some(dir) => Self::from_dir(dir),
            None => Self::from_dir(cache_bin_dir()),
        }
    }

    /// The binaries in `dir`: `etcd` and `kube-apiserver` must be there,
    /// `kube-controller-manager` and `kubectl` may be.
    ///
    /// # Errors
    ///
    /// [`Error::MissingBinary`] if `etcd` or `kube-apiserver` is not an executable file in
    /// `dir`; the message says how to build them.
    ///
    /// # Examples
    ///
    /// ```
    /// let empty = tempfile::tempdir()?;
    /// let err = kube_codegen_envtest::Binaries::from_dir(empty.path()).unwrap_err();
    /// assert!(err.to_string().contains("kube-codegen-envtest build"));
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn from_dir(dir: impl Into<PathBuf>) -> Result<Self, Error> {
        let dir = dir.into();
        let need = |component: Component| {
            let path = dir.join(component.binary_name());
            if is_executable(&path) {
                Ok(path)
            } else {
                Err(Error::MissingBinary {
                    component,
                    path,
                    hint: hint(),
                })
            }
        };
        let etcd = need(Component::Etcd)?;
        let kube_apiserver = need(Component::KubeApiserver)?;
        let kube_controller_manager = need(Component::KubeControllerManager).ok();
        let kubectl = Some(dir.join("kubectl")).filter(|p| is_executable(p));
        Ok(Self {
            dir,
            etcd,
            kube_apiserver,
            kube_controller_manager,
            kubectl,
        })
    }

    /// Finds the cached binaries or, if any is missing, builds all of them into the cache
    /// with the machine's Go toolchain (`$GO`, `/usr/local/go/bin/go` or `go` on `PATH`):
    /// a temporary module requiring `k8s.io/kubernetes` [`KUBERNETES_VERSION`] and the etcd
    /// server [`ETCD_VERSION`], version-stamped as upstream does. One build at a time per
    /// cache (a lock file in it); a second caller, from any process, waits and then finds
    /// the result. Cold, with module downloads, it takes 6-8 minutes on 2 cores.
    /// `KUBE_CODEGEN_ENVTEST_BIN` is not consulted: this always fills the cache.
    ///
    /// Blocking; from async code call it in `tokio::task::spawn_blocking`.
    ///
    /// # Errors
    ///
    /// [`Error::Build`] with the failing command and its output (no Go, download or
    /// compile failure); [`Error::Io`] for the cache directory.
    pub fn build() -> Result<Self, Error> {
        if let Ok(found) = Self::from_cache_complete() {
            return Ok(found);
        }
        let cache = version_dir();
        fs::create_dir_all(&cache).map_err(Error::io(format!("creating {}", cache.display())))?;
        let lock_path = cache.join(".build.lock");
        let lock = fs::File::create(&lock_path)
            .map_err(Error::io(format!("opening {}", lock_path.display())))?;
        // flock(2): two test jobs, or CI and a developer, starting at once build once.
        lock.lock()
            .map_err(Error::io(format!("locking {}", lock_path.display())))?;
        // Whoever held the lock before us may have built everything.
        if let Ok(found) = Self::from_cache_complete() {
            return Ok(found);
        }
        build::build_pinned(&cache)?;
        Self::from_cache_complete()
    }

    /// The cache counts as complete only with all four binaries the build makes: a
    /// detached control plane runs the controller manager, and `env` puts the kubectl of
    /// the same version on PATH.
    fn from_cache_complete() -> Result<Self, Error> {
        let found = Self::from_dir(cache_bin_dir())?;
        for extra in ["kube-controller-manager", "kubectl"] {
            let path = found.dir.join(extra);
            if !is_executable(&path) {
                return Err(Error::MissingBinary {
                    component: Component::KubeControllerManager,
                    path,
                    hint: hint(),
                });
            }
        }
        Ok(found)
    }

    /// The directory the binaries were found in.
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The `etcd` executable.
    #[must_use]
    pub fn etcd(&self) -> &Path {
        &self.etcd
    }

    /// The `kube-apiserver` executable.
    #[must_use]
    pub fn kube_apiserver(&self) -> &Path {
        &self.kube_apiserver
    }

    /// The `kube-controller-manager` executable, if the directory has one.
    #[must_use]
    pub fn kube_controller_manager(&self) -> Option<&Path> {
        self.kube_controller_manager.as_deref()
    }

    /// The `kubectl` executable, if the directory has one (the cache always has: it is
    /// built with the same Kubernetes version as the server).
    #[must_use]
    pub fn kubectl(&self) -> Option<&Path> {
        self.kubectl.as_deref()
    }

    pub(crate) fn require_kcm(&self) -> Result<&Path, Error> {
        self.kube_controller_manager()
            .ok_or_else(|| Error::MissingBinary {
                component: Component::KubeControllerManager,
                path: self
                    .dir
                    .join(Component::KubeControllerManager.binary_name()),
                hint: hint(),
            })
    }
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn run(cmd: &mut Command) -> Result<Output, Error> {
    let shown = format!("{cmd:?}");
    let out = cmd.output().map_err(|e| Error::Build {
        version: KUBERNETES_VERSION,
        message: format!("running {shown}: {e}"),
    })?;
    if out.status.success() {
        Ok(out)
    } else {
        Err(Error::Build {
            version: KUBERNETES_VERSION,
            message: format!(
                "{shown} failed ({}):\n{}{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        })
    }
}

/// The build: a temporary Go module in the cache that requires `k8s.io/kubernetes` and
/// the etcd server, with the staging modules replaced by their published releases.
mod build {
    use super::*;

    fn err(message: impl Into<String>) -> Error {
        Error::Build {
            version: KUBERNETES_VERSION,
            message: message.into(),
        }
    }

    fn find_go() -> Result<PathBuf, Error> {
        // The machine's own toolchain first: a distribution's older golang-go may come
        // first on PATH.
        let mut candidates: Vec<PathBuf> = Vec::new();
        if let Some(go) = std::env::var_os("GO") {
            candidates.push(go.into());
        }
        candidates.push("/usr/local/go/bin/go".into());
        if let Some(path) = std::env::var_os("PATH") {
            candidates.extend(std::env::split_paths(&path).map(|d| d.join("go")));
        }
        candidates
            .into_iter()
            .find(|p| is_executable(p))
            .ok_or_else(|| {
                err(
                    "no Go toolchain found ($GO, /usr/local/go/bin/go, go on PATH); \
                     install Go from https://go.dev/dl/",
                )
            })
    }

    /// What the build needs from k8s.io/kubernetes' own go.mod.
    #[derive(Debug, PartialEq, Eq)]
    pub(super) struct KubernetesGoMod {
        /// The `go` directive: the language version upstream builds with.
        pub(super) go: String,
        /// `godebug` settings (`key=value`), so GODEBUG defaults match upstream's.
        pub(super) godebug: Vec<String>,
        /// Modules replaced by `./staging/src/...`: those paths exist only in the
        /// Kubernetes repository, so our module replaces them with their published
        /// `v0.<minor>.<patch>` release.
        pub(super) staging: Vec<String>,
    }

    pub(super) fn parse_go_mod(text: &str) -> KubernetesGoMod {
        let mut go = String::new();
        let mut godebug = Vec::new();
        let mut staging = Vec::new();
        let mut in_godebug = false;
        for line in text.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            if in_godebug {
                if words.first() == Some(&")") {
                    in_godebug = false;
                } else if let Some(w) = words.first() {
                    godebug.push((*w).to_owned());
                }
                continue;
            }
            match words.as_slice() {
                ["go", v] => go = (*v).to_owned(),
                ["godebug", "("] => in_godebug = true,
                ["godebug", kv] => godebug.push((*kv).to_owned()),
                // `replace (` blocks list `k8s.io/api => ./staging/src/k8s.io/api`.
                [m, "=>", target, ..] | ["replace", m, "=>", target, ..]
                    if target.starts_with("./staging/") =>
                {
                    staging.push((*m).to_owned());
                }
                _ => {}
            }
        }
        KubernetesGoMod {
            go,
            godebug,
            staging,
        }
    }

    /// `-X` flags stamping the version as Kubernetes' hack/lib/version.sh does, so
    /// `/version` says v1.37.2 instead of v0.0.0-master.
    pub(super) fn ldflags(build_date: &str) -> String {
        let minor = KUBERNETES_VERSION
            .trim_start_matches("v1.")
            .split('.')
            .next()
            .unwrap_or_default();
        let mut flags = String::from("-s -w");
        for pkg in [
            "k8s.io/client-go/pkg/version",
            "k8s.io/component-base/version",
        ] {
            for kv in [
                format!("gitVersion={KUBERNETES_VERSION}"),
                "gitMajor=1".to_owned(),
                format!("gitMinor={minor}"),
                "gitTreeState=clean".to_owned(),
                format!("buildDate={build_date}"),
            ] {
                flags.push_str(&format!(" -X {pkg}.{kv}"));
            }
        }
        flags
    }

    const ETCD_MAIN: &str =
        "// Command etcd is the etcd server, built from go.etcd.io/etcd/server/v3.
package main

import (
\t\"os\"

\t\"go.etcd.io/etcd/server/v3/etcdmain\"
)

func main() { etcdmain.Main(os.Args) }
";

    pub(super) fn build_pinned(cache: &Path) -> Result<(), Error> {
        let go = find_go()?;
        let go_cmd = |dir: &Path| {
            let mut c = Command::new(&go);
            // A module in the cache dir, never in a repository: GOWORK=off so that a
            // go.work above cannot take part; -mod=mod lets go build fill in go.sum.
            c.current_dir(dir)
                .env("GOWORK", "off")
                .env("GOFLAGS", "-mod=mod")
                .env("CGO_ENABLED", "0");
            c
        };
        let module = format!("k8s.io/kubernetes@{KUBERNETES_VERSION}");
        let out = run(go_cmd(cache).args(["mod", "download", "-json", &module]))?;
        let info: serde_json::Value = serde_json::from_slice(&out.stdout).map_err(|e| {
            err(format!(
                "`go mod download -json {module}` printed no JSON: {e}"
            ))
        })?;
        let field = |name: &str| {
            info.get(name)
                .and_then(|v| v.as_str())
                .map(PathBuf::from)
                .ok_or_else(|| err(format!("`go mod download -json {module}` has no {name}")))
        };
        let kmod_path = field("GoMod")?;
        let kmod = fs::read_to_string(&kmod_path)
            .map_err(|e| err(format!("reading {}: {e}", kmod_path.display())))?;
        let kmod = parse_go_mod(&kmod);
        if kmod.staging.is_empty() {
            return Err(err(format!(
                "found no `=> ./staging/` replace lines in {}",
                kmod_path.display()
            )));
        }
        let staging_version = format!("v0.{}", KUBERNETES_VERSION.trim_start_matches("v1."));

        let module_dir = cache.join("gomod");
        fs::create_dir_all(module_dir.join("etcd"))
            .map_err(Error::io(format!("creating {}", module_dir.display())))?;
        let _ = fs::remove_file(module_dir.join("go.mod"));
        run(go_cmd(&module_dir).args(["mod", "init", "kube-codegen-testenv"]))?;
        let mut edit = go_cmd(&module_dir);
        edit.args(["mod", "edit"]).arg(format!("-go={}", kmod.go));
        for kv in &kmod.godebug {
            edit.arg(format!("-godebug={kv}"));
        }
        edit.arg(format!("-require={module}"))
            .arg(format!("-require=go.etcd.io/etcd/server/v3@{ETCD_VERSION}"));
        for m in &kmod.staging {
            edit.arg(format!("-replace={m}={m}@{staging_version}"));
        }
        run(&mut edit)?;
        let main_go = module_dir.join("etcd").join("main.go");
        fs::write(&main_go, ETCD_MAIN)
            .map_err(Error::io(format!("writing {}", main_go.display())))?;

        let date = field("Info")
            .ok()
            .and_then(|p| fs::read_to_string(p).ok())
            .and_then(|s| serde_json::from_str::<serde_json::Value>(&s).ok())
            .and_then(|v| v.get("Time").and_then(|t| t.as_str()).map(str::to_owned))
            .unwrap_or_else(|| "1970-01-01T00:00:00Z".to_owned());

        // Build into a temp dir and move into place, so an interrupted build never leaves
        // a half-written binary that a later run would take as cached.
        let tmp = tempfile::Builder::new()
            .prefix("tmp-bin.")
            .tempdir_in(cache)
            .map_err(Error::io(format!(
                "creating a temp dir in {}",
                cache.display()
            )))?;
        let mut out_dir = tmp.path().as_os_str().to_owned();
        out_dir.push("/");
        let packages = [
            "k8s.io/kubernetes/cmd/kube-apiserver",
            "k8s.io/kubernetes/cmd/kube-controller-manager",
            "k8s.io/kubernetes/cmd/kubectl",
            "./etcd",
        ];
        let mut last = None;
        // A second try only to ride out a flaky module download.
        for _ in 0..2 {
            let mut build = go_cmd(&module_dir);
            build
                .args(["build", "-trimpath", "-ldflags", &ldflags(&date), "-o"])
                .arg(&out_dir)
                .args(packages);
            match run(&mut build) {
                Ok(_) => {
                    last = None;
                    break;
                }
                Err(e) => last = Some(e),
            }
        }
        if let Some(e) = last {
            return Err(e);
        }
        let got = run(go_cmd(&module_dir).args([
            "list",
            "-m",
            "-f",
            "{{.Version}}",
            "go.etcd.io/etcd/server/v3",
        ]))?;
        let got = String::from_utf8_lossy(&got.stdout).trim().to_owned();
        if got != ETCD_VERSION {
            return Err(err(format!(
                "etcd resolved to {got}, not the pinned {ETCD_VERSION}"
            )));
        }
        let bin = cache.join("bin");
        fs::create_dir_all(&bin).map_err(Error::io(format!("creating {}", bin.display())))?;
        for name in [
            "kube-apiserver",
            "kube-controller-manager",
            "kubectl",
            "etcd",
        ] {
            let to = bin.join(name);
            fs::rename(tmp.path().join(name), &to)
                .map_err(Error::io(format!("moving {name} to {}", to.display())))?;
        }
        let goversion = run(go_cmd(&module_dir).args(["env", "GOVERSION"]))?;
        let versions = format!(
            "kubernetes {KUBERNETES_VERSION}\netcd {got}\ngo {}\n",
            String::from_utf8_lossy(&goversion.stdout).trim()
        );
        let versions_path = bin.join("VERSIONS");
        fs::write(&versions_path, versions)
            .map_err(Error::io(format!("writing {}", versions_path.display())))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::build::*;

    /// Built from this checkout (as a path dependency is), the missing-binary hint names
    /// commands that work here: nothing of ours is on a registry to `cargo install` from.
    #[test]
    fn the_hint_names_the_checkout_it_was_built_from() {
        let checkout = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .unwrap()
            .display()
            .to_string();
        let hint = super::hint();
        assert!(
            hint.contains(&format!("`{checkout}/hack/testenv.sh build`")),
            "{hint}"
        );
        assert!(
            hint.contains(&format!(
                "`cargo install --path {checkout}/envtest --features cli`"
            )),
            "{hint}"
        );
        assert!(
            !hint.contains("cargo install kube-codegen-envtest"),
            "{hint}"
        );
    }

    #[test]
    fn reads_what_the_build_needs_from_kubernetes_go_mod() {
        let text = "module k8s.io/kubernetes\n\ngo 1.25.0\n\ngodebug default=go1.25\n\
                    godebug (\n\twinsymlink=0\n\tx509negativeserial=1\n)\n\n\
                    require (\n\tgithub.com/x/y v1.0.0\n)\n\n\
                    replace (\n\tk8s.io/api => ./staging/src/k8s.io/api\n\
                    \tk8s.io/client-go => ./staging/src/k8s.io/client-go\n\
                    \tgithub.com/a/b => github.com/a/c v1.2.3\n)\n\
                    replace k8s.io/apimachinery => ./staging/src/k8s.io/apimachinery\n";
        assert_eq!(
            parse_go_mod(text),
            KubernetesGoMod {
                go: "1.25.0".into(),
                godebug: vec![
                    "default=go1.25".into(),
                    "winsymlink=0".into(),
                    "x509negativeserial=1".into()
                ],
                staging: vec![
                    "k8s.io/api".into(),
                    "k8s.io/client-go".into(),
                    "k8s.io/apimachinery".into()
                ],
            }
        );
    }

    #[test]
    fn stamps_the_pinned_version() {
        let flags = ldflags("2026-01-01T00:00:00Z");
        assert!(flags.contains("-X k8s.io/component-base/version.gitVersion=v1.37.2"));
        assert!(flags.contains("-X k8s.io/client-go/pkg/version.gitMinor=37"));
        assert!(flags.contains("buildDate=2026-01-01T00:00:00Z"));
    }
}
