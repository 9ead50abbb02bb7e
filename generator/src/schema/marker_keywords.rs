//! What each marker writes into a schema: bounds, patterns (compiled now), enums, formats,
//! defaults and examples (typed like the field), CEL rules (compiled now), one-of rules,
//! list and map topology; every value checked, errors located at the marker.

use crate::apiext::{
    ExternalDocumentation, JSON, JSONSchemaProps, JSONSchemaPropsOrArray, ValidationRule,
};
use kube_codegen_validation::cel::check::{SyntaxError, syntax_error};
use serde_json::Value;

use crate::diagnostics::Diagnostic;
use crate::markers::{Marker, Name, split_list};

use super::int_or_string;

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
    let parsed = if m.name == Name::Default {
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

/// `Pattern` regexes (RE2 syntax) are checked as the CEL checker checks `matches` literals.
pub(crate) use kube_codegen_validation::cel::check::check_regex;

/// Compile a CEL expression of an XValidation marker (`rule` or `messageExpression`) as
/// the apiserver would, so a syntax error is reported here, at the marker, instead of when
/// the CRD is applied. Only the syntax is checked here: types, field names and cost are
/// checked on the final schema (`kube_codegen_validation::cel::check::check_schema`), where
/// sizes and types are known.
fn check_cel(m: &Marker, arg: &str, expr: &str) -> Result<(), Diagnostic> {
    let Some(SyntaxError {
        message: msg,
        column: col,
    }) = syntax_error(expr)
    else {
        return Ok(());
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
/// the `kubebuilder:validation:items:<X>` forms go last, onto the array's items. Every
/// marker's error goes into `found` (a marker in error writes nothing), and so do warnings
/// about what the API server takes but is surely not meant (bounds no value meets, an enum
/// value twice).
pub fn apply_markers(
    schema: &mut JSONSchemaProps,
    markers: &[Marker],
    found: &mut Vec<Diagnostic>,
) {
    let (items, own): (Vec<&Marker>, Vec<&Marker>) = markers.iter().partition(|m| m.items);
    apply_own_markers(schema, &own, found);
    let Some(first) = items.first() else {
        return;
    };
    match &mut schema.items {
        Some(JSONSchemaPropsOrArray::Schema(item)) if schema.type_.as_deref() == Some("array") => {
            apply_own_markers(item, &items, found)
        }
        _ => found.push(
            first
                .error(format!(
                    "`+{}` applies to the items of an array, but this is {}",
                    first.written_name(),
                    schema.type_.as_deref().unwrap_or("untyped")
                ))
                .with_hint("put it on a `Vec<T>` field (or on a type that is one)"),
        ),
    }
}

/// A lower bound above its upper bound, which no value meets: the API server takes the
/// CRD and then refuses every object that sets the field. A warning at the marker that made
/// the pair, here or where the node's other markers were applied.
fn check_bounds_meet(
    schema: &JSONSchemaProps,
    markers: &[&Marker],
    warnings: &mut Vec<Diagnostic>,
) {
    let count = |n: Option<i64>| n.map(|n| n as f64);
    let exclusive =
        schema.exclusive_minimum == Some(true) || schema.exclusive_maximum == Some(true);
    let pairs = [
        (
            count(schema.min_length),
            count(schema.max_length),
            [Name::MinLength, Name::MaxLength],
            false,
        ),
        (
            count(schema.min_items),
            count(schema.max_items),
            [Name::MinItems, Name::MaxItems],
            false,
        ),
        (
            count(schema.min_properties),
            count(schema.max_properties),
            [Name::MinProperties, Name::MaxProperties],
            false,
        ),
        (
            schema.minimum,
            schema.maximum,
            [Name::Minimum, Name::Maximum],
            exclusive,
        ),
    ];
    for (min, max, names, exclusive) in pairs {
        let (Some(min), Some(max)) = (min, max) else {
            continue;
        };
        if min < max || (min == max && !exclusive) {
            continue;
        }
        let at = |name: Name| {
            markers.iter().rev().find(|m| {
                m.name == name
                    || (name == Name::Maximum && m.name == Name::K8sMaximum)
                    || (name == Name::Minimum && m.name == Name::K8sMinimum)
                    || (name == Name::MaxItems && m.name == Name::K8sMaxItems)
            })
        };
        let Some(m) = at(names[1]).or_else(|| at(names[0])) else {
            continue;
        };
        let [low, high] =
            names.map(|n| n.as_str().rsplit(':').next().unwrap_or_default().to_owned());
        warnings.push(
            m.warning(format!(
                "no value meets these bounds: {low} {min} is {} {high} {max}",
                if min == max { "equal to the exclusive" } else { "above" }
            ))
            .with_hint("the API server takes the CRD and then refuses every object that sets this field; swap or fix the bounds"),
        );
    }
}

/// A `Minimum`/`Maximum` on an integer field beyond what its Rust type holds. Checked
/// against kube-apiserver v1.37, which takes such a CRD: a bound outside the field's
/// `format` (`int32`, `int64`) makes it refuse every object that sets the field ("Maximum
/// boundary value must be of type integer with format int32"); one inside the format but
/// outside the Rust type lets it take values the field cannot hold (`Maximum=300` on a
/// `u8`), or none the field holds (`Maximum=-1` on a `u32`). A warning at the marker.
pub(super) fn check_int_range(
    schema: &JSONSchemaProps,
    int: crate::model::RustInt,
    markers: &[Marker],
    warnings: &mut Vec<Diagnostic>,
) {
    let (lo, hi) = int.range();
    let format = match schema.format.as_deref() {
        Some("int32") => Some((f64::from(i32::MIN), f64::from(i32::MAX))),
        Some("int64") => Some((i64::MIN as f64, i64::MAX as f64)),
        _ => None,
    };
    for m in markers.iter().filter(|m| !m.items) {
        let (bound, upper) = match m.name {
            Name::Minimum | Name::K8sMinimum => (schema.minimum, false),
            Name::Maximum | Name::K8sMaximum => (schema.maximum, true),
            _ => continue,
        };
        let Some(b) = bound.filter(|b| *b < lo || *b > hi) else {
            continue;
        };
        let hint = if format.is_some_and(|(flo, fhi)| b < flo || b > fhi) {
            format!(
                "the bound is no `{}` itself, and the API server refuses every object that sets the field (\"{} boundary value must be of type integer with format {}\"): give a bound within the type",
                schema.format.as_deref().unwrap_or_default(),
                if upper { "Maximum" } else { "Minimum" },
                schema.format.as_deref().unwrap_or_default()
            )
        } else if upper == (b > hi) {
            "the API server takes values as far as the bound, past what the field holds, and an object with one does not deserialize: give a bound within the type, or a wider type".to_owned()
        } else {
            "no value the field holds meets the bound: the API server refuses every object that sets the field".to_owned()
        };
        warnings.push(
            m.warning(format!(
                "`+{}` is beyond what the field's `{}` holds ({lo} to {hi})",
                m.written_name(),
                int.name()
            ))
            .with_hint(hint),
        );
    }
}

/// Whether one of these markers is present.
fn has(markers: &[&Marker], names: &[Name]) -> bool {
    markers.iter().any(|m| names.contains(&m.name))
}

/// The markers of one node, each on its own: every error and warning goes into `found`, and
/// a marker in error leaves the node as it was.
fn apply_own_markers(
    schema: &mut JSONSchemaProps,
    markers: &[&Marker],
    found: &mut Vec<Diagnostic>,
) {
    // Type and Schemaless reshape the node, so they go first.
    for m in markers.iter().filter(|m| m.name == Name::Type) {
        let t = match m.string_value() {
            Ok(t) => t,
            Err(d) => {
                found.push(d);
                continue;
            }
        };
        const TYPES: &[&str] = &["string", "integer", "number", "boolean", "object", "array"];
        if !TYPES.contains(&t.as_str()) {
            found.push(
                m.error(format!("invalid type `{t}`"))
                    .with_hint(format!("allowed values: {}", TYPES.join(", "))),
            );
            continue;
        }
        if schema.type_.as_deref() != Some(t.as_str()) {
            schema.format = None;
        }
        schema.type_ = Some(t);
    }
    // `+kubebuilder:default` goes after `+default`, so it wins when both are given
    // (controller-gen's apply priorities 10 and 9).
    let kubebuilder_default = has(markers, &[Name::KubebuilderDefault]);
    for m in markers.iter().copied() {
        if let Err(d) = apply_marker(schema, m, kubebuilder_default, found) {
            found.push(d);
        }
    }
    // `+k8s:required` also asks for a non-empty value, unless a bound is set already.
    if has(markers, &[Name::K8sRequired]) {
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
    check_bounds_meet(schema, markers, found);
    // The one-of rules go after the XValidation rules, in controller-gen's order.
    for kind in [OneOf::AtMost, OneOf::Exactly, OneOf::AtLeast] {
        for m in markers.iter().filter(|m| m.name == kind.marker()) {
            if let Err(d) = one_of_rule(schema, m, kind) {
                found.push(d);
            }
        }
    }
    if let Err(d) = check_list_map(schema, markers) {
        found.push(d);
    }
}

/// One marker of a node (not `Type`, applied before): what it writes, or why it cannot.
fn apply_marker(
    schema: &mut JSONSchemaProps,
    m: &Marker,
    kubebuilder_default: bool,
    warnings: &mut Vec<Diagnostic>,
) -> Result<(), Diagnostic> {
    // JSON has no NaN or infinity: such a bound would be written `null`, and lost.
    let num = |w: &str| -> Result<f64, Diagnostic> {
        let n = m.parse_value::<f64>(w)?;
        if !n.is_finite() {
            return Err(m
                .error(format!(
                    "`+{}` is not a finite number (it reads as {n})",
                    m.written_name()
                ))
                .with_hint("JSON has no NaN or infinity: the CRD could not hold the bound; give a finite number"));
        }
        Ok(n)
    };
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
        Name::Minimum | Name::K8sMinimum => {
            need_type(schema, m, &["integer", "number"])?;
            schema.minimum = Some(integral(num("a number")?)?);
        }
        Name::Maximum | Name::K8sMaximum => {
            need_type(schema, m, &["integer", "number"])?;
            schema.maximum = Some(integral(num("a number")?)?);
        }
        // `false` is the default, and Go's omitempty leaves it out: so do we.
        Name::ExclusiveMinimum => schema.exclusive_minimum = m.bool_value()?.then_some(true),
        Name::ExclusiveMaximum => schema.exclusive_maximum = m.bool_value()?.then_some(true),
        Name::MultipleOf => {
            need_type(schema, m, &["integer", "number"])?;
            let n = num("a number")?;
            if n <= 0.0 {
                return Err(m.error("`+kubebuilder:validation:MultipleOf` must be greater than 0"));
            }
            schema.multiple_of = Some(integral(n)?);
        }
        Name::MinLength => {
            need_type(schema, m, &["string"])?;
            schema.min_length = Some(count("a non-negative integer")?);
        }
        Name::MaxLength => {
            need_type(schema, m, &["string"])?;
            schema.max_length = Some(count("a non-negative integer")?);
        }
        Name::Pattern => {
            need_type(schema, m, &["string"])?;
            let p = m.string_value()?;
            if let Err(detail) = check_regex(&p) {
                return Err(m.error(format!("invalid regular expression `{p}`: {detail}")).with_hint("patterns use RE2 syntax (no lookaround or backreferences); quote them with backticks to avoid escaping"));
            }
            schema.pattern = Some(p);
        }
        Name::MinItems => {
            need_type(schema, m, &["array"])?;
            schema.min_items = Some(count("a non-negative integer")?);
        }
        Name::MaxItems | Name::K8sMaxItems => {
            need_type(schema, m, &["array"])?;
            schema.max_items = Some(count("a non-negative integer")?);
        }
        Name::UniqueItems => {
            need_type(schema, m, &["array"])?;
            if m.bool_value()? {
                // The apiserver rejects such a CRD: "uniqueItems cannot be set to true since
                // the runtime complexity becomes quadratic".
                return Err(m
                    .error("`uniqueItems: true` is forbidden in CRD schemas (the API server rejects the CRD)")
                    .with_hint("use `+listType=set` (or a BTreeSet field) for a list without duplicates"));
            }
        }
        Name::MinProperties => {
            need_type(schema, m, &["object"])?;
            schema.min_properties = Some(count("a non-negative integer")?);
        }
        Name::MaxProperties => {
            need_type(schema, m, &["object"])?;
            schema.max_properties = Some(count("a non-negative integer")?);
        }
        Name::Enum => {
            // A list, its items quoted one by one (`"5xx";gateway-error`): split, then each
            // item unquoted, as controller-gen reads a list argument.
            let raw = m.string_value_raw()?;
            let items = split_list(&raw);
            if items.is_empty() {
                return Err(m
                    .error("`+kubebuilder:validation:Enum` needs at least one value")
                    .with_hint("separate values with `;`, e.g. `Enum=Always;Never`"));
            }
            let mut values: Vec<JSON> = vec![];
            for i in items {
                let v = JSON(typed_value(schema, m, &i)?);
                // Kept, as controller-gen and the API server keep it.
                if values.contains(&v) {
                    warnings.push(
                        m.warning(format!(
                            "`+{}` lists `{}` twice",
                            m.written_name(),
                            i.trim()
                        ))
                        .with_hint("each value once is enough; perhaps another value was meant"),
                    );
                }
                values.push(v);
            }
            schema.enum_ = Some(values);
        }
        Name::Format => {
            need_type(schema, m, &["string", "integer", "number"])?;
            schema.format = Some(m.string_value()?);
        }
        Name::XValidation => {
            // As written: controller-gen keeps a rule's spaces (Envoy Gateway's end in one),
            // and the rule is its identity in the CRD.
            let rule = m.arg("rule").unwrap_or_default().to_owned();
            if rule.trim().is_empty() {
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
                    return Err(m.error(format!("optionalOldSelf takes true or false, not `{o}`")));
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
        Name::XPreserveUnknownFields | Name::PreserveUnknownFields => {
            schema.x_kubernetes_preserve_unknown_fields = Some(true)
        }
        Name::XEmbeddedResource | Name::EmbeddedResource => {
            need_type(schema, m, &["object"])?;
            schema.x_kubernetes_embedded_resource = Some(true);
        }
        Name::XIntOrString => {
            *schema = JSONSchemaProps {
                description: schema.description.take(),
                ..int_or_string()
            };
        }
        Name::Default if kubebuilder_default => {}
        Name::KubebuilderDefault | Name::Default => {
            schema.default = Some(JSON(literal_value(schema, m)?));
        }
        Name::Example => {
            schema.example = Some(JSON(literal_value(schema, m)?));
        }
        Name::Title => schema.title = Some(m.string_value()?),
        Name::ListType | Name::K8sListType => {
            need_type(schema, m, &["array"])?;
            let v = m.string_value()?;
            if !matches!(v.as_str(), "atomic" | "set" | "map") {
                return Err(m
                    .error(format!("invalid listType `{v}`"))
                    .with_hint("allowed values: atomic, set, map"));
            }
            schema.x_kubernetes_list_type = Some(v);
        }
        Name::ListMapKey | Name::K8sListMapKey => {
            need_type(schema, m, &["array"])?;
            schema
                .x_kubernetes_list_map_keys
                .get_or_insert_with(Vec::new)
                .push(m.string_value()?);
        }
        Name::ExternalDocs => {
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
        Name::K8sImmutable => {
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
        Name::K8sEnum if schema.type_.as_deref() != Some("string") || schema.enum_.is_none() => {
            return Err(m
                .error("`+k8s:enum` marks a string enum, and this type is not one")
                .with_hint("put it on an enum of unit variants (its variants are the values), or use `+kubebuilder:validation:Enum=a;b`"));
        }
        Name::MapType | Name::StructType => {
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
    Ok(())
}

/// controller-gen's union markers on a struct: CEL rules over which fields are set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OneOf {
    AtMost,
    Exactly,
    AtLeast,
}

impl OneOf {
    fn marker(self) -> Name {
        match self {
            OneOf::AtMost => Name::AtMostOneOf,
            OneOf::Exactly => Name::ExactlyOneOf,
            OneOf::AtLeast => Name::AtLeastOneOf,
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
    let is_key = |m: &&&Marker| matches!(m.name, Name::ListMapKey | Name::K8sListMapKey);
    let key_marker = markers.iter().find(is_key);
    // The list type and keys come from these markers, or from a `+kube-codegen:schema`
    // patch (what `import crd` writes for them where no marker can): blamed in that order.
    let patch = markers.iter().find(|m| m.name == Name::Schema);
    let type_marker = markers
        .iter()
        .find(|m| matches!(m.name, Name::ListType | Name::K8sListType))
        .or(patch);
    let key_marker = key_marker.or(patch);
    // A list type none of these sets came with the field's type, and was checked there.
    if schema.x_kubernetes_list_type.is_some() && type_marker.is_none() {
        return Ok(());
    }
    if let Some(t) = &schema.x_kubernetes_list_type
        && schema.type_.as_deref() != Some("array")
        && let Some(m) = type_marker
    {
        return Err(m.error(format!(
            "`x-kubernetes-list-type: {t}` is on a schema of type `{}`, and the API server takes it only on an array",
            schema.type_.as_deref().unwrap_or("(none)")
        )));
    }
    match (
        schema.x_kubernetes_list_type.as_deref(),
        &schema.x_kubernetes_list_map_keys,
    ) {
        (Some("map"), None) => Err(type_marker
            .expect("a list type is set by one of the markers")
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
        (_, Some(_)) => match key_marker {
            Some(m) => Err(m.error("`+listMapKey` needs `+listType=map`")),
            None => Ok(()),
        },
        _ => Ok(()),
    }
}

/// Apply the `+kube-codegen:schema=<json>` markers of a field or type: each is a JSON merge
/// patch (RFC 7386: objects merge key by key, `null` removes a keyword, anything else
/// replaces it) over the node's finished schema. It goes last, after every other marker,
/// so it can say what no marker can (a `not`, an `anyOf` of shapes, a description line
/// that starts with `+`) and remove what the Rust type implies (the `int64` format of an
/// `i64` whose schema has none). `import crd` writes it; the value was checked to be a
/// JSON object when the marker was parsed.
pub fn apply_schema_patches(
    schema: &mut JSONSchemaProps,
    markers: &[Marker],
) -> Result<(), Diagnostic> {
    for m in markers.iter().filter(|m| m.name == Name::Schema) {
        let patch = schema_patch_value(m)?;
        if let Some((path, ty)) = unknown_type(&patch) {
            return Err(m
                .error(format!(
                    "the schema patch sets `type: {ty}` at `{path}`, which the API server refuses"
                ))
                .with_hint(format!(
                    "a schema's type is one of {}",
                    SCHEMA_TYPES.join(", ")
                )));
        }
        let mut node = serde_json::to_value(&*schema).expect("schemas serialize");
        merge_patch(&mut node, &patch);
        *schema = serde_json::from_value(node).map_err(|e| {
            m.error(format!("the schema patch makes an invalid schema: {e}"))
                .with_hint("the value is merged into the field's schema; keep keyword names and value types of apiextensions.k8s.io/v1")
        })?;
        if let Some(t) = &schema.x_kubernetes_list_type
            && schema.type_.as_deref() != Some("array")
        {
            return Err(m.error(format!(
                "the schema patch leaves `x-kubernetes-list-type: {t}` on a schema of type `{}`, and the API server takes it only on an array",
                schema.type_.as_deref().unwrap_or("(none)")
            )));
        }
    }
    Ok(())
}

/// The values of a schema's `type` the API server takes.
pub const SCHEMA_TYPES: [&str; 6] = ["array", "boolean", "integer", "number", "object", "string"];

/// The first `type` in the schema `schema` (JSON, walked without recursion) that is not one
/// of [`SCHEMA_TYPES`], with its path (`properties.x.type`).
pub fn unknown_type(schema: &Value) -> Option<(String, String)> {
    let mut stack = vec![(String::new(), schema)];
    while let Some((path, node)) = stack.pop() {
        let Some(n) = node.as_object() else {
            continue;
        };
        let at = |k: &str| {
            if path.is_empty() {
                k.to_owned()
            } else {
                format!("{path}.{k}")
            }
        };
        for (k, v) in n {
            match k.as_str() {
                "type" => match v.as_str() {
                    Some(t) if SCHEMA_TYPES.contains(&t) => {}
                    _ => {
                        return Some((
                            at(k),
                            v.as_str().map_or_else(|| v.to_string(), str::to_owned),
                        ));
                    }
                },
                "properties" | "patternProperties" | "definitions" => {
                    for (name, c) in v.as_object().into_iter().flatten() {
                        stack.push((format!("{}.{name}", at(k)), c));
                    }
                }
                "allOf" | "anyOf" | "oneOf" => {
                    for (i, c) in v.as_array().into_iter().flatten().enumerate() {
                        stack.push((format!("{}[{i}]", at(k)), c));
                    }
                }
                "items" if v.is_array() => {
                    for (i, c) in v.as_array().into_iter().flatten().enumerate() {
                        stack.push((format!("{}[{i}]", at(k)), c));
                    }
                }
                "items" | "additionalProperties" | "additionalItems" | "not" => {
                    stack.push((at(k), v));
                }
                _ => {}
            }
        }
    }
    None
}

/// The JSON object of a `+kube-codegen:schema` marker, or the error at the marker.
pub fn schema_patch_value(m: &Marker) -> Result<Value, Diagnostic> {
    let raw = m.string_value_raw()?;
    match serde_json::from_str::<Value>(raw.trim()) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(_) => Err(m
            .error("`+kube-codegen:schema` takes a JSON object")
            .with_hint("e.g. `+kube-codegen:schema={\"format\":null}` removes the format")),
        Err(e) => Err(m
            .error(format!("`+kube-codegen:schema` is not JSON: {e}"))
            .with_hint(
                "write the patch as one line of JSON, e.g. {\"not\":{\"required\":[\"a\"]}}",
            )),
    }
}

/// RFC 7386 JSON merge patch of `patch` into `target`.
pub fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(p) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Default::default());
    }
    let t = target.as_object_mut().expect("made an object");
    for (k, v) in p {
        if v.is_null() {
            t.remove(k);
        } else {
            merge_patch(t.entry(k.clone()).or_insert(Value::Null), v);
        }
    }
}

/// Whether the Rust regex crate (which checks `Pattern` markers) compiles `pattern`.
pub fn pattern_compiles(pattern: &str) -> bool {
    check_regex(pattern).is_ok()
}

/// Whether a CEL expression passes the syntax check of `XValidation` markers.
pub fn cel_compiles(expr: &str) -> bool {
    syntax_error(expr).is_none()
}
