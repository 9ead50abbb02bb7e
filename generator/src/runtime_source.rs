//! Where a crate kube-codegen writes (`init`, `import crd`, `import go`) takes the crates
//! its code runs on, kube-codegen-runtime and kube-codegen-envtest: a registry release, or
//! the kube-codegen checkout this binary was built from. A crate must build as written, so
//! the default follows where this kube-codegen came from: built from a checkout
//! (`cargo install --path generator`, `cargo run -p kube-codegen`), it names that checkout's
//! crates by path; installed from a registry, the release of its own version.

use std::fmt;
use std::path::{Path, PathBuf};

/// The version of this kube-codegen, which the runtime and envtest releases share (README, "Install";
/// "Compatibility").
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Where a written crate takes kube-codegen-runtime (and kube-codegen-envtest) from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RuntimeSource {
    /// A registry release (`kube-codegen-runtime = "0.1.0"`).
    Registry {
        /// The version requirement written, e.g. `0.1.0`.
        version: String,
    },
    /// The runtime's directory in a kube-codegen checkout (`kube-codegen-runtime = { path =
    /// ".../runtime" }`); kube-codegen-envtest comes from the `envtest/` beside it.
    Path(PathBuf),
}

/// Why a `Cargo.toml` entry could not be set: it is in a form only its author should
/// rewrite.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManifestEntryError {
    /// The package whose entry it is.
    pub package: &'static str,
    /// The line, as written.
    pub line: String,
}

impl fmt::Display for ManifestEntryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the `{}` entry `{}` is not one line of a version, a path, features and \
             default-features; set it by hand",
            self.package, self.line
        )
    }
}

impl RuntimeSource {
    /// The registry release of this kube-codegen's own version.
    #[must_use]
    pub fn registry() -> Self {
        RuntimeSource::Registry {
            version: VERSION.to_owned(),
        }
    }

    /// What this kube-codegen writes unless told otherwise: the runtime of the checkout it
    /// was built from, while that checkout is there, else the registry release of its own
    /// version.
    #[must_use]
    pub fn of_this_build() -> Self {
        checkout_runtime().map_or_else(Self::registry, RuntimeSource::Path)
    }

    /// The TOML value of a dependency on `package` (`kube-codegen-runtime` or
    /// `kube-codegen-envtest`) with `extra` keys (`features = ["fake"]`) after the source.
    fn value(&self, package: &str, extra: &str) -> String {
        let source = match self {
            RuntimeSource::Registry { version } if extra.is_empty() => {
                return format!("{version:?}");
            }
            RuntimeSource::Registry { version } => format!("version = {version:?}"),
            RuntimeSource::Path(runtime) => {
                let dir = match package {
                    "kube-codegen-envtest" => runtime.with_file_name("envtest"),
                    _ => runtime.clone(),
                };
                format!("path = {:?}", dir.display().to_string())
            }
        };
        format!("{{ {source}{extra} }}")
    }

    /// `kube-codegen-runtime = ...`, a line of a new Cargo.toml.
    #[must_use]
    pub fn runtime_dependency(&self) -> String {
        format!(
            "kube-codegen-runtime = {}",
            self.value("kube-codegen-runtime", "")
        )
    }

    /// `kube-codegen-envtest = ...`, a line of a new Cargo.toml.
    #[must_use]
    pub fn envtest_dependency(&self) -> String {
        format!(
            "kube-codegen-envtest = {}",
            self.value("kube-codegen-envtest", "")
        )
    }

    /// `manifest` (a Cargo.toml's text) with every one-line entry of kube-codegen-runtime
    /// and kube-codegen-envtest, in any dependency table, taken from here; their
    /// `features` and `default-features` stay, and every other line is left as written.
    ///
    /// # Errors
    /// An entry in another form (a `[dependencies.kube-codegen-runtime]` table, an inline
    /// table over several lines, other keys): nothing is changed.
    pub fn set_in_manifest(&self, manifest: &str) -> Result<String, ManifestEntryError> {
        let mut out = String::with_capacity(manifest.len());
        for line in manifest.split_inclusive('\n') {
            let body = line.trim_end_matches(['\n', '\r']);
            let ending = &line[body.len()..];
            let key = body.split('=').next().unwrap_or_default().trim();
            let Some(package) = ["kube-codegen-runtime", "kube-codegen-envtest"]
                .into_iter()
                .find(|p| *p == key)
            else {
                if body.trim_start().starts_with("[")
                    && ["kube-codegen-runtime]", "kube-codegen-envtest]"]
                        .iter()
                        .any(|t| body.trim_end().ends_with(t))
                {
                    let package = if body.contains("envtest") {
                        "kube-codegen-envtest"
                    } else {
                        "kube-codegen-runtime"
                    };
                    return Err(ManifestEntryError {
                        package,
                        line: body.to_owned(),
                    });
                }
                out.push_str(line);
                continue;
            };
            let refuse = || ManifestEntryError {
                package,
                line: body.to_owned(),
            };
            let parsed: toml::Table = body.parse().map_err(|_| refuse())?;
            let extra = match parsed.get(package) {
                Some(toml::Value::String(_)) => String::new(),
                Some(toml::Value::Table(t)) => {
                    let mut extra = String::new();
                    for (k, v) in t {
                        match k.as_str() {
                            "version" | "path" => {}
                            "features" | "default-features" | "optional" => {
                                extra.push_str(&format!(", {k} = {v}"));
                            }
                            _ => return Err(refuse()),
                        }
                    }
                    extra
                }
                _ => return Err(refuse()),
            };
            let indent = &body[..body.len() - body.trim_start().len()];
            out.push_str(&format!(
                "{indent}{package} = {}{ending}",
                self.value(package, &extra)
            ));
        }
        Ok(out)
    }
}

impl fmt::Display for RuntimeSource {
    /// For summaries: where the written crate's runtime comes from, and why.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RuntimeSource::Registry { version } => {
                write!(f, "kube-codegen-runtime {version} from the registry")
            }
            RuntimeSource::Path(p) => write!(f, "kube-codegen-runtime from {}", p.display()),
        }
    }
}

/// The runtime directory of the checkout this binary was built from, if it was built from
/// one and it is still there. A registry package has no `runtime/` beside its own
/// directory (its neighbours are `kube-codegen-runtime-<version>/` and the like), so this
/// tells the two apart.
fn checkout_runtime() -> Option<PathBuf> {
    let generator = Path::new(env!("CARGO_MANIFEST_DIR"));
    let runtime = generator.parent()?.join("runtime");
    let manifest = std::fs::read_to_string(runtime.join("Cargo.toml")).ok()?;
    let package = manifest.parse::<toml::Table>().ok()?;
    let name = package.get("package")?.get("name")?.as_str()?;
    (name == "kube-codegen-runtime").then_some(runtime)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_build_from_this_checkout_names_its_runtime() {
        let source = RuntimeSource::of_this_build();
        let runtime = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .unwrap()
            .join("runtime");
        assert_eq!(source, RuntimeSource::Path(runtime.clone()));
        assert_eq!(
            source.envtest_dependency(),
            format!(
                "kube-codegen-envtest = {{ path = {:?} }}",
                runtime.with_file_name("envtest").display().to_string()
            )
        );
    }

    #[test]
    fn entries_are_rewritten_with_their_features() {
        let manifest = "[package]\nname = \"a\"\n\n[dependencies]\nkube-codegen-runtime = \"0.1\"\nkube = \"5\"\n\n\
                        [dev-dependencies]\nkube-codegen-runtime = { version = \"0.1\", features = [\"fake\"] }\n\
                        kube-codegen-envtest = \"0.1\"\n";
        let path = RuntimeSource::Path("/k/runtime".into());
        assert_eq!(
            path.set_in_manifest(manifest).unwrap(),
            "[package]\nname = \"a\"\n\n[dependencies]\nkube-codegen-runtime = { path = \"/k/runtime\" }\nkube = \"5\"\n\n\
             [dev-dependencies]\nkube-codegen-runtime = { path = \"/k/runtime\", features = [\"fake\"] }\n\
             kube-codegen-envtest = { path = \"/k/envtest\" }\n"
        );
        let back = RuntimeSource::Registry {
            version: "0.2".into(),
        };
        assert_eq!(
            back.set_in_manifest(&path.set_in_manifest(manifest).unwrap())
                .unwrap(),
            manifest.replace("0.1", "0.2")
        );
        for odd in [
            "[dependencies.kube-codegen-runtime]\nversion = \"0.1\"\n",
            "[dependencies]\nkube-codegen-runtime = { git = \"https://x\" }\n",
        ] {
            assert!(path.set_in_manifest(odd).is_err(), "{odd}");
        }
    }
}
