//! The error corpus: every crate in `tests/errors/<case>/` is wrong in one way (`many_errors`
//! in several), and generation must fail with located, helpful diagnostics.
//!
//! Expected errors are annotated in the sources, compiletest style: `//~ ERROR text` expects
//! an error on its own line, `//~^ ERROR text` on the line above (one `^` per line up), and
//! `//~ WARNING text` a warning. Every diagnostic must match an annotation (same severity,
//! file and line, message containing `text`) and every annotation must be matched. The rendered text is snapshotted as `errors__<case>`,
//! and a failed `write()` must leave a copy of the crate exactly as it was.

use std::path::{Path, PathBuf};

use kube_codegen::{Config, Diagnostic, Error, Severity};

mod common;
use common::{copy_dir, tree};

const ERRORS_DIR: &str = "tests/errors";

/// An expected error: file, line and a piece of its message.
#[derive(Debug)]
struct Expected {
    severity: Severity,
    file: PathBuf,
    line: usize,
    text: String,
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![];
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out.sort();
    out
}

fn expectations(case_dir: &Path) -> Vec<Expected> {
    let mut out = vec![];
    for file in rust_files(case_dir) {
        let text = std::fs::read_to_string(&file).unwrap();
        for (i, line) in text.lines().enumerate() {
            let Some(at) = line.find("//~") else { continue };
            let rest = &line[at + 3..];
            let up = rest.chars().take_while(|c| *c == '^').count();
            let rest = rest[up..].trim_start();
            let (severity, text) = if let Some(t) = rest.strip_prefix("ERROR") {
                (Severity::Error, t)
            } else if let Some(t) = rest.strip_prefix("WARNING") {
                (Severity::Warning, t)
            } else {
                panic!(
                    "{}:{}: `//~` without ERROR or WARNING",
                    file.display(),
                    i + 1
                )
            };
            out.push(Expected {
                severity,
                file: file.clone(),
                line: i + 1 - up,
                text: text.trim().to_owned(),
            });
        }
    }
    assert!(
        !out.is_empty(),
        "{}: no `//~ ERROR` annotations",
        case_dir.display()
    );
    out
}

/// Generate, expecting input errors; returns the diagnostics and the rendered text.
fn input_errors(config: &Config, what: &str) -> (Vec<Diagnostic>, String) {
    match config.generate() {
        Err(Error::Input {
            diagnostics,
            rendered,
        }) => (diagnostics, rendered),
        Err(other) => panic!("{what}: expected input errors, got {other:?}"),
        Ok(g) => panic!(
            "{what}: expected input errors, but generation succeeded with {} files",
            g.files.len()
        ),
    }
}

/// `write()` and `check()` on a copy of the crate fail the same way and change nothing, not
/// even a stale generated file that a successful run would prune.
fn assert_nothing_written(crate_dir: &Path) {
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("crate");
    copy_dir(crate_dir, &copy);
    std::fs::create_dir_all(copy.join("crds")).unwrap();
    std::fs::write(
        copy.join("crds/old_things.yaml"),
        format!(
            "{}\nkind: CustomResourceDefinition\n",
            kube_codegen::YAML_HEADER
        ),
    )
    .unwrap();
    std::fs::write(copy.join("crds/README.md"), "hand-written\n").unwrap();
    let before = tree(&copy);
    let config = Config::new().crate_dir(&copy);
    assert!(
        matches!(config.write(), Err(Error::Input { .. })),
        "{}: write() must fail with input errors",
        crate_dir.display()
    );
    assert!(
        matches!(config.check(), Err(Error::Input { .. })),
        "{}: check() must fail with input errors",
        crate_dir.display()
    );
    assert_eq!(
        tree(&copy),
        before,
        "{}: a failed run changed the crate",
        crate_dir.display()
    );
}

fn run_case(case: &str) {
    let dir = Path::new(ERRORS_DIR).join(case);
    let expected = expectations(&dir);
    let (diagnostics, rendered) = input_errors(&Config::new().crate_dir(&dir), case);

    for d in &diagnostics {
        let loc = &d.loc;
        assert!(
            loc.file.starts_with(&dir),
            "{case}: diagnostic outside the case: {d}"
        );
        assert!(
            loc.line >= 1 && loc.column >= 1,
            "{case}: bad location {loc}"
        );
        // `path:line:col` of the right file, relative and stable, in the rendered text.
        assert!(
            rendered.contains(&format!(
                "--> {}:{}:{}\n",
                loc.file.display(),
                loc.line,
                loc.column
            )),
            "{case}: {loc} not in\n{rendered}"
        );
        assert!(
            expected.iter().any(|e| e.severity == d.severity
                && e.file == loc.file
                && e.line == loc.line
                && d.message.contains(&e.text)),
            "{case}: unexpected diagnostic {d}\nexpected: {expected:#?}"
        );
    }
    for e in &expected {
        assert!(
            diagnostics.iter().any(|d| d.severity == e.severity
                && d.loc.file == e.file
                && d.loc.line == e.line
                && d.message.contains(&e.text)),
            "{case}: no {} `{}` at {}:{}; got:\n{rendered}",
            e.severity,
            e.text,
            e.file.display(),
            e.line
        );
    }
    let count = rendered.matches("\n  --> ").count() + usize::from(rendered.starts_with("  --> "));
    assert_eq!(
        count,
        diagnostics.len(),
        "{case}: every diagnostic is rendered once"
    );
    assert!(
        rendered.ends_with("nothing was written\n"),
        "{case}: summary line"
    );

    insta::assert_snapshot!(format!("errors__{case}"), rendered);
    assert_nothing_written(&dir);
}

macro_rules! error_cases {
    ($($case:ident),* $(,)?) => {
        $(
            #[test]
            fn $case() {
                run_case(stringify!($case));
            }
        )*

        /// Every directory in tests/errors has a test, and every test a directory.
        #[test]
        fn every_case_is_listed() {
            let listed: Vec<&str> = vec![$(stringify!($case)),*];
            let mut on_disk: Vec<String> = std::fs::read_dir(ERRORS_DIR)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            on_disk.sort();
            let mut sorted = listed.clone();
            sorted.sort();
            assert_eq!(on_disk, sorted, "add new cases to error_cases! in tests/error_corpus.rs");
        }
    };
}

error_cases! {
    default_breaks_schema,
    conversion_gen_false_on_kind,
    conversion_hub_not_storage,
    conversion_single_version,
    conversion_without_webhook,
    // module layout: nothing is dropped without a word
    kind_outside_group_version,
    kind_in_private_module,
    genclient_method_invalid,
    // marker values
    bad_minimum,
    float_bound_not_finite,
    schema_patch_unknown_type,
    list_type_patch_on_object,
    schema_errors_all_reported,
    bad_max_length,
    negative_min_items,
    bad_bool_unique_items,
    unique_items_true,
    minimum_on_string,
    bad_enum_for_integer,
    default_wrong_type,
    invalid_pattern,
    pattern_backslash_in_quotes,
    xvalidation_bad_reason,
    xvalidation_missing_rule,
    xvalidation_cel_check,
    xvalidation_invalid_cel,
    bad_list_type,
    list_map_key_without_list_type,
    list_map_key_optional,
    list_map_key_not_scalar,
    bad_type_marker,
    set_of_objects,
    list_type_set_of_objects,
    schemaless_without_type,
    schema_patch_invalid,
    items_on_non_array,
    items_form_unknown,
    one_of_required_field,
    one_of_unknown_field,
    k8s_enum_not_enum,
    default_bad_literal,
    external_docs_bad_url,
    rbac_webhook_invalid,
    // marker names and placement
    k8s_marker_typo,
    marker_trailing_text,
    unknown_marker_typo,
    unknown_marker_in_our_namespace,
    unknown_marker_argument,
    marker_wrong_level,
    kind_marker_on_non_kind,
    // kind markers
    bad_printcolumn_type,
    bad_printcolumn_format,
    bad_printcolumn_priority,
    bad_scope,
    bad_short_name,
    non_namespaced_contradicts_scope,
    unknown_genclient_verb,
    scale_path_not_integer,
    // Rust types
    tuple_type,
    map_non_string_key,
    unknown_crate_type,
    enum_mixed_unit_data,
    enum_not_pub,
    adjacently_tagged_enum,
    admission_policy_not_cel,
    admission_policy_not_on_kind,
    protected_group_without_approval,
    untagged_mixed_types,
    tuple_variant,
    recursive_type,
    unsupported_k8s_type,
    validation_unsupported_cel,
    validation_marker_not_on_kind,
    validation_package_marker_without_group,
    generic_type,
    generic_kind,
    // Rust shapes: aliases, arrays, map keys, serde conversions and custom serializers
    alias_generic,
    alias_unsupported_target,
    array_too_long,
    array_length_not_literal,
    map_key_not_string,
    serde_into_without_from,
    serde_from_without_into,
    serde_into_from_disagree,
    serde_into_not_a_type,
    serde_with_without_type,
    serde_with_incomplete_type,
    serde_with_on_variant,
    serde_with_newtype_without_type,
    kind_with_serde_into,
    // kinds
    kind_without_type_meta,
    kube_derive_attrs,
    kube_derive_two_storage_versions,
    kind_without_metadata,
    metadata_not_object_meta,
    kind_is_enum,
    optional_and_required,
    optional_without_default,
    duplicate_plural,
    duplicate_plural_across_versions,
    // packages and versions
    no_storage_version,
    two_storage_versions,
    versions_disagree_on_scope,
    webhook_patch_and_configuration,
    no_served_version,
    duplicate_group_version,
    version_without_group,
    no_group_version_module,
    invalid_group_name,
    invalid_version_name,
    // files
    parse_error,
    mod_file_missing,
    // nesting: past the limits the stack is sized for
    nested_types_too_deep,
    nested_code_too_deep,
    // several at once
    many_errors,
}

/// A source file that is not UTF-8. Written at run time (a committed non-UTF-8 file is a
/// nuisance), so its path is a temp path, replaced by `<tmp>` in the snapshot.
#[test]
fn non_utf8_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("non_utf8");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let mut bytes =
        b"//! +groupName=errors.example.com\n//! +versionName=v1\n\n// Latin-1 caf".to_vec();
    bytes.push(0xe9);
    bytes.extend_from_slice(b" is not UTF-8\npub struct Nothing;\n");
    std::fs::write(dir.join("src/lib.rs"), &bytes).unwrap();

    let (diagnostics, rendered) = input_errors(&Config::new().crate_dir(&dir), "non_utf8");
    assert_eq!(diagnostics.len(), 1, "{rendered}");
    let d = &diagnostics[0];
    assert_eq!(d.loc.file, dir.join("src/lib.rs"));
    assert_eq!(
        (d.loc.line, d.loc.column),
        (4, 15),
        "points at the first bad byte"
    );
    assert!(d.message.contains("not valid UTF-8"), "{rendered}");
    let shown = rendered.replace(&tmp.path().display().to_string(), "<tmp>");
    assert!(
        shown.contains("--> <tmp>/non_utf8/src/lib.rs:4:15\n"),
        "{shown}"
    );
    insta::assert_snapshot!("errors__non_utf8", shown);
    assert_nothing_written(&dir);
}

/// A build script that returns `Result<(), Box<dyn Error>>` (README's build.rs) reports an
/// `Err` as `Error: {err:?}`: that must be the rendered diagnostics as the CLI prints them,
/// each `-->` line on a line of its own, not the `Input { diagnostics: [...] }` structure
/// with the text escaped onto one line.
#[test]
fn debug_of_an_input_error_is_the_rendered_diagnostics() {
    let dir = Path::new(ERRORS_DIR).join("unknown_marker_typo");
    let err = Config::new().crate_dir(&dir).write().unwrap_err();
    let Error::Input { rendered, .. } = &err else {
        panic!("expected input errors, got {err}")
    };
    let rendered = rendered.clone();
    let boxed: Box<dyn std::error::Error> = Box::new(err);
    // What std's `Termination` for `Result<(), E: Debug>` writes to stderr.
    let printed = format!("Error: {boxed:?}\n");
    assert_eq!(printed, format!("Error: \n{rendered}\n"));
    assert!(
        printed
            .lines()
            .any(|l| l == "  --> tests/errors/unknown_marker_typo/src/lib.rs:21:9"),
        "{printed}"
    );
    assert!(!printed.contains("Diagnostic {"), "{printed}");
    assert!(!printed.contains("\\n"), "{printed}");
}

/// A case is also an error through the CLI's code path: `Config::from_crate` with a
/// Cargo.toml that has no metadata behaves like `Config::new()`.
#[test]
fn from_crate_without_metadata_reports_the_same() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("c");
    copy_dir(&Path::new(ERRORS_DIR).join("bad_minimum"), &dir);
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"c\"\nversion = \"0.0.0\"\n",
    )
    .unwrap();
    let (a, _) = input_errors(&Config::from_crate(&dir).unwrap(), "from_crate");
    let (b, _) = input_errors(&Config::new().crate_dir(&dir), "new");
    assert_eq!(a, b);
}

/// Bad input of `import crd` (`tests/errors_import/<case>.yaml`): each file holds CRD YAML
/// that is wrong in one way, annotated with `#~ ERROR text` / `#~ WARNING text` on the line
/// the diagnostic must point at (`#~^` for the line above). The import fails, every
/// diagnostic matches an annotation and every annotation a diagnostic, no file is produced,
/// and the rendered text (file, line, JSON path in the message, hint) is snapshotted as
/// `import_errors__<case>`.
#[test]
fn import_crd_errors() {
    use kube_codegen::{ImportInput, ImportOptions, KubernetesVersion, import_crds};
    let mut cases: Vec<PathBuf> = std::fs::read_dir("tests/errors_import")
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    cases.sort();
    assert!(cases.len() >= 5);
    for file in cases {
        let text = std::fs::read_to_string(&file).unwrap();
        let mut expected = vec![];
        for (i, line) in text.lines().enumerate() {
            let Some(at) = line.find("#~") else { continue };
            let rest = &line[at + 2..];
            let up = rest.chars().take_while(|c| *c == '^').count();
            let rest = rest[up..].trim_start();
            let (severity, t) = match rest.split_once(' ') {
                Some(("ERROR", t)) => (Severity::Error, t),
                Some(("WARNING", t)) => (Severity::Warning, t),
                _ => panic!(
                    "{}:{}: `#~` without ERROR or WARNING",
                    file.display(),
                    i + 1
                ),
            };
            expected.push((severity, i + 1 - up, t.trim().to_owned()));
        }
        let err = import_crds(
            &[ImportInput {
                path: file.clone(),
                text,
            }],
            &ImportOptions {
                out: PathBuf::from("out"),
                crate_name: "out".into(),
                kubernetes: KubernetesVersion::NEWEST,
                existing: Default::default(),
                has_cargo_toml: false,
                has_lib_rs: false,
                runtime: kube_codegen::RuntimeSource::registry(),
            },
        )
        .expect_err("bad input must not import");
        check_import_errors(&file, err, &expected, "import_errors", false);
    }
}

/// Bad input of `import go` (`tests/errors_import_go/<case>.go`, a one-file package each):
/// Go the importer cannot port (`interface{}`/`any` fields, generics, channels, anonymous
/// structs, types of packages it was not given, syntax errors), annotated with
/// `//~ ERROR text` / `//~ WARNING text` on the line the diagnostic points at. The import
/// fails, every diagnostic matches an annotation and every annotation a diagnostic, nothing
/// is produced, and the rendered text is snapshotted as `import_go_errors__<case>`.
#[test]
fn import_go_errors() {
    use kube_codegen::{GoImportOptions, GoPackageInput, KubernetesVersion, import_go};
    let mut cases: Vec<PathBuf> = std::fs::read_dir("tests/errors_import_go")
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    cases.sort();
    assert!(cases.len() >= 5);
    for file in cases {
        let text = std::fs::read_to_string(&file).unwrap();
        let mut expected = vec![];
        for (i, line) in text.lines().enumerate() {
            let Some(at) = line.find("//~") else { continue };
            let rest = line[at + 3..].trim_start();
            let (severity, t) = match rest.split_once(' ') {
                Some(("ERROR", t)) => (Severity::Error, t),
                Some(("WARNING", t)) => (Severity::Warning, t),
                _ => panic!(
                    "{}:{}: `//~` without ERROR or WARNING",
                    file.display(),
                    i + 1
                ),
            };
            expected.push((severity, i + 1, t.trim().to_owned()));
        }
        let err = import_go(
            &[GoPackageInput {
                dir: file.parent().unwrap().to_owned(),
                files: vec![(file.clone(), text)],
                import_path: None,
            }],
            &GoImportOptions {
                out: PathBuf::from("out"),
                crate_name: "out".into(),
                kubernetes: KubernetesVersion::NEWEST,
                runtime: kube_codegen::RuntimeSource::registry(),
                crd: Default::default(),
                conversion_hub: false,
            },
        )
        .expect_err("bad input must not import");
        check_import_errors(&file, err, &expected, "import_go_errors", true);
    }
}

/// An importer's error for one annotated input `file`: every diagnostic is in the file and
/// matches an annotation (severity, line, text), every annotation a diagnostic, the text
/// says the import failed, and it is snapshotted as `<snapshot_prefix>__<case>`. With
/// `hints`, every diagnostic also says how to fix it.
fn check_import_errors(
    file: &std::path::Path,
    err: Error,
    expected: &[(Severity, usize, String)],
    snapshot_prefix: &str,
    hints: bool,
) {
    let Error::Input {
        diagnostics,
        rendered,
    } = err
    else {
        panic!("{}: an input error", file.display())
    };
    let mut unmatched: Vec<_> = expected.iter().collect();
    for d in &diagnostics {
        assert_eq!(d.loc.file, file, "{rendered}");
        if hints {
            assert!(
                d.hint.is_some(),
                "every diagnostic says how to fix it: {d:?}"
            );
        }
        let pos = unmatched.iter().position(|(s, line, t)| {
            *s == d.severity && *line == d.loc.line && d.message.contains(t.as_str())
        });
        match pos {
            Some(p) => {
                unmatched.remove(p);
            }
            None => panic!(
                "{}: unexpected diagnostic at line {}: {}\n{rendered}",
                file.display(),
                d.loc.line,
                d.message
            ),
        }
    }
    assert!(
        unmatched.is_empty(),
        "{}: expected but not reported: {unmatched:?}\n{rendered}",
        file.display()
    );
    assert!(rendered.contains("import failed with"), "{rendered}");
    let case = file.file_stem().unwrap().to_string_lossy().into_owned();
    insta::assert_snapshot!(format!("{snapshot_prefix}__{case}"), rendered);
}
