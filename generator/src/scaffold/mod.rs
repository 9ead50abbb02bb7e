//! kubebuilder's `init` and `create api`: a new API crate with a controller binary, and a
//! new kind in it. Pure: each step returns the files to create or rewrite; the caller
//! writes them (and refuses to overwrite anything it was not asked to).
//!
//! Files a scaffold edits later (lib.rs, main.rs, the `mod.rs` files) carry
//! `// +kube-codegen:scaffold:<what>` lines, as kubebuilder's `main.go` does: `create api`
//! inserts above them and leaves everything else of the file as the user wrote it.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::runtime_source::RuntimeSource;

/// One file a scaffold step writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScaffoldFile {
    /// Relative to the crate.
    pub path: PathBuf,
    /// The whole new contents.
    pub contents: String,
    /// Whether the file exists and is rewritten (an insertion at a scaffold marker).
    pub edit: bool,
}

/// Why a scaffold step refused; nothing is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScaffoldError {
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub hint: Option<String>,
}

impl fmt::Display for ScaffoldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.message)?;
        if let Some(h) = &self.hint {
            write!(f, "\n  hint: {h}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ScaffoldError {}

fn refuse(message: impl Into<String>, hint: impl Into<String>) -> ScaffoldError {
    ScaffoldError {
        message: message.into(),
        hint: Some(hint.into()),
    }
}

/// `kube-codegen init`: a crate named `name` (a Cargo package name), whose Cargo.toml takes
/// kube-codegen-runtime and kube-codegen-envtest from `runtime`.
///
/// # Errors
/// A name Cargo would refuse.
pub fn init(name: &str, runtime: &RuntimeSource) -> Result<Vec<ScaffoldFile>, ScaffoldError> {
    let valid = !name.is_empty()
        && name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !valid {
        return Err(refuse(
            format!("`{name}` is not a crate name"),
            "use letters, digits, `-` and `_`, starting with a letter (--name my-operator)",
        ));
    }
    let (runtime, envtest) = (runtime.runtime_dependency(), runtime.envtest_dependency());
    let fill = |t: &str| {
        t.replace("{{name}}", name)
            .replace("{{runtime_dependency}}", &runtime)
            .replace("{{envtest_dependency}}", &envtest)
    };
    let file = |path: &str, t: &str| ScaffoldFile {
        path: PathBuf::from(path),
        contents: fill(t),
        edit: false,
    };
    Ok(vec![
        file("Cargo.toml", include_str!("templates/Cargo.toml.tmpl")),
        file(".gitignore", include_str!("templates/gitignore.tmpl")),
        file("src/lib.rs", include_str!("templates/lib.rs.tmpl")),
        file("src/main.rs", include_str!("templates/main.rs.tmpl")),
        file(
            "src/apis/mod.rs",
            include_str!("templates/apis_mod.rs.tmpl"),
        ),
        file(
            "src/controllers/mod.rs",
            include_str!("templates/controllers_mod.rs.tmpl"),
        ),
    ])
}

/// What `kube-codegen create api` adds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiOptions {
    /// The API group, e.g. `webapp.example.com`.
    pub group: String,
    /// The version, e.g. `v1`, `v1alpha1`.
    pub version: String,
    /// The kind, e.g. `Guestbook`.
    pub kind: String,
    /// Cluster-scoped instead of namespaced.
    pub cluster_scoped: bool,
}

/// The crate as `create api` sees it: the package name and a way to read its files.
pub trait CrateFiles {
    /// The package name (from Cargo.toml).
    fn package_name(&self) -> &str;
    /// A file's contents, relative to the crate; `None` if it does not exist.
    fn read(&self, path: &Path) -> Option<String>;
}

/// `kube-codegen create api`: the kind's types, its group and version modules, its
/// controller, and its registration in main.rs.
///
/// # Errors
/// An invalid group, version or kind; a kind that exists; a crate `init` did not make (a
/// scaffold marker missing); a module that holds another group.
pub fn create_api(
    krate: &dyn CrateFiles,
    opts: &ApiOptions,
) -> Result<Vec<ScaffoldFile>, ScaffoldError> {
    let ApiOptions {
        group,
        version,
        kind,
        cluster_scoped,
    } = opts;
    let group_ok = group.contains('.')
        && group.split('.').all(|l| {
            !l.is_empty()
                && l.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        });
    if !group_ok {
        return Err(refuse(
            format!("`{group}` is not an API group"),
            "a DNS subdomain of lower-case labels with at least one dot, e.g. webapp.example.com",
        ));
    }
    if !is_kube_version(version) {
        return Err(refuse(
            format!("`{version}` is not a Kubernetes API version"),
            "v<N>, v<N>alpha<M> or v<N>beta<M>, e.g. v1, v1alpha1",
        ));
    }
    let kind_ok = kind.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && kind.chars().all(|c| c.is_ascii_alphanumeric());
    if !kind_ok {
        return Err(refuse(
            format!("`{kind}` is not a kind"),
            "UpperCamelCase letters and digits, e.g. Guestbook",
        ));
    }
    let first_label = group.split('.').next().unwrap_or_default();
    let group_mod: String = first_label.chars().filter(|c| *c != '-').collect();
    if group_mod.chars().next().is_none_or(|c| c.is_ascii_digit()) {
        return Err(refuse(
            format!("the group's first label `{first_label}` cannot name a Rust module"),
            "start the group with a letter, e.g. apps.example.com",
        ));
    }
    let kind_mod = kube_codegen_templates::snake_case(kind);
    // As `generate` names them: the kind's resource (controller-gen's default plural) and
    // its group/version's accessor on the clientset.
    let plural = kube_codegen_templates::pluralize(&kind.to_ascii_lowercase());
    let accessor = format!("{}_{version}", first_label.replace('-', "_"));
    let crate_ident = krate.package_name().replace('-', "_");
    let fill = |t: &str| {
        t.replace("{{name}}", krate.package_name())
            .replace("{{crate}}", &crate_ident)
            .replace("{{group}}", group)
            .replace("{{group_mod}}", &group_mod)
            .replace("{{version}}", version)
            .replace("{{kind_mod}}", &kind_mod)
            .replace("{{kind_lower}}", &kind.to_ascii_lowercase())
            .replace(
                "{{genclient_scope}}",
                if *cluster_scoped {
                    "\n/// +genclient:nonNamespaced"
                } else {
                    ""
                },
            )
            .replace(
                "{{informer_for}}",
                if *cluster_scoped {
                    "cluster_informer_for"
                } else {
                    "informer_for"
                },
            )
            .replace("{{plural}}", &plural)
            .replace("{{accessor}}", &accessor)
            .replace(
                "{{namespace_arg}}",
                if *cluster_scoped { "" } else { "\"default\"" },
            )
            .replace(
                "{{scope}}",
                if *cluster_scoped {
                    "Cluster"
                } else {
                    "Namespaced"
                },
            )
            .replace(
                "{{client}}",
                &format!(
                    "ctx.clientset\n            .{accessor}()\n            .{plural}({})",
                    if *cluster_scoped {
                        ""
                    } else {
                        "req.key.namespace().unwrap_or_default()"
                    }
                ),
            )
            .replace("{{Kind}}", kind)
    };

    let mut files = vec![];
    let read = |p: &str| krate.read(Path::new(p));
    let marked = |path: &str, marker: &str| -> Result<String, ScaffoldError> {
        let text = read(path).ok_or_else(|| {
            refuse(
                format!("{path} does not exist"),
                "run `kube-codegen create api` in a crate made by `kube-codegen init`",
            )
        })?;
        if !text.contains(marker) {
            return Err(refuse(
                format!("{path} has no `{marker}` line to add to"),
                format!("put the line `{marker}` back where new items should go"),
            ));
        }
        Ok(text)
    };

    // The version module: new, or the kind appended.
    let version_path = format!("src/apis/{group_mod}/{version}.rs");
    let kind_text = fill(include_str!("templates/kind.rs.tmpl"));
    match read(&version_path) {
        None => files.push(ScaffoldFile {
            path: version_path.clone().into(),
            contents: fill(include_str!("templates/version.rs.tmpl")) + &kind_text,
            edit: false,
        }),
        Some(existing) => {
            let declared = existing
                .lines()
                .find_map(|l| l.trim().strip_prefix("//! +groupName="))
                .map(str::trim);
            if declared.is_some_and(|g| g != group) {
                return Err(refuse(
                    format!(
                        "{version_path} holds the group {}, not {group}",
                        declared.unwrap_or_default()
                    ),
                    "two groups whose first labels are equal need different module names: rename one module and keep its +groupName",
                ));
            }
            if existing.contains(&format!("pub struct {kind} ")) {
                return Err(refuse(
                    format!("{version_path} already defines {kind}"),
                    "choose another kind, or edit the existing one",
                ));
            }
            files.push(ScaffoldFile {
                path: version_path.clone().into(),
                contents: existing + &kind_text,
                edit: true,
            });
        }
    }

    // The group module: new, or the version added.
    let group_path = format!("src/apis/{group_mod}/mod.rs");
    let version_line = format!("pub mod {version};");
    match read(&group_path) {
        None => files.push(ScaffoldFile {
            path: group_path.into(),
            contents: format!("//! The {group} API group.\n\n{version_line}\n"),
            edit: false,
        }),
        Some(existing) if !existing.lines().any(|l| l.trim() == version_line) => {
            files.push(ScaffoldFile {
                path: group_path.into(),
                contents: format!("{}\n{version_line}\n", existing.trim_end()),
                edit: true,
            })
        }
        Some(_) => {}
    }

    const GROUPS: &str = "// +kube-codegen:scaffold:groups";
    const CONTROLLERS: &str = "// +kube-codegen:scaffold:controllers";
    const GENERATED: &str = "// +kube-codegen:scaffold:generated";
    let mut insert_once = |path: &str, marker: &str, text: &str| -> Result<(), ScaffoldError> {
        let existing = marked(path, marker)?;
        if existing.contains(text.trim()) {
            return Ok(());
        }
        // Above the marker's line, so the marker (and its indentation) stays last.
        let at = existing.find(marker).expect("checked by `marked`");
        let line_start = existing[..at].rfind('\n').map_or(0, |i| i + 1);
        let mut contents = existing.clone();
        contents.insert_str(line_start, text);
        files.push(ScaffoldFile {
            path: path.into(),
            contents,
            edit: true,
        });
        Ok(())
    };
    insert_once(
        "src/apis/mod.rs",
        GROUPS,
        &format!("pub mod {group_mod};\n"),
    )?;
    insert_once(
        "src/lib.rs",
        GENERATED,
        include_str!("templates/generated_mod.rs.tmpl"),
    )?;
    let controller_path = format!("src/controllers/{kind_mod}.rs");
    if read(&controller_path).is_some() {
        return Err(refuse(
            format!("{controller_path} exists"),
            "remove it, or add the controller by hand",
        ));
    }
    insert_once(
        "src/controllers/mod.rs",
        CONTROLLERS,
        &format!("pub mod {kind_mod};\n"),
    )?;
    insert_once(
        "src/main.rs",
        CONTROLLERS,
        &fill(include_str!("templates/main_controller.rs.tmpl")),
    )?;
    files.push(ScaffoldFile {
        path: controller_path.into(),
        contents: fill(include_str!("templates/controller.rs.tmpl")),
        edit: false,
    });
    let test_path = format!("tests/{kind_mod}.rs");
    if read(&test_path).is_none() {
        files.push(ScaffoldFile {
            path: test_path.into(),
            contents: fill(include_str!("templates/kind_test.rs.tmpl")),
            edit: false,
        });
    }
    Ok(files)
}

fn is_kube_version(v: &str) -> bool {
    let Some(rest) = v.strip_prefix('v') else {
        return false;
    };
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    if digits == 0 || rest.starts_with('0') {
        return false;
    }
    let tail = &rest[digits..];
    if tail.is_empty() {
        return true;
    }
    let Some(n) = tail
        .strip_prefix("alpha")
        .or_else(|| tail.strip_prefix("beta"))
    else {
        return false;
    };
    !n.is_empty() && !n.starts_with('0') && n.chars().all(|c| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_names() {
        for ok in ["v1", "v2", "v1alpha1", "v1beta12", "v10"] {
            assert!(is_kube_version(ok), "{ok}");
        }
        for bad in [
            "1", "v", "v0", "v1alpha", "v1gamma1", "v1beta0", "V1", "v01",
        ] {
            assert!(!is_kube_version(bad), "{bad}");
        }
        use kube_codegen_templates::snake_case;
        assert_eq!(snake_case("Guestbook"), "guestbook");
        assert_eq!(snake_case("CronJob"), "cron_job");
        assert_eq!(snake_case("HTTPRoute"), "http_route");
        assert_eq!(snake_case("Foo2Bar"), "foo2_bar");
    }
}
