//! The apiextensions.k8s.io/v1 objects a CRD is written with.
//!
//! The generator keeps its own copy instead of using k8s-openapi's: k8s-openapi builds only
//! with exactly one Kubernetes version feature, which a library must leave to the final
//! binary, and the generator's user picks the Kubernetes version of *their* crate (see
//! docs/src/guide/kubernetes-versions.md). These types are the same in every version k8s-openapi
//! supports; the field names and the JSON they serialize to are k8s-openapi's, so the rest
//! of the CRD generator reads as if it used k8s-openapi. Only what a CRD file carries is
//! here: no status (the generator writes none).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

/// A CustomResourceDefinition as written to a file: `apiVersion`/`kind`, metadata, spec.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct CustomResourceDefinition {
    /// Name, labels and annotations.
    pub metadata: ObjectMeta,
    /// The CRD's spec.
    pub spec: CustomResourceDefinitionSpec,
}

impl Serialize for CustomResourceDefinition {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // k8s-openapi writes apiVersion and kind from the type; so does this.
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Tagged<'a> {
            api_version: &'static str,
            kind: &'static str,
            metadata: &'a ObjectMeta,
            spec: &'a CustomResourceDefinitionSpec,
        }
        Tagged {
            api_version: "apiextensions.k8s.io/v1",
            kind: "CustomResourceDefinition",
            metadata: &self.metadata,
            spec: &self.spec,
        }
        .serialize(serializer)
    }
}

/// The metadata a generated CRD carries.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectMeta {
    /// `<plural>.<group>`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// From `+kubebuilder:metadata:annotations`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
    /// From `+kubebuilder:metadata:labels`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
}

/// `spec` of a CustomResourceDefinition.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceDefinitionSpec {
    /// API group.
    pub group: String,
    /// Kind, plural, singular, short names, categories.
    pub names: CustomResourceDefinitionNames,
    /// `Namespaced` or `Cluster`.
    pub scope: String,
    /// One entry per served version.
    pub versions: Vec<CustomResourceDefinitionVersion>,
    /// How the API server converts between versions: a webhook for kinds whose hub opted
    /// in (`+kube-codegen:conversion=hub`), else absent (`None`: apiVersion rewritten only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conversion: Option<CustomResourceConversion>,
}

/// `spec.conversion`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceConversion {
    /// `None` or `Webhook`.
    pub strategy: String,
    /// Where the webhook is, for `Webhook`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub webhook: Option<WebhookConversion>,
}

/// `spec.conversion.webhook`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhookConversion {
    /// How the API server reaches the webhook.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_config: Option<WebhookClientConfig>,
    /// The ConversionReview versions the webhook speaks (`v1`).
    pub conversion_review_versions: Vec<String>,
}

/// `spec.conversion.webhook.clientConfig`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhookClientConfig {
    /// `https://host:port/path`, for a webhook outside the cluster.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// A Service in the cluster.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service: Option<ServiceReference>,
    /// Base64 of the PEM CA bundle the webhook's serving certificate chains to.
    #[serde(rename = "caBundle", skip_serializing_if = "Option::is_none")]
    pub ca_bundle: Option<String>,
}

/// `clientConfig.service`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServiceReference {
    /// The Service's namespace.
    pub namespace: String,
    /// The Service's name.
    pub name: String,
    /// URL path of the webhook.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The Service port (443 when absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<i32>,
}

/// `spec.names`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceDefinitionNames {
    /// `+kubebuilder:resource:categories`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub categories: Option<Vec<String>>,
    /// The kind.
    pub kind: String,
    /// `<Kind>List`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub list_kind: Option<String>,
    /// The plural resource name.
    pub plural: String,
    /// `+kubebuilder:resource:shortName`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub short_names: Option<Vec<String>>,
    /// The singular resource name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub singular: Option<String>,
}

/// One entry of `spec.versions`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceDefinitionVersion {
    /// `+kubebuilder:printcolumn`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub additional_printer_columns: Option<Vec<CustomResourceColumnDefinition>>,
    /// `+kubebuilder:deprecatedversion`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deprecated: Option<bool>,
    /// `+kubebuilder:deprecatedversion:warning`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deprecation_warning: Option<String>,
    /// The version name (`v1alpha1`).
    pub name: String,
    /// The structural schema.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema: Option<CustomResourceValidation>,
    /// `+kubebuilder:selectablefield`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selectable_fields: Option<Vec<SelectableField>>,
    /// Served by the API server.
    pub served: bool,
    /// The storage version.
    pub storage: bool,
    /// status and scale subresources.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subresources: Option<CustomResourceSubresources>,
}

/// `+kubebuilder:printcolumn`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceColumnDefinition {
    /// Column description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// OpenAPI format of the column.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// JSONPath of the value.
    pub json_path: String,
    /// Column header.
    pub name: String,
    /// 0 shows in the standard view; higher only with `-o wide`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<i32>,
    /// OpenAPI type of the column.
    #[serde(rename = "type")]
    pub type_: String,
}

/// `+kubebuilder:subresource:scale`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceSubresourceScale {
    /// JSON path of the label selector in status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label_selector_path: Option<String>,
    /// JSON path of the desired replicas.
    pub spec_replicas_path: String,
    /// JSON path of the observed replicas.
    pub status_replicas_path: String,
}

/// `+kubebuilder:subresource:status`: an empty object switches it on.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CustomResourceSubresourceStatus(pub Value);

/// `subresources` of a version.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceSubresources {
    /// The scale subresource.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scale: Option<CustomResourceSubresourceScale>,
    /// The status subresource.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<CustomResourceSubresourceStatus>,
}

/// `schema` of a version.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceValidation {
    /// The root schema.
    #[serde(rename = "openAPIV3Schema", skip_serializing_if = "Option::is_none")]
    pub open_api_v3_schema: Option<JSONSchemaProps>,
}

/// `+kubebuilder:selectablefield`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SelectableField {
    /// JSON path of the field.
    pub json_path: String,
}

/// `externalDocs` of a schema.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExternalDocumentation {
    /// Text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Link.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// Any JSON value (defaults, examples, enum values).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
#[allow(clippy::upper_case_acronyms)] // k8s-openapi's (and Kubernetes') name
pub struct JSON(pub Value);

/// A schema or a list of schemas (`items`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[allow(clippy::upper_case_acronyms)]
pub enum JSONSchemaPropsOrArray {
    /// A schema per position (tried first: a derived struct would also accept an array).
    Schemas(Vec<JSONSchemaProps>),
    /// One schema for every item.
    Schema(Box<JSONSchemaProps>),
}

/// A schema or a boolean (`additionalProperties`, `additionalItems`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[allow(clippy::upper_case_acronyms)]
pub enum JSONSchemaPropsOrBool {
    /// `true` or `false`.
    Bool(bool),
    /// A schema.
    Schema(Box<JSONSchemaProps>),
}

/// A schema or a list of property names (`dependencies`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[allow(clippy::upper_case_acronyms)]
pub enum JSONSchemaPropsOrStringArray {
    /// Required property names.
    Strings(Vec<String>),
    /// A schema.
    Schema(Box<JSONSchemaProps>),
}

/// One `x-kubernetes-validations` rule.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ValidationRule {
    /// Field path reported with a failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field_path: Option<String>,
    /// Failure message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// CEL expression producing the failure message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_expression: Option<String>,
    /// Evaluate on create too, with `oldSelf` absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub optional_old_self: Option<bool>,
    /// Machine-readable failure reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The CEL expression.
    pub rule: String,
}

/// Schemas by name (`properties`, `patternProperties`, `definitions`), each boxed: a
/// B-tree node holds eleven values inline, and a schema is some 860 bytes, so an object
/// of two properties cost a 10 KB node unboxed (most of a 1000-kind run's memory).
pub type SchemaMap = BTreeMap<String, Box<JSONSchemaProps>>;

/// An OpenAPI v3 schema as apiextensions.k8s.io/v1 restricts it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(clippy::upper_case_acronyms)]
pub struct JSONSchemaProps {
    /// `$ref` (not allowed in CRDs; kept for completeness).
    #[serde(rename = "$ref", skip_serializing_if = "Option::is_none")]
    pub ref_path: Option<String>,
    /// `$schema`.
    #[serde(rename = "$schema", skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// `additionalItems`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub additional_items: Option<JSONSchemaPropsOrBool>,
    /// `additionalProperties`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub additional_properties: Option<JSONSchemaPropsOrBool>,
    /// `allOf`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub all_of: Option<Vec<JSONSchemaProps>>,
    /// `anyOf`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub any_of: Option<Vec<JSONSchemaProps>>,
    /// `default`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<JSON>,
    /// `definitions`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub definitions: Option<SchemaMap>,
    /// `dependencies`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dependencies: Option<BTreeMap<String, JSONSchemaPropsOrStringArray>>,
    /// `description`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `enum`.
    #[serde(rename = "enum", skip_serializing_if = "Option::is_none")]
    pub enum_: Option<Vec<JSON>>,
    /// `example`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub example: Option<JSON>,
    /// `exclusiveMaximum`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exclusive_maximum: Option<bool>,
    /// `exclusiveMinimum`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exclusive_minimum: Option<bool>,
    /// `externalDocs`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub external_docs: Option<ExternalDocumentation>,
    /// `format`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// `id`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// `items`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items: Option<JSONSchemaPropsOrArray>,
    /// `maxItems`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_items: Option<i64>,
    /// `maxLength`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_length: Option<i64>,
    /// `maxProperties`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_properties: Option<i64>,
    /// `maximum`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub maximum: Option<f64>,
    /// `minItems`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_items: Option<i64>,
    /// `minLength`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_length: Option<i64>,
    /// `minProperties`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_properties: Option<i64>,
    /// `minimum`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub minimum: Option<f64>,
    /// `multipleOf`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub multiple_of: Option<f64>,
    /// `not`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not: Option<Box<JSONSchemaProps>>,
    /// `nullable`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nullable: Option<bool>,
    /// `oneOf`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub one_of: Option<Vec<JSONSchemaProps>>,
    /// `pattern`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// `patternProperties`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pattern_properties: Option<SchemaMap>,
    /// `properties`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub properties: Option<SchemaMap>,
    /// `required`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub required: Option<Vec<String>>,
    /// `title`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// `type`.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// `uniqueItems`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unique_items: Option<bool>,
    /// `x-kubernetes-embedded-resource`.
    #[serde(
        rename = "x-kubernetes-embedded-resource",
        skip_serializing_if = "Option::is_none"
    )]
    pub x_kubernetes_embedded_resource: Option<bool>,
    /// `x-kubernetes-int-or-string`.
    #[serde(
        rename = "x-kubernetes-int-or-string",
        skip_serializing_if = "Option::is_none"
    )]
    pub x_kubernetes_int_or_string: Option<bool>,
    /// `x-kubernetes-list-map-keys`.
    #[serde(
        rename = "x-kubernetes-list-map-keys",
        skip_serializing_if = "Option::is_none"
    )]
    pub x_kubernetes_list_map_keys: Option<Vec<String>>,
    /// `x-kubernetes-list-type`.
    #[serde(
        rename = "x-kubernetes-list-type",
        skip_serializing_if = "Option::is_none"
    )]
    pub x_kubernetes_list_type: Option<String>,
    /// `x-kubernetes-map-type`.
    #[serde(
        rename = "x-kubernetes-map-type",
        skip_serializing_if = "Option::is_none"
    )]
    pub x_kubernetes_map_type: Option<String>,
    /// `x-kubernetes-preserve-unknown-fields`.
    #[serde(
        rename = "x-kubernetes-preserve-unknown-fields",
        skip_serializing_if = "Option::is_none"
    )]
    pub x_kubernetes_preserve_unknown_fields: Option<bool>,
    /// `x-kubernetes-validations`.
    #[serde(
        rename = "x-kubernetes-validations",
        skip_serializing_if = "Option::is_none"
    )]
    pub x_kubernetes_validations: Option<Vec<ValidationRule>>,
}

impl JSONSchemaProps {
    /// The schemas directly below this one, in every keyword that holds one.
    pub fn children(&self) -> impl Iterator<Item = &JSONSchemaProps> {
        fn or_bool(v: &Option<JSONSchemaPropsOrBool>) -> Option<&JSONSchemaProps> {
            match v {
                Some(JSONSchemaPropsOrBool::Schema(s)) => Some(s),
                _ => None,
            }
        }
        let items: &[JSONSchemaProps] = match &self.items {
            Some(JSONSchemaPropsOrArray::Schema(s)) => std::slice::from_ref(&**s),
            Some(JSONSchemaPropsOrArray::Schemas(v)) => v,
            None => &[],
        };
        let dependencies = self
            .dependencies
            .iter()
            .flatten()
            .filter_map(|(_, d)| match d {
                JSONSchemaPropsOrStringArray::Schema(s) => Some(&**s),
                JSONSchemaPropsOrStringArray::Strings(_) => None,
            });
        [
            &self.properties,
            &self.pattern_properties,
            &self.definitions,
        ]
        .into_iter()
        .flatten()
        .flat_map(BTreeMap::values)
        .map(|s| &**s)
        .chain(items)
        .chain(or_bool(&self.additional_properties))
        .chain(or_bool(&self.additional_items))
        .chain(
            [&self.all_of, &self.any_of, &self.one_of]
                .into_iter()
                .flatten()
                .flatten(),
        )
        .chain(self.not.as_deref())
        .chain(dependencies)
    }

    /// Whether `f` holds for this schema or any below it (walked without recursion: schemas
    /// nest as deep as the types they come from).
    pub fn any_node(&self, mut f: impl FnMut(&JSONSchemaProps) -> bool) -> bool {
        let mut stack = vec![self];
        while let Some(s) = stack.pop() {
            if f(s) {
                return true;
            }
            stack.extend(s.children());
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_round_trip_with_kubernetes_names() {
        let json = serde_json::json!({
            "type": "object",
            "enum": ["a"],
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            "additionalProperties": false,
            "items": {"type": "string"},
            "x-kubernetes-validations": [{"rule": "self.x > 0", "optionalOldSelf": true}],
            "properties": {"a": {"additionalProperties": {"type": "integer"}}},
        });
        let s: JSONSchemaProps = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(s.type_.as_deref(), Some("object"));
        assert_eq!(
            s.additional_properties,
            Some(JSONSchemaPropsOrBool::Bool(false))
        );
        assert!(matches!(s.items, Some(JSONSchemaPropsOrArray::Schema(_))));
        assert_eq!(serde_json::to_value(&s).unwrap(), json);
    }

    #[test]
    fn any_node_reaches_every_keyword_that_holds_a_schema() {
        let leaf = || JSONSchemaProps {
            default: Some(JSON(Value::from(1))),
            ..Default::default()
        };
        let holders: Vec<JSONSchemaProps> = vec![
            JSONSchemaProps {
                properties: Some([("a".to_owned(), Box::new(leaf()))].into()),
                ..Default::default()
            },
            JSONSchemaProps {
                items: Some(JSONSchemaPropsOrArray::Schema(Box::new(leaf()))),
                ..Default::default()
            },
            JSONSchemaProps {
                items: Some(JSONSchemaPropsOrArray::Schemas(vec![
                    JSONSchemaProps::default(),
                    leaf(),
                ])),
                ..Default::default()
            },
            JSONSchemaProps {
                additional_properties: Some(JSONSchemaPropsOrBool::Schema(Box::new(leaf()))),
                ..Default::default()
            },
            JSONSchemaProps {
                any_of: Some(vec![leaf()]),
                ..Default::default()
            },
            JSONSchemaProps {
                not: Some(Box::new(leaf())),
                ..Default::default()
            },
            JSONSchemaProps {
                dependencies: Some(
                    [(
                        "d".to_owned(),
                        JSONSchemaPropsOrStringArray::Schema(Box::new(leaf())),
                    )]
                    .into(),
                ),
                ..Default::default()
            },
        ];
        for h in &holders {
            assert!(h.any_node(|s| s.default.is_some()), "{h:?}");
            // Two levels down, through the same keyword.
            let outer = JSONSchemaProps {
                all_of: Some(vec![h.clone()]),
                ..Default::default()
            };
            assert!(outer.any_node(|s| s.default.is_some()));
        }
        assert!(
            !JSONSchemaProps {
                properties: Some([("a".to_owned(), Box::default())].into()),
                additional_properties: Some(JSONSchemaPropsOrBool::Bool(true)),
                ..Default::default()
            }
            .any_node(|s| s.default.is_some())
        );
    }

    #[test]
    fn a_crd_writes_its_api_version_and_kind() {
        let v = serde_json::to_value(CustomResourceDefinition::default()).unwrap();
        assert_eq!(v["apiVersion"], "apiextensions.k8s.io/v1");
        assert_eq!(v["kind"], "CustomResourceDefinition");
    }
}
