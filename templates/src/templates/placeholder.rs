//! The kind every template is written against. Renderers replace `PlaceholderKind` with
//! the real kind's path and rename identifiers that contain it (`PlaceholderKindClient`).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PlaceholderKind {
    #[serde(flatten)]
    pub types: kube::core::TypeMeta,
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: serde_json::Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<serde_json::Value>,
}

impl kube::Resource for PlaceholderKind {
    type DynamicType = ();
    type Scope = kube::core::NamespaceResourceScope;

    fn kind(_: &()) -> std::borrow::Cow<'_, str> {
        "PlaceholderKind".into()
    }
    fn group(_: &()) -> std::borrow::Cow<'_, str> {
        "placeholder.example.com".into()
    }
    fn version(_: &()) -> std::borrow::Cow<'_, str> {
        "v1".into()
    }
    fn plural(_: &()) -> std::borrow::Cow<'_, str> {
        "placeholderkinds".into()
    }
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

/// What the generated `PlaceholderKindApplyConfiguration` offers the typed client.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PlaceholderKindApplyConfiguration {
    #[serde(
        rename = "apiVersion",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub api_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<kube_codegen_runtime::apply::ObjectMetaApplyConfiguration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<serde_json::Value>,
}

impl PlaceholderKindApplyConfiguration {
    pub fn new(name: &str, namespace: &str) -> Self {
        PlaceholderKindApplyConfiguration {
            api_version: Some("placeholder.example.com/v1".into()),
            kind: Some("PlaceholderKind".into()),
            metadata: Some(
                kube_codegen_runtime::apply::ObjectMetaApplyConfiguration::named(name)
                    .with_namespace(namespace),
            ),
            ..Default::default()
        }
    }

    pub fn name(&self) -> Option<&str> {
        self.metadata.as_ref()?.name.as_deref()
    }
}
