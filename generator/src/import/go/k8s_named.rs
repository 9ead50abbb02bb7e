//! Kubernetes' own named types that are not structs (`type ResourceName string`,
//! `type ResourceList map[ResourceName]resource.Quantity`, `type ConditionStatus string`),
//! read from the Go sources of k8s.io/api and k8s.io/apimachinery, so `import go` maps a
//! field of such a type to what its JSON is (a string, a map of quantities) with the
//! type's doc, as controller-gen does, instead of to a k8s-openapi struct that does not
//! exist. The data (`k8s-named-types.json`) is made by [`extract`] from those sources;
//! `tests/tests/k8s_named_types.rs` regenerates it (`KUBE_CODEGEN_BLESS=1`) and fails when
//! the committed file differs from what the pinned sources give.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

use super::parse::{self, GoType, Item};

/// The data file: every named non-struct type of the Kubernetes Go packages, by package.
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Data {
    /// Where the data comes from (module versions), for humans.
    pub source: String,
    /// Import path -> its named types.
    pub packages: BTreeMap<String, Package>,
}

/// The named types of one Go package.
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Package {
    /// Import name -> import path, for the package-qualified names its types use.
    pub imports: BTreeMap<String, String>,
    /// Type name -> what it is.
    pub types: BTreeMap<String, Named>,
}

/// One `type Name <underlying>` declaration.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
pub struct Named {
    /// The underlying type.
    pub ty: Ty,
    /// The doc comment's text lines (markers left out), as controller-gen reads them.
    pub doc: Vec<String>,
}

/// A Go type expression of the few forms Kubernetes' named types take.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Ty {
    /// `Name` or `pkg.Name`.
    Named {
        /// The import name, for a qualified name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pkg: Option<String>,
        /// The type's name.
        name: String,
    },
    /// `*T`.
    Pointer(Box<Ty>),
    /// `[]T`.
    Slice(Box<Ty>),
    /// `[N]T`.
    Array(Box<Ty>),
    /// `map[K]V`.
    Map(Box<Ty>, Box<Ty>),
}

impl Ty {
    /// The form of a parsed type this data keeps, if it is one (structs, interfaces and
    /// functions are not: structs map to k8s-openapi's types, the others have no JSON).
    fn of(t: &GoType) -> Option<Ty> {
        Some(match t {
            GoType::Named { pkg, name, .. } => Ty::Named {
                pkg: pkg.clone(),
                name: name.clone(),
            },
            GoType::Pointer(i) => Ty::Pointer(Box::new(Ty::of(i)?)),
            GoType::Slice(i) => Ty::Slice(Box::new(Ty::of(i)?)),
            GoType::Array(i) => Ty::Array(Box::new(Ty::of(i)?)),
            GoType::Map(k, v) => Ty::Map(Box::new(Ty::of(k)?), Box::new(Ty::of(v)?)),
            GoType::Struct(..) | GoType::Interface { .. } | GoType::Unsupported { .. } => {
                return None;
            }
        })
    }
}

/// The Kubernetes packages' named types, from their Go files: (import path, files as
/// (path, text)). Test files and unexported names are left out.
///
/// # Errors
///
/// A message naming the file that does not parse, or an import name two files of one
/// package give different paths.
pub fn extract(
    source: &str,
    packages: &[(String, Vec<(PathBuf, String)>)],
) -> Result<Data, String> {
    let mut data = Data {
        source: source.to_owned(),
        packages: BTreeMap::new(),
    };
    for (import_path, files) in packages {
        let mut pkg = Package::default();
        for (path, text) in files {
            if path.to_string_lossy().ends_with("_test.go") {
                continue;
            }
            let f = parse::parse(path, text.clone()).map_err(|d| d.to_string())?;
            let mut used = false;
            for item in &f.items {
                let Item::Type(t) = item else { continue };
                if t.generic || !t.name.starts_with(|c: char| c.is_ascii_uppercase()) {
                    continue;
                }
                let Some(ty) = Ty::of(&t.ty) else { continue };
                let doc = t
                    .doc
                    .lines
                    .iter()
                    .filter(|l| !l.trim_start().starts_with('+'))
                    .map(|l| l.strip_prefix(' ').unwrap_or(l).to_owned())
                    .collect::<Vec<_>>();
                pkg.types.insert(t.name.clone(), Named { ty, doc });
                used = true;
            }
            if used {
                for (alias, path) in &f.imports {
                    if let Some(prev) = pkg.imports.insert(alias.clone(), path.clone())
                        && &prev != path
                    {
                        return Err(format!(
                            "{}: import name `{alias}` is `{prev}` in another file of {import_path}",
                            f.path.display()
                        ));
                    }
                }
            }
        }
        if !pkg.types.is_empty() {
            data.packages.insert(import_path.clone(), pkg);
        }
    }
    Ok(data)
}

static DATA: LazyLock<Data> = LazyLock::new(|| {
    serde_json::from_str(include_str!("k8s-named-types.json"))
        .expect("k8s-named-types.json is written by extract and checked by its test")
});

/// The named type `name` of Kubernetes package `import`, if it is a non-struct one.
pub(super) fn lookup(import: &str, name: &str) -> Option<&'static Named> {
    DATA.packages.get(import)?.types.get(name)
}

/// The import path an import name stands for in Kubernetes package `import`.
pub(super) fn import_of(import: &str, alias: &str) -> Option<&'static str> {
    DATA.packages
        .get(import)?
        .imports
        .get(alias)
        .map(String::as_str)
}
