//! The importers' last check: `generate` on the crate an import would write. The rule is
//! that an importer never writes Rust that `generate` refuses; the importers check what
//! they know of (names, cycles, map keys, storage versions, types), and this catches the
//! rest (a CEL rule that does not type check, a marker on a field of the wrong type, ...),
//! so that an import either writes a crate that generates or fails with errors placed in
//! its input. It costs one more generation of the imported API.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::diagnostics::Diagnostic;
use crate::{Config, Error, GeneratedFile};

/// An error `generate` gives for the crate an import would write: the file of the crate
/// (as it would be at the import's output) and the line of the error, with the error.
pub struct Refusal {
    /// The file, under the import's output directory.
    pub file: PathBuf,
    /// Its text, when the import writes it.
    pub text: Option<String>,
    pub diagnostic: Diagnostic,
}

/// Generates the crate at `out` (the files there now, under `files`) in a scratch
/// directory, and returns the errors `generate` gives, each placed at the file it would
/// have under `out`.
pub fn refusals(files: &[GeneratedFile], out: &Path) -> Vec<Refusal> {
    static RUN: AtomicUsize = AtomicUsize::new(0);
    let scratch = std::env::temp_dir().join(format!(
        ".kube-codegen-import-check-{}-{}",
        std::process::id(),
        RUN.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| -> std::io::Result<Result<(), Error>> {
        // What the crate has of its own: its manifest and sources.
        for existing in [out.join("Cargo.toml")]
            .into_iter()
            .filter(|p| p.is_file())
            .chain(
                crate::walk::files_below(&out.join("src"), |p| {
                    p.extension().is_some_and(|e| e == "rs")
                })
                .map(|w| w.files)
                .unwrap_or_default(),
            )
        {
            if let Ok(rel) = existing.strip_prefix(out) {
                let to = scratch.join(rel);
                std::fs::create_dir_all(to.parent().unwrap_or(&scratch))?;
                std::fs::copy(&existing, to)?;
            }
        }
        let mut top = std::collections::BTreeSet::new();
        for f in files {
            let rel = f.path.strip_prefix(out).unwrap_or(&f.path);
            let to = scratch.join(rel);
            std::fs::create_dir_all(to.parent().unwrap_or(&scratch))?;
            std::fs::write(to, without_prose(&f.contents))?;
            if let Ok(under) = rel.strip_prefix("src")
                && let Some(first) = under.components().next()
                && under.components().count() > 1
            {
                top.insert(first.as_os_str().to_string_lossy().into_owned());
            }
        }
        // A lib.rs of the user's own that does not declare an imported module yet (the
        // importers say so in a warning): checked as it will be once it does.
        let lib = scratch.join("src/lib.rs");
        if !files.iter().any(|f| f.path == out.join("src/lib.rs"))
            && let Ok(mut text) = std::fs::read_to_string(&lib)
        {
            for m in &top {
                if !text.contains(&format!("mod {m};")) && !text.contains(&format!("mod {m} ")) {
                    text.push_str(&format!("\npub mod {m};\n"));
                }
            }
            std::fs::write(&lib, text)?;
        }
        // The CRD header is the importer's to check (the scratch copy is elsewhere, so a
        // relative path to it points nowhere here).
        Ok(Config::from_crate(&scratch).and_then(|c| c.without_crd_header().check_input()))
    })();
    let _ = std::fs::remove_dir_all(&scratch);
    let back = |p: &Path| match p.strip_prefix(&scratch) {
        Ok(rel) => out.join(rel),
        Err(_) => p.to_owned(),
    };
    let text_of = |p: &Path| {
        files
            .iter()
            .find(|f| f.path == p)
            .map(|f| f.contents.clone())
    };
    match result {
        Ok(Ok(())) => vec![],
        Ok(Err(Error::Input { diagnostics, .. })) => diagnostics
            .into_iter()
            .filter(Diagnostic::is_error)
            .map(|mut d| {
                let file = back(&d.loc.file);
                d.loc.file = file.clone();
                Refusal {
                    text: text_of(&file),
                    file,
                    diagnostic: d,
                }
            })
            .collect(),
        Ok(Err(e)) => vec![Refusal {
            file: out.join("Cargo.toml"),
            text: None,
            diagnostic: Diagnostic::new(
                crate::Location::new(out.join("Cargo.toml"), 1, 1),
                e.to_string()
                    .replace(&scratch.display().to_string(), &out.display().to_string()),
            ),
        }],
        Err(e) => vec![Refusal {
            file: out.to_owned(),
            text: None,
            diagnostic: Diagnostic::new(
                crate::Location::new(out, 1, 1),
                format!(
                    "cannot check the import in a scratch directory ({}): {e}",
                    scratch.display()
                ),
            ),
        }],
    }
}

/// `text` without its doc comments' prose, markers (`/// +...`) kept: prose is no input to
/// any check of `generate`, and an imported CRD's descriptions are most of its port (a
/// 20 MB CRD's port parsed whole took 300 MB more). Lines are blanked, not removed, so
/// errors keep their line numbers.
fn without_prose(text: &str) -> String {
    let mut out = String::with_capacity(text.len() / 2);
    for line in text.split_inclusive('\n') {
        let t = line.trim_start();
        let prose = ["///", "//!"]
            .iter()
            .find_map(|p| t.strip_prefix(p))
            .is_some_and(|rest| !rest.trim_start().starts_with('+'));
        if prose {
            out.push('\n');
        } else {
            out.push_str(line);
        }
    }
    out
}

/// The name of the type (`pub struct X`, `pub enum X`, `pub type X`) whose declaration is
/// the last at or before line `line` (1-based) of `text`.
pub fn type_at(text: &str, line: usize) -> Option<&str> {
    text.lines()
        .take(line)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .find_map(|l| {
            let rest = ["pub struct ", "pub enum ", "pub type "]
                .iter()
                .find_map(|p| l.strip_prefix(p))?;
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            Some(&rest[..end])
        })
}

/// The error an import gives at `at` in its input for a refusal of the port.
pub fn placed(at: crate::Location, r: &Refusal) -> Diagnostic {
    let d = &r.diagnostic;
    let mut out = Diagnostic::new(
        at,
        format!(
            "`generate` would refuse the crate this imports to: {} (at {}:{} of the port)",
            d.message,
            r.file.display(),
            d.loc.line
        ),
    );
    out.hint = Some(d.hint.clone().unwrap_or_else(|| {
        "change the input so that it is valid for the API server and controller-gen".to_owned()
    }));
    out
}
