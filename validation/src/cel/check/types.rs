//! CEL types, and the declared type of a structural schema with the size bounds the API
//! server's cost estimator reads (k8s.io/apiserver pkg/cel/common/schemas.go
//! `SchemaDeclType`, pkg/cel/types.go, apiextensions-apiserver's `WithTypeAndObjectMeta`).

use std::collections::BTreeMap;
use std::fmt;

use serde_json::Value;

use crate::cel::escape;
use crate::cel::limits::MAX_REQUEST_SIZE_BYTES;

/// `apiservercel.MaxDurationSizeJSON` / `MaxDatetimeSizeJSON` / `JSONDateSize`.
const MAX_DURATION_SIZE_JSON: i64 = 32;
const MAX_DATETIME_SIZE_JSON: i64 = 32;
const JSON_DATE_SIZE: i64 = 12;
const MIN_DURATION_SIZE_JSON: i64 = 3;
const MIN_DATETIME_SIZE_JSON: i64 = 21;
const MIN_STRING_SIZE: i64 = 2;
const MIN_BOOL_SIZE: i64 = 4;
const MIN_NUMBER_SIZE: i64 = 1;
/// `metadata.name` of a resource is a DNS-1123 subdomain.
const NAME_MAX_LENGTH: i64 = 253;

/// A CEL type as cel-go's checker sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Type {
    Bool,
    Int,
    Uint,
    Double,
    String,
    Bytes,
    Null,
    Duration,
    Timestamp,
    /// `dyn`: any value (int-or-string fields, ambiguous overloads).
    Dyn,
    /// What this checker does not model (a function it has no declaration for): behaves as
    /// `dyn` but never makes a verdict (no "must evaluate to a bool" on it), so that a
    /// construct we do not know cannot become a false refusal.
    Unknown,
    Error,
    List(Box<Type>),
    Map(Box<Type>, Box<Type>),
    /// A message/object type by name: the schema's objects (`selfType.spec`...) and the
    /// Kubernetes library's `kubernetes.Quantity`, `kubernetes.URL`...
    Struct(String),
    /// An opaque type with parameters: `optional_type(T)`, `net.IP`, `net.CIDR`.
    Opaque(&'static str, Vec<Type>),
    /// A type parameter of an overload or a free type variable of the checker.
    Param(String),
    /// `type(T)`: the type of type values (`int`, `string`... as identifiers).
    #[allow(clippy::enum_variant_names)]
    Type(Box<Type>),
}

pub const OPTIONAL: &str = "optional_type";

impl Type {
    pub fn optional(t: Type) -> Type {
        Type::Opaque(OPTIONAL, vec![t])
    }
    pub fn list(t: Type) -> Type {
        Type::List(Box::new(t))
    }
    pub fn map(k: Type, v: Type) -> Type {
        Type::Map(Box::new(k), Box::new(v))
    }
    pub fn is_dyn(&self) -> bool {
        matches!(self, Type::Dyn | Type::Unknown)
    }
    pub fn is_dyn_or_error(&self) -> bool {
        matches!(self, Type::Dyn | Type::Unknown | Type::Error)
    }
    /// Whether the type mentions something this checker does not model.
    pub fn has_unknown(&self) -> bool {
        match self {
            Type::Unknown => true,
            Type::List(t) | Type::Type(t) => t.has_unknown(),
            Type::Map(k, v) => k.has_unknown() || v.has_unknown(),
            Type::Opaque(_, ps) => ps.iter().any(Type::has_unknown),
            _ => false,
        }
    }
    pub fn params(&self) -> Vec<&Type> {
        match self {
            Type::List(t) | Type::Type(t) => vec![t],
            Type::Map(k, v) => vec![k, v],
            Type::Opaque(_, ps) => ps.iter().collect(),
            _ => vec![],
        }
    }
    /// Scalars have size 1 in cel-go's cost model (`isScalar`).
    pub fn is_scalar(&self) -> bool {
        match self {
            Type::Bool
            | Type::Double
            | Type::Duration
            | Type::Int
            | Type::Timestamp
            | Type::Uint => true,
            Type::Opaque(OPTIONAL, ps) => ps[0].is_scalar(),
            _ => false,
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Bool => f.write_str("bool"),
            Type::Int => f.write_str("int"),
            Type::Uint => f.write_str("uint"),
            Type::Double => f.write_str("double"),
            Type::String => f.write_str("string"),
            Type::Bytes => f.write_str("bytes"),
            Type::Null => f.write_str("null_type"),
            Type::Duration => f.write_str("google.protobuf.Duration"),
            Type::Timestamp => f.write_str("google.protobuf.Timestamp"),
            Type::Dyn | Type::Unknown => f.write_str("dyn"),
            Type::Error => f.write_str("*error*"),
            Type::List(t) => write!(f, "list({t})"),
            Type::Map(k, v) => write!(f, "map({k}, {v})"),
            Type::Struct(n) => f.write_str(n),
            Type::Opaque(n, ps) if ps.is_empty() => f.write_str(n),
            Type::Opaque(n, ps) => {
                let ps: Vec<String> = ps.iter().map(ToString::to_string).collect();
                write!(f, "{n}({})", ps.join(", "))
            }
            Type::Param(n) => f.write_str(n),
            Type::Type(t) => write!(f, "type({t})"),
        }
    }
}

/// The declared type of a schema node (`apiservercel.DeclType`): its CEL shape, the most
/// elements (characters, items, properties) it can have and its smallest serialized size.
#[derive(Clone, Debug)]
pub struct Decl {
    pub kind: DeclKind,
    pub max_elements: i64,
    pub min_size: i64,
    /// The keyword that would bound the node, when its size is only bounded by the request's
    /// (for the cost hint).
    pub unbounded: Option<&'static str>,
}

#[derive(Clone, Debug)]
pub enum DeclKind {
    Bool,
    Int,
    Double,
    String,
    Bytes,
    Duration,
    Timestamp,
    Dyn,
    List(Box<Decl>),
    /// Keys are strings (with max elements 0, as the server's `StringType`).
    Map(Box<Decl>),
    /// Fields by their CEL (escaped) names.
    Object(BTreeMap<String, Decl>),
}

impl Decl {
    fn simple(kind: DeclKind, min_size: i64) -> Decl {
        Decl {
            kind,
            max_elements: 0,
            min_size,
            unbounded: None,
        }
    }

    /// The node a cost-estimation path (`spec`, `@items`, `@values`, `@keys`) leads to.
    pub fn walk(&self, path: &[String]) -> Option<&Decl> {
        let mut node = self;
        for name in path {
            node = match (name.as_str(), &node.kind) {
                ("@items" | "@values", DeclKind::List(e) | DeclKind::Map(e)) => e,
                ("@keys", DeclKind::Map(_)) => {
                    return if path.last() == Some(name) {
                        Some(&MAP_KEY)
                    } else {
                        None
                    };
                }
                (_, DeclKind::Object(fields)) => fields.get(name)?,
                _ => return None,
            };
        }
        Some(node)
    }

    /// The CEL type of the node; objects are named by their path from `name` as the server
    /// names them (`MaybeAssignTypeName`), and registered in `structs`.
    pub fn cel_type(
        &self,
        name: &str,
        structs: &mut BTreeMap<String, BTreeMap<String, Type>>,
    ) -> Type {
        match &self.kind {
            DeclKind::Bool => Type::Bool,
            DeclKind::Int => Type::Int,
            DeclKind::Double => Type::Double,
            DeclKind::String => Type::String,
            DeclKind::Bytes => Type::Bytes,
            DeclKind::Duration => Type::Duration,
            DeclKind::Timestamp => Type::Timestamp,
            DeclKind::Dyn => Type::Dyn,
            DeclKind::List(e) => Type::list(e.cel_type(&format!("{name}.@idx"), structs)),
            DeclKind::Map(e) => {
                Type::map(Type::String, e.cel_type(&format!("{name}.@elem"), structs))
            }
            DeclKind::Object(fields) => {
                let fs = fields
                    .iter()
                    .map(|(f, d)| (f.clone(), d.cel_type(&format!("{name}.{f}"), structs)))
                    .collect();
                structs.insert(name.to_string(), fs);
                Type::Struct(name.to_string())
            }
        }
    }
}

static MAP_KEY: Decl = Decl {
    kind: DeclKind::String,
    max_elements: 0,
    min_size: MIN_STRING_SIZE,
    unbounded: None,
};

fn get_i64(s: &Value, key: &str) -> Option<i64> {
    s.get(key).and_then(Value::as_i64)
}

fn flag(s: &Value, key: &str) -> bool {
    s.get(key).and_then(Value::as_bool) == Some(true)
}

fn ty(s: &Value) -> &str {
    s.get("type").and_then(Value::as_str).unwrap_or("")
}

fn unbounded(s: &Value, keyword: &'static str) -> Option<&'static str> {
    s.get(keyword).is_none().then_some(keyword)
}

fn zero_if_negative(v: i64) -> i64 {
    v.max(0)
}

/// `SchemaDeclType(s, isResourceRoot)`: `None` where the server has no declared type (no
/// `type`, an array without items...): such fields are left out of their object's type.
pub fn schema_decl(s: &Value, is_resource_root: bool) -> Option<Decl> {
    if flag(s, "x-kubernetes-int-or-string") {
        // The smallest serialized int-or-string is `0`.
        let max = match get_i64(s, "maxLength") {
            Some(l) => zero_if_negative(l) * 4,
            None => MAX_REQUEST_SIZE_BYTES - 2,
        };
        return Some(Decl {
            kind: DeclKind::Dyn,
            max_elements: max,
            min_size: 1,
            unbounded: unbounded(s, "maxLength"),
        });
    }
    // A resource root's implied fields replace its own (read in the object branch below),
    // so the schema, which can be large, is never copied to add them.
    let implied = if is_resource_root {
        type_and_object_meta(s)
    } else {
        None
    };
    match ty(s) {
        "array" => {
            let items = s.get("items").filter(|i| i.is_object())?;
            let item = schema_decl(items, flag(items, "x-kubernetes-embedded-resource"))?;
            let max = match get_i64(s, "maxItems") {
                Some(m) => zero_if_negative(m),
                None => (MAX_REQUEST_SIZE_BYTES - 2) / (item.min_size + 1),
            };
            Some(Decl {
                kind: DeclKind::List(Box::new(item)),
                max_elements: max,
                min_size: 2,
                unbounded: unbounded(s, "maxItems"),
            })
        }
        "object" => {
            if let Some(props) = s.get("additionalProperties").filter(|p| p.is_object()) {
                let value = schema_decl(props, flag(props, "x-kubernetes-embedded-resource"))?;
                let max = match get_i64(s, "maxProperties") {
                    Some(m) => zero_if_negative(m),
                    None => (MAX_REQUEST_SIZE_BYTES - 2) / (value.min_size + 6),
                };
                return Some(Decl {
                    kind: DeclKind::Map(Box::new(value)),
                    max_elements: max,
                    min_size: 2,
                    unbounded: unbounded(s, "maxProperties"),
                });
            }
            let required: Vec<&str> = s
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let mut fields = BTreeMap::new();
            let mut min_size = 2;
            let own = s.get("properties").and_then(Value::as_object);
            let replaced = |name: &str| implied.as_ref().is_some_and(|i| i.contains_key(name));
            let props = own
                .into_iter()
                .flatten()
                .filter(|(name, _)| !replaced(name))
                .chain(implied.iter().flatten());
            for (name, prop) in props {
                let Some(field) = schema_decl(prop, flag(prop, "x-kubernetes-embedded-resource"))
                else {
                    continue;
                };
                if required.contains(&name.as_str()) && prop.get("default").is_none() {
                    min_size += name.len() as i64 + field.min_size + 4;
                }
                if let Some(escaped) = escape(name) {
                    fields.insert(escaped, field);
                }
            }
            Some(Decl {
                kind: DeclKind::Object(fields),
                max_elements: 0,
                min_size,
                unbounded: None,
            })
        }
        "string" => {
            let format = s.get("format").and_then(Value::as_str).unwrap_or("");
            let max_length = get_i64(s, "maxLength");
            let d = match format {
                "byte" => Decl {
                    kind: DeclKind::Bytes,
                    max_elements: max_length.map_or(MAX_REQUEST_SIZE_BYTES - 2, zero_if_negative),
                    min_size: MIN_STRING_SIZE,
                    unbounded: unbounded(s, "maxLength"),
                },
                "duration" => Decl {
                    kind: DeclKind::Duration,
                    max_elements: MAX_DURATION_SIZE_JSON,
                    min_size: MIN_DURATION_SIZE_JSON,
                    unbounded: None,
                },
                "date" => Decl {
                    kind: DeclKind::Timestamp,
                    max_elements: JSON_DATE_SIZE,
                    min_size: JSON_DATE_SIZE,
                    unbounded: None,
                },
                "date-time" => Decl {
                    kind: DeclKind::Timestamp,
                    max_elements: MAX_DATETIME_SIZE_JSON,
                    min_size: MIN_DATETIME_SIZE_JSON,
                    unbounded: None,
                },
                _ => {
                    let max = match (max_length, s.get("enum").and_then(Value::as_array)) {
                        (Some(l), _) => zero_if_negative(l) * 4,
                        (None, Some(e)) if !e.is_empty() => e
                            .iter()
                            .filter_map(Value::as_str)
                            .map(|v| v.len() as i64)
                            .max()
                            .unwrap_or(0),
                        _ => MAX_REQUEST_SIZE_BYTES - 2,
                    };
                    let bounded = max_length.is_some()
                        || s.get("enum")
                            .and_then(Value::as_array)
                            .is_some_and(|e| !e.is_empty());
                    Decl {
                        kind: DeclKind::String,
                        max_elements: max,
                        min_size: MIN_STRING_SIZE,
                        unbounded: (!bounded).then_some("maxLength"),
                    }
                }
            };
            Some(d)
        }
        "boolean" => Some(Decl::simple(DeclKind::Bool, MIN_BOOL_SIZE)),
        "number" => Some(Decl::simple(DeclKind::Double, MIN_NUMBER_SIZE)),
        "integer" => Some(Decl::simple(DeclKind::Int, MIN_NUMBER_SIZE)),
        _ => None,
    }
}

/// A resource root (the CRD's schema, an embedded resource) always has `apiVersion`, `kind`
/// and `metadata.name`/`generateName` (bounded as names are), whatever the schema says;
/// other metadata is not visible to rules. `None` when the schema declares them all (or is
/// no object); else the properties that replace the schema's own of those names.
fn type_and_object_meta(s: &Value) -> Option<serde_json::Map<String, Value>> {
    let props = s.get("properties");
    let prop = |n: &str| props.and_then(|p| p.get(n));
    let is = |v: Option<&Value>, t: &str| v.is_some_and(|v| ty(v) == t);
    let meta_props = prop("metadata").and_then(|m| m.get("properties"));
    if (is(prop("kind"), "string")
        && is(prop("apiVersion"), "string")
        && is(prop("metadata"), "object")
        && meta_props.is_some()
        && is(meta_props.and_then(|m| m.get("name")), "string")
        && is(meta_props.and_then(|m| m.get("generateName")), "string"))
        || !s.is_object()
    {
        return None;
    }
    let capped = |existing: Option<&Value>, max: i64| {
        let max = match existing.and_then(|e| get_i64(e, "maxLength")) {
            Some(l) if l < max => l,
            _ => max,
        };
        serde_json::json!({"type": "string", "maxLength": max})
    };
    let mut implied = serde_json::Map::new();
    implied.insert("kind".into(), serde_json::json!({"type": "string"}));
    implied.insert("apiVersion".into(), serde_json::json!({"type": "string"}));
    implied.insert(
        "metadata".into(),
        serde_json::json!({"type": "object", "properties": {
            "name": capped(meta_props.and_then(|m| m.get("name")), NAME_MAX_LENGTH),
            "generateName": capped(meta_props.and_then(|m| m.get("generateName")), NAME_MAX_LENGTH - 1),
        }}),
    );
    Some(implied)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sizes_follow_the_server() {
        let s = json!({"type": "object", "required": ["a"], "properties": {
            "a": {"type": "string", "maxLength": 10},
            "l": {"type": "array", "items": {"type": "integer"}},
            "m": {"type": "object", "additionalProperties": {"type": "string"}},
            "e": {"type": "string", "enum": ["ab", "abcd"]},
        }});
        let d = schema_decl(&s, false).unwrap();
        let DeclKind::Object(f) = &d.kind else {
            panic!()
        };
        assert_eq!(f["a"].max_elements, 40);
        assert_eq!(f["l"].max_elements, (MAX_REQUEST_SIZE_BYTES - 2) / 2);
        assert_eq!(f["m"].max_elements, (MAX_REQUEST_SIZE_BYTES - 2) / 8);
        assert_eq!(f["e"].max_elements, 4);
        // `{}` plus `"a":""` with its separators.
        assert_eq!(d.min_size, 2 + 1 + 2 + 4);
        let root = schema_decl(&s, true).unwrap();
        let meta = root.walk(&["metadata".into(), "name".into()]).unwrap();
        assert_eq!(meta.max_elements, 253 * 4);
    }
}
