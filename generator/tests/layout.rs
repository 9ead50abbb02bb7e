//! Module layout: group/version membership follows Rust's module tree, as the files of a
//! Go package share its doc.go. A property test builds random crates of inline, file,
//! `mod.rs` and `#[path]` modules, some carrying `+groupName`, some holding kinds, and
//! checks that every kind is generated in the group/version of the nearest module around
//! it that has one, or reported at its marker when there is none: never dropped.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use kube_codegen::{Config, Error, Severity};
use proptest::prelude::*;

fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// How a module is written.
#[derive(Clone, Copy, Debug)]
enum Form {
    /// `pub mod m { ... }` inside its parent.
    Inline,
    /// `pub mod m;` and `m.rs`, its children in `m/`.
    File,
    /// `pub mod m;` and `m/mod.rs`.
    ModRs,
    /// `#[path = "p_m.rs"] pub mod m;`, a file named unlike its module.
    PathAttr,
}

#[derive(Clone, Debug)]
struct Node {
    /// Index of the parent node; node 0 is the crate root (`src/lib.rs`).
    parent: usize,
    form: Form,
    group: bool,
    kinds: usize,
}

fn nodes() -> impl Strategy<Value = Vec<Node>> {
    let form = prop::sample::select(vec![Form::Inline, Form::File, Form::ModRs, Form::PathAttr]);
    (
        any::<bool>(),
        0..2usize,
        prop::collection::vec(
            (any::<prop::sample::Index>(), form, any::<bool>(), 0..3usize),
            0..8,
        ),
    )
        .prop_map(|(root_group, root_kinds, rest)| {
            let mut out = vec![Node {
                parent: 0,
                form: Form::ModRs,
                group: root_group,
                kinds: root_kinds,
            }];
            for (i, (parent, form, group, kinds)) in rest.into_iter().enumerate() {
                out.push(Node {
                    parent: parent.index(i + 1),
                    form,
                    group,
                    kinds,
                });
            }
            out
        })
}

fn kind_name(node: usize, k: usize) -> String {
    format!("Kind{node}x{k}")
}

/// The text of a module's items (its inner docs first) and of its inline children, with the
/// files of its file children added to `files`. `dir` is where its file children live,
/// `file_dir` the directory of the file it is written in, `inline` whether it sits inside
/// an inline module of that file.
fn render(
    nodes: &[Node],
    i: usize,
    dir: &Path,
    file_dir: &Path,
    inline: bool,
    files: &mut BTreeMap<PathBuf, String>,
) -> String {
    let mut s = String::new();
    if nodes[i].group {
        s += &format!("//! +groupName=g{i}.example.com\n//! +versionName=v{i}\n\n");
    }
    s += "use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;\nuse kube::core::TypeMeta;\nuse serde::{Deserialize, Serialize};\n\n";
    for k in 0..nodes[i].kinds {
        s += &format!(
            "/// +genclient\n#[derive(Clone, Debug, Default, Serialize, Deserialize)]\npub struct {} {{\n    #[serde(flatten)]\n    pub types: TypeMeta,\n    pub metadata: ObjectMeta,\n    pub size: i32,\n}}\n\n",
            kind_name(i, k)
        );
    }
    for (c, node) in nodes
        .iter()
        .enumerate()
        .skip(1)
        .filter(|(_, n)| n.parent == i)
    {
        let name = format!("m{c}");
        match node.form {
            Form::Inline => {
                let body = render(nodes, c, &dir.join(&name), file_dir, true, files);
                s += &format!("pub mod {name} {{\n{body}}}\n");
            }
            Form::File => {
                let body = render(nodes, c, &dir.join(&name), dir, false, files);
                files.insert(dir.join(format!("{name}.rs")), body);
                s += &format!("pub mod {name};\n");
            }
            Form::ModRs => {
                let own = dir.join(&name);
                let body = render(nodes, c, &own, &own, false, files);
                files.insert(own.join("mod.rs"), body);
                s += &format!("pub mod {name};\n");
            }
            Form::PathAttr => {
                // Relative to the declaring file's directory, or inside inline modules to
                // the directory their file children would have.
                let base = if inline { dir } else { file_dir };
                let body = render(nodes, c, base, base, false, files);
                files.insert(base.join(format!("p_{name}.rs")), body);
                s += &format!("#[path = \"p_{name}.rs\"]\npub mod {name};\n");
            }
        }
    }
    s
}

/// The node whose group/version a module's kinds belong to: itself or the nearest ancestor
/// with `+groupName`.
fn owner(nodes: &[Node], mut i: usize) -> Option<usize> {
    loop {
        if nodes[i].group {
            return Some(i);
        }
        if i == 0 {
            return None;
        }
        i = nodes[i].parent;
    }
}

fn write_crate(nodes: &[Node]) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("crate");
    let src = dir.join("src");
    let mut files = BTreeMap::new();
    let root = render(nodes, 0, &src, &src, false, &mut files);
    files.insert(src.join("lib.rs"), root);
    for (path, text) in &files {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    (tmp, dir)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(48)))]

    #[test]
    fn every_kind_is_generated_or_reported(nodes in nodes()) {
        let (_tmp, dir) = write_crate(&nodes);
        let mut expected: BTreeMap<usize, Vec<String>> = BTreeMap::new();
        let mut outside = vec![];
        for (i, n) in nodes.iter().enumerate() {
            for k in 0..n.kinds {
                match owner(&nodes, i) {
                    Some(o) => expected.entry(o).or_default().push(kind_name(i, k)),
                    None => outside.push(kind_name(i, k)),
                }
            }
        }
        let groups: Vec<usize> = (0..nodes.len()).filter(|i| nodes[*i].group).collect();
        match Config::new().crate_dir(&dir).emit_rust(false).generate() {
            Ok(generated) => {
                prop_assert!(outside.is_empty(), "kinds outside every group/version went unreported: {outside:?}");
                let mut found: BTreeMap<usize, Vec<String>> = BTreeMap::new();
                for gv in &generated.found {
                    let i: usize = gv.group.trim_start_matches('g').split('.').next().unwrap().parse().unwrap();
                    prop_assert_eq!(&gv.version, &format!("v{i}"));
                    let mut kinds = gv.kinds.clone();
                    kinds.sort();
                    if !kinds.is_empty() {
                        found.insert(i, kinds);
                    }
                }
                for kinds in expected.values_mut() {
                    kinds.sort();
                }
                prop_assert_eq!(&found, &expected);
                // Every group/version without kinds is a warning; nothing else warns.
                let empty = groups.iter().filter(|g| !expected.contains_key(g)).count();
                prop_assert_eq!(generated.warnings.len(), empty, "{:?}", generated.warnings);
                // One CRD per kind.
                let crds = generated.files.iter().filter(|f| f.path.extension().is_some_and(|e| e == "yaml")).count();
                prop_assert_eq!(crds, expected.values().map(Vec::len).sum::<usize>());
            }
            Err(Error::Input { diagnostics, rendered }) => {
                let errors: Vec<_> = diagnostics.iter().filter(|d| d.severity == Severity::Error).collect();
                if groups.is_empty() && outside.is_empty() {
                    // No group/version at all and no kind: the run says so.
                    prop_assert!(rendered.contains("no group/version module found"), "{}", rendered);
                    return Ok(());
                }
                prop_assert!(!outside.is_empty(), "unexpected errors:\n{}", rendered);
                prop_assert_eq!(errors.len(), outside.len(), "{}", rendered);
                for name in &outside {
                    prop_assert!(
                        errors.iter().any(|d| d.message.contains(&format!("kind `{name}` is outside every group/version"))
                            && d.marker.as_deref() == Some("genclient")),
                        "no located error for {}:\n{}", name, rendered
                    );
                }
            }
            Err(other) => prop_assert!(false, "{other:?}"),
        }
    }
}

/// A file no `mod` declaration reaches is not part of the crate: skipped, with a warning,
/// and its kinds are not generated (rustc would not compile them either).
#[test]
fn files_outside_the_module_tree_are_skipped_with_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir_all(src.join("v1")).unwrap();
    std::fs::write(src.join("lib.rs"), "pub mod v1;\n").unwrap();
    std::fs::write(
        src.join("v1/mod.rs"),
        "//! +groupName=g.example.com\n\npub mod types;\n",
    )
    .unwrap();
    let kind = |name: &str| {
        format!(
            "use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;\nuse kube::core::TypeMeta;\n\n/// +genclient\n#[derive(Clone)]\npub struct {name} {{\n    #[serde(flatten)]\n    pub types: TypeMeta,\n    pub metadata: ObjectMeta,\n}}\n"
        )
    };
    std::fs::write(src.join("v1/types.rs"), kind("Declared")).unwrap();
    std::fs::write(src.join("v1/old_types.rs"), kind("Stale")).unwrap();
    let generated = Config::new()
        .crate_dir(tmp.path())
        .emit_rust(false)
        .generate()
        .unwrap();
    assert_eq!(generated.found.len(), 1);
    assert_eq!(generated.found[0].kinds, ["Declared"]);
    assert_eq!(generated.warnings.len(), 1, "{:?}", generated.warnings);
    let w = &generated.warnings[0];
    assert_eq!(w.loc.file, src.join("v1/old_types.rs"));
    assert!(w.message.contains("no `mod` declaration reaches it"), "{w}");
}
