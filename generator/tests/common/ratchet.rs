//! The ratchet of the CRD comparisons against controller-gen (tests/fidelity.rs, the hand
//! ports and `import go` of the fidelity corpus; tests/go_corpus.rs, `import go` of the Go
//! API corpus): a fixture's `golden/` CRDs against ours, keyword by keyword
//! (`crd_compare`), with the accepted differences of its `known-differences.txt`.
//!
//! `known-differences.txt` lists accepted differences, one a line,
//! `<missing|extra|changed> <crd> <path>  # reason`, where `*` in the crd or path matches any
//! text (one line can cover a class), or `generate-error  # reason` when the port does not
//! generate yet. A difference (or a generation failure) not listed is a failure; listed ones
//! that no longer occur are reported. Bless rewrites the list from the current differences,
//! keeping the reasons of lines that still apply.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::crd_compare::{Difference, Kind, crds_of, diff, leaves, short};

/// Options applied to the crate's own `Config` before generating (a Makefile's `crd:`
/// options, for the Go corpus).
pub type Configure<'a> = &'a dyn Fn(kube_codegen::Config) -> kube_codegen::Config;

/// Nothing beyond the crate's own configuration.
pub fn as_is(c: kube_codegen::Config) -> kube_codegen::Config {
    c
}

/// Every CRD of the fixture's `golden/*.yaml`, by name.
pub fn golden(fixture: &Path) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(fixture.join("golden"))
        .expect("golden/ readable")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    for f in files {
        let text = std::fs::read_to_string(&f).expect("golden file readable");
        crds_of(&text, &f.display().to_string(), &mut out);
    }
    out
}

/// Our CRDs for the port in `krate` (the fixture's `rust/`, or its `import go`), generated in memory, or the generator's error (also
/// when it writes no CRD: the golden directory is never empty).
pub fn ours(krate: &Path, configure: Configure) -> Result<BTreeMap<String, Value>, String> {
    let config = configure(
        kube_codegen::Config::from_crate(krate)
            .map_err(|e| e.to_string())?
            .emit_rust(false),
    );
    let generated = config.generate().map_err(|e| e.to_string())?;
    let mut out = BTreeMap::new();
    for f in &generated.files {
        if f.path.extension().is_some_and(|e| e == "yaml") {
            crds_of(&f.contents, &f.path.display().to_string(), &mut out);
        }
    }
    // Exiting 0 with no CRD is a failure to generate (the worst kind: a silent one).
    if out.is_empty() {
        return Err("generation succeeded but produced no CRD at all".to_owned());
    }
    Ok(out)
}

/// A line of known-differences.txt.
#[derive(Debug)]
pub enum Known {
    GenerateError {
        reason: String,
    },
    Diff {
        kind: Kind,
        crd: String,
        path: String,
        reason: String,
    },
}

pub fn parse_known(fixture: &Path) -> Vec<Known> {
    let file = fixture.join("known-differences.txt");
    let Ok(text) = std::fs::read_to_string(&file) else {
        return vec![];
    };
    let mut out = vec![];
    for (n, line) in text.lines().enumerate() {
        let line = line.trim_end();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (body, reason) = match line.split_once(" # ") {
            Some((b, r)) => (b.trim(), r.trim().to_owned()),
            None => (line.trim(), String::new()),
        };
        if body == "generate-error" {
            out.push(Known::GenerateError { reason });
            continue;
        }
        let mut parts = body.splitn(3, ' ');
        let (Some(kind), Some(crd), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
            panic!(
                "{}:{}: expected `<missing|extra|changed> <crd> <path>  # reason` or `generate-error  # reason`",
                file.display(),
                n + 1
            );
        };
        let kind = Kind::parse(kind).unwrap_or_else(|| {
            panic!(
                "{}:{}: `{kind}` is not missing, extra or changed",
                file.display(),
                n + 1
            )
        });
        out.push(Known::Diff {
            kind,
            crd: crd.to_owned(),
            path: path.trim().to_owned(),
            reason,
        });
    }
    out
}

/// `*` matches any text (including none); everything else literally.
pub fn glob(pattern: &str, s: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == s;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !s.starts_with(first)
        || s.len() < first.len() + last.len()
        || !s[first.len()..].ends_with(last)
    {
        return false;
    }
    let mut rest = &s[first.len()..s.len() - last.len()];
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(i) => rest = &rest[i + mid.len()..],
            None => return false,
        }
    }
    true
}

pub fn covers(known: &Known, d: &Difference) -> bool {
    match known {
        Known::GenerateError { .. } => false,
        Known::Diff {
            kind, crd, path, ..
        } => *kind == d.kind && glob(crd, &d.crd) && glob(path, &d.path),
    }
}

pub struct Outcome {
    pub report: String,
    pub failures: Vec<String>,
    pub matched: usize,
    pub total: usize,
}

/// Compare the CRDs of the port in `krate` with the fixture's goldens, by its ratchet.
pub fn check(fixture: &Path, krate: &Path, configure: Configure, bless: bool) -> Outcome {
    check_only(fixture, krate, configure, &|_| true, bless)
}

/// [`check`], comparing only our CRDs `keep` says yes to (by name): a corpus package's own,
/// not those of the packages of other modules it imports.
pub fn check_only(
    fixture: &Path,
    krate: &Path,
    configure: Configure,
    keep: &dyn Fn(&str) -> bool,
    bless: bool,
) -> Outcome {
    let name = fixture
        .file_name()
        .expect("fixture dir has a name")
        .to_string_lossy()
        .into_owned();
    let golden = golden(fixture);
    let total: usize = golden.values().map(|c| leaves(c).len()).sum();
    let known = parse_known(fixture);
    let mut report = String::new();
    let mut failures = vec![];
    let listed_error = known.iter().find_map(|k| match k {
        Known::GenerateError { reason } => Some(reason.clone()),
        Known::Diff { .. } => None,
    });
    let ours = match ours(krate, configure) {
        Ok(mut o) => {
            o.retain(|name, _| keep(name));
            o
        }
        Err(e) => {
            let _ = writeln!(
                report,
                "fidelity: {name}: 0/{total} leaves match: GENERATION FAILED ({} CRDs expected)",
                golden.len()
            );
            for l in e.lines().take(12) {
                let _ = writeln!(report, "    | {l}");
            }
            match &listed_error {
                Some(reason) => {
                    let _ = writeln!(report, "  listed as generate-error: {reason}");
                }
                None if bless => {}
                None => failures.push(format!(
                    "{name}: generation failed and `generate-error` is not in known-differences.txt:\n{e}"
                )),
            }
            if bless {
                let reason = listed_error.unwrap_or_else(|| {
                    e.lines()
                        .next()
                        .unwrap_or("generation failed")
                        .trim()
                        .to_owned()
                });
                write_known(fixture, &[], &known, Some(&reason));
            }
            return Outcome {
                report,
                failures,
                matched: 0,
                total,
            };
        }
    };
    let diffs = diff(&golden, &ours);
    let unmatched_golden = diffs.iter().filter(|d| d.kind != Kind::Extra).count();
    let matched = total - unmatched_golden;
    let extra = diffs.iter().filter(|d| d.kind == Kind::Extra).count();
    let _ = writeln!(
        report,
        "fidelity: {name}: {matched}/{total} leaves match ({:.1}%), {extra} extra; CRDs: {} golden, {} ours",
        100.0 * matched as f64 / total.max(1) as f64,
        golden.len(),
        ours.len()
    );
    if let Some(reason) = &listed_error {
        let _ = writeln!(
            report,
            "  stale: `generate-error` is listed ({reason}) but the port generates now: re-bless"
        );
    }
    let mut unlisted = vec![];
    for d in &diffs {
        let by = known.iter().find(|k| covers(k, d));
        let mark = match by {
            Some(Known::Diff { reason, .. }) => format!("known: {reason}"),
            _ => {
                unlisted.push(d);
                "NEW".to_owned()
            }
        };
        let _ = writeln!(
            report,
            "  {} [{mark}]\n      golden: {}\n      ours:   {}",
            d.key(),
            short(&d.golden),
            short(&d.ours)
        );
    }
    for k in &known {
        if let Known::Diff {
            kind,
            crd,
            path,
            reason,
        } = k
            && !diffs.iter().any(|d| covers(k, d))
        {
            let _ = writeln!(
                report,
                "  listed, does not occur now (remove it unless expected after a pending fix): {} {crd} {path}  # {reason}",
                kind.as_str()
            );
        }
    }
    if bless {
        write_known(fixture, &diffs, &known, None);
    } else if !unlisted.is_empty() {
        failures.push(format!(
            "{name}: {} difference(s) not in known-differences.txt (fix them, or list them with a reason; FIDELITY_BLESS=1 rewrites the list):\n{}",
            unlisted.len(),
            unlisted
                .iter()
                .map(|d| format!("  {}", d.key()))
                .collect::<Vec<_>>()
                .join("\n")
        ));
    }
    Outcome {
        report,
        failures,
        matched,
        total,
    }
}

/// Rewrite known-differences.txt: pattern lines that still match something stay (with
/// their reasons), every other current difference gets an exact line (its old reason if it
/// had one, else a marker that asks for one).
pub fn write_known(
    fixture: &Path,
    diffs: &[Difference],
    known: &[Known],
    generate_error: Option<&str>,
) {
    let mut out = String::from(
        "# Accepted differences from controller-gen's CRDs (see generator/tests/fidelity.rs).\n\
         # <missing|extra|changed> <crd> <path>  # reason   (`*` matches any text)\n\
         # generate-error  # reason                      (the port does not generate yet)\n",
    );
    if let Some(reason) = generate_error {
        let _ = writeln!(out, "generate-error  # {reason}");
        // Keep the lines written for after the fix: they describe expected differences.
        for k in known {
            if let Known::Diff {
                kind,
                crd,
                path,
                reason,
            } = k
            {
                let _ = writeln!(out, "{} {crd} {path}  # {reason}", kind.as_str());
            }
        }
    } else {
        let mut covered = vec![false; diffs.len()];
        for k in known {
            let Known::Diff {
                kind,
                crd,
                path,
                reason,
            } = k
            else {
                continue;
            };
            let is_pattern = crd.contains('*') || path.contains('*');
            let hits: Vec<usize> = (0..diffs.len())
                .filter(|&i| !covered[i] && covers(k, &diffs[i]))
                .collect();
            if is_pattern && !hits.is_empty() {
                let _ = writeln!(out, "{} {crd} {path}  # {reason}", kind.as_str());
                for i in hits {
                    covered[i] = true;
                }
            }
        }
        for (i, d) in diffs.iter().enumerate() {
            if covered[i] {
                continue;
            }
            let reason = known
                .iter()
                .find_map(|k| match k {
                    Known::Diff { reason, .. } if covers(k, d) => Some(reason.clone()),
                    _ => None,
                })
                .unwrap_or_else(|| "UNEXPLAINED: give the reason".to_owned());
            let _ = writeln!(out, "{}  # {reason}", d.key());
        }
    }
    std::fs::write(fixture.join("known-differences.txt"), out)
        .expect("known-differences.txt writable");
}
