//! Stage 3a: OpenAPI v3 structural schemas for kinds, from the model and its markers.
//!
//! Rules that keep every schema *structural* (what apiextensions.k8s.io/v1 demands):
//! every node has a `type` (or int-or-string / preserve-unknown-fields), no `$ref`,
//! and `oneOf`/`anyOf` carry only `required` lists or the int-or-string pair.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    ExternalDocumentation, JSON, JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
    ValidationRule,
};
use serde_json::Value;

use crate::diagnostics::{Diagnostic, Location};
use crate::markers::{Marker, split_list};
use crate::model::*;

/// Options that change schema text.
#[derive(Clone, Debug, Default)]
pub struct SchemaOptions {
    /// Cut descriptions to at most this many characters.
    pub max_description_len: Option<usize>,
}

/// controller-gen's pattern for resource.Quantity.
pub const QUANTITY_PATTERN: &str = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$";

fn typed(t: &str) -> JSONSchemaProps {
    JSONSchemaProps {
        type_: Some(t.to_owned()),
        ..Default::default()
    }
}

fn int_or_string() -> JSONSchemaProps {
    JSONSchemaProps {
        any_of: Some(vec![typed("integer"), typed("string")]),
        x_kubernetes_int_or_string: Some(true),
        ..Default::default()
    }
}

/// Builds schemas for one package (the package's default optionality applies).
pub struct SchemaBuilder<'a> {
    api: &'a Api,
    options: &'a SchemaOptions,
    default_optional: Option<(bool, Location)>,
    /// Types being expanded, to catch recursion.
    stack: Vec<String>,
    /// A type could not be resolved (already reported), so the schema is incomplete.
    pub unresolved: bool,
}

impl<'a> SchemaBuilder<'a> {
    pub fn new(api: &'a Api, package: &Package, options: &'a SchemaOptions) -> Self {
        SchemaBuilder {
            api,
            options,
            default_optional: package.default_optional.clone(),
            stack: vec![],
            unresolved: false,
        }
    }

    fn describe(&self, doc: &str) -> Option<String> {
        let doc = doc.trim();
        if doc.is_empty() {
            return None;
        }
        Some(match self.options.max_description_len {
            Some(n) if doc.chars().count() > n => doc.chars().take(n).collect(),
            _ => doc.to_owned(),
        })
    }

    /// The full schema of a kind: apiVersion, kind, metadata, then its own fields.
    pub fn kind_schema(&mut self, kind: &Kind) -> Result<JSONSchemaProps, Diagnostic> {
        let mut schema = self.decl_schema(&kind.type_key, &kind.loc)?;
        let props = schema.properties.get_or_insert_with(BTreeMap::new);
        props.insert(
            "apiVersion".into(),
            JSONSchemaProps {
                description: self.describe("APIVersion defines the versioned schema of this representation of an object.\nServers should convert recognized schemas to the latest internal value, and\nmay reject unrecognized values.\nMore info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"),
                ..typed("string")
            },
        );
        props.insert(
            "kind".into(),
            JSONSchemaProps {
                description: self.describe("Kind is a string value representing the REST resource this object represents.\nServers may infer this from the endpoint the client submits requests to.\nCannot be updated.\nIn CamelCase.\nMore info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"),
                ..typed("string")
            },
        );
        // The apiserver owns metadata's schema; a CRD may only say it is an object.
        props.insert("metadata".into(), typed("object"));
        if let Some(req) = &mut schema.required {
            req.retain(|r| r != "metadata");
            if req.is_empty() {
                schema.required = None;
            }
        }
        drop_uncorrelatable_k8s_rules(&mut schema, true);
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
        let mut schema = result?;
        // An alias or newtype is the port of a Go named type (`type Endpoint Target`), whose
        // own doc wins over its underlying type's in controller-gen.
        let named = matches!(decl.shape, Shape::Alias(_) | Shape::Newtype(_));
        if let Some(doc) = self.describe(&decl.doc)
            && (named || schema.description.is_none())
        {
            schema.description = Some(doc);
        }
        apply_markers(&mut schema, &decl.markers)?;
        Ok(schema)
    }

    fn decl_schema_inner(&mut self, decl: &TypeDecl) -> Result<JSONSchemaProps, Diagnostic> {
        match &decl.shape {
            Shape::Newtype(inner) | Shape::Alias(inner) | Shape::Wire(inner) => {
                self.ref_schema(inner, &decl.loc)
            }
            Shape::Struct(fields) if decl.serde.transparent => {
                let f = fields.iter().find(|f| !f.skip).ok_or_else(|| {
                    Diagnostic::new(decl.loc.clone(), "transparent struct without a field")
                })?;
                self.field_schema(f)
            }
            Shape::Struct(fields) => self.object_schema(fields),
            Shape::Enum(variants) => self.enum_schema(decl, variants),
        }
    }

    /// Whether the schema requires the field, by the rules in README ("Required fields").
    fn is_required(&self, f: &Field) -> Result<bool, Diagnostic> {
        let explicit_required = f.markers.iter().find(|m| {
            matches!(
                m.name,
                "required" | "kubebuilder:validation:Required" | "k8s:required"
            )
        });
        let explicit_optional = f.markers.iter().find(|m| {
            matches!(
                m.name,
                "optional" | "kubebuilder:validation:Optional" | "k8s:optional"
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

    fn object_schema(&mut self, fields: &[Field]) -> Result<JSONSchemaProps, Diagnostic> {
        let mut schema = typed("object");
        let mut properties = BTreeMap::new();
        let mut required = vec![];
        for f in fields.iter().filter(|f| !f.skip) {
            if f.flatten {
                match f.ty.unalias() {
                    TypeRef::TypeMeta => continue,
                    TypeRef::Local(key) => {
                        let inner = self.decl_schema(key, &f.loc)?;
                        if inner.type_.as_deref() != Some("object") || inner.properties.is_none() {
                            return Err(Diagnostic::new(
                                f.loc.clone(),
                                format!(
                                    "cannot flatten `{}`: it is not a struct with fields",
                                    f.rust_name
                                ),
                            ));
                        }
                        for (k, v) in inner.properties.unwrap_or_default() {
                            if properties.insert(k.clone(), v).is_some() {
                                return Err(Diagnostic::new(
                                    f.loc.clone(),
                                    format!(
                                        "flattened field `{}` repeats property `{k}`",
                                        f.rust_name
                                    ),
                                ));
                            }
                        }
                        if f.ty.is_option() || f.has_default {
                            continue;
                        }
                        required.extend(inner.required.unwrap_or_default());
                    }
                    TypeRef::Map(_) | TypeRef::Json => {
                        schema.x_kubernetes_preserve_unknown_fields = Some(true)
                    }
                    TypeRef::Option(inner) if matches!(**inner, TypeRef::Local(_)) => {
                        let TypeRef::Local(key) = &**inner else {
                            unreachable!()
                        };
                        let inner = self.decl_schema(key, &f.loc)?;
                        properties.extend(inner.properties.unwrap_or_default());
                    }
                    _ => return Err(Diagnostic::new(
                        f.loc.clone(),
                        format!("cannot flatten field `{}` of this type", f.rust_name),
                    )
                    .with_hint(
                        "flatten a struct (its fields merge) or a map (unknown fields are kept)",
                    )),
                }
                continue;
            }
            let prop = self.field_schema(f)?;
            if self.is_required(f)? {
                required.push(f.json_name.clone());
            }
            if properties.insert(f.json_name.clone(), prop).is_some() {
                return Err(Diagnostic::new(
                    f.loc.clone(),
                    format!("two fields serialize as `{}`", f.json_name),
                )
                .with_hint("check #[serde(rename)] attributes"));
            }
        }
        // An optional `+k8s:immutable` field could be unset, which its own rule cannot see:
        // controller-gen adds this rule to the parent.
        for f in fields.iter().filter(|f| !f.skip && !f.flatten) {
            if f.markers.iter().any(|m| m.name == "k8s:immutable")
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
        schema.properties = Some(properties);
        if !required.is_empty() {
            required.sort();
            required.dedup();
            schema.required = Some(required);
        }
        Ok(schema)
    }

    fn field_schema(&mut self, f: &Field) -> Result<JSONSchemaProps, Diagnostic> {
        let schemaless = f
            .markers
            .iter()
            .any(|m| m.name == "kubebuilder:validation:Schemaless");
        let mut schema = if schemaless {
            JSONSchemaProps::default()
        } else {
            self.ref_schema(&f.ty, &f.loc)?
        };
        if let Some(d) = self.describe(&f.doc) {
            schema.description = Some(d);
        }
        // A named type's schema, before the field's markers go on top of it.
        let by_name = matches!(f.ty, TypeRef::Local(_) | TypeRef::K8s(_))
            || matches!(&f.ty, TypeRef::Option(inner) if matches!(**inner, TypeRef::Local(_) | TypeRef::K8s(_)));
        let type_schema = (by_name && !schemaless).then(|| schema.clone());
        apply_markers(&mut schema, &f.markers)?;
        if let Some(type_schema) = type_schema {
            keep_both(&type_schema, &mut schema, &f.markers);
        }
        if f.markers.iter().any(|m| m.name == "nullable") {
            schema.nullable = Some(true);
        }
        if let Some(m) = f
            .markers
            .iter()
            .find(|m| m.name == "kubebuilder:validation:Schemaless")
            && schema.type_.is_none()
            && schema.x_kubernetes_preserve_unknown_fields != Some(true)
            && schema.x_kubernetes_int_or_string != Some(true)
        {
            return Err(m
                .error(format!("field `{}` is schemaless but has no type, so the schema is not structural", f.rust_name))
                .with_hint("add `+kubebuilder:validation:Type=object` and `+kubebuilder:pruning:PreserveUnknownFields`"));
        }
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

    /// The schema of a k8s-openapi type: controller-gen's for the pinned Kubernetes version
    /// (see [`crate::k8s_schemas`]), with recursion holes filled (see [`fill_recursion_holes`]).
    fn k8s_schema(&mut self, path: &str, loc: &Location) -> Result<JSONSchemaProps, Diagnostic> {
        let mut props = self.k8s_schema_cached(path, loc)?;
        // `--max-description-len` cuts Kubernetes' descriptions too (they are most of a
        // CRD embedding a pod template), as controller-gen's maxDescLen does.
        if self.options.max_description_len.is_some() {
            self.cut_descriptions(&mut props);
        }
        Ok(props)
    }

    fn cut_descriptions(&self, s: &mut JSONSchemaProps) {
        s.description = s.description.as_deref().and_then(|d| self.describe(d));
        for p in s.properties.iter_mut().flat_map(|p| p.values_mut()) {
            self.cut_descriptions(p);
        }
        if let Some(JSONSchemaPropsOrArray::Schema(item)) = &mut s.items {
            self.cut_descriptions(item);
        }
        if let Some(JSONSchemaPropsOrBool::Schema(v)) = &mut s.additional_properties {
            self.cut_descriptions(v);
        }
    }

    fn k8s_schema_cached(
        &mut self,
        path: &str,
        loc: &Location,
    ) -> Result<JSONSchemaProps, Diagnostic> {
        if let Some(s) = lock(&K8S_SCHEMAS).get(path) {
            return Ok(s.clone());
        }
        let fail = |e: String| {
            Diagnostic::new(
                loc.clone(),
                format!("no schema for k8s-openapi type `{path}`: {e}"),
            )
        };
        let value = crate::k8s_schemas::schema(path).map_err(fail)?;
        let mut props: JSONSchemaProps =
            serde_json::from_value(value).map_err(|e| fail(e.to_string()))?;
        fill_recursion_holes(&mut props);
        lock(&K8S_SCHEMAS).insert(path.to_owned(), props.clone());
        Ok(props)
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
            .find(|v| matches!(v.shape, VariantShape::Tuple(_)))
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
                    let schema = self.variant_schema(decl, v)?;
                    props.insert(v.json_name.clone(), schema);
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
            VariantShape::Tuple(_) => unreachable!("rejected above"),
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
        let mut props: BTreeMap<String, JSONSchemaProps> = BTreeMap::new();
        for v in variants {
            let fields = match &v.shape {
                VariantShape::Unit => continue,
                _ => self.variant_schema(decl, v)?,
            };
            if fields.type_.as_deref() != Some("object") {
                return Err(Diagnostic::new(
                    v.loc.clone(),
                    format!(
                        "variant `{}::{}` must hold a struct to be internally tagged",
                        decl.name, v.rust_name
                    ),
                ));
            }
            for (k, p) in fields.properties.unwrap_or_default() {
                merge_property(&mut props, k, p, &v.loc)?;
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
            JSONSchemaProps {
                enum_: Some(
                    variants
                        .iter()
                        .map(|v| JSON(Value::String(v.json_name.clone())))
                        .collect(),
                ),
                ..typed("string")
            },
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
            schemas.push((v, self.variant_schema(decl, v)?));
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
                    merge_property(&mut props, k, p, &v.loc)?;
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

/// controller-gen cuts a recursive type where it recurs with an empty schema `{}` (the
/// scheduling API's CompositePodGroupTemplate lists itself), which is not structural: the
/// API server refuses the CRD. The closest structural schema is an object that keeps
/// whatever it holds; as the items of a `listType=map` list it also needs the map keys,
/// which are properties of the type that recurs: the enclosing object (listed in FIDELITY.md).
fn fill_recursion_holes(s: &mut JSONSchemaProps) {
    let open_object = || JSONSchemaProps {
        x_kubernetes_preserve_unknown_fields: Some(true),
        ..typed("object")
    };
    let enclosing = s.clone();
    for p in s.properties.iter_mut().flat_map(|p| p.values_mut()) {
        if *p == JSONSchemaProps::default() {
            *p = open_object();
            continue;
        }
        if let Some(JSONSchemaPropsOrArray::Schema(item)) = &mut p.items
            && **item == JSONSchemaProps::default()
        {
            let keys = p.x_kubernetes_list_map_keys.clone().unwrap_or_default();
            let pick = |k: &&String| keys.contains(*k);
            **item = JSONSchemaProps {
                properties: (!keys.is_empty()).then(|| {
                    enclosing
                        .properties
                        .iter()
                        .flatten()
                        .filter(|(k, _)| pick(k))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect()
                }),
                required: enclosing
                    .required
                    .as_ref()
                    .map(|r| r.iter().filter(pick).cloned().collect::<Vec<_>>())
                    .filter(|r| !r.is_empty()),
                ..open_object()
            };
            continue;
        }
        fill_recursion_holes(p);
    }
    match &mut s.items {
        Some(JSONSchemaPropsOrArray::Schema(item)) if **item == JSONSchemaProps::default() => {
            **item = open_object()
        }
        Some(JSONSchemaPropsOrArray::Schema(item)) => fill_recursion_holes(item),
        _ => {}
    }
    if let Some(JSONSchemaPropsOrBool::Schema(v)) = &mut s.additional_properties {
        if **v == JSONSchemaProps::default() {
            **v = open_object();
        } else {
            fill_recursion_holes(v);
        }
    }
}

/// The API server refuses a transition rule (one using `oldSelf`) where it cannot match an
/// object's old and new values: below a list that is not `listType=map`, and below the
/// properties of an atomic map (apiextensions-apiserver's `withForbidOldSelfValidations`).
/// Kubernetes' own types carry such rules (`+k8s:immutable` is `self == oldSelf`) and
/// controller-gen keeps them wherever the type lands, so its CRD with a `[]batchv1.JobSpec`
/// is refused (controller-tools#1473). Drop those rules there, and only there; a rule the
/// user wrote is not Kubernetes' and stays.
fn drop_uncorrelatable_k8s_rules(s: &mut JSONSchemaProps, correlatable: bool) {
    if !correlatable && let Some(rules) = &mut s.x_kubernetes_validations {
        let k8s = crate::k8s_schemas::transition_rules();
        rules.retain(|r| !serde_json::to_value(r).is_ok_and(|v| k8s.contains(&v)));
        if rules.is_empty() {
            s.x_kubernetes_validations = None;
        }
    }
    let in_props = correlatable && s.x_kubernetes_map_type.as_deref() != Some("atomic");
    for p in s.properties.iter_mut().flat_map(|p| p.values_mut()) {
        drop_uncorrelatable_k8s_rules(p, in_props);
    }
    let in_items = correlatable && s.x_kubernetes_list_type.as_deref() == Some("map");
    match &mut s.items {
        Some(JSONSchemaPropsOrArray::Schema(item)) => drop_uncorrelatable_k8s_rules(item, in_items),
        Some(JSONSchemaPropsOrArray::Schemas(items)) => items
            .iter_mut()
            .for_each(|i| drop_uncorrelatable_k8s_rules(i, in_items)),
        None => {}
    }
    if let Some(JSONSchemaPropsOrBool::Schema(v)) = &mut s.additional_properties {
        drop_uncorrelatable_k8s_rules(v, correlatable);
    }
    for alt in [&mut s.all_of, &mut s.any_of, &mut s.one_of]
        .into_iter()
        .flatten()
        .flatten()
    {
        drop_uncorrelatable_k8s_rules(alt, correlatable);
    }
    if let Some(not) = &mut s.not {
        drop_uncorrelatable_k8s_rules(not, correlatable);
    }
}

/// When a field and its named type both set a keyword, controller-gen keeps both, as its
/// flattener does (pkg/crd/flatten.go): `merged` is the type's schema with the field's markers
/// applied over it, and this puts back what the type said. Bounds held by pointer in Go
/// (minimum, maxLength, ...) go to an `allOf` of the type's and the field's values even when
/// equal; formats, patterns and property counts only when they differ. The type's `enum`
/// wins; the field's CEL rules come before the type's. Defaults, titles, examples and
/// descriptions are the field's (controller-gen has no type-level default).
fn keep_both(ty: &JSONSchemaProps, merged: &mut JSONSchemaProps, markers: &[Marker]) {
    let set = |names: &[&str]| markers.iter().any(|m| !m.items && names.contains(&m.name));
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
    both!(
        maximum,
        &["kubebuilder:validation:Maximum", "k8s:maximum"],
        true
    );
    both!(
        minimum,
        &["kubebuilder:validation:Minimum", "k8s:minimum"],
        true
    );
    both!(multiple_of, &["kubebuilder:validation:MultipleOf"], true);
    both!(max_length, &["kubebuilder:validation:MaxLength"], true);
    both!(min_length, &["kubebuilder:validation:MinLength"], true);
    both!(
        max_items,
        &["kubebuilder:validation:MaxItems", "k8s:maxItems"],
        true
    );
    both!(min_items, &["kubebuilder:validation:MinItems"], true);
    both!(
        max_properties,
        &["kubebuilder:validation:MaxProperties"],
        false
    );
    both!(
        min_properties,
        &["kubebuilder:validation:MinProperties"],
        false
    );
    both!(format, &["kubebuilder:validation:Format"], false);
    both!(pattern, &["kubebuilder:validation:Pattern"], false);
    if set(&["kubebuilder:validation:Enum"]) && ty.enum_.is_some() {
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
    let d = match f.markers.iter().find(|m| m.name == "listType") {
        Some(m) => m.error(message),
        None => Diagnostic::new(f.loc.clone(), message),
    };
    Err(d.with_hint(
        "mark the item type `+structType=atomic`, or use `+listType=map` with `+listMapKey=`",
    ))
}

/// Add `p` as property `k`, failing if a different schema already has that name.
fn merge_property(
    props: &mut BTreeMap<String, JSONSchemaProps>,
    k: String,
    p: JSONSchemaProps,
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

/// Parse a marker value as JSON, falling back to a YAML flow value, then to a plain string.
pub fn marker_json(raw: &str) -> Value {
    let raw = raw.trim();
    if let Ok(v) = serde_json::from_str::<Value>(raw) {
        return v;
    }
    if (raw.starts_with('{') || raw.starts_with('['))
        && let Ok(v) = serde_yaml::from_str::<Value>(raw)
    {
        return v;
    }
    if raw.starts_with('`') {
        return Value::String(crate::markers::unquote(raw).unwrap_or_else(|_| raw.to_owned()));
    }
    Value::String(raw.to_owned())
}

/// Whether a JSON value fits a schema's type.
fn fits(schema: &JSONSchemaProps, v: &Value) -> bool {
    if schema.x_kubernetes_int_or_string == Some(true) {
        return v.is_string() || v.is_i64() || v.is_u64();
    }
    match schema.type_.as_deref() {
        Some("string") => v.is_string(),
        Some("integer") => v.is_i64() || v.is_u64(),
        Some("number") => v.is_number(),
        Some("boolean") => v.is_boolean(),
        Some("array") => v.is_array(),
        Some("object") => v.is_object(),
        _ => true,
    }
}

/// A marker value coerced to the schema's type: `+kubebuilder:default=5` on a string field
/// means "5", on an integer field 5.
fn typed_value(schema: &JSONSchemaProps, m: &Marker, raw: &str) -> Result<Value, Diagnostic> {
    let v = marker_json(raw);
    if fits(schema, &v) {
        return Ok(v);
    }
    if schema.type_.as_deref() == Some("string") {
        return Ok(Value::String(
            crate::markers::unquote(raw).unwrap_or_else(|_| raw.trim().to_owned()),
        ));
    }
    Err(m
        .error(format!(
            "value `{}` does not fit the field's type `{}`",
            raw.trim(),
            schema.type_.as_deref().unwrap_or("int-or-string")
        ))
        .with_hint("write the value as JSON, e.g. 5, \"text\", true, {\"a\": 1} or [1, 2]"))
}

/// The value of a default or example marker. `+kubebuilder:default`/`example` take
/// controller-gen's Go literals (`{a,b}`, `{k: v}`, bare words), with JSON arrays beside
/// them; `+default` takes JSON, as Kubernetes' defaulter does, and Go literals beside it.
fn literal_value(schema: &JSONSchemaProps, m: &Marker) -> Result<Value, Diagnostic> {
    let raw = m.string_value_raw()?;
    let raw = raw.trim();
    let parsed = if m.name == "default" {
        serde_json::from_str::<Value>(raw).or_else(|_| crate::markers::parse_any(raw))
    } else {
        crate::markers::parse_any(raw)
            .or_else(|e| serde_json::from_str::<Value>(raw).map_err(|_| e))
    };
    let v = parsed.map_err(|e| {
        m.error(format!("cannot read the value `{raw}`: {e}"))
            .with_hint(
                "write a number, true/false, a string, a list `{a,b}` or an object `{key: value}`",
            )
    })?;
    // controller-gen writes `{}` on an array as `[]`.
    let v = match v {
        Value::Object(o) if o.is_empty() && schema.type_.as_deref() == Some("array") => {
            Value::Array(vec![])
        }
        v => v,
    };
    if fits(schema, &v) {
        return Ok(v);
    }
    if schema.type_.as_deref() == Some("string") {
        return Ok(Value::String(
            crate::markers::unquote(raw).unwrap_or_else(|_| raw.to_owned()),
        ));
    }
    Err(m
        .error(format!(
            "value `{raw}` does not fit the field's type `{}`",
            schema.type_.as_deref().unwrap_or("int-or-string")
        ))
        .with_hint("e.g. 5, \"text\", true, {a,b} for a list or {key: value} for an object"))
}

fn need_type(schema: &JSONSchemaProps, m: &Marker, allowed: &[&str]) -> Result<(), Diagnostic> {
    let t = schema.type_.as_deref();
    let ok = t.is_some_and(|t| allowed.contains(&t))
        || (schema.x_kubernetes_int_or_string == Some(true)
            && allowed.iter().any(|a| matches!(*a, "string" | "integer")));
    if ok {
        return Ok(());
    }
    Err(m
        .error(format!(
            "`+{}` applies to {} values, but this one is {}",
            m.written_name(),
            allowed.join("/"),
            t.unwrap_or("untyped")
        ))
        .with_hint("move the marker to a field of the right type"))
}

/// Schemas of k8s-openapi types by path, once per process: each is a pure function of
/// the path, and expanding one is costly (PodSpec inlines dozens of types).
static K8S_SCHEMAS: Mutex<BTreeMap<String, JSONSchemaProps>> = Mutex::new(BTreeMap::new());

/// Whether each `Pattern` compiled, once per distinct pattern: APIs repeat their patterns.
static PATTERNS: Mutex<BTreeMap<String, Result<(), String>>> = Mutex::new(BTreeMap::new());

/// A cache lock; a panic elsewhere cannot leave these maps half-updated.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Compile a `Pattern` regex (RE2 syntax, which the regex crate follows) to check it;
/// `Err` carries the last line of the compiler's message.
fn check_regex(pattern: &str) -> Result<(), String> {
    if let Some(r) = lock(&PATTERNS).get(pattern) {
        return r.clone();
    }
    let r = regex::Regex::new(pattern).map(|_| ()).map_err(|e| {
        e.to_string()
            .lines()
            .last()
            .unwrap_or_default()
            .trim()
            .to_owned()
    });
    lock(&PATTERNS).insert(pattern.to_owned(), r.clone());
    r
}

/// Compile a CEL expression of an XValidation marker (`rule` or `messageExpression`) as
/// the apiserver would, so a syntax error is reported here, at the marker, instead of when
/// the CRD is applied. Only the syntax is checked: types and field names are the apiserver's.
fn check_cel(m: &Marker, arg: &str, expr: &str) -> Result<(), Diagnostic> {
    let Err(errors) = cel::Program::compile(expr) else {
        return Ok(());
    };
    let first = errors.errors.first();
    let (msg, col) = match first {
        Some(e) => (
            e.msg.trim_start_matches("Syntax error: ").to_owned(),
            e.pos.1.max(1) as usize,
        ),
        None => (errors.to_string(), 1),
    };
    // The expression with a caret under the first error (CEL columns count characters).
    let line = expr.lines().next().unwrap_or_default();
    let caret = format!("{}^", " ".repeat(col.saturating_sub(1)));
    Err(m
        .error(format!(
            "invalid CEL in XValidation `{arg}`: {msg} (column {col})"
        ))
        .with_hint(format!(
            "the expression does not compile:\n           {line}\n           {caret}"
        )))
}

/// Apply the validation and schema-shaping markers of a type or field. As in controller-gen,
/// the `kubebuilder:validation:items:<X>` forms go last, onto the array's items.
pub fn apply_markers(schema: &mut JSONSchemaProps, markers: &[Marker]) -> Result<(), Diagnostic> {
    let (items, own): (Vec<&Marker>, Vec<&Marker>) = markers.iter().partition(|m| m.items);
    apply_own_markers(schema, &own)?;
    let Some(first) = items.first() else {
        return Ok(());
    };
    match &mut schema.items {
        Some(JSONSchemaPropsOrArray::Schema(item)) if schema.type_.as_deref() == Some("array") => {
            apply_own_markers(item, &items)
        }
        _ => Err(first
            .error(format!(
                "`+{}` applies to the items of an array, but this is {}",
                first.written_name(),
                schema.type_.as_deref().unwrap_or("untyped")
            ))
            .with_hint("put it on a `Vec<T>` field (or on a type that is one)")),
    }
}

/// Whether one of these markers is present.
fn has(markers: &[&Marker], names: &[&str]) -> bool {
    markers.iter().any(|m| names.contains(&m.name))
}

fn apply_own_markers(schema: &mut JSONSchemaProps, markers: &[&Marker]) -> Result<(), Diagnostic> {
    // Type and Schemaless reshape the node, so they go first.
    for m in markers
        .iter()
        .filter(|m| m.name == "kubebuilder:validation:Type")
    {
        let t = m.string_value()?;
        const TYPES: &[&str] = &["string", "integer", "number", "boolean", "object", "array"];
        if !TYPES.contains(&t.as_str()) {
            return Err(m
                .error(format!("invalid type `{t}`"))
                .with_hint(format!("allowed values: {}", TYPES.join(", "))));
        }
        if schema.type_.as_deref() != Some(t.as_str()) {
            schema.format = None;
        }
        schema.type_ = Some(t);
    }
    // `+kubebuilder:default` goes after `+default`, so it wins when both are given
    // (controller-gen's apply priorities 10 and 9).
    let kubebuilder_default = has(markers, &["kubebuilder:default"]);
    for m in markers.iter().copied() {
        let num = |w: &str| m.parse_value::<f64>(w);
        // controller-gen refuses a fractional bound on an integer.
        let integral = |n: f64| -> Result<f64, Diagnostic> {
            if schema.type_.as_deref() == Some("integer") && n.fract() != 0.0 {
                return Err(m
                    .error(format!(
                        "`+{}={n}` is not a whole number, but the value is an integer",
                        m.written_name()
                    ))
                    .with_hint("use a whole number, or make the field a float"));
            }
            Ok(n)
        };
        let count = |w: &str| -> Result<i64, Diagnostic> {
            let n = m.parse_value::<i64>(w)?;
            if n < 0 {
                return Err(m.error(format!("`+{}` must not be negative", m.name)));
            }
            Ok(n)
        };
        match m.name {
            "kubebuilder:validation:Minimum" | "k8s:minimum" => {
                need_type(schema, m, &["integer", "number"])?;
                schema.minimum = Some(integral(num("a number")?)?);
            }
            "kubebuilder:validation:Maximum" | "k8s:maximum" => {
                need_type(schema, m, &["integer", "number"])?;
                schema.maximum = Some(integral(num("a number")?)?);
            }
            // `false` is the default, and Go's omitempty leaves it out: so do we.
            "kubebuilder:validation:ExclusiveMinimum" => {
                schema.exclusive_minimum = m.bool_value()?.then_some(true)
            }
            "kubebuilder:validation:ExclusiveMaximum" => {
                schema.exclusive_maximum = m.bool_value()?.then_some(true)
            }
            "kubebuilder:validation:MultipleOf" => {
                need_type(schema, m, &["integer", "number"])?;
                let n = num("a number")?;
                if n <= 0.0 {
                    return Err(
                        m.error("`+kubebuilder:validation:MultipleOf` must be greater than 0")
                    );
                }
                schema.multiple_of = Some(integral(n)?);
            }
            "kubebuilder:validation:MinLength" => {
                need_type(schema, m, &["string"])?;
                schema.min_length = Some(count("a non-negative integer")?);
            }
            "kubebuilder:validation:MaxLength" => {
                need_type(schema, m, &["string"])?;
                schema.max_length = Some(count("a non-negative integer")?);
            }
            "kubebuilder:validation:Pattern" => {
                need_type(schema, m, &["string"])?;
                let p = m.string_value()?;
                if let Err(detail) = check_regex(&p) {
                    return Err(m.error(format!("invalid regular expression `{p}`: {detail}")).with_hint("patterns use RE2 syntax (no lookaround or backreferences); quote them with backticks to avoid escaping"));
                }
                schema.pattern = Some(p);
            }
            "kubebuilder:validation:MinItems" => {
                need_type(schema, m, &["array"])?;
                schema.min_items = Some(count("a non-negative integer")?);
            }
            "kubebuilder:validation:MaxItems" | "k8s:maxItems" => {
                need_type(schema, m, &["array"])?;
                schema.max_items = Some(count("a non-negative integer")?);
            }
            "kubebuilder:validation:UniqueItems" => {
                need_type(schema, m, &["array"])?;
                if m.bool_value()? {
                    // The apiserver rejects such a CRD: "uniqueItems cannot be set to true since
                    // the runtime complexity becomes quadratic".
                    return Err(m
                        .error("`uniqueItems: true` is forbidden in CRD schemas (the API server rejects the CRD)")
                        .with_hint("use `+listType=set` (or a BTreeSet field) for a list without duplicates"));
                }
            }
            "kubebuilder:validation:MinProperties" => {
                need_type(schema, m, &["object"])?;
                schema.min_properties = Some(count("a non-negative integer")?);
            }
            "kubebuilder:validation:MaxProperties" => {
                need_type(schema, m, &["object"])?;
                schema.max_properties = Some(count("a non-negative integer")?);
            }
            "kubebuilder:validation:Enum" => {
                let raw = m.string_value()?;
                let items = split_list(&raw);
                if items.is_empty() {
                    return Err(m
                        .error("`+kubebuilder:validation:Enum` needs at least one value")
                        .with_hint("separate values with `;`, e.g. `Enum=Always;Never`"));
                }
                let mut values = vec![];
                for i in items {
                    values.push(JSON(typed_value(schema, m, &i)?));
                }
                schema.enum_ = Some(values);
            }
            "kubebuilder:validation:Format" => {
                need_type(schema, m, &["string", "integer", "number"])?;
                schema.format = Some(m.string_value()?);
            }
            "kubebuilder:validation:XValidation" => {
                let rule = m.arg("rule").unwrap_or_default().trim().to_owned();
                if rule.is_empty() {
                    return Err(m.error("XValidation rule is empty"));
                }
                check_cel(m, "rule", &rule)?;
                if let Some(expr) = m.arg("messageExpression") {
                    check_cel(m, "messageExpression", expr)?;
                }
                let reason = m.arg("reason").map(str::to_owned);
                const REASONS: &[&str] = &[
                    "FieldValueInvalid",
                    "FieldValueForbidden",
                    "FieldValueRequired",
                    "FieldValueDuplicate",
                ];
                if let Some(r) = &reason
                    && !REASONS.contains(&r.as_str())
                {
                    return Err(m
                        .error(format!("invalid XValidation reason `{r}`"))
                        .with_hint(format!("allowed values: {}", REASONS.join(", "))));
                }
                let optional_old_self = match m.arg("optionalOldSelf") {
                    None => None,
                    Some("true") => Some(true),
                    Some("false") => Some(false),
                    Some(o) => {
                        return Err(
                            m.error(format!("optionalOldSelf takes true or false, not `{o}`"))
                        );
                    }
                };
                schema
                    .x_kubernetes_validations
                    .get_or_insert_with(Vec::new)
                    .push(ValidationRule {
                        rule,
                        message: m.arg("message").map(str::to_owned),
                        message_expression: m.arg("messageExpression").map(str::to_owned),
                        reason,
                        field_path: m.arg("fieldPath").map(str::to_owned),
                        optional_old_self,
                    });
            }
            "kubebuilder:validation:XPreserveUnknownFields"
            | "kubebuilder:pruning:PreserveUnknownFields" => {
                schema.x_kubernetes_preserve_unknown_fields = Some(true)
            }
            "kubebuilder:validation:XEmbeddedResource"
            | "kubebuilder:validation:EmbeddedResource" => {
                need_type(schema, m, &["object"])?;
                schema.x_kubernetes_embedded_resource = Some(true);
            }
            "kubebuilder:validation:XIntOrString" => {
                *schema = JSONSchemaProps {
                    description: schema.description.take(),
                    ..int_or_string()
                };
            }
            "default" if kubebuilder_default => {}
            "kubebuilder:default" | "default" => {
                schema.default = Some(JSON(literal_value(schema, m)?));
            }
            "kubebuilder:example" => {
                schema.example = Some(JSON(literal_value(schema, m)?));
            }
            "kubebuilder:title" => schema.title = Some(m.string_value()?),
            "listType" | "k8s:listType" => {
                need_type(schema, m, &["array"])?;
                let v = m.string_value()?;
                if !matches!(v.as_str(), "atomic" | "set" | "map") {
                    return Err(m
                        .error(format!("invalid listType `{v}`"))
                        .with_hint("allowed values: atomic, set, map"));
                }
                schema.x_kubernetes_list_type = Some(v);
            }
            "listMapKey" | "k8s:listMapKey" => {
                need_type(schema, m, &["array"])?;
                schema
                    .x_kubernetes_list_map_keys
                    .get_or_insert_with(Vec::new)
                    .push(m.string_value()?);
            }
            "kubebuilder:externalDocs" => {
                let url = m.arg("url").unwrap_or_default().trim().to_owned();
                static URI: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
                    regex::Regex::new(r"^([a-zA-Z][a-zA-Z0-9+.-]*:|/)\S*$").expect("static regex")
                });
                // Go's url.ParseRequestURI, which controller-gen applies: absolute URL or path.
                if !URI.is_match(&url) {
                    return Err(m
                        .error(format!(
                            "invalid url `{url}` in `+kubebuilder:externalDocs`"
                        ))
                        .with_hint("give an absolute URL such as `https://example.com/docs`"));
                }
                schema.external_docs = Some(ExternalDocumentation {
                    url: Some(url),
                    description: m.arg("description").map(str::to_owned),
                });
            }
            "k8s:immutable" => {
                // controller-gen's rule; the parent object gets one more for optional fields.
                schema
                    .x_kubernetes_validations
                    .get_or_insert_with(Vec::new)
                    .push(ValidationRule {
                        rule: "self == oldSelf".into(),
                        message: Some("field is immutable".into()),
                        ..Default::default()
                    });
            }
            "k8s:enum" if schema.type_.as_deref() != Some("string") || schema.enum_.is_none() => {
                return Err(m
                    .error("`+k8s:enum` marks a string enum, and this type is not one")
                    .with_hint("put it on an enum of unit variants (its variants are the values), or use `+kubebuilder:validation:Enum=a;b`"));
            }
            "mapType" | "structType" => {
                need_type(schema, m, &["object"])?;
                let v = m.string_value()?;
                if !matches!(v.as_str(), "granular" | "atomic") {
                    return Err(m
                        .error(format!("invalid {} `{v}`", m.name))
                        .with_hint("allowed values: granular, atomic"));
                }
                schema.x_kubernetes_map_type = Some(v);
            }
            _ => {}
        }
    }
    // `+k8s:required` also asks for a non-empty value, unless a bound is set already.
    if has(markers, &["k8s:required"]) {
        match schema.type_.as_deref() {
            Some("string") => {
                schema.min_length.get_or_insert(1);
            }
            Some("array") => {
                schema.min_items.get_or_insert(1);
            }
            Some("object") => {
                schema.min_properties.get_or_insert(1);
            }
            _ => {}
        }
    }
    // The one-of rules go after the XValidation rules, in controller-gen's order.
    for kind in [OneOf::AtMost, OneOf::Exactly, OneOf::AtLeast] {
        for m in markers.iter().filter(|m| m.name == kind.marker()) {
            one_of_rule(schema, m, kind)?;
        }
    }
    check_list_map(schema, markers)
}

/// controller-gen's union markers on a struct: CEL rules over which fields are set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OneOf {
    AtMost,
    Exactly,
    AtLeast,
}

impl OneOf {
    fn marker(self) -> &'static str {
        match self {
            OneOf::AtMost => "kubebuilder:validation:AtMostOneOf",
            OneOf::Exactly => "kubebuilder:validation:ExactlyOneOf",
            OneOf::AtLeast => "kubebuilder:validation:AtLeastOneOf",
        }
    }
}

/// Add the rule of one `AtMostOneOf`/`ExactlyOneOf`/`AtLeastOneOf` marker, with
/// controller-gen's exact rule text and message.
fn one_of_rule(schema: &mut JSONSchemaProps, m: &Marker, kind: OneOf) -> Result<(), Diagnostic> {
    let fields = split_list(&m.string_value()?);
    if fields.is_empty() {
        return Err(m
            .error(format!("`+{}` names no fields", m.name))
            .with_hint("list the JSON names of the fields, e.g. `=configMapRef;secretRef`"));
    }
    let props = schema.properties.as_ref();
    for f in &fields {
        if f.contains('.') {
            return Err(m
                .error(format!("`+{}` cannot name the nested field `{f}`", m.name))
                .with_hint(
                    "name fields of this struct only; put the marker on the nested struct",
                ));
        }
        if !props.is_some_and(|p| p.contains_key(f)) {
            let known: Vec<&String> = props.iter().flat_map(|p| p.keys()).collect();
            return Err(m
                .error(format!(
                    "`+{}` names `{f}`, which is not a field of this struct",
                    m.name
                ))
                .with_hint(format!(
                    "use the fields' JSON names: {}",
                    known
                        .iter()
                        .map(|k| k.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
        }
        if schema.required.iter().flatten().any(|r| r == f) {
            return Err(m
                .error(format!("field `{f}` is in `+{}`, so it cannot be required", m.name))
                .with_hint("make the field optional: `Option<T>` (or `#[serde(default)]`), without `+required`"));
        }
    }
    let sum = || {
        fields
            .iter()
            .map(|f| format!("(has(self.{f})?1:0)"))
            .collect::<Vec<_>>()
            .join("+")
    };
    // Go's `%v` of a []string: `[a b]`.
    let list = format!("[{}]", fields.join(" "));
    let (rule, message) = match kind {
        OneOf::AtMost => (
            format!("{} <= 1", sum()),
            format!("at most one of the fields in {list} may be set"),
        ),
        OneOf::Exactly => (
            format!("{} == 1", sum()),
            format!("exactly one of the fields in {list} must be set"),
        ),
        OneOf::AtLeast => (
            fields
                .iter()
                .map(|f| format!("has(self.{f})"))
                .collect::<Vec<_>>()
                .join("||"),
            format!("at least one of the fields in {list} must be set"),
        ),
    };
    schema
        .x_kubernetes_validations
        .get_or_insert_with(Vec::new)
        .push(ValidationRule {
            rule,
            message: Some(message),
            ..Default::default()
        });
    Ok(())
}

/// `listType=map` needs `listMapKey`s naming required-or-defaulted scalar item properties.
fn check_list_map(schema: &JSONSchemaProps, markers: &[&Marker]) -> Result<(), Diagnostic> {
    let is_key = |m: &&&Marker| matches!(m.name, "listMapKey" | "k8s:listMapKey");
    let key_marker = markers.iter().find(is_key);
    let type_marker = markers
        .iter()
        .find(|m| matches!(m.name, "listType" | "k8s:listType"));
    match (
        schema.x_kubernetes_list_type.as_deref(),
        &schema.x_kubernetes_list_map_keys,
    ) {
        (Some("map"), None) => Err(type_marker
            .expect("set by marker")
            .error("`+listType=map` needs at least one `+listMapKey=`")),
        (Some("map"), Some(keys)) => {
            let item = match &schema.items {
                Some(JSONSchemaPropsOrArray::Schema(s)) => s,
                _ => return Ok(()),
            };
            for (i, k) in keys.iter().enumerate() {
                let prop = item.properties.as_ref().and_then(|p| p.get(k));
                let required = item.required.as_ref().is_some_and(|r| r.contains(k));
                // Point at the marker naming this key. Keys that passed the type's own check
                // (a type-level `+listMapKey`) pass here too, so there is a marker on error.
                let at = || {
                    markers
                        .iter()
                        .find(|m| is_key(m) && m.string_value().is_ok_and(|v| &v == k))
                        .or(key_marker)
                        .expect("set")
                };
                if keys[..i].contains(k) {
                    return Err(at().error(format!("listMapKey `{k}` is given twice")));
                }
                match prop {
                    None => {
                        return Err(at().error(format!(
                            "listMapKey `{k}` is not a property of the list items"
                        )));
                    }
                    Some(p) if matches!(p.type_.as_deref(), Some("object" | "array")) => {
                        return Err(at().error(format!(
                            "listMapKey `{k}` must be a scalar, but it is an {}",
                            p.type_.as_deref().unwrap_or_default()
                        )));
                    }
                    Some(p) if !required && p.default.is_none() => {
                        return Err(at()
                            .error(format!(
                                "listMapKey `{k}` must be required or have a default"
                            ))
                            .with_hint("make the field non-Option, or add +kubebuilder:default"));
                    }
                    _ => {}
                }
            }
            Ok(())
        }
        (_, Some(_)) => Err(key_marker
            .expect("set")
            .error("`+listMapKey` needs `+listType=map`")),
        _ => Ok(()),
    }
}

impl Marker {
    /// The marker's name as written: the `items:` form says so.
    pub fn written_name(&self) -> String {
        match self.name.strip_prefix("kubebuilder:validation:") {
            Some(rest) if self.items => format!("{}{rest}", crate::markers::ITEMS_PREFIX),
            _ => self.name.to_owned(),
        }
    }

    /// The value exactly as written (quotes kept), for JSON-ish values such as defaults.
    pub fn string_value_raw(&self) -> Result<String, Diagnostic> {
        self.value
            .clone()
            .ok_or_else(|| self.error(format!("`+{}` needs a value", self.name)))
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
        let next = node.properties.as_ref().and_then(|p| p.get(*seg)).or(
            match &node.additional_properties {
                Some(JSONSchemaPropsOrBool::Schema(s)) => Some(&**s),
                _ => None,
            },
        );
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
