//! OpenAPI v3 structural schemas for kinds, from the model and its markers (what resolve
//! builds the CRDs from).
//!
//! Rules that keep every schema *structural* (what apiextensions.k8s.io/v1 demands):
//! every node has a `type` (or int-or-string / preserve-unknown-fields), no `$ref`,
//! and `oneOf`/`anyOf` carry only `required` lists or the int-or-string pair.

mod embedded;
pub mod kube_derive;
pub(crate) mod marker_keywords;

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use crate::apiext::{
    JSON, JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool, SchemaMap, ValidationRule,
};
use serde_json::Value;

use crate::diagnostics::{Diagnostic, Location};
use crate::markers::{Marker, Name};
use crate::model::*;

use embedded::drop_uncorrelatable_k8s_rules;
use marker_keywords::{apply_markers, apply_schema_patches};

/// Options that change schema text.
#[derive(Clone, Debug, Default)]
pub struct SchemaOptions {
    /// Cut descriptions to at most this many characters.
    pub max_description_len: Option<usize>,
    /// Where the API server reaches the conversion webhook of kinds that opted into
    /// conversion (`+kube-codegen:conversion=hub`).
    pub conversion_webhook: Option<ConversionWebhook>,
    /// Where the conversion webhook's `caBundle` comes from.
    pub ca: CaSource,
    /// Write an embedded `ObjectMeta` (a pod template's `metadata`) with the fields a CRD
    /// may validate, as controller-gen's `crd:generateEmbeddedObjectMeta=true` does, instead
    /// of a bare object (a kind's own `metadata` stays the API server's).
    pub generate_embedded_object_meta: bool,
    /// Refuse floats, as controller-gen does without `crd:allowDangerousTypes=true`.
    pub refuse_floats: bool,
}

/// How the API server reaches a conversion webhook (`clientConfig`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConversionWebhook {
    /// A Service in the cluster.
    Service {
        /// The Service's namespace.
        namespace: String,
        /// The Service's name.
        name: String,
        /// The URL path (default `/convert`, controller-runtime's).
        path: Option<String>,
        /// The Service port (default 443).
        port: Option<i32>,
    },
    /// An `https://` URL.
    Url(String),
}

/// controller-gen's pattern for resource.Quantity.
pub const QUANTITY_PATTERN: &str = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$";

/// The keywords of a struct inlined into `object` beyond its properties, required fields and
/// rules (Trust Manager's `MinProperties=0` on its inlined `PKCS12`): controller-gen's
/// flattener copies each one the object does not set itself.
fn take_inlined_keywords(object: &mut JSONSchemaProps, inlined: JSONSchemaProps) {
    let (Ok(serde_json::Value::Object(mut base)), Ok(serde_json::Value::Object(extra))) = (
        serde_json::to_value(&*object),
        serde_json::to_value(&inlined),
    ) else {
        return;
    };
    let mut changed = false;
    for (k, v) in extra {
        if k != "description" && !base.contains_key(&k) {
            base.insert(k, v);
            changed = true;
        }
    }
    if changed && let Ok(merged) = serde_json::from_value(serde_json::Value::Object(base)) {
        *object = merged;
    }
}

/// The properties of an object being built: its own fields', and those its inlined
/// (flattened) structs bring, merged at the end.
struct Props<'a> {
    own: &'a mut SchemaMap,
    inlined: &'a mut SchemaMap,
}

/// The property of an object's own field over one of the same name from an inlined struct,
/// as controller-gen's allOf flattening merges them: the inlined one first (its description
/// stays), the own field's keywords filling in what it lacks.
fn merge_shadowed(inlined: JSONSchemaProps, own: JSONSchemaProps) -> JSONSchemaProps {
    let (Ok(serde_json::Value::Object(mut base)), Ok(serde_json::Value::Object(over))) =
        (serde_json::to_value(&inlined), serde_json::to_value(&own))
    else {
        return inlined;
    };
    for (k, v) in over {
        if k != "description" {
            base.entry(k).or_insert(v);
        }
    }
    serde_json::from_value(serde_json::Value::Object(base)).unwrap_or(inlined)
}

pub(super) fn typed(t: &str) -> JSONSchemaProps {
    JSONSchemaProps {
        type_: Some(t.to_owned()),
        ..Default::default()
    }
}

pub(super) fn int_or_string() -> JSONSchemaProps {
    JSONSchemaProps {
        any_of: Some(vec![typed("integer"), typed("string")]),
        x_kubernetes_int_or_string: Some(true),
        ..Default::default()
    }
}

/// Builds schemas for one package (the package's default optionality applies).
pub struct SchemaBuilder<'a> {
    pub(super) api: &'a Api,
    pub(super) options: &'a SchemaOptions,
    default_optional: Option<(bool, Location)>,
    /// Types being expanded, to catch recursion.
    stack: Vec<String>,
    /// A type could not be resolved (already reported), so the schema is incomplete.
    pub unresolved: bool,
    /// Kubernetes' transition rules left out of the kind's schema (path, rule): they sit
    /// where the API server cannot correlate old and new values, and refuses them.
    pub dropped_rules: Vec<(String, String)>,
    /// Every error of the schemas built, beside the first (a builder goes on past an
    /// error to the next marker, field or variant, so one run reports them all), and the
    /// warnings (see `apply_markers`).
    pub found: Vec<Diagnostic>,
}

impl<'a> SchemaBuilder<'a> {
    pub fn new(api: &'a Api, package: &Package, options: &'a SchemaOptions) -> Self {
        SchemaBuilder {
            api,
            options,
            default_optional: package.default_optional.clone(),
            stack: vec![],
            unresolved: false,
            dropped_rules: vec![],
            found: vec![],
        }
    }

    /// A doc comment as a description (cut to `max_description_len` on the whole schema,
    /// by [`truncate_descriptions`]).
    pub(super) fn describe(&self, doc: &str) -> Option<String> {
        let doc = crate::read::doc_conventions(doc);
        // Spaces that start the first line stay, as controller-gen keeps them.
        let doc = doc.trim_end().trim_start_matches(['\n', '\r']);
        (!doc.trim().is_empty()).then(|| doc.to_owned())
    }

    /// The full schema of a kind: apiVersion, kind, metadata, then its own fields; `None`
    /// when it has an error, every one of them in [`SchemaBuilder::found`].
    pub fn kind_schema(&mut self, kind: &Kind) -> Option<JSONSchemaProps> {
        let schema = self.kind_schema_or_first_error(kind);
        match schema {
            Ok(_) if self.found.iter().any(Diagnostic::is_error) => None,
            Ok(schema) => Some(schema),
            Err(d) => {
                self.found.push(d);
                None
            }
        }
    }

    /// `apiVersion` and `kind`, as a kind has them and any struct inlining Go's
    /// `metav1.TypeMeta` (prometheus-operator's `EmbeddedPersistentVolumeClaim`).
    fn type_meta_properties(&self) -> [(String, Box<JSONSchemaProps>); 2] {
        [
            (
                "apiVersion".into(),
                Box::new(JSONSchemaProps {
                    description: self.describe("APIVersion defines the versioned schema of this representation of an object.\nServers should convert recognized schemas to the latest internal value, and\nmay reject unrecognized values.\nMore info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"),
                    ..typed("string")
                }),
            ),
            (
                "kind".into(),
                Box::new(JSONSchemaProps {
                    description: self.describe("Kind is a string value representing the REST resource this object represents.\nServers may infer this from the endpoint the client submits requests to.\nCannot be updated.\nIn CamelCase.\nMore info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"),
                    ..typed("string")
                }),
            ),
        ]
    }

    fn kind_schema_or_first_error(&mut self, kind: &Kind) -> Result<JSONSchemaProps, Diagnostic> {
        let mut schema = self.decl_schema(&kind.type_key, &kind.loc)?;
        let type_meta = self.type_meta_properties();
        let props = schema.properties.get_or_insert_with(BTreeMap::new);
        props.extend(type_meta);
        // The apiserver owns metadata's schema; a CRD may only say it is an object.
        props.insert("metadata".into(), Box::new(typed("object")));
        // Required only when marked so (Go's `json:"metadata"` without omitempty, which
        // controller-gen requires, as Contour's and cluster-api's kinds have it): Rust's
        // `metadata: ObjectMeta` without a default is how every kind is written.
        let metadata_marked_required = match self.api.types.get(&kind.type_key).map(|d| &d.shape) {
            Some(Shape::Struct(fields)) => fields.iter().any(|f| {
                f.json_name == "metadata"
                    && f.markers.iter().any(|m| {
                        matches!(
                            m.name,
                            Name::Required | Name::ValidationRequired | Name::K8sRequired
                        )
                    })
            }),
            _ => false,
        };
        if let Some(req) = &mut schema.required {
            req.retain(|r| r != "metadata" || metadata_marked_required);
            if req.is_empty() {
                schema.required = None;
            }
        }
        drop_uncorrelatable_k8s_rules(
            &mut schema,
            true,
            &mut String::new(),
            &mut self.dropped_rules,
        );
        // The kind's own patch again, now that apiVersion, kind and metadata are in: it may
        // change those too (a merge patch applied twice is applied once).
        if let Some(decl) = self.api.types.get(&kind.type_key) {
            apply_schema_patches(&mut schema, &decl.markers)?;
        }
        // controller-gen cuts every description of the finished schema, Kubernetes' own
        // embedded types' included.
        if let Some(n) = self.options.max_description_len {
            truncate_descriptions(&mut schema, n);
        }
        Ok(schema)
    }

    fn decl_schema(
        &mut self,
        key: &str,
        used_at: &Location,
    ) -> Result<JSONSchemaProps, Diagnostic> {
        let Some(decl) = self.api.types.get(key) else {
            // Resolving the type failed and was reported; go on to find other problems.
            self.unresolved = true;
            return Ok(JSONSchemaProps {
                x_kubernetes_preserve_unknown_fields: Some(true),
                ..Default::default()
            });
        };
        if self.stack.iter().any(|k| k == key) {
            return Err(Diagnostic::new(used_at.clone(), format!("type `{}` contains itself", decl.name))
                .with_hint("structural schemas cannot be recursive; use serde_json::Value with +kubebuilder:validation:XPreserveUnknownFields for open-ended nesting"));
        }
        self.stack.push(key.to_owned());
        let result = self.decl_schema_inner(decl);
        self.stack.pop();
        let (mut schema, embedded_rules) = result?;
        // An alias or newtype is the port of a Go named type (`type Endpoint Target`), whose
        // own doc wins over its underlying type's in controller-gen.
        let named = matches!(decl.shape, Shape::Alias(_) | Shape::Newtype(_));
        if let Some(doc) = self.describe(&decl.doc)
            && (named || schema.description.is_none())
        {
            schema.description = Some(doc);
        }
        apply_markers(&mut schema, &decl.markers, &mut self.found);
        // controller-gen's flattener puts the rules of inline-embedded structs after the
        // embedding struct's own (pkg/crd/flatten.go, measured against it in the import_go
        // shapes fixture).
        if !embedded_rules.is_empty() {
            schema
                .x_kubernetes_validations
                .get_or_insert_with(Vec::new)
                .extend(embedded_rules);
        }
        apply_schema_patches(&mut schema, &decl.markers)?;
        Ok(schema)
    }

    /// The schema of a declaration before its own markers, and the CEL rules of the
    /// structs it embeds inline (which go after its own).
    fn decl_schema_inner(
        &mut self,
        decl: &TypeDecl,
    ) -> Result<(JSONSchemaProps, Vec<ValidationRule>), Diagnostic> {
        match &decl.shape {
            Shape::Newtype(inner) | Shape::Alias(inner) | Shape::Wire(inner) => {
                Ok((self.ref_schema(inner, &decl.loc)?, vec![]))
            }
            Shape::Struct(fields) if decl.serde.transparent => {
                let f = fields.iter().find(|f| !f.skip).ok_or_else(|| {
                    Diagnostic::new(decl.loc.clone(), "transparent struct without a field")
                })?;
                Ok((self.field_schema(f)?, vec![]))
            }
            Shape::Struct(fields) => self.object_schema_parts(fields),
            Shape::Enum(variants) => Ok((self.enum_schema(decl, variants)?, vec![])),
        }
    }

    /// Whether the schema requires the field, by the rules in the book (docs/src/guide/api-types.md, "Required and optional fields").
    fn is_required(&self, f: &Field) -> Result<bool, Diagnostic> {
        let explicit_required = f.markers.iter().find(|m| {
            matches!(
                m.name,
                Name::Required | Name::ValidationRequired | Name::K8sRequired
            )
        });
        let explicit_optional = f.markers.iter().find(|m| {
            matches!(
                m.name,
                Name::Optional | Name::ValidationOptional | Name::K8sOptional
            )
        });
        let can_be_absent = f.ty.is_option() || f.has_default;
        match (explicit_required, explicit_optional) {
            (Some(r), Some(_)) => Err(r.error(format!("field `{}` is marked both required and optional", f.rust_name)).with_hint("keep one of the two markers")),
            (Some(_), None) => Ok(true),
            (None, Some(o)) if !can_be_absent => Err(o
                .error(format!("field `{}` is marked optional, but a missing value cannot deserialize into its Rust type", f.rust_name))
                .with_hint("make it `Option<T>`, add `#[serde(default)]`, or drop the marker")),
            (None, Some(_)) => Ok(false),
            (None, None) => match &self.default_optional {
                Some((true, at)) if !can_be_absent => Err(Diagnostic::new(f.loc.clone(), format!(
                    "field `{}` cannot be absent, but the package default (`+kubebuilder:validation:Optional` at {at}) makes it optional",
                    f.rust_name
                ))
                .with_hint("mark the field `+required`, or make it `Option<T>` / `#[serde(default)]`")),
                Some((true, _)) => Ok(false),
                _ => Ok(!can_be_absent && !f.skip_serializing_if),
            },
        }
    }

    /// An object's schema with the CEL rules of its inline-embedded structs in it.
    fn object_schema(&mut self, fields: &[Field]) -> Result<JSONSchemaProps, Diagnostic> {
        let (mut schema, embedded_rules) = self.object_schema_parts(fields)?;
        if !embedded_rules.is_empty() {
            schema
                .x_kubernetes_validations
                .get_or_insert_with(Vec::new)
                .extend(embedded_rules);
        }
        Ok(schema)
    }

    /// An object's schema, and apart the CEL rules of the structs it embeds inline
    /// (`#[serde(flatten)]`, Go's `json:",inline"`): a flattened struct's properties merge
    /// into the object, and so do its rules, which see the same `self`.
    fn object_schema_parts(
        &mut self,
        fields: &[Field],
    ) -> Result<(JSONSchemaProps, Vec<ValidationRule>), Diagnostic> {
        let mut embedded_rules = vec![];
        let mut schema = typed("object");
        let mut properties = BTreeMap::new();
        let mut inlined = BTreeMap::new();
        let mut required = vec![];
        for f in fields.iter().filter(|f| !f.skip) {
            // A field in error is left out, and the others go on.
            let field = self.object_field(
                f,
                &mut schema,
                Props {
                    own: &mut properties,
                    inlined: &mut inlined,
                },
                &mut required,
                &mut embedded_rules,
            );
            if let Err(d) = field {
                self.found.push(d);
            }
        }
        // A field of the object and one of a struct it inlines, of one JSON name (Go's
        // shadowing, as prometheus-operator's ProbeSpec.Authorization over its inlined
        // HTTPConfig's): one property, their schemas merged as controller-gen merges them.
        for (k, v) in inlined {
            let merged = match properties.remove(&k) {
                Some(own) => Box::new(merge_shadowed(*v, *own)),
                None => v,
            };
            properties.insert(k, merged);
        }
        // An optional `+k8s:immutable` field could be unset, which its own rule cannot see:
        // controller-gen adds this rule to the parent.
        for f in fields.iter().filter(|f| !f.skip && !f.flatten) {
            if f.markers.iter().any(|m| m.name == Name::K8sImmutable)
                && !required.contains(&f.json_name)
            {
                let name = &f.json_name;
                schema
                    .x_kubernetes_validations
                    .get_or_insert_with(Vec::new)
                    .push(ValidationRule {
                        rule: format!("!has(oldSelf.{name}) || has(self.{name})"),
                        message: Some(format!("field {name} is immutable once set")),
                        ..Default::default()
                    });
            }
        }
        // controller-gen writes no `properties` for a struct without fields.
        schema.properties = (!properties.is_empty()).then_some(properties);
        if !required.is_empty() {
            required.sort();
            required.dedup();
            schema.required = Some(required);
        }
        Ok((schema, embedded_rules))
    }

    /// One field of an object: its property (or, flattened, the properties it brings) and
    /// whether it is required.
    fn object_field(
        &mut self,
        f: &Field,
        object: &mut JSONSchemaProps,
        props: Props<'_>,
        required: &mut Vec<String>,
        embedded_rules: &mut Vec<ValidationRule>,
    ) -> Result<(), Diagnostic> {
        if f.flatten {
            let properties = props.inlined;
            match f.ty.unalias() {
                TypeRef::TypeMeta => {
                    properties.extend(self.type_meta_properties());
                }
                // A struct of the crate, or of k8s-openapi (Go's inlined `metav1.Condition`).
                t @ (TypeRef::Local(_) | TypeRef::K8s(_)) => {
                    let (mut inner, is_struct) = match t {
                        TypeRef::Local(key) => (
                            self.decl_schema(key, &f.loc)?,
                            matches!(self.api.types[key].shape, Shape::Struct(_)),
                        ),
                        TypeRef::K8s(path) => (self.k8s_schema(path, &f.loc)?, false),
                        _ => unreachable!("matched above"),
                    };
                    embedded_rules
                        .extend(inner.x_kubernetes_validations.take().unwrap_or_default());
                    // A struct without fields has no `properties` (as controller-gen writes
                    // it) and flattens to nothing; an object of any other kind does not
                    // flatten.
                    if inner.type_.as_deref() != Some("object")
                        || (inner.properties.is_none() && !is_struct)
                    {
                        return Err(Diagnostic::new(
                            f.loc.clone(),
                            format!(
                                "cannot flatten `{}`: it is not a struct with fields",
                                f.rust_name
                            ),
                        ));
                    }
                    for (k, v) in inner.properties.take().unwrap_or_default() {
                        if properties.insert(k.clone(), v).is_some() {
                            return Err(Diagnostic::new(
                                f.loc.clone(),
                                format!("flattened field `{}` repeats property `{k}`", f.rust_name),
                            ));
                        }
                    }
                    let inner_required = inner.required.take().unwrap_or_default();
                    take_inlined_keywords(object, inner);
                    if f.ty.is_option() || f.has_default {
                        return Ok(());
                    }
                    required.extend(inner_required);
                }
                TypeRef::Map(_) | TypeRef::Json => {
                    object.x_kubernetes_preserve_unknown_fields = Some(true)
                }
                TypeRef::Option(inner)
                    if matches!(**inner, TypeRef::Local(_) | TypeRef::K8s(_)) =>
                {
                    let mut inner = match &**inner {
                        TypeRef::Local(key) => self.decl_schema(key, &f.loc)?,
                        TypeRef::K8s(path) => self.k8s_schema(path, &f.loc)?,
                        _ => unreachable!("matched above"),
                    };
                    embedded_rules
                        .extend(inner.x_kubernetes_validations.take().unwrap_or_default());
                    properties.extend(inner.properties.unwrap_or_default());
                }
                _ => {
                    return Err(Diagnostic::new(
                        f.loc.clone(),
                        format!("cannot flatten field `{}` of this type", f.rust_name),
                    )
                    .with_hint(
                        "flatten a struct (its fields merge) or a map (unknown fields are kept)",
                    ));
                }
            }
            return Ok(());
        }
        let prop = self.field_schema(f)?;
        if self.is_required(f)? {
            required.push(f.json_name.clone());
        }
        if props
            .own
            .insert(f.json_name.clone(), Box::new(prop))
            .is_some()
        {
            return Err(Diagnostic::new(
                f.loc.clone(),
                format!("two fields serialize as `{}`", f.json_name),
            )
            .with_hint("check #[serde(rename)] attributes"));
        }
        Ok(())
    }

    fn field_schema(&mut self, f: &Field) -> Result<JSONSchemaProps, Diagnostic> {
        let schemaless = f.markers.iter().any(|m| m.name == Name::Schemaless);
        let mut schema = if schemaless {
            JSONSchemaProps::default()
        } else {
            self.ref_schema(&f.ty, &f.loc)?
        };
        if let Some(d) = self.describe(&f.doc) {
            schema.description = Some(d);
        }
        // A named type's schema, before the field's markers go on top of it.
        // (Quantity, IntOrString and Time are named types too: Envoy Gateway's Pattern on a
        // Quantity keeps the Quantity's pattern beside its own; so is an alias, Go's
        // `type X string`, whose Enum wins over the field's.)
        let named = |t: &TypeRef| {
            matches!(
                t,
                TypeRef::Local(_)
                    | TypeRef::Alias { .. }
                    | TypeRef::K8s(_)
                    | TypeRef::Quantity
                    | TypeRef::IntOrString
                    | TypeRef::Time
            )
        };
        let by_name = named(&f.ty) || matches!(&f.ty, TypeRef::Option(inner) if named(inner));
        let type_schema = (by_name && !schemaless).then(|| TypeKeywords::of(&schema));
        apply_markers(&mut schema, &f.markers, &mut self.found);
        // The field's own integer (through `Option`), whose range its bounds should keep to.
        let scalar = match f.ty.unalias() {
            TypeRef::Option(inner) => inner.unalias(),
            other => other,
        };
        if matches!(scalar, TypeRef::Int32 | TypeRef::Int64)
            && let [int] = f.ints.as_slice()
        {
            marker_keywords::check_int_range(&schema, *int, &f.markers, &mut self.found);
        }
        if let Some(type_schema) = type_schema {
            keep_both(&type_schema, &mut schema, &f.markers);
        }
        if f.markers.iter().any(|m| m.name == Name::Nullable) {
            schema.nullable = Some(true);
        }
        if let Some(m) = f.markers.iter().find(|m| m.name == Name::Schemaless)
            && schema.type_.is_none()
            && schema.x_kubernetes_preserve_unknown_fields != Some(true)
            && schema.x_kubernetes_int_or_string != Some(true)
        {
            return Err(m
                .error(format!("field `{}` is schemaless but has no type, so the schema is not structural", f.rust_name))
                .with_hint("add `+kubebuilder:validation:Type=object` and `+kubebuilder:pruning:PreserveUnknownFields`"));
        }
        apply_schema_patches(&mut schema, &f.markers)?;
        check_set_items(&schema, f)?;
        Ok(schema)
    }

    fn ref_schema(&mut self, ty: &TypeRef, loc: &Location) -> Result<JSONSchemaProps, Diagnostic> {
        Ok(match ty {
            TypeRef::String => typed("string"),
            TypeRef::Bool => typed("boolean"),
            TypeRef::Int32 => JSONSchemaProps {
                format: Some("int32".into()),
                ..typed("integer")
            },
            TypeRef::Int64 => JSONSchemaProps {
                format: Some("int64".into()),
                ..typed("integer")
            },
            TypeRef::Float | TypeRef::Double if self.options.refuse_floats => {
                return Err(Diagnostic::new(
                    loc.clone(),
                    "a float, which `allow-dangerous-types = false` refuses (controller-gen without `crd:allowDangerousTypes=true`): languages read JSON floats differently",
                )
                .with_hint("serialize the number as a string (a `Quantity`, or a `String` with a pattern), or set `allow-dangerous-types = true` (`--allow-dangerous-types true`)"));
            }
            TypeRef::Float => JSONSchemaProps {
                format: Some("float".into()),
                ..typed("number")
            },
            TypeRef::Double => JSONSchemaProps {
                format: Some("double".into()),
                ..typed("number")
            },
            TypeRef::Option(inner) => self.ref_schema(inner, loc)?,
            TypeRef::List { item, set } => JSONSchemaProps {
                items: Some(JSONSchemaPropsOrArray::Schema(Box::new(
                    self.ref_schema(item, loc)?,
                ))),
                x_kubernetes_list_type: set.then(|| "set".to_owned()),
                ..typed("array")
            },
            // serde reads exactly `len` items; Go's decoder drops extra items and zero-fills
            // missing ones, so controller-gen leaves the bounds out.
            TypeRef::Array { item, len } => JSONSchemaProps {
                items: Some(JSONSchemaPropsOrArray::Schema(Box::new(
                    self.ref_schema(item, loc)?,
                ))),
                min_items: Some(*len as i64),
                max_items: Some(*len as i64),
                ..typed("array")
            },
            TypeRef::Map(value) => JSONSchemaProps {
                additional_properties: Some(JSONSchemaPropsOrBool::Schema(Box::new(
                    self.ref_schema(value, loc)?,
                ))),
                ..typed("object")
            },
            TypeRef::Json => JSONSchemaProps {
                x_kubernetes_preserve_unknown_fields: Some(true),
                ..Default::default()
            },
            TypeRef::IntOrString => int_or_string(),
            TypeRef::Quantity => JSONSchemaProps {
                pattern: Some(QUANTITY_PATTERN.into()),
                ..int_or_string()
            },
            TypeRef::Time => JSONSchemaProps {
                format: Some("date-time".into()),
                ..typed("string")
            },
            TypeRef::Bytes => JSONSchemaProps {
                format: Some("byte".into()),
                ..typed("string")
            },
            TypeRef::ObjectMeta if self.options.generate_embedded_object_meta => {
                serde_json::from_value(crate::kubernetes::schemas::embedded_object_meta())
                    .expect("a schema")
            }
            TypeRef::ObjectMeta => typed("object"),
            TypeRef::TypeMeta => {
                return Err(Diagnostic::new(loc.clone(), "TypeMeta must be flattened")
                    .with_hint("add #[serde(flatten)] to the field"));
            }
            TypeRef::K8s(path) => self.k8s_schema(path, loc)?,
            TypeRef::Local(key) | TypeRef::Alias { key, .. } => self.decl_schema(key, loc)?,
            // Resolution made sure the markers give the schema.
            TypeRef::Opaque => JSONSchemaProps::default(),
        })
    }

    fn enum_schema(
        &mut self,
        decl: &TypeDecl,
        variants: &[Variant],
    ) -> Result<JSONSchemaProps, Diagnostic> {
        let s = &decl.serde;
        let err = |msg: String, hint: &str| {
            Err(Diagnostic::new(decl.loc.clone(), msg).with_hint(hint.to_owned()))
        };
        if variants.is_empty() {
            return err(
                format!("enum `{}` has no variants", decl.name),
                "an API enum needs at least one value",
            );
        }
        let all_unit = variants
            .iter()
            .all(|v| matches!(v.shape, VariantShape::Unit));
        if let Some(v) = variants
            .iter()
            .find(|v| matches!(v.shape, VariantShape::Tuple))
        {
            return Err(Diagnostic::new(v.loc.clone(), format!("variant `{}::{}` has several unnamed fields", decl.name, v.rust_name))
                .with_hint("a tuple serializes as a JSON array of mixed types, which a structural schema cannot express; use named fields"));
        }
        if s.untagged {
            return self.untagged_schema(decl, variants);
        }
        match (&s.tag, &s.content) {
            (Some(_), Some(_)) => err(
                format!("adjacently tagged enum `{}` is not supported", decl.name),
                "use #[serde(tag = \"...\")] (internally tagged) or the default external tagging",
            ),
            (Some(tag), None) => self.internally_tagged_schema(decl, tag, variants),
            (None, None) if all_unit => Ok(JSONSchemaProps {
                enum_: Some(
                    variants
                        .iter()
                        .map(|v| JSON(Value::String(v.json_name.clone())))
                        .collect(),
                ),
                ..typed("string")
            }),
            (None, None) => {
                if let Some(unit) = variants
                    .iter()
                    .find(|v| matches!(v.shape, VariantShape::Unit))
                {
                    return Err(Diagnostic::new(unit.loc.clone(), format!(
                        "enum `{}` mixes unit variants (serialized as strings) with data variants (serialized as objects)",
                        decl.name
                    ))
                    .with_hint("a structural schema has one type per field; write the unit variant as `Name {}` or use #[serde(tag = \"type\")]"));
                }
                let mut props = BTreeMap::new();
                let mut one_of = vec![];
                for v in variants {
                    let schema = match self.variant_schema(decl, v) {
                        Ok(schema) => schema,
                        Err(d) => {
                            self.found.push(d);
                            continue;
                        }
                    };
                    props.insert(v.json_name.clone(), Box::new(schema));
                    one_of.push(JSONSchemaProps {
                        required: Some(vec![v.json_name.clone()]),
                        ..Default::default()
                    });
                }
                Ok(JSONSchemaProps {
                    properties: Some(props),
                    one_of: Some(one_of),
                    ..typed("object")
                })
            }
            (None, Some(_)) => err(
                format!("`content` without `tag` on `{}`", decl.name),
                "serde needs both",
            ),
        }
    }

    fn variant_schema(
        &mut self,
        decl: &TypeDecl,
        v: &Variant,
    ) -> Result<JSONSchemaProps, Diagnostic> {
        let mut schema = match &v.shape {
            VariantShape::Unit => {
                return Err(Diagnostic::new(
                    v.loc.clone(),
                    format!(
                        "unit variant `{}::{}` has no value here",
                        decl.name, v.rust_name
                    ),
                ));
            }
            VariantShape::Newtype(t) => self.ref_schema(t, &v.loc)?,
            VariantShape::Struct(fields) => self.object_schema(fields)?,
            VariantShape::Tuple => unreachable!("rejected above"),
        };
        if let Some(d) = self.describe(&v.doc) {
            schema.description = Some(d);
        }
        Ok(schema)
    }

    fn internally_tagged_schema(
        &mut self,
        decl: &TypeDecl,
        tag: &str,
        variants: &[Variant],
    ) -> Result<JSONSchemaProps, Diagnostic> {
        let mut props = SchemaMap::new();
        for v in variants {
            let fields = match &v.shape {
                VariantShape::Unit => continue,
                _ => match self.variant_schema(decl, v) {
                    Ok(fields) => fields,
                    Err(d) => {
                        self.found.push(d);
                        continue;
                    }
                },
            };
            if fields.type_.as_deref() != Some("object") {
                self.found.push(Diagnostic::new(
                    v.loc.clone(),
                    format!(
                        "variant `{}::{}` must hold a struct to be internally tagged",
                        decl.name, v.rust_name
                    ),
                ));
                continue;
            }
            for (k, p) in fields.properties.unwrap_or_default() {
                if let Err(d) = merge_property(&mut props, k, p, &v.loc) {
                    self.found.push(d);
                }
            }
        }
        if props.contains_key(tag) {
            return Err(Diagnostic::new(
                decl.loc.clone(),
                format!("tag `{tag}` of `{}` collides with a field name", decl.name),
            ));
        }
        props.insert(
            tag.to_owned(),
            Box::new(JSONSchemaProps {
                enum_: Some(
                    variants
                        .iter()
                        .map(|v| JSON(Value::String(v.json_name.clone())))
                        .collect(),
                ),
                ..typed("string")
            }),
        );
        Ok(JSONSchemaProps {
            properties: Some(props),
            required: Some(vec![tag.to_owned()]),
            ..typed("object")
        })
    }

    fn untagged_schema(
        &mut self,
        decl: &TypeDecl,
        variants: &[Variant],
    ) -> Result<JSONSchemaProps, Diagnostic> {
        let mut schemas = vec![];
        for v in variants {
            match self.variant_schema(decl, v) {
                Ok(schema) => schemas.push((v, schema)),
                Err(d) => self.found.push(d),
            }
        }
        if schemas.is_empty() {
            // Every variant in error (reported): an empty schema stands in.
            return Ok(JSONSchemaProps::default());
        }
        let types: std::collections::BTreeSet<Option<String>> =
            schemas.iter().map(|(_, s)| s.type_.clone()).collect();
        let names: Vec<String> = types
            .iter()
            .map(|t| t.clone().unwrap_or_else(|| "any".into()))
            .collect();
        if types.len() == 2
            && types.contains(&Some("integer".into()))
            && types.contains(&Some("string".into()))
        {
            return Ok(int_or_string());
        }
        if types.len() != 1 {
            return Err(Diagnostic::new(decl.loc.clone(), format!(
                "untagged enum `{}` mixes JSON types ({})",
                decl.name,
                names.join(", ")
            ))
            .with_hint("a structural schema has one type per field; only integer|string (int-or-string) may mix"));
        }
        if types.contains(&Some("object".into())) {
            let mut props = BTreeMap::new();
            for (v, s) in schemas {
                for (k, p) in s.properties.unwrap_or_default() {
                    if let Err(d) = merge_property(&mut props, k, p, &v.loc) {
                        self.found.push(d);
                    }
                }
            }
            return Ok(JSONSchemaProps {
                properties: Some(props),
                ..typed("object")
            });
        }
        Ok(schemas.into_iter().next().expect("non-empty").1)
    }
}

/// What [`keep_both`] reads of a named type's schema, copied out of it: cloning the whole
/// schema (a struct's properties, an embedded Kubernetes type) for every field of a named
/// type cost about 1.5% of a CRD run. A struct of its own, so that reading a keyword this
/// does not copy is a compile error rather than a silent `None`.
struct TypeKeywords {
    maximum: Option<f64>,
    minimum: Option<f64>,
    multiple_of: Option<f64>,
    max_length: Option<i64>,
    min_length: Option<i64>,
    max_items: Option<i64>,
    min_items: Option<i64>,
    max_properties: Option<i64>,
    min_properties: Option<i64>,
    format: Option<String>,
    pattern: Option<String>,
    enum_: Option<Vec<JSON>>,
    x_kubernetes_validations: Option<Vec<ValidationRule>>,
}

impl TypeKeywords {
    fn of(ty: &JSONSchemaProps) -> Self {
        TypeKeywords {
            maximum: ty.maximum,
            minimum: ty.minimum,
            multiple_of: ty.multiple_of,
            max_length: ty.max_length,
            min_length: ty.min_length,
            max_items: ty.max_items,
            min_items: ty.min_items,
            max_properties: ty.max_properties,
            min_properties: ty.min_properties,
            format: ty.format.clone(),
            pattern: ty.pattern.clone(),
            enum_: ty.enum_.clone(),
            x_kubernetes_validations: ty.x_kubernetes_validations.clone(),
        }
    }
}

/// When a field and its named type both set a keyword, controller-gen keeps both, as its
/// flattener does (pkg/crd/flatten.go): `merged` is the type's schema with the field's markers
/// applied over it, and this puts back what the type said. Bounds held by pointer in Go
/// (minimum, maxLength, ...) go to an `allOf` of the type's and the field's values even when
/// equal; formats, patterns and property counts only when they differ. The type's `enum`
/// wins; the field's CEL rules come before the type's. Defaults, titles, examples and
/// descriptions are the field's (controller-gen has no type-level default).
fn keep_both(ty: &TypeKeywords, merged: &mut JSONSchemaProps, markers: &[Marker]) {
    let set = |names: &[Name]| markers.iter().any(|m| !m.items && names.contains(&m.name));
    let mut type_part = JSONSchemaProps::default();
    let mut field_part = JSONSchemaProps::default();
    let mut hoisted = false;
    macro_rules! both {
        ($field:ident, $names:expr, $when_equal:expr) => {
            if set($names)
                && ty.$field.is_some()
                && merged.$field.is_some()
                && ($when_equal || ty.$field != merged.$field)
            {
                type_part.$field = ty.$field.clone();
                field_part.$field = merged.$field.take();
                hoisted = true;
            }
        };
    }
    both!(maximum, &[Name::Maximum, Name::K8sMaximum], true);
    both!(minimum, &[Name::Minimum, Name::K8sMinimum], true);
    both!(multiple_of, &[Name::MultipleOf], true);
    both!(max_length, &[Name::MaxLength], true);
    both!(min_length, &[Name::MinLength], true);
    both!(max_items, &[Name::MaxItems, Name::K8sMaxItems], true);
    both!(min_items, &[Name::MinItems], true);
    both!(max_properties, &[Name::MaxProperties], false);
    both!(min_properties, &[Name::MinProperties], false);
    both!(format, &[Name::Format], false);
    both!(pattern, &[Name::Pattern], false);
    if set(&[Name::Enum]) && ty.enum_.is_some() {
        merged.enum_ = ty.enum_.clone();
    }
    let type_rules = ty.x_kubernetes_validations.as_deref().unwrap_or_default();
    if let Some(rules) = &mut merged.x_kubernetes_validations
        && !type_rules.is_empty()
        && rules.len() > type_rules.len()
    {
        rules.rotate_left(type_rules.len());
    }
    if hoisted {
        merged
            .all_of
            .get_or_insert_with(Vec::new)
            .extend([type_part, field_part]);
    }
}

/// The API server takes sets only of scalars or of atomic items (it validates CRDs with
/// `requireAtomicSetType`): "must be atomic as item of a list with x-kubernetes-list-type=set".
fn check_set_items(schema: &JSONSchemaProps, f: &Field) -> Result<(), Diagnostic> {
    if schema.x_kubernetes_list_type.as_deref() != Some("set") {
        return Ok(());
    }
    let Some(JSONSchemaPropsOrArray::Schema(item)) = &schema.items else {
        return Ok(());
    };
    let atomic = match item.type_.as_deref() {
        Some("object") => item.x_kubernetes_map_type.as_deref() == Some("atomic"),
        Some("array") => item
            .x_kubernetes_list_type
            .as_deref()
            .is_none_or(|t| t == "atomic"),
        _ => true,
    };
    if atomic {
        return Ok(());
    }
    let message = format!(
        "set `{}` has {} items that are not atomic, which the API server rejects",
        f.rust_name,
        item.type_.as_deref().unwrap_or_default()
    );
    let d = match f.markers.iter().find(|m| m.name == Name::ListType) {
        Some(m) => m.error(message),
        None => Diagnostic::new(f.loc.clone(), message),
    };
    Err(d.with_hint(
        "mark the item type `+structType=atomic`, or use `+listType=map` with `+listMapKey=`",
    ))
}

/// Add `p` as property `k`, failing if a different schema already has that name.
fn merge_property(
    props: &mut SchemaMap,
    k: String,
    p: Box<JSONSchemaProps>,
    loc: &Location,
) -> Result<(), Diagnostic> {
    match props.get(&k) {
        Some(existing) if existing.type_ != p.type_ => Err(Diagnostic::new(
            loc.clone(),
            format!("property `{k}` has different types in different variants"),
        )
        .with_hint("structural schemas need one type per property; rename one of the fields")),
        Some(_) => Ok(()),
        None => {
            props.insert(k, p);
            Ok(())
        }
    }
}

/// Find the schema node a simple JSONPath (`.spec.replicas`) points at.
/// Anything below `.metadata` is accepted: the apiserver owns metadata's schema.
pub fn lookup_path<'s>(
    schema: &'s JSONSchemaProps,
    path: &str,
) -> Result<Option<&'s JSONSchemaProps>, String> {
    let path = path.split('[').next().unwrap_or(path);
    let mut node = schema;
    let segs: Vec<&str> = path
        .trim_start_matches('.')
        .split('.')
        .filter(|s| !s.is_empty())
        .collect();
    if segs.first() == Some(&"metadata") {
        return Ok(None);
    }
    for (i, seg) in segs.iter().enumerate() {
        if node.x_kubernetes_preserve_unknown_fields == Some(true) && node.properties.is_none() {
            return Ok(None);
        }
        let next = node
            .properties
            .as_ref()
            .and_then(|p| p.get(*seg))
            .map(|s| &**s)
            .or(match &node.additional_properties {
                Some(JSONSchemaPropsOrBool::Schema(s)) => Some(&**s),
                _ => None,
            });
        match next {
            Some(n) => node = n,
            None => {
                return Err(format!(
                    "`{}` has no field `{seg}`",
                    if i == 0 {
                        ".".to_owned()
                    } else {
                        format!(".{}", segs[..i].join("."))
                    }
                ));
            }
        }
    }
    Ok(Some(node))
}

/// A cache lock; a panic elsewhere cannot leave these maps half-updated.
pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// controller-gen's `maxDescLen` (pkg/crd/desc_visitor.go) on every node of `s`: 0 removes
/// descriptions; a longer one is cut to `max` bytes, back to the last sentence end if
/// there is one, else to the last space with `...`, else with `...` at `max`.
pub fn truncate_descriptions(s: &mut JSONSchemaProps, max: usize) {
    if let Some(d) = &s.description {
        s.description = (max > 0).then(|| truncate_description(d, max));
    }
    for p in s.properties.iter_mut().flat_map(|p| p.values_mut()) {
        truncate_descriptions(p, max);
    }
    match &mut s.items {
        Some(JSONSchemaPropsOrArray::Schema(item)) => truncate_descriptions(item, max),
        Some(JSONSchemaPropsOrArray::Schemas(items)) => {
            items.iter_mut().for_each(|i| truncate_descriptions(i, max))
        }
        None => {}
    }
    if let Some(JSONSchemaPropsOrBool::Schema(v)) = &mut s.additional_properties {
        truncate_descriptions(v, max);
    }
    for alt in [&mut s.all_of, &mut s.any_of, &mut s.one_of]
        .into_iter()
        .flatten()
        .flatten()
    {
        truncate_descriptions(alt, max);
    }
    if let Some(not) = &mut s.not {
        truncate_descriptions(not, max);
    }
}

/// controller-gen's `truncateString`. Go cuts bytes; a cut inside a character moves back
/// to its start, as Rust strings must (Go would write a broken character there).
fn truncate_description(desc: &str, max: usize) -> String {
    if desc.len() <= max {
        return desc.to_owned();
    }
    let mut end = max;
    while !desc.is_char_boundary(end) {
        end -= 1;
    }
    let cut = &desc[..end];
    // Unicode's Sentence_Terminal, as Go's unicode.STerm: the common ones.
    let terminal = |c: char| {
        matches!(
            c,
            '.' | '!'
                | '?'
                | '\u{589}'
                | '\u{61f}'
                | '\u{6d4}'
                | '\u{964}'
                | '\u{965}'
                | '\u{3002}'
                | '\u{ff01}'
                | '\u{ff0e}'
                | '\u{ff1f}'
                | '\u{ff61}'
        )
    };
    if let Some((i, c)) = cut.char_indices().rev().find(|(_, c)| terminal(*c))
        && i > 0
    {
        return cut[..i + c.len_utf8()].to_owned();
    }
    if let Some((i, _)) = cut.char_indices().rev().find(|(_, c)| c.is_whitespace())
        && i > 0
    {
        return format!("{}...", &cut[..i]);
    }
    format!("{cut}...")
}

#[cfg(test)]
mod truncate_tests {
    use super::truncate_description as cut;

    /// controller-gen's truncateString, case by case (pkg/crd/desc_visitor_test.go's).
    #[test]
    fn descriptions_are_cut_as_controller_gen_cuts_them() {
        let d = "This is a description. It has two sentences.";
        assert_eq!(cut(d, d.len()), d);
        // Back to the last sentence end within the limit.
        assert_eq!(cut(d, d.len() - 5), "This is a description.");
        // No sentence end: back to the last space, with `...`.
        assert_eq!(cut("one two three", 9), "one two...");
        // Neither: cut at the limit, with `...`.
        assert_eq!(cut("abcdefghij", 4), "abcd...");
        // A cut inside a character moves back to its start.
        assert_eq!(cut("ééé", 3), "é...");
    }
}
