//! +groupName=shapes.kube-codegen.dev

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

use crate::api::common::{Hostname, Selector};

/// Namespaced, status subresource, every verb.
///
/// +genclient
/// +kubebuilder:subresource:status
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Full {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: FullSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<FullStatus>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FullSpec {
    pub name: String,
    #[serde(default)]
    pub items: Vec<Item>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary: Option<Item>,
    #[serde(default)]
    pub by_name: BTreeMap<String, Item>,
    #[serde(default)]
    pub mode: Mode,
    /// A raw identifier field.
    #[serde(default, rename = "type")]
    pub r#type: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Item {
    pub value: i64,
    #[serde(default)]
    pub tags: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Mode {
    #[default]
    Fast,
    Safe,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FullStatus {
    #[serde(default)]
    pub ready: bool,
}

/// Cluster-scoped, no status verbs.
///
/// +genclient
/// +genclient:nonNamespaced
/// +genclient:noStatus
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Cluster {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: Label,
}

/// A newtype, copied through its inner value.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Label(pub String);

/// get, list and watch only.
///
/// +genclient
/// +genclient:readonly
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReadOnly {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: Label,
}

/// A chosen subset, and custom verbs on the scale subresource.
///
/// +genclient
/// +genclient:onlyVerbs=create,get,delete
/// +genclient:method=GetScale,verb=get,subresource=scale,result=k8s.io/api/autoscaling/v1.Scale
/// +genclient:method=UpdateScale,verb=update,subresource=scale,input=k8s.io/api/autoscaling/v1.Scale,result=k8s.io/api/autoscaling/v1.Scale
/// +kubebuilder:subresource:status
/// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Scaled {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: Replicas,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<Replicas>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Replicas {
    #[serde(default)]
    pub replicas: i32,
}

/// Everything but delete and the status verbs.
///
/// +genclient
/// +genclient:skipVerbs=delete,deleteCollection,updateStatus,applyStatus
/// +kubebuilder:subresource:status
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Skipper {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: Replicas,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<Replicas>,
}

/// A typed client with no verbs at all.
///
/// +genclient
/// +genclient:noVerbs
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Silent {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: Replicas,
}

/// A kind without a client: register, deep-copy, informer and lister only.
///
/// +kubebuilder:object:root=true
/// +kubebuilder:resource:scope=Cluster
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NoClient {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: Replicas,
}

/// Rust shapes with Go counterparts: aliases (local, of aliases, of k8s-openapi types,
/// through `use`), newtypes, fixed-size arrays, non-String map keys, serde `into`/`try_from`
/// and a field serialized by custom code.
///
/// +genclient
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Ported {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: PortedSpec,
}

/// A DNS label.
/// +kubebuilder:validation:MaxLength=63
pub type Name = String;

/// A name of another kind.
/// +kubebuilder:validation:MinLength=1
pub type OtherName = Name;

/// String pairs.
pub type Labels = BTreeMap<String, String>;

/// Another name for Item.
pub type Entry = Item;

/// A closed set of strings, as a Go `type Phase string` with an Enum marker.
/// +kubebuilder:validation:Enum=Pending;Running
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Phase(pub String);

/// `v<major>.<minor>` on the wire, as a Go TextMarshaler.
/// +kubebuilder:validation:Pattern=`^v[0-9]+\.[0-9]+$`
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct Version {
    pub major: u32,
    pub minor: u32,
}

impl From<Version> for String {
    fn from(v: Version) -> String {
        format!("v{}.{}", v.major, v.minor)
    }
}

impl TryFrom<String> for Version {
    type Error = String;
    fn try_from(s: String) -> Result<Version, String> {
        let bad = || format!("`{s}` is not v<major>.<minor>");
        let (major, minor) = s
            .strip_prefix('v')
            .and_then(|r| r.split_once('.'))
            .ok_or_else(bad)?;
        Ok(Version {
            major: major.parse().map_err(|_| bad())?,
            minor: minor.parse().map_err(|_| bad())?,
        })
    }
}

/// Bytes as base64, as Go's `[]byte`: serde writes a `Vec<u8>` as numbers.
/// +kubebuilder:validation:Type=string
/// +kubebuilder:validation:Format=byte
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Blob(#[serde(with = "base64")] pub Vec<u8>);

/// base64 through k8s-openapi's ByteString, which writes it.
pub mod base64 {
    use k8s_openapi::ByteString;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(b: &[u8], s: S) -> Result<S::Ok, S::Error> {
        ByteString(b.to_vec()).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        Ok(ByteString::deserialize(d)?.0)
    }
}

/// Whole seconds as `<n>s`.
pub mod seconds {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{}s", d.as_secs()))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let text = String::deserialize(d)?;
        text.strip_suffix('s')
            .and_then(|n| n.parse().ok())
            .map(Duration::from_secs)
            .ok_or_else(|| serde::de::Error::custom(format!("`{text}` is not <n>s")))
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PortedSpec {
    pub name: Name,
    pub other: OtherName,
    pub host: Hostname,
    #[serde(default)]
    pub labels: Labels,
    pub entry: Entry,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<Selector>,
    pub phase: Phase,
    pub fixed: [i32; 3],
    pub blob: Blob,
    pub by_phase: BTreeMap<Phase, i32>,
    pub by_mode: BTreeMap<Mode, Entry>,
    pub by_version: BTreeMap<Version, Name>,
    pub version: Version,
    /// +kubebuilder:validation:Type=string
    /// +kubebuilder:validation:Pattern=`^[0-9]+s$`
    #[serde(with = "seconds")]
    pub timeout: Duration,
}
