//! The book's pages that the tool itself produces (docs/src/reference/): each page is the
//! tool's output, so a marker added to the registry without its page, or a page edited by
//! hand, fails here. `KUBE_CODEGEN_BLESS=1` rewrites the pages.

use std::path::{Path, PathBuf};
use std::process::Command;

fn book_page(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../docs/src")
        .join(rel)
}

/// `page` holds `expected`, or (blessing) is rewritten to hold it.
fn check_page(rel: &str, expected: &str, command: &str) {
    let path = book_page(rel);
    if std::env::var_os("KUBE_CODEGEN_BLESS").is_some() {
        std::fs::write(&path, expected).unwrap();
        return;
    }
    let actual = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        actual == expected,
        "docs/src/{rel} is not what `{command}` prints: rerun this test with \
         KUBE_CODEGEN_BLESS=1 (and review the diff)"
    );
}

#[test]
fn the_marker_page_is_what_kube_codegen_markers_prints() {
    let out = Command::new(env!("CARGO_BIN_EXE_kube-codegen"))
        .args(["markers", "--format", "markdown"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = String::from_utf8(out.stdout).unwrap();
    // The command prints the library's page, byte for byte.
    assert_eq!(
        printed,
        kube_codegen::marker_reference(kube_codegen::ReferenceFormat::Markdown)
    );
    check_page(
        "reference/markers.md",
        &printed,
        "kube-codegen markers --format markdown",
    );
}

#[test]
fn the_marker_page_names_every_marker_the_parser_knows() {
    let page = std::fs::read_to_string(book_page("reference/markers.md")).unwrap();
    for doc in kube_codegen::marker_docs() {
        assert!(
            page.contains(&format!("`+{}", doc.name)),
            "{} is missing from the marker page",
            doc.name
        );
    }
}

/// `kube-codegen <path> --help`, at a fixed width so the page does not depend on the
/// terminal.
fn help_of(path: &[String]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_kube-codegen"))
        .args(path)
        .arg("--help")
        .env("COLUMNS", "100")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{path:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The subcommands a help text lists under `Commands:` (clap's `help` left out).
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

/// Every command's help, depth first, in the order `--help` lists them.
fn cli_page() -> String {
    let mut page = String::from(
        "# Command line\n\n<!-- Generated from `kube-codegen --help` and every subcommand's \
         `--help` by generator/tests/book.rs; a test fails when it differs. Do not edit by \
         hand. -->\n\nWhat `kube-codegen help <command>` prints, for every command.\n",
    );
    let mut stack: Vec<Vec<String>> = vec![vec![]];
    while let Some(path) = stack.pop() {
        let help = help_of(&path);
        let title = if path.is_empty() {
            "kube-codegen".to_owned()
        } else {
            format!("kube-codegen {}", path.join(" "))
        };
        page.push_str(&format!(
            "\n## `{title}`\n\n```text\n{}\n```\n",
            help.trim_end()
        ));
        for sub in subcommands(&help).into_iter().rev() {
            let mut next = path.clone();
            next.push(sub);
            stack.push(next);
        }
    }
    page
}

#[test]
fn the_command_line_page_is_what_help_prints() {
    let page = cli_page();
    for command in [
        "generate",
        "check",
        "markers",
        "init",
        "create api",
        "import crd",
        "import go",
    ] {
        assert!(
            page.contains(&format!("## `kube-codegen {command}`")),
            "{command} is not on the page"
        );
    }
    check_page("reference/cli.md", &page, "kube-codegen <command> --help");
}

/// The Markdown files whose links are checked: the book's sources, and the repository's
/// own documents at its root.
fn documents() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    let mut dirs = vec![root.join("docs/src")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// A heading's anchor as mdBook and GitHub make it: lower case, spaces to `-`, every
/// character but letters, digits, `-` and `_` dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The text of a Markdown file outside fenced code blocks and inline code spans.
fn prose(markdown: &str) -> Vec<(usize, String)> {
    let mut fenced = false;
    let mut out = vec![];
    for (i, line) in markdown.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Inline code spans: every other backtick-delimited piece.
        let text: String = line
            .split('`')
            .enumerate()
            .filter(|(n, _)| n % 2 == 0)
            .map(|(_, s)| s)
            .collect::<Vec<_>>()
            .join(" ");
        out.push((i + 1, text));
    }
    out
}

fn anchors(markdown: &str) -> Vec<String> {
    let mut fenced = false;
    let mut out = vec![];
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            out.push(slug(line.trim_start_matches('#')));
        }
    }
    out
}

#[test]
fn every_link_of_the_book_and_the_documents_resolves() {
    let book_src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../docs/src")
        .canonicalize()
        .unwrap();
    let mut broken = vec![];
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        let in_book = doc.canonicalize().unwrap().starts_with(&book_src);
        for (line, prose) in prose(&text) {
            for target in prose
                .split("](")
                .skip(1)
                .filter_map(|s| s.split(')').next())
            {
                if target.starts_with("http://")
                    || target.starts_with("https://")
                    || target.starts_with("mailto:")
                {
                    continue;
                }
                let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
                let resolved = if file.is_empty() {
                    doc.clone()
                } else {
                    doc.parent().unwrap().join(file)
                };
                let at = format!("{}:{line}: `{target}`", doc.display());
                let Ok(resolved) = resolved.canonicalize() else {
                    broken.push(format!("{at}: no such file"));
                    continue;
                };
                if in_book && !resolved.starts_with(&book_src) {
                    broken.push(format!(
                        "{at}: leaves the book (docs/src); link to the repository by URL"
                    ));
                    continue;
                }
                if !anchor.is_empty() {
                    let target_text = std::fs::read_to_string(&resolved).unwrap_or_default();
                    if !anchors(&target_text).iter().any(|a| a == anchor) {
                        broken.push(format!("{at}: no heading has the anchor `#{anchor}`"));
                    }
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn slugs_are_mdbooks() {
    assert_eq!(
        slug(" Start a new project: `init` and `create api`"),
        "start-a-new-project-init-and-create-api"
    );
    assert_eq!(slug("build.rs"), "buildrs");
}

/// Every ```rust block of the book is one or more `{{#include FILE:ANCHOR}}` lines naming
/// an anchor in a Rust file of the workspace that a build compiles (a crate's `src/`,
/// `tests/`, `examples/` or its build.rs): no example exists only as text. mdBook itself
/// includes an empty block for an anchor that is not there, so the anchors are checked here.
#[test]
fn every_rust_block_of_the_book_is_compiled_code() {
    let book_src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/src");
    let mut bad = vec![];
    for doc in documents().into_iter().filter(|d| {
        d.canonicalize()
            .unwrap()
            .starts_with(book_src.canonicalize().unwrap())
    }) {
        let text = std::fs::read_to_string(&doc).unwrap();
        let mut block: Option<(usize, Vec<&str>)> = None;
        for (i, line) in text.lines().enumerate() {
            match &mut block {
                None if line.trim_start().starts_with("```rust") => block = Some((i + 1, vec![])),
                None => {}
                Some((start, lines)) if line.trim_start().starts_with("```") => {
                    let at = format!("{}:{start}", doc.display());
                    if lines.is_empty() {
                        bad.push(format!("{at}: an empty block"));
                    }
                    for l in lines.iter() {
                        if let Err(e) = check_include(&doc, l) {
                            bad.push(format!("{at}: {e}"));
                        }
                    }
                    block = None;
                }
                Some((_, lines)) => lines.push(line),
            }
        }
    }
    assert!(
        bad.is_empty(),
        "Rust in the book that is not included from compiled code (put it in a test, example \
         or crate between `// ANCHOR: name` and `// ANCHOR_END: name`, and include it with \
         {{{{#include path:name}}}}):\n{}",
        bad.join("\n")
    );
}

/// `line` is `{{#include PATH:ANCHOR}}` of an anchor in a compiled Rust file.
fn check_include(doc: &Path, line: &str) -> Result<(), String> {
    let spec = line
        .trim()
        .strip_prefix("{{#include ")
        .and_then(|s| s.strip_suffix("}}"))
        .ok_or_else(|| format!("`{line}` is Rust written in the book"))?;
    let (file, anchor) = spec
        .rsplit_once(':')
        .ok_or_else(|| format!("`{spec}` names no anchor"))?;
    let path = doc.parent().unwrap().join(file);
    let source = std::fs::read_to_string(&path).map_err(|e| format!("{file}: {e}"))?;
    let rel = path
        .canonicalize()
        .unwrap()
        .strip_prefix(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("..")
                .canonicalize()
                .unwrap(),
        )
        .map(Path::to_path_buf)
        .map_err(|_| format!("{file} is outside the repository"))?;
    let compiled = rel.extension().is_some_and(|e| e == "rs")
        && (rel.file_name().is_some_and(|n| n == "build.rs")
            || rel
                .components()
                .any(|c| ["src", "tests", "examples"].contains(&c.as_os_str().to_str().unwrap())));
    if !compiled {
        return Err(format!("{file} is not a compiled Rust file"));
    }
    let begins = source
        .lines()
        .filter(|l| l.trim() == format!("// ANCHOR: {anchor}"))
        .count();
    let ends = source
        .lines()
        .filter(|l| l.trim() == format!("// ANCHOR_END: {anchor}"))
        .count();
    if (begins, ends) != (1, 1) {
        return Err(format!(
            "{file} has {begins} `// ANCHOR: {anchor}` and {ends} `// ANCHOR_END: {anchor}` lines (one each wanted)"
        ));
    }
    Ok(())
}

fn repo_file(rel: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel))
        .unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The rows of the first Markdown table after `header` in `text`: its cells, trimmed,
/// backticks removed.
fn table_after(text: &str, header: &str) -> Vec<Vec<String>> {
    text.lines()
        .skip_while(|l| !l.starts_with(header))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            l.trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().replace('`', ""))
                .collect()
        })
        .collect()
}

/// The published crates: what `.ci/run` packages with `cargo publish --dry-run -p ...`.
fn published_crates() -> Vec<String> {
    let ci = repo_file(".ci/run");
    let publish = ci
        .split("cargo publish --dry-run")
        .nth(1)
        .expect(".ci/run publishes");
    let command: String = publish
        .lines()
        .take_while(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .collect::<Vec<_>>()
        .join(" ");
    let words: Vec<&str> = command.split_whitespace().collect();
    let mut crates: Vec<String> = words
        .windows(2)
        .filter(|w| w[0] == "-p")
        .map(|w| w[1].to_owned())
        .collect();
    crates.sort();
    crates
}

#[test]
fn readmes_crate_table_is_what_ci_publishes() {
    let mut listed: Vec<String> = table_after(&repo_file("README.md"), "| crate | path |")
        .into_iter()
        .map(|row| row[0].clone())
        .collect();
    listed.sort();
    assert_eq!(
        listed,
        published_crates(),
        "README's crate table vs .ci/run's publish list"
    );
}

#[test]
fn readmes_generator_table_is_what_kube_codegen_generators_lists() {
    let listed: Vec<String> = table_after(&repo_file("README.md"), "| generator |")
        .into_iter()
        .map(|row| row[0].clone())
        .collect();
    let mut registered: Vec<String> = kube_codegen::GeneratorName::all()
        .map(|g| g.as_str().to_owned())
        .collect();
    let mut sorted = listed.clone();
    sorted.sort();
    registered.sort();
    assert_eq!(
        sorted, registered,
        "README's generator table vs the registry"
    );
}

/// The features table of the install chapter lists every feature of every published crate
/// (`default` aside) and nothing else, each with its default as Cargo.toml says.
#[test]
fn the_features_table_is_the_crates_features() {
    let rows = table_after(
        &repo_file("docs/src/install.md"),
        "| Crate | Feature | Default |",
    );
    let mut listed: Vec<(String, String, bool)> = rows
        .iter()
        .map(|r| (r[0].clone(), r[1].clone(), r[2].starts_with("on")))
        .collect();
    listed.sort();
    let mut actual = vec![];
    for dir in ["generator", "templates", "validation", "runtime", "envtest"] {
        let manifest: toml::Table = repo_file(&format!("{dir}/Cargo.toml")).parse().unwrap();
        let name = manifest["package"]["name"].as_str().unwrap().to_owned();
        let Some(features) = manifest.get("features").and_then(|f| f.as_table()) else {
            continue;
        };
        let on: Vec<&str> = features
            .get("default")
            .and_then(|d| d.as_array())
            .map(|d| d.iter().filter_map(|v| v.as_str()).collect())
            .unwrap_or_default();
        // A feature is on by default when `default` names it, or names one that enables it.
        let enabled_by_default = |f: &str| {
            on.contains(&f)
                || on.iter().any(|d| {
                    features[*d]
                        .as_array()
                        .is_some_and(|a| a.iter().any(|v| v.as_str() == Some(f)))
                })
        };
        for feature in features.keys().filter(|k| *k != "default") {
            actual.push((name.clone(), feature.clone(), enabled_by_default(feature)));
        }
    }
    actual.sort();
    assert_eq!(
        listed, actual,
        "docs/src/install.md's features table vs the crates' Cargo.toml"
    );
}
