//! The structural schema, as the CRD carries it (`JSONSchemaProps`, the keywords a
//! structural schema may use), compiled once: patterns and CEL rules.

use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;
use serde_json::Value;

use crate::cel;

/// A CRD version's schema (or one node of it), compiled.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Schema {
    #[serde(rename = "type", default)]
    pub(super) type_: Option<String>,
    #[serde(default)]
    pub(super) format: Option<String>,
    #[serde(default)]
    pub(super) properties: BTreeMap<String, Schema>,
    #[serde(default)]
    pub(super) additional_properties: Option<AdditionalProperties>,
    #[serde(default)]
    pub(super) items: Option<Box<Schema>>,
    #[serde(default)]
    pub(super) required: Vec<String>,
    #[serde(default)]
    pub(super) nullable: bool,
    #[serde(default)]
    pub(super) default: Option<Value>,
    #[serde(rename = "enum", default)]
    pub(super) enum_: Option<Vec<Value>>,
    #[serde(default)]
    pub(super) minimum: Option<f64>,
    #[serde(default)]
    pub(super) maximum: Option<f64>,
    #[serde(default)]
    pub(super) exclusive_minimum: bool,
    #[serde(default)]
    pub(super) exclusive_maximum: bool,
    #[serde(default)]
    pub(super) multiple_of: Option<f64>,
    #[serde(default)]
    pub(super) min_length: Option<u64>,
    #[serde(default)]
    pub(super) max_length: Option<u64>,
    #[serde(default)]
    pub(super) min_items: Option<u64>,
    #[serde(default)]
    pub(super) max_items: Option<u64>,
    #[serde(default)]
    pub(super) min_properties: Option<u64>,
    #[serde(default)]
    pub(super) max_properties: Option<u64>,
    #[serde(default)]
    pub(super) unique_items: bool,
    #[serde(default)]
    pub(super) pattern: Option<String>,
    #[serde(default)]
    pub(super) all_of: Vec<Schema>,
    #[serde(default)]
    pub(super) any_of: Vec<Schema>,
    #[serde(default)]
    pub(super) one_of: Vec<Schema>,
    #[serde(default)]
    pub(super) not: Option<Box<Schema>>,
    #[serde(rename = "x-kubernetes-preserve-unknown-fields", default)]
    pub(super) preserve_unknown_fields: bool,
    #[serde(rename = "x-kubernetes-embedded-resource", default)]
    pub(super) embedded_resource: bool,
    #[serde(rename = "x-kubernetes-list-type", default)]
    pub(super) list_type: Option<String>,
    #[serde(rename = "x-kubernetes-list-map-keys", default)]
    pub(super) list_map_keys: Vec<String>,
    #[serde(rename = "x-kubernetes-validations", default)]
    pub(super) validations: Vec<Rule>,
    #[serde(skip)]
    pub(super) compiled_pattern: Option<regex::Regex>,
}

/// `additionalProperties`: a schema, or `true`/`false`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum AdditionalProperties {
    // `false` is not allowed in a structural schema, `true` means "any value".
    Bool(#[allow(dead_code)] bool),
    Schema(Box<Schema>),
}

/// One `x-kubernetes-validations` entry.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Rule {
    pub rule: String,
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default)]
    pub message_expression: Option<String>,
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub field_path: Option<String>,
    #[serde(default)]
    pub optional_old_self: Option<bool>,
    #[serde(skip)]
    pub program: Option<cel::Program>,
    #[serde(skip)]
    pub message_program: Option<cel::Program>,
}

/// A schema that cannot be used: not JSON of a schema, a pattern that does not compile, a
/// CEL rule the evaluator cannot run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaError {
    /// Where in the schema (`properties.spec.x-kubernetes-validations[0]`).
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

impl std::error::Error for SchemaError {}

impl Schema {
    /// Parses and compiles a schema from its JSON (a CRD version's `openAPIV3Schema`).
    pub fn from_json(json: &str) -> Result<Schema, SchemaError> {
        let mut s: Schema = serde_json::from_str(json).map_err(|e| SchemaError {
            path: String::new(),
            message: e.to_string(),
        })?;
        let mut errors = vec![];
        s.compile("", &mut errors);
        match errors.into_iter().next() {
            Some(e) => Err(e),
            None => Ok(s),
        }
    }

    /// Every pattern and rule of the schema that does not compile (what code generation
    /// checks), with where it is.
    pub fn check_json(json: &Value) -> Vec<SchemaError> {
        let mut s: Schema = match serde_json::from_value(json.clone()) {
            Ok(s) => s,
            Err(e) => {
                return vec![SchemaError {
                    path: String::new(),
                    message: e.to_string(),
                }];
            }
        };
        let mut errors = vec![];
        s.compile("", &mut errors);
        errors
    }

    fn compile(&mut self, path: &str, errors: &mut Vec<SchemaError>) {
        let at = |p: &str| {
            if path.is_empty() {
                p.to_owned()
            } else {
                format!("{path}.{p}")
            }
        };
        if let Some(p) = &self.pattern {
            match crate::re2::regex(p) {
                Ok(re) => self.compiled_pattern = Some(re),
                Err(e) => errors.push(SchemaError {
                    path: at("pattern"),
                    message: e.to_string(),
                }),
            }
        }
        for (i, r) in self.validations.iter_mut().enumerate() {
            let here = at(&format!("x-kubernetes-validations[{i}]"));
            match cel::compile(&r.rule) {
                Ok(p) => r.program = Some(p),
                Err(e) => errors.push(SchemaError {
                    path: format!("{here}.rule"),
                    message: e.to_string(),
                }),
            }
            if let Some(m) = &r.message_expression {
                match cel::compile(m) {
                    Ok(p) => r.message_program = Some(p),
                    Err(e) => errors.push(SchemaError {
                        path: format!("{here}.messageExpression"),
                        message: e.to_string(),
                    }),
                }
            }
        }
        for (k, p) in &mut self.properties {
            p.compile(&at(&format!("properties.{k}")), errors);
        }
        if let Some(AdditionalProperties::Schema(s)) = &mut self.additional_properties {
            s.compile(&at("additionalProperties"), errors);
        }
        if let Some(i) = &mut self.items {
            i.compile(&at("items"), errors);
        }
        for (name, list) in [
            ("allOf", &mut self.all_of),
            ("anyOf", &mut self.any_of),
            ("oneOf", &mut self.one_of),
        ] {
            for (i, s) in list.iter_mut().enumerate() {
                s.compile(&at(&format!("{name}[{i}]")), errors);
            }
        }
        if let Some(n) = &mut self.not {
            n.compile(&at("not"), errors);
        }
    }

    pub(super) fn additional(&self) -> Option<&Schema> {
        match &self.additional_properties {
            Some(AdditionalProperties::Schema(s)) => Some(s),
            _ => None,
        }
    }

    /// The schema of a property or map value.
    pub(super) fn field(&self, k: &str) -> Option<&Schema> {
        self.properties.get(k).or_else(|| self.additional())
    }

    /// What the API server does to an object before validating and storing it: unknown
    /// fields pruned, non-nullable nulls without a default pruned, embedded resources'
    /// metadata rewritten as `metav1.ObjectMeta` writes it (unknown and empty fields
    /// dropped), then defaults applied (`structuraldefaulting.Default`).
    pub fn default_value(&self, v: &mut Value) {
        self.prune(v, true);
        self.prune_nulls(v);
        self.coerce_embedded(v);
        self.apply_defaults(v);
    }

    /// Drops fields the schema does not know (`structuralpruning`); at the root and in
    /// embedded resources `apiVersion`, `kind` and `metadata` stay.
    pub(super) fn prune(&self, v: &mut Value, root: bool) {
        if self.preserve_unknown_fields && self.properties.is_empty() && self.additional().is_none()
        {
            return;
        }
        match v {
            Value::Object(m) => {
                let keep_meta = root || self.embedded_resource;
                if !self.preserve_unknown_fields && self.additional_properties.is_none() {
                    m.retain(|k, _| {
                        self.properties.contains_key(k)
                            || (keep_meta
                                && matches!(k.as_str(), "apiVersion" | "kind" | "metadata"))
                    });
                }
                for (k, x) in m.iter_mut() {
                    if let Some(s) = self.field(k) {
                        if keep_meta && k == "metadata" {
                            continue;
                        }
                        s.prune(x, false);
                    }
                }
            }
            Value::Array(a) => {
                if let Some(items) = &self.items {
                    for x in a {
                        items.prune(x, false);
                    }
                }
            }
            _ => {}
        }
    }

    fn prune_nulls(&self, v: &mut Value) {
        match v {
            Value::Object(m) => {
                m.retain(|k, x| {
                    !(x.is_null()
                        && self
                            .field(k)
                            .is_some_and(|s| !s.nullable && s.default.is_none()))
                });
                for (k, x) in m.iter_mut() {
                    if let Some(s) = self.field(k) {
                        s.prune_nulls(x);
                    }
                }
            }
            Value::Array(a) => {
                if let Some(items) = &self.items {
                    for x in a {
                        items.prune_nulls(x);
                    }
                }
            }
            _ => {}
        }
    }

    fn apply_defaults(&self, v: &mut Value) {
        match v {
            Value::Object(m) => {
                for (k, p) in &self.properties {
                    if let Some(d) = &p.default {
                        match m.get(k) {
                            None => {
                                m.insert(k.clone(), d.clone());
                            }
                            Some(Value::Null) if !p.nullable => {
                                m.insert(k.clone(), d.clone());
                            }
                            _ => {}
                        }
                    }
                }
                for (k, x) in m.iter_mut() {
                    if let Some(p) = self.properties.get(k) {
                        p.apply_defaults(x);
                    } else if let Some(a) = self.additional() {
                        if x.is_null() && !a.nullable {
                            *x = a.default.clone().unwrap_or(Value::Null);
                        }
                        a.apply_defaults(x);
                    }
                }
            }
            Value::Array(a) => {
                if let Some(items) = &self.items {
                    for x in a {
                        if x.is_null() && !items.nullable {
                            *x = items.default.clone().unwrap_or(Value::Null);
                        }
                        items.apply_defaults(x);
                    }
                }
            }
            _ => {}
        }
    }
}
