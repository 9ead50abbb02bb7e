//! The validation walks: kube-openapi's value validators with apiextensions-apiserver's
//! error mapping and ratcheting, list-type uniqueness, and CEL rules, in the order
//! `customResourceStrategy.Validate` runs them.

use std::sync::Arc;

use serde_json::Value;

use super::schema::Schema;
use super::{ErrorType, Errors, FieldError};
use crate::cel::{self, Value as CelValue};

fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

fn index(path: &str, i: usize) -> String {
    format!("{path}[{i}]")
}

fn key(path: &str, k: &str) -> String {
    format!("{path}[{k}]")
}

/// Go's `%q` of a string.
fn go_quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A bad value as `field.Error` prints it.
pub(super) fn render(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => go_quote(s),
        // Go prints these with `%#v`; the exact text is not reproduced.
        other => other.to_string(),
    }
}

fn err(field: String, error_type: ErrorType, value: Option<String>, detail: String) -> FieldError {
    FieldError {
        field,
        error_type,
        value,
        detail,
    }
}

/// `field.TooMany`'s detail: "item" for one.
fn too_many(max: u64) -> String {
    let is = if max == 1 { "item" } else { "items" };
    format!("must have at most {max} {is}")
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

impl Schema {
    /// Every violation of an already defaulted object (see [`Schema::default_value`]);
    /// `old` is the stored object on an update.
    ///
    /// An embedded resource the server cannot decode (an `apiVersion` that is not a
    /// string, `metadata` that is not `ObjectMeta`) is the only error: the server refuses
    /// such a write before validating it, with a 400 that names it.
    pub fn validate_value(&self, v: &Value, old: Option<&Value>) -> Result<(), Errors> {
        if let Some(e) = self.decode_error(v) {
            return Err(Errors(vec![e]));
        }
        let mut errs = vec![];
        self.openapi(v, old, "", &mut errs);
        // kube-openapi keeps one of identical errors (a bound repeated in an `allOf`).
        let mut seen = std::collections::HashSet::new();
        errs.retain(|e| seen.insert((e.field.clone(), e.error_type, e.body())));
        // Embedded resources' apiVersion, kind and metadata (`objectmeta.Validate`), on
        // updates too, never ratcheted.
        self.validate_embedded(v, "", &mut errs);
        let list_errs = |x: &Value| {
            let mut e = vec![];
            self.list_types(x, "", &mut e);
            e
        };
        match old {
            Some(o) if !list_errs(o).is_empty() => {}
            _ => errs.extend(list_errs(v)),
        }
        let blocking = errs.iter().any(|e| {
            matches!(
                e.error_type,
                ErrorType::NotSupported
                    | ErrorType::Required
                    | ErrorType::TooLong
                    | ErrorType::TooMany
                    | ErrorType::TypeInvalid
            )
        });
        if blocking {
            if self.has_rules() {
                errs.push(err(
                    String::new(),
                    ErrorType::Invalid,
                    Some("null".into()),
                    "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation".into(),
                ));
            }
        } else {
            // One cost budget for all rules of the object, as the API server has it.
            let mut budget = cel::RUNTIME_COST_BUDGET;
            self.rules(
                v,
                old,
                "",
                true,
                Ratchet::Equal(old.is_some_and(|o| o == v)),
                &mut budget,
                &mut errs,
            );
        }
        if errs.is_empty() {
            Ok(())
        } else {
            Err(Errors(errs))
        }
    }

    pub(super) fn has_rules(&self) -> bool {
        !self.validations.is_empty()
            || self.properties.values().any(Schema::has_rules)
            || self.additional().is_some_and(Schema::has_rules)
            || self.items.as_ref().is_some_and(|i| i.has_rules())
            || self.all_of.iter().any(Schema::has_rules)
    }

    // ---- kube-openapi --------------------------------------------------------------

    pub(super) fn openapi(
        &self,
        v: &Value,
        old: Option<&Value>,
        path: &str,
        errs: &mut Vec<FieldError>,
    ) {
        CHECKS.with(|c| c.set(c.get() + 1));
        // Ratcheting: an unchanged value keeps whatever errors it had.
        if old.is_some_and(|o| o == v) {
            return;
        }
        let name = if path.is_empty() { "." } else { path };
        if v.is_null() {
            if !self.nullable
                && let Some(t) = &self.type_
            {
                errs.push(err(
                    path.into(),
                    ErrorType::TypeInvalid,
                    Some("\"null\"".into()),
                    format!("{name} in body must be of type {t}: \"null\""),
                ));
            }
            self.check_enum(v, path, errs);
            return;
        }
        if let Some(t) = &self.type_ {
            let actual = type_name(v);
            let ok = actual == t
                || (t == "number" && actual == "integer")
                || (t == "integer"
                    && v.as_f64()
                        .is_some_and(|f| f.fract() == 0.0 && actual == "number"));
            if !ok {
                errs.push(err(
                    path.into(),
                    ErrorType::TypeInvalid,
                    Some(go_quote(actual)),
                    format!("{name} in body must be of type {t}: {}", go_quote(actual)),
                ));
                return;
            }
        }
        // Composite keywords (kube-openapi's schemaPropsValidator): their own error is not
        // a field error, so the API server reports it at the root (`<nil>`), the path
        // quoted in the message; the best failing branch's errors come with it.
        let composite = |detail: String| {
            err(
                String::new(),
                ErrorType::Invalid,
                Some("\"\"".into()),
                detail,
            )
        };
        if !self.any_of.is_empty() {
            let results: Vec<Branch> = self.any_of.iter().map(|s| s.branch(v, path)).collect();
            if !results.iter().any(|b| b.errors.is_empty()) {
                errs.push(composite(format!(
                    "{} must validate at least one schema (anyOf)",
                    go_quote(path)
                )));
                errs.extend(best(results));
            }
        }
        if !self.one_of.is_empty() {
            let results: Vec<Branch> = self.one_of.iter().map(|s| s.branch(v, path)).collect();
            let valid = results.iter().filter(|b| b.errors.is_empty()).count();
            if valid != 1 {
                let more = if valid == 0 {
                    "Found none valid".to_owned()
                } else {
                    format!("Found {valid} valid alternatives")
                };
                errs.push(composite(format!(
                    "{} must validate one and only one schema (oneOf). {more}",
                    go_quote(path)
                )));
                if valid == 0 {
                    errs.extend(best(results));
                }
            }
        }
        if !self.all_of.is_empty() {
            let mut valid = 0;
            for s in &self.all_of {
                let r = s.branch(v, path).errors;
                if r.is_empty() {
                    valid += 1;
                }
                errs.extend(r);
            }
            if valid != self.all_of.len() {
                let more = if valid == 0 { ". None validated" } else { "" };
                errs.push(composite(format!(
                    "{} must validate all the schemas (allOf){more}",
                    go_quote(path)
                )));
            }
        }
        if let Some(n) = &self.not
            && n.branch(v, path).errors.is_empty()
        {
            errs.push(composite(format!(
                "{} must not validate the schema (not)",
                go_quote(path)
            )));
        }
        match v {
            Value::String(s) => self.check_string(s, v, path, name, errs),
            Value::Number(_) => self.check_number(v, path, name, errs),
            Value::Array(a) => self.check_array(a, old, path, name, errs),
            Value::Object(m) => self.check_object(m, old, path, name, errs),
            Value::Bool(_) | Value::Null => {}
        }
        self.check_enum(v, path, errs);
    }

    /// The errors of a composite keyword's branch, at the same path, with how many schema
    /// nodes it checked (kube-openapi's match count, which picks the branch it reports).
    fn branch(&self, v: &Value, path: &str) -> Branch {
        let before = CHECKS.with(|c| c.get());
        let mut errors = vec![];
        self.openapi(v, None, path, &mut errors);
        Branch {
            errors,
            checks: CHECKS.with(|c| c.get()) - before,
        }
    }

    fn check_enum(&self, v: &Value, path: &str, errs: &mut Vec<FieldError>) {
        let Some(values) = &self.enum_ else { return };
        if values.iter().any(|e| json_eq(e, v)) {
            return;
        }
        let supported: Vec<String> = values
            .iter()
            .map(|e| match e {
                Value::String(s) => go_quote(s),
                other => go_quote(&other.to_string()),
            })
            .collect();
        errs.push(err(
            path.into(),
            ErrorType::NotSupported,
            Some(render(v)),
            format!("supported values: {}", supported.join(", ")),
        ));
    }

    fn check_string(&self, s: &str, v: &Value, path: &str, name: &str, errs: &mut Vec<FieldError>) {
        self.check_format(s, v, path, name, errs);
        // kube-openapi's string validator stops at the first failing keyword.
        let len = s.chars().count() as u64;
        if let Some(max) = self.max_length
            && len > max
        {
            errs.push(err(
                path.into(),
                ErrorType::TooLong,
                None,
                format!("may not be more than {max} bytes"),
            ));
            return;
        }
        if let Some(min) = self.min_length
            && len < min
        {
            errs.push(err(
                path.into(),
                ErrorType::Invalid,
                Some(render(v)),
                format!("{name} in body should be at least {min} chars long"),
            ));
            return;
        }
        if let (Some(re), Some(p)) = (&self.compiled_pattern, &self.pattern)
            && !re.is_match(s)
        {
            errs.push(err(
                path.into(),
                ErrorType::Invalid,
                Some(render(v)),
                format!("{name} in body should match '{p}'"),
            ));
        }
    }

    fn check_format(&self, s: &str, v: &Value, path: &str, name: &str, errs: &mut Vec<FieldError>) {
        if let Some(f) = &self.format
            && super::formats::check(f, s) == Some(false)
        {
            errs.push(err(
                path.into(),
                ErrorType::TypeInvalid,
                Some(render(v)),
                format!("{name} in body must be of type {f}: {}", go_quote(s)),
            ));
        }
    }

    fn check_number(&self, v: &Value, path: &str, name: &str, errs: &mut Vec<FieldError>) {
        let x = v.as_f64().unwrap_or(f64::NAN);
        let fmt = |b: f64| {
            if b.fract() == 0.0 && b.abs() < 1e21 {
                format!("{}", b as i128)
            } else {
                format!("{b}")
            }
        };
        if let Some(max) = self.maximum {
            let (bad, word) = if self.exclusive_maximum {
                (x >= max, "less than")
            } else {
                (x > max, "less than or equal to")
            };
            if bad {
                errs.push(err(
                    path.into(),
                    ErrorType::Invalid,
                    Some(render(v)),
                    format!("{name} in body should be {word} {}", fmt(max)),
                ));
            }
        }
        if let Some(min) = self.minimum {
            let (bad, word) = if self.exclusive_minimum {
                (x <= min, "greater than")
            } else {
                (x < min, "greater than or equal to")
            };
            if bad {
                errs.push(err(
                    path.into(),
                    ErrorType::Invalid,
                    Some(render(v)),
                    format!("{name} in body should be {word} {}", fmt(min)),
                ));
            }
        }
        if let Some(m) = self.multiple_of
            && m > 0.0
        {
            let q = x / m;
            if (q - q.round()).abs() > 1e-9 {
                errs.push(err(
                    path.into(),
                    ErrorType::Invalid,
                    Some(render(v)),
                    format!("{name} in body should be a multiple of {}", fmt(m)),
                ));
            }
        }
    }

    fn check_array(
        &self,
        a: &[Value],
        old: Option<&Value>,
        path: &str,
        name: &str,
        errs: &mut Vec<FieldError>,
    ) {
        if let Some(items) = &self.items {
            let old_items = old.and_then(Value::as_array);
            for (i, x) in a.iter().enumerate() {
                let o = old_items.and_then(|o| self.correlate(o, x));
                items.openapi(x, o, &index(path, i), errs);
            }
        }
        let n = a.len() as u64;
        if let Some(min) = self.min_items
            && n < min
        {
            errs.push(err(
                path.into(),
                ErrorType::Invalid,
                Some(n.to_string()),
                format!("{name} in body should have at least {min} items"),
            ));
        }
        if let Some(max) = self.max_items
            && n > max
        {
            errs.push(err(
                path.into(),
                ErrorType::TooMany,
                Some(n.to_string()),
                too_many(max),
            ));
        }
        // Not allowed in CRDs; kept for schemas from elsewhere.
        if self.unique_items && !duplicates(a.iter().cloned().map(Some).collect()).is_empty() {
            errs.push(err(
                path.into(),
                ErrorType::Duplicate,
                Some(render(&Value::Array(a.to_vec()))),
                String::new(),
            ));
        }
    }

    /// The old item a new list item is correlated with: only `map` lists correlate (by
    /// their keys), as the API server's ratcheting and transition rules do.
    fn correlate<'o>(&self, old: &'o [Value], item: &Value) -> Option<&'o Value> {
        if self.list_type.as_deref() != Some("map") || self.list_map_keys.is_empty() {
            return None;
        }
        let keys = |x: &Value| -> Option<Vec<Option<Value>>> {
            let m = x.as_object()?;
            Some(
                self.list_map_keys
                    .iter()
                    .map(|k| m.get(k).cloned())
                    .collect(),
            )
        };
        let want = keys(item)?;
        old.iter().find(|o| keys(o).as_ref() == Some(&want))
    }

    fn check_object(
        &self,
        m: &serde_json::Map<String, Value>,
        old: Option<&Value>,
        path: &str,
        name: &str,
        errs: &mut Vec<FieldError>,
    ) {
        let n = m.len() as u64;
        if let Some(min) = self.min_properties
            && n < min
        {
            errs.push(err(
                path.into(),
                ErrorType::Invalid,
                Some(n.to_string()),
                format!("{name} in body should have at least {min} properties"),
            ));
        }
        if let Some(max) = self.max_properties
            && n > max
        {
            errs.push(err(
                path.into(),
                ErrorType::TooMany,
                Some(n.to_string()),
                too_many(max),
            ));
        }
        // Values correlate with their old values by key whatever the map type: the
        // ratcheting's `CorrelatedObject.Key` does not look at `x-kubernetes-map-type`.
        let old_map = old.and_then(Value::as_object);
        for (k, x) in m {
            let o = old_map.and_then(|o| o.get(k));
            if let Some(p) = self.properties.get(k) {
                p.openapi(x, o, &child(path, k), errs);
            } else if let Some(a) = self.additional() {
                a.openapi(x, o, &child(path, k), errs);
            }
        }
        for r in &self.required {
            if !m.contains_key(r) {
                errs.push(err(
                    child(path, r),
                    ErrorType::Required,
                    None,
                    String::new(),
                ));
            }
        }
    }

    // ---- list types ----------------------------------------------------------------

    fn list_types(&self, v: &Value, path: &str, errs: &mut Vec<FieldError>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    if let Some(p) = self.properties.get(k) {
                        p.list_types(x, &child(path, k), errs);
                    } else if let Some(a) = self.additional() {
                        a.list_types(x, &key(path, k), errs);
                    }
                }
            }
            Value::Array(a) => {
                match self.list_type.as_deref() {
                    Some("set") => {
                        for i in duplicates(a.iter().cloned().map(Some).collect()) {
                            errs.push(err(
                                index(path, i),
                                ErrorType::Duplicate,
                                Some(render(&a[i])),
                                String::new(),
                            ));
                        }
                    }
                    Some("map") => {
                        let keys: Vec<Option<Value>> = a
                            .iter()
                            .map(|x| {
                                let m = x.as_object();
                                Some(Value::Array(
                                    self.list_map_keys
                                        .iter()
                                        .map(|k| {
                                            m.and_then(|m| m.get(k)).cloned().unwrap_or(Value::Null)
                                        })
                                        .collect(),
                                ))
                            })
                            .collect();
                        for i in duplicates(keys) {
                            errs.push(err(
                                index(path, i),
                                ErrorType::Duplicate,
                                None,
                                String::new(),
                            ));
                        }
                    }
                    _ => {}
                }
                if let Some(items) = &self.items {
                    for (i, x) in a.iter().enumerate() {
                        items.list_types(x, &index(path, i), errs);
                    }
                }
            }
            _ => {}
        }
    }

    // ---- CEL -----------------------------------------------------------------------

    #[allow(clippy::too_many_arguments)]
    pub(super) fn rules(
        &self,
        v: &Value,
        old: Option<&Value>,
        path: &str,
        root: bool,
        ratchet: Ratchet,
        budget: &mut i64,
        errs: &mut Vec<FieldError>,
    ) {
        if v.is_null() {
            return;
        }
        if !self.validations.is_empty() {
            self.eval_rules(v, old, path, root, ratchet, budget, errs);
        }
        // The API server stops at the first rule that overruns the budget or the per-call
        // limit (its remaining budget goes negative): no rule after it runs.
        if *budget < 0 {
            return;
        }
        for s in &self.all_of {
            s.rules(v, old, path, root, ratchet.all_of(), budget, errs);
            if *budget < 0 {
                return;
            }
        }
        match v {
            Value::Array(a) => {
                if let Some(items) = &self.items {
                    let old_items = old.and_then(Value::as_array);
                    for (i, x) in a.iter().enumerate() {
                        let o = old_items.and_then(|o| self.correlate(o, x));
                        let r = ratchet.child(o, x);
                        items.rules(x, o, &index(path, i), false, r, budget, errs);
                        if *budget < 0 {
                            return;
                        }
                    }
                }
            }
            Value::Object(m) => {
                // Atomic maps correlate by key as granular ones do (apiextensions-apiserver's
                // `MapIsCorrelatable`), so their values' transition rules run.
                let old_map = old.and_then(Value::as_object);
                for (k, x) in m {
                    let o = old_map.and_then(|o| o.get(k));
                    let r = ratchet.child(o, x);
                    if let Some(p) = self.properties.get(k) {
                        p.rules(x, o, &child(path, k), false, r, budget, errs);
                    } else if let Some(a) = self.additional() {
                        a.rules(x, o, &key(path, k), false, r, budget, errs);
                    }
                    if *budget < 0 {
                        return;
                    }
                }
            }
            _ => {}
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn eval_rules(
        &self,
        v: &Value,
        old: Option<&Value>,
        path: &str,
        root: bool,
        ratchet: Ratchet,
        budget: &mut i64,
        errs: &mut Vec<FieldError>,
    ) {
        let t = self.type_.clone().unwrap_or_default();
        if !self.validations.iter().any(|r| r.program.is_some()) {
            return;
        }
        // apiextensions-apiserver's `validateExpressions`: its cost errors are `Invalid`
        // with the schema's type as the value.
        let out_of_budget = |field: &str| {
            err(
                field.to_owned(),
                ErrorType::Invalid,
                Some(go_quote(&t)),
                "validation failed due to running out of cost budget, no further validation rules will be run".into(),
            )
        };
        if *budget <= 0 {
            errs.push(out_of_budget(path));
            *budget = -1;
            return;
        }
        let this = self.to_cel(v, root);
        let old_cel = old.filter(|o| !o.is_null()).map(|o| self.to_cel(o, root));
        for rule in &self.validations {
            let Some(program) = &rule.program else {
                continue;
            };
            let optional = rule.optional_old_self == Some(true);
            if program.uses_old_self() && old_cel.is_none() && !optional {
                continue;
            }
            let rule_string = rule
                .message
                .as_deref()
                .map(str::trim)
                .filter(|m| !m.is_empty())
                .unwrap_or(rule.rule.trim())
                .to_owned();
            let evaluation =
                program.evaluate_with_cost(&this, old_cel.as_ref(), optional, cel::PER_CALL_LIMIT);
            if evaluation.cost > *budget as u64 {
                errs.push(out_of_budget(path));
                *budget = -1;
                return;
            }
            *budget -= evaluation.cost as i64;
            let mut field = path.to_owned();
            match evaluation.result {
                Ok(CelValue::Bool(true)) => continue,
                Ok(CelValue::Bool(false)) => {}
                Ok(other) => {
                    errs.push(err(
                        field,
                        ErrorType::Invalid,
                        Some(go_quote(&t)),
                        format!(
                            "'no matching overload for {}' evaluating rule: {rule_string}",
                            cel::type_name(&other)
                        ),
                    ));
                    continue;
                }
                Err(e) if e.is_cost_limit() => {
                    errs.push(err(
                        field,
                        ErrorType::Invalid,
                        Some(go_quote(&t)),
                        format!("'{e}': no further validation rules will be run due to call cost exceeds limit for rule: {rule_string}"),
                    ));
                    *budget = -1;
                    return;
                }
                Err(e) => {
                    errs.push(err(
                        field,
                        ErrorType::Invalid,
                        Some(go_quote(&t)),
                        format!("{e} evaluating rule: {rule_string}"),
                    ));
                    continue;
                }
            }
            if let Some(fp) = &rule.field_path {
                field = child(&field, &normalize_field_path(fp));
            }
            // Errors of rules that do not read oldSelf, on unchanged values, are ratcheted
            // (after their messageExpression ran and was charged, as the server orders it).
            let ratcheted = !program.uses_old_self() && ratchet.ratchets();
            let mut message = None;
            if let Some(m) = &rule.message_program {
                let evaluation =
                    m.evaluate_with_cost(&this, old_cel.as_ref(), false, cel::PER_CALL_LIMIT);
                let fatal = if evaluation.cost > *budget as u64 {
                    Some("messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run".to_owned())
                } else if evaluation.result.as_ref().is_err_and(|e| e.is_cost_limit()) {
                    Some(format!(
                        "no further validation rules will be run due to call cost exceeds limit for messageExpression: {}",
                        go_quote(rule.message_expression.as_deref().unwrap_or_default())
                    ))
                } else {
                    None
                };
                if let Some(detail) = fatal {
                    if !ratcheted {
                        errs.push(err(field, ErrorType::Invalid, Some(go_quote(&t)), detail));
                    }
                    *budget = -1;
                    return;
                }
                *budget -= evaluation.cost as i64;
                message = evaluation.result.ok().and_then(|m| match m {
                    CelValue::String(s) if !s.trim().is_empty() && !s.contains('\n') => {
                        Some(s.trim().to_string())
                    }
                    _ => None,
                });
            }
            if ratcheted {
                continue;
            }
            let detail = message.unwrap_or_else(|| match rule.message.as_deref().map(str::trim) {
                Some(m) if !m.is_empty() => m.to_owned(),
                _ => format!("failed rule: {}", rule.rule.trim()),
            });
            let value = if t == "object" || t == "array" {
                None
            } else {
                Some(render(v))
            };
            errs.push(match rule.reason.as_deref() {
                Some("FieldValueForbidden") => err(field, ErrorType::Forbidden, None, detail),
                Some("FieldValueRequired") => err(field, ErrorType::Required, None, detail),
                Some("FieldValueDuplicate") => {
                    err(field, ErrorType::Duplicate, value, String::new())
                }
                _ => err(field, ErrorType::Invalid, value, detail),
            });
        }
    }

    /// The CEL value of `v` under this schema (`UnstructuredToVal`): `number` fields are
    /// doubles, `format: byte` strings are bytes, declared property names are escaped
    /// ([`cel::escape`], kept as written where it refuses them), and
    /// the root's metadata shows only `name` and `generateName`.
    pub(super) fn to_cel(&self, v: &Value, root: bool) -> CelValue {
        match v {
            Value::Object(m) => {
                let entries: Vec<(String, CelValue)> = m
                    .iter()
                    .filter_map(|(k, x)| {
                        if (root || self.embedded_resource) && k == "metadata" {
                            let meta = x.as_object()?;
                            let kept: Vec<(String, CelValue)> = ["name", "generateName"]
                                .iter()
                                .filter_map(|f| {
                                    meta.get(*f).map(|v| (f.to_string(), cel::json_to_cel(v)))
                                })
                                .collect();
                            return Some((k.clone(), cel_map(kept)));
                        }
                        match self.properties.get(k) {
                            // As `UnstructuredToVal`'s objects: by the escaped name, or
                            // as written when CEL cannot name it.
                            Some(p) => Some((
                                cel::escape(k).unwrap_or_else(|| k.clone()),
                                p.to_cel(x, false),
                            )),
                            None => match self.additional() {
                                Some(a) => Some((k.clone(), a.to_cel(x, false))),
                                None => Some((k.clone(), cel::json_to_cel(x))),
                            },
                        }
                    })
                    .collect();
                cel_map(entries)
            }
            Value::Array(a) => CelValue::List(Arc::new(
                a.iter()
                    .map(|x| match &self.items {
                        Some(i) => i.to_cel(x, false),
                        None => cel::json_to_cel(x),
                    })
                    .collect(),
            )),
            Value::Number(n) if self.type_.as_deref() == Some("number") => {
                CelValue::Float(n.as_f64().unwrap_or(f64::NAN))
            }
            Value::String(s) if self.format.as_deref() == Some("byte") => match base64_decode(s) {
                Some(b) => CelValue::Bytes(Arc::new(b)),
                None => CelValue::String(Arc::new(s.clone())),
            },
            // The server types `date-time` and `date` strings as timestamps and `duration`
            // strings as durations in rules (`UnstructuredToVal`), so `self.t <
            // timestamp('...')` compares times. Such a string reached the rule only after
            // its format check passed (a failed check blocks the rules), so a parse that
            // still fails keeps the string.
            Value::String(s) => match self.format.as_deref() {
                Some(f @ ("date-time" | "date" | "duration")) => {
                    cel::time_value(f, s).unwrap_or_else(|| CelValue::String(Arc::new(s.clone())))
                }
                _ => CelValue::String(Arc::new(s.clone())),
            },
            other => cel::json_to_cel(other),
        }
    }
}

thread_local! {
    /// Schema nodes checked so far on this thread: [`Branch::checks`] is a difference.
    static CHECKS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// A composite keyword's branch, checked.
struct Branch {
    errors: Vec<FieldError>,
    checks: usize,
}

/// The errors of the failing branch kube-openapi reports: the one with the highest match
/// count (approximated by the schema nodes it checked), the first on a tie.
fn best(results: Vec<Branch>) -> Vec<FieldError> {
    let mut best: Option<Branch> = None;
    for b in results.into_iter().filter(|b| !b.errors.is_empty()) {
        if best.as_ref().is_none_or(|x| b.checks > x.checks) {
            best = Some(b);
        }
    }
    best.map(|b| b.errors).unwrap_or_default()
}

fn cel_map(entries: Vec<(String, CelValue)>) -> CelValue {
    crate::cel::value_object(entries)
}

/// How errors of non-transition rules at a node are ratcheted (kept as warnings) on
/// updates: by the node's own equality with its old value when it is correlated, else by
/// that of its nearest correlated ancestor.
#[derive(Clone, Copy, Debug)]
pub(super) enum Ratchet {
    Equal(bool),
    Never,
    /// Not in this walk, nor below: the API server's check of a CRD's defaults runs the
    /// rules with the default as its own old value and no ratcheting.
    Off,
}

impl Ratchet {
    fn ratchets(self) -> bool {
        matches!(self, Ratchet::Equal(true))
    }

    fn uncorrelated(self) -> Ratchet {
        self
    }

    /// A child's, with `old` its correlated old value if it has one.
    fn child(self, old: Option<&Value>, v: &Value) -> Ratchet {
        match (self, old) {
            (Ratchet::Off, _) => Ratchet::Off,
            (_, Some(o)) => Ratchet::Equal(o == v),
            (_, None) => self.uncorrelated(),
        }
    }

    /// An `allOf` branch's: its errors are never ratcheted.
    fn all_of(self) -> Ratchet {
        match self {
            Ratchet::Off => Ratchet::Off,
            _ => Ratchet::Never,
        }
    }
}

/// JSON equality with numbers compared by value (`1` and `1.0` are one enum value).
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

/// Indices of items equal to an earlier one (each value reported once, at its second
/// occurrence), as `validateListSet` reports them.
fn duplicates(items: Vec<Option<Value>>) -> Vec<usize> {
    let mut out = vec![];
    for i in 0..items.len() {
        let before = items[..i].iter().filter(|x| **x == items[i]).count();
        if before == 1 {
            out.push(i);
        }
    }
    out
}

/// `fieldPath` (`.a.b`, `['a.b']`) as the field path suffix the API server prints.
fn normalize_field_path(fp: &str) -> String {
    let mut parts = vec![];
    let mut rest = fp.trim();
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            parts.push(r[..end].to_owned());
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix("['") {
            let end = r.find("']").unwrap_or(r.len());
            parts.push(r[..end].to_owned());
            rest = r.get(end + 2..).unwrap_or("");
        } else {
            parts.push(rest.to_owned());
            break;
        }
    }
    parts.join(".")
}

fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let val = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => (c - b'A') as u32,
            b'a'..=b'z' => (c - b'a' + 26) as u32,
            b'0'..=b'9' => (c - b'0' + 52) as u32,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        })
    };
    let body = s.trim_end_matches('=');
    let mut out = vec![];
    let mut acc = 0u32;
    let mut bits = 0;
    for c in body.bytes() {
        acc = (acc << 6) | val(c)?;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}
