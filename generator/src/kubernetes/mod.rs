//! The Kubernetes version a run generates for (the user's choice, made once), and the
//! per-version data every stage reads: the schemas of Kubernetes' own types ([`schemas`]).

pub mod schemas;

/// The annotation a CRD in a Kubernetes-owned group must carry (KEP-1111).
pub const API_APPROVED: &str = "api-approved.kubernetes.io";

/// The most bytes an object's annotations may hold, keys and values together
/// (apimachinery's `TotalAnnotationSizeLimitB`): `metadata.annotations: Too long` past it.
pub const ANNOTATIONS_LIMIT: usize = 256 << 10;

/// The annotation in which client-side `kubectl apply` keeps the object as applied (its
/// JSON, compact), so that an object is too big for it at [`ANNOTATIONS_LIMIT`].
pub const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// etcd's default `--max-request-bytes` (1.5 MiB): etcd refuses to store a larger object
/// ("etcdserver: request is too large"), kube-apiserver's own request limit notwithstanding.
pub const ETCD_REQUEST_LIMIT: usize = 3 << 19;

/// The largest request body kube-apiserver reads (`MaxRequestBodyBytes`, 3 MiB):
/// "413 Request entity too large" past it.
pub const APISERVER_REQUEST_LIMIT: usize = 3 << 20;

/// Whether the API server treats `group` as Kubernetes-owned (`*.k8s.io`, `*.kubernetes.io`):
/// it refuses a CRD there without the [`API_APPROVED`] annotation.
pub fn is_protected_group(group: &str) -> bool {
    group.ends_with(".k8s.io")
        || group.ends_with(".kubernetes.io")
        || group == "k8s.io"
        || group == "kubernetes.io"
}

use std::fmt;
use std::str::FromStr;

/// A Kubernetes minor version the generator embeds schemas for: every version k8s-openapi
/// (0.29) supports. It decides which k8s-openapi types exist and what their schemas are
/// when a kind embeds one (a `PodTemplateSpec` in a spec); pick the version your crate
/// enables on k8s-openapi (`features = ["v1_35"]`), which is what the generator picks when
/// nothing else says (see [`Config::kubernetes_version`](crate::Config::kubernetes_version)).
///
/// ```
/// use kube_codegen::KubernetesVersion;
/// let v: KubernetesVersion = "1.35".parse().unwrap();
/// assert_eq!(v.k8s_openapi_feature(), "v1_35");
/// assert_eq!("v1_35".parse::<KubernetesVersion>().unwrap(), v);
/// assert_eq!(v.to_string(), "1.35");
/// assert!("1.20".parse::<KubernetesVersion>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum KubernetesVersion {
    /// Kubernetes 1.33.
    V1_33,
    /// Kubernetes 1.34.
    V1_34,
    /// Kubernetes 1.35.
    V1_35,
    /// Kubernetes 1.36.
    V1_36,
    /// Kubernetes 1.37.
    V1_37,
}

impl KubernetesVersion {
    /// Every supported version, oldest first.
    pub const ALL: [KubernetesVersion; 5] = [
        KubernetesVersion::V1_33,
        KubernetesVersion::V1_34,
        KubernetesVersion::V1_35,
        KubernetesVersion::V1_36,
        KubernetesVersion::V1_37,
    ];

    /// The newest supported version: the default when nothing chooses one.
    pub const NEWEST: KubernetesVersion = KubernetesVersion::V1_37;

    /// The minor version (`37` for 1.37).
    #[must_use]
    pub fn minor(self) -> u32 {
        match self {
            KubernetesVersion::V1_33 => 33,
            KubernetesVersion::V1_34 => 34,
            KubernetesVersion::V1_35 => 35,
            KubernetesVersion::V1_36 => 36,
            KubernetesVersion::V1_37 => 37,
        }
    }

    /// The k8s-openapi feature of this version (`v1_37`).
    #[must_use]
    pub fn k8s_openapi_feature(self) -> &'static str {
        match self {
            KubernetesVersion::V1_33 => "v1_33",
            KubernetesVersion::V1_34 => "v1_34",
            KubernetesVersion::V1_35 => "v1_35",
            KubernetesVersion::V1_36 => "v1_36",
            KubernetesVersion::V1_37 => "v1_37",
        }
    }

    fn from_minor(minor: u32) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.minor() == minor)
    }
}

impl Default for KubernetesVersion {
    /// The newest version.
    fn default() -> Self {
        KubernetesVersion::NEWEST
    }
}

impl fmt::Display for KubernetesVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "1.{}", self.minor())
    }
}

/// A version string that names no supported Kubernetes version.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "unsupported Kubernetes version `{0}`: kube-codegen supports {supported} (as `1.35`, `v1.35` or the k8s-openapi feature `v1_35`)",
    supported = supported()
)]
pub struct UnknownKubernetesVersion(pub String);

fn supported() -> String {
    let all: Vec<String> = KubernetesVersion::ALL
        .iter()
        .map(|v| v.to_string())
        .collect();
    all.join(", ")
}

impl FromStr for KubernetesVersion {
    type Err = UnknownKubernetesVersion;

    /// `1.35`, `v1.35`, `1.35.2` (the patch does not matter) or `v1_35`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        let t = t.strip_prefix('v').unwrap_or(t);
        let minor = t
            .strip_prefix("1.")
            .or_else(|| t.strip_prefix("1_"))
            .map(|rest| rest.split('.').next().unwrap_or(rest))
            .and_then(|m| m.parse::<u32>().ok());
        minor
            .and_then(Self::from_minor)
            .ok_or_else(|| UnknownKubernetesVersion(s.to_owned()))
    }
}

impl serde::Serialize for KubernetesVersion {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for KubernetesVersion {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// What chose a run's Kubernetes version, for its summary.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChosenBy {
    /// [`Config::kubernetes_version`](crate::Config::kubernetes_version) (build.rs, or the
    /// CLI's `--kubernetes-version`).
    Config,
    /// `kubernetes-version` in `[package.metadata.kube-codegen]`.
    Metadata,
    /// The crate's k8s-openapi dependency enables this version's feature; the field names
    /// the dependency table (`dependencies`, `dev-dependencies`, ...).
    K8sOpenapiFeature(String),
    /// Nothing chose one: the newest.
    Newest,
}

impl fmt::Display for ChosenBy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChosenBy::Config => f.write_str("set by the caller"),
            ChosenBy::Metadata => {
                f.write_str("kubernetes-version in [package.metadata.kube-codegen]")
            }
            ChosenBy::K8sOpenapiFeature(table) => {
                write!(f, "the k8s-openapi feature in [{table}] of Cargo.toml")
            }
            ChosenBy::Newest => f.write_str(
                "the newest supported; set kubernetes-version or the k8s-openapi feature to choose",
            ),
        }
    }
}

/// The version a crate's manifest enables on its k8s-openapi dependency (`features =
/// ["v1_35"]`, or `latest`), with the table it is in: the user's choice of Kubernetes
/// version, made where k8s-openapi asks for it.
pub(crate) fn k8s_openapi_feature(manifest: &toml::Table) -> Option<(KubernetesVersion, String)> {
    let mut tables: Vec<(String, &toml::Table)> = vec![];
    for name in ["dependencies", "dev-dependencies", "build-dependencies"] {
        if let Some(t) = manifest.get(name).and_then(toml::Value::as_table) {
            tables.push((name.to_owned(), t));
        }
    }
    if let Some(targets) = manifest.get("target").and_then(toml::Value::as_table) {
        for (cfg, t) in targets {
            for name in ["dependencies", "dev-dependencies", "build-dependencies"] {
                if let Some(t) = t.get(name).and_then(toml::Value::as_table) {
                    tables.push((format!("target.{cfg}.{name}"), t));
                }
            }
        }
    }
    for (name, table) in tables {
        let features = table
            .get("k8s-openapi")
            .and_then(|d| d.get("features"))
            .and_then(toml::Value::as_array);
        for f in features
            .into_iter()
            .flatten()
            .filter_map(toml::Value::as_str)
        {
            let v = if f == "latest" {
                Some(KubernetesVersion::NEWEST)
            } else if f.starts_with("v1_") {
                f.parse().ok()
            } else {
                None
            };
            if let Some(v) = v {
                return Some((v, name));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_in_every_spelling() {
        for s in ["1.34", "v1.34", "1.34.7", "v1_34", "1_34"] {
            assert_eq!(
                s.parse::<KubernetesVersion>(),
                Ok(KubernetesVersion::V1_34),
                "{s}"
            );
        }
        for s in ["1.32", "2.0", "latest", "", "1.", "v1_3x"] {
            assert!(s.parse::<KubernetesVersion>().is_err(), "{s}");
        }
        let e = "1.20".parse::<KubernetesVersion>().unwrap_err().to_string();
        assert!(e.contains("1.33, 1.34, 1.35, 1.36, 1.37"), "{e}");
    }

    #[test]
    fn the_k8s_openapi_feature_is_found_in_any_dependency_table() {
        let m: toml::Table = toml::from_str(
            "[dependencies]\nk8s-openapi = { version = \"0.29\", features = [\"schemars\", \"v1_34\"] }",
        )
        .unwrap();
        assert_eq!(
            k8s_openapi_feature(&m),
            Some((KubernetesVersion::V1_34, "dependencies".to_owned()))
        );
        let m: toml::Table = toml::from_str(
            "[target.'cfg(unix)'.dev-dependencies]\nk8s-openapi = { workspace = true, features = [\"latest\"] }",
        )
        .unwrap();
        assert_eq!(
            k8s_openapi_feature(&m).map(|x| x.0),
            Some(KubernetesVersion::NEWEST)
        );
        let m: toml::Table = toml::from_str("[dependencies]\nk8s-openapi = \"0.29\"").unwrap();
        assert_eq!(k8s_openapi_feature(&m), None);
    }

    #[test]
    fn all_is_ordered_and_newest_is_last() {
        assert!(KubernetesVersion::ALL.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(
            KubernetesVersion::ALL.last(),
            Some(&KubernetesVersion::NEWEST)
        );
    }
}
