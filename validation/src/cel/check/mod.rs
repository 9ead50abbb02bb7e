//! What the API server checks of a CRD's CEL rules when it takes the CRD
//! (apiextensions-apiserver pkg/apis/apiextensions/validation: `validation.go`,
//! `cel_validation.go`; pkg/apiserver/schema/cel/compilation.go): each `rule` and
//! `messageExpression` type checks against the schema's declared types (`checker.rs`), a
//! rule is a bool and a message a string, `oldSelf` only where old and new values
//! correlate, `optionalOldSelf` only with `oldSelf`, and the estimated cost (`estimate.rs`)
//! of each expression (a rule's times how often it can run) and of all of them together
//! stays in the server's budgets.
//!
//! It works on the schema as JSON (a CRD version's `openAPIV3Schema`), so it runs on any
//! CRD, generated or not: the generator runs [`check_schema`] on every CRD it writes. What
//! it does not model (a function it has no declaration for, a schema it cannot type) never
//! becomes a refusal: no false refusals, at the price of letting through what only the
//! server would catch. The functions it declares are the evaluator's (one table for both),
//! and so are the cost constants.

mod checker;
mod estimate;
pub(super) mod types;
mod validators;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Mutex;

use serde_json::Value;

use types::{Decl, Type, schema_decl};

use super::limits::{
    MAX_REQUEST_SIZE_BYTES, STATIC_ESTIMATED_COST_LIMIT, STATIC_ESTIMATED_CRD_COST_LIMIT,
};

/// Whether each pattern compiled, once per distinct pattern: APIs repeat their patterns.
static PATTERNS: Mutex<BTreeMap<String, Result<(), String>>> = Mutex::new(BTreeMap::new());

/// Compiles a regular expression (RE2 syntax, as the API server's Go regexps read it:
/// [`crate::re2`]) to check it: a schema's `pattern`, or the literal pattern of a
/// rule's `matches`. `Err` carries the last line of the compiler's message, without its
/// `error: ` (callers say what failed; "invalid regular expression ...: error: ..." said
/// it twice).
pub fn check_regex(pattern: &str) -> Result<(), String> {
    let lock = || PATTERNS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(r) = lock().get(pattern) {
        return r.clone();
    }
    let r = crate::re2::regex(pattern).map(|_| ()).map_err(|e| {
        e.to_string()
            .lines()
            .last()
            .unwrap_or_default()
            .trim()
            .trim_start_matches("error: ")
            .to_owned()
    });
    lock().insert(pattern.to_owned(), r.clone());
    r
}

/// Why a CEL expression does not parse: the parser's first error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    /// The message, without its `Syntax error: ` prefix.
    pub message: String,
    /// The column the error is at (1-based, in characters).
    pub column: usize,
}

/// Parses `source` as the API server reads an `x-kubernetes-validations` expression
/// ([`crate::cel::syntax`], with the optional syntax of the Kubernetes environments), for a
/// syntax error located at its column.
pub fn syntax_error(source: &str) -> Option<SyntaxError> {
    let e = crate::cel::syntax::parse(source, true).err()?;
    Some(SyntaxError {
        message: e.message,
        column: e.column,
    })
}

/// The server's advice with every cost refusal.
pub const COST_HINT: &str = "try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared";

/// One refusal the API server would give.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// The schema node the rule sits on, as an object path (`.spec.items[*]`; empty for the
    /// root).
    pub at: String,
    /// The expression at fault (a `rule` or `messageExpression`), by which its marker is
    /// found; `None` for the whole schema's total cost.
    pub expr: Option<String>,
    /// What the server would say, in its words where it has them.
    pub message: String,
    /// How to fix it.
    pub hint: String,
}

/// Checks every `x-kubernetes-validations` rule of a CRD version's schema.
pub fn check_schema(schema: &Value) -> Vec<Problem> {
    let mut w = Walker {
        problems: vec![],
        total: 0,
        expensive: vec![],
    };
    let root = schema_decl(schema, true);
    w.walk(schema, root.as_ref(), String::new(), None, Some(1), &[]);
    if w.total > STATIC_ESTIMATED_CRD_COST_LIMIT {
        w.expensive.sort_by_key(|e| std::cmp::Reverse(e.1));
        let top: Vec<String> = w
            .expensive
            .iter()
            .take(4)
            .map(|(what, _)| what.clone())
            .collect();
        w.problems.push(Problem {
            at: String::new(),
            expr: None,
            message: cost_message(
                "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
                w.total,
                STATIC_ESTIMATED_CRD_COST_LIMIT,
            ),
            hint: format!(
                "the most expensive: {}; {COST_HINT}",
                if top.is_empty() {
                    "none over 1% of the limit".to_string()
                } else {
                    top.join(", ")
                }
            ),
        });
    }
    w.problems
}

/// `getCostErrorMessage`, word for word.
pub fn cost_message(what: &str, cost: u64, limit: u64) -> String {
    let factor = cost as f64 / limit as f64;
    let factor = if factor > 100.0 {
        "more than 100x".to_string()
    } else if factor < 1.5 {
        format!("{factor:.6}x")
    } else {
        format!("{factor:.1}x")
    };
    format!("{what} exceeds budget by factor of {factor} ({COST_HINT})")
}

struct Walker {
    problems: Vec<Problem>,
    total: u64,
    /// Expressions costing at least 1% of the CRD limit, for the total's report.
    expensive: Vec<(String, u64)>,
}

/// How many values a schema node has (`extractMaxElements`); `None` if unbounded.
fn max_elements(s: &Value) -> Option<u64> {
    let n = |k: &str| s.get(k).and_then(Value::as_i64).map(|v| v.max(0) as u64);
    match s.get("type").and_then(Value::as_str) {
        Some("object") if s.get("additionalProperties").is_some() => n("maxProperties"),
        Some("array") => n("maxItems"),
        _ => Some(1),
    }
}

fn flag(s: &Value, key: &str) -> bool {
    s.get(key).and_then(Value::as_bool) == Some(true)
}

impl Walker {
    /// `forbid_old_self`: the first node above whose values do not correlate between old
    /// and new object; `cardinality`: how often the node's rules can run, `None` when under
    /// an unbounded list or map.
    fn walk(
        &mut self,
        s: &Value,
        decl: Option<&Decl>,
        at: String,
        forbid_old_self: Option<&str>,
        cardinality: Option<u64>,
        above: &[String],
    ) {
        if let (Some(Value::Array(rules)), Some(d)) = (s.get("x-kubernetes-validations"), decl) {
            self.rules(s, rules, d, &at, forbid_old_self, cardinality, above);
        }
        let own_max = max_elements(s);
        let child_card = match (cardinality, own_max) {
            (Some(c), Some(m)) => Some(c.saturating_mul(m)),
            _ => None,
        };
        let mut above = above.to_vec();
        if own_max.is_none() {
            let keyword = if s.get("type").and_then(Value::as_str) == Some("array") {
                "maxItems"
            } else {
                "maxProperties"
            };
            above.push(format!(
                "{keyword} on `{}`",
                if at.is_empty() { "." } else { at.as_str() }
            ));
        }
        let above = above.as_slice();
        let fallback =
            |child: &Value| schema_decl(child, flag(child, "x-kubernetes-embedded-resource"));
        if let Some(props) = s.get("additionalProperties").filter(|p| p.is_object()) {
            let from_parent = decl.and_then(|d| match &d.kind {
                types::DeclKind::Map(v) => Some(&**v),
                _ => None,
            });
            let own;
            let d = match from_parent {
                Some(d) => Some(d),
                None => {
                    own = fallback(props);
                    own.as_ref()
                }
            };
            self.walk(
                props,
                d,
                format!("{at}[*]"),
                forbid_old_self,
                child_card,
                above,
            );
        }
        if let Some(Value::Object(props)) = s.get("properties") {
            let correlatable = matches!(
                s.get("x-kubernetes-map-type").and_then(Value::as_str),
                None | Some("granular") | Some("atomic")
            );
            let forbid = if correlatable {
                forbid_old_self
            } else {
                Some(at.as_str())
            };
            for (name, prop) in props {
                let from_parent = decl.and_then(|d| match (&d.kind, crate::cel::escape(name)) {
                    (types::DeclKind::Object(fields), Some(n)) => fields.get(&n),
                    _ => None,
                });
                let own;
                let d = match from_parent {
                    Some(d) => Some(d),
                    None => {
                        own = fallback(prop);
                        own.as_ref()
                    }
                };
                self.walk(prop, d, format!("{at}.{name}"), forbid, child_card, above);
            }
        }
        if let Some(items) = s.get("items").filter(|i| i.is_object()) {
            let is_map_list =
                s.get("x-kubernetes-list-type").and_then(Value::as_str) == Some("map");
            let forbid = if is_map_list {
                forbid_old_self
            } else {
                Some(at.as_str())
            };
            let from_parent = decl.and_then(|d| match &d.kind {
                types::DeclKind::List(e) => Some(&**e),
                _ => None,
            });
            let own;
            let d = match from_parent {
                Some(d) => Some(d),
                None => {
                    own = fallback(items);
                    own.as_ref()
                }
            };
            self.walk(items, d, format!("{at}[*]"), forbid, child_card, above);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn rules(
        &mut self,
        node: &Value,
        rules: &[Value],
        decl: &Decl,
        at: &str,
        forbid_old_self: Option<&str>,
        cardinality: Option<u64>,
        above: &[String],
    ) {
        let mut structs = BTreeMap::new();
        let self_type = decl.cel_type("selfType", &mut structs);
        // The schema's object types, declared once for all the node's rules.
        let mut env = checker::Env {
            vars: HashMap::from([("self", self_type.clone())]),
            structs,
        };
        // `maxCardinality(declType.MinSerializedSize)`: as many as fit in a request.
        let cardinality =
            cardinality.unwrap_or_else(|| (MAX_REQUEST_SIZE_BYTES / (decl.min_size + 1)) as u64);
        let where_ = if at.is_empty() {
            "the schema's root".to_string()
        } else {
            format!("`{at}`")
        };
        for r in rules {
            let Some(rule) = r.get("rule").and_then(Value::as_str) else {
                continue;
            };
            if rule.trim().is_empty() {
                continue;
            }
            let optional_old_self = r.get("optionalOldSelf").and_then(Value::as_bool);
            let old_self = if optional_old_self == Some(true) {
                Type::optional(self_type.clone())
            } else {
                self_type.clone()
            };
            env.vars.insert("oldSelf", old_self);
            let env = &env;
            let problem = |expr: &str, message: String, hint: &str| Problem {
                at: at.to_string(),
                expr: Some(expr.to_string()),
                message,
                hint: hint.to_string(),
            };
            if let Some(path) = r.get("fieldPath").and_then(Value::as_str)
                && !path.trim().is_empty()
                && let Err(why) = valid_field_path(path, node)
            {
                self.problems.push(problem(
                    rule,
                    format!("the fieldPath `{path}` of the rule `{rule}` at {where_} must be a valid path: {why}"),
                    "fieldPath names a field below the rule's node: `.field`, `.field.sub`, or `['key']` for names with special characters and map keys; list items cannot be named",
                ));
            }
            let compiled = compile(rule, env, decl);
            let mut uses_old_self = compiled.uses_old_self;
            let mut compiles = true;
            let rule_cost = match &compiled.outcome {
                Outcome::Errors(errors) => {
                    self.problems.push(problem(
                        rule,
                        format!("the rule `{rule}` at {where_} does not compile: {}", errors.join("; ")),
                        "the API server type checks rules against the schema: `self` has the type of the field the rule is on, `oldSelf` too (an optional of it with `optionalOldSelf`); fields are reached only if the schema declares them",
                    ));
                    uses_old_self = false;
                    compiles = false;
                    0
                }
                Outcome::Typed(t, _) if *t != Type::Bool && !t.has_unknown() => {
                    self.problems.push(problem(
                        rule,
                        format!("the rule `{rule}` at {where_} evaluates to {t}; cel expression must evaluate to a bool"),
                        "write the rule as a condition that holds for valid objects",
                    ));
                    0
                }
                Outcome::Typed(_, cost) => cost.as_ref().map_or(0, |c| c.0),
            };
            let expression_cost = if rule_cost == 0 {
                0
            } else {
                rule_cost.saturating_mul(cardinality)
            };
            if expression_cost > STATIC_ESTIMATED_COST_LIMIT {
                self.problems.push(problem(
                    rule,
                    format!(
                        "the rule `{rule}` at {where_}: {}",
                        cost_message(
                            "estimated rule cost",
                            expression_cost,
                            STATIC_ESTIMATED_COST_LIMIT
                        )
                    ),
                    &bound_hint(at, &compiled.outcome, above),
                ));
            }
            self.observe(format!("the rule `{rule}`"), expression_cost);
            if let Some(msg) = r.get("messageExpression").and_then(Value::as_str) {
                match compile(msg, env, decl).outcome {
                    Outcome::Errors(errors) => self.problems.push(problem(
                        msg,
                        format!("the messageExpression `{msg}` at {where_} does not compile: {}", errors.join("; ")),
                        "messageExpressions are type checked as rules are",
                    )),
                    Outcome::Typed(t, _) if t != Type::String && !t.has_unknown() => {
                        self.problems.push(problem(
                            msg,
                            format!("the messageExpression `{msg}` at {where_} evaluates to {t}; messageExpression must evaluate to a string"),
                            "convert the message with string(...)",
                        ))
                    }
                    Outcome::Typed(_, ref estimate) => {
                        let cost = estimate.as_ref().map_or(0, |c| c.0);
                        if cost > STATIC_ESTIMATED_COST_LIMIT {
                            self.problems.push(problem(
                                msg,
                                format!(
                                    "the messageExpression `{msg}` at {where_}: {}",
                                    cost_message("estimated messageExpression cost", cost, STATIC_ESTIMATED_COST_LIMIT)
                                ),
                                &format!("{}; a string converted from a value (string(x)) has no known length: concatenate bounded strings, or use `message`", bound_hint(at, &Outcome::Typed(Type::String, estimate.clone()), &[])),
                            ));
                        }
                        self.observe(format!("the messageExpression `{msg}`"), cost);
                    }
                }
            }
            if uses_old_self {
                if let Some(path) = forbid_old_self {
                    let within = if path.is_empty() {
                        "the schema's root".to_string()
                    } else {
                        format!("`{path}`")
                    };
                    self.problems.push(problem(
                        rule,
                        format!("the rule `{rule}` at {where_}: oldSelf cannot be used on the uncorrelatable portion of the schema within {within}"),
                        "old and new values correlate only through objects, maps and `x-kubernetes-list-type: map` lists: put the transition rule on a field above the list (or make the list `listType=map`)",
                    ));
                }
            } else if optional_old_self.is_some() && compiles && !compiled.unknown {
                self.problems.push(problem(
                    rule,
                    format!("the rule `{rule}` at {where_} sets optionalOldSelf, which may not be set if oldSelf is not used in rule"),
                    "drop optionalOldSelf, or use oldSelf in the rule",
                ));
            }
        }
    }

    fn observe(&mut self, what: String, cost: u64) {
        self.total = self.total.saturating_add(cost);
        if cost >= STATIC_ESTIMATED_CRD_COST_LIMIT / 100 {
            self.expensive.push((what, cost));
        }
    }
}

/// `ValidFieldPath`: a rule's `fieldPath` must lead, through properties and map keys, to a
/// node of the rule's schema (no list indices).
fn valid_field_path(path: &str, schema: &Value) -> Result<(), String> {
    let chars: Vec<char> = path.chars().collect();
    let mut tokens: Vec<String> = vec![];
    let mut i = 0;
    while i < chars.len() {
        let start = i;
        if chars[i] == '\'' {
            i += 1;
            while i < chars.len() && !(chars[i] == '\'' && chars[i - 1] != '\\') {
                i += 1;
            }
            i = (i + 1).min(chars.len());
        } else if matches!(chars[i], '.' | '[' | ']') {
            i += 1;
        } else {
            while i < chars.len() && !matches!(chars[i], '.' | '[' | ']') {
                i += 1;
            }
        }
        tokens.push(chars[start..i].iter().collect());
    }
    let mut node = schema;
    let step = |node: &mut &Value, name: &str| -> Result<(), String> {
        if let Some(props) = node.get("properties") {
            *node = props.get(name).ok_or("does not refer to a valid field")?;
        } else if let Some(ap) = node.get("additionalProperties") {
            *node = ap;
        } else {
            return Err("does not refer to a valid field".into());
        }
        Ok(())
    };
    let mut it = tokens.iter();
    while let Some(tok) = it.next() {
        match tok.as_str() {
            "[" => {
                let quoted = it.next().ok_or("unexpected end of JSON path")?;
                let name = quoted
                    .strip_prefix('\'')
                    .and_then(|q| q.strip_suffix('\''))
                    .filter(|_| quoted.len() >= 2)
                    .ok_or_else(|| format!("expected single quoted string but got {quoted}"))?;
                step(&mut node, &name.replace("\\'", "'"))?;
                match it.next().map(String::as_str) {
                    Some("]") => {}
                    Some(other) => return Err(format!("expected ] but got {other}")),
                    None => return Err("unexpected end of JSON path".into()),
                }
            }
            "." => {
                let name = it.next().ok_or("unexpected end of JSON path")?;
                step(&mut node, name)?;
            }
            other => return Err(format!("expected [ or . but got: {other}")),
        }
    }
    Ok(())
}

/// The server's hint names no field; ours names the bounds the estimate missed: the
/// unbounded strings, lists and maps the expression reads, and the unbounded lists and maps
/// above the rule that multiply how often it runs.
fn bound_hint(at: &str, outcome: &Outcome, above: &[String]) -> String {
    let mut wanted: Vec<String> = vec![];
    if let Outcome::Typed(_, Some((_, unbounded))) = outcome {
        for (path, keyword) in unbounded {
            let mut p = at.to_string();
            for seg in path {
                match seg.as_str() {
                    "@items" | "@values" => p.push_str("[*]"),
                    "@keys" => p.push_str("[key]"),
                    s => {
                        p.push('.');
                        p.push_str(s);
                    }
                }
            }
            wanted.push(format!(
                "{keyword} on `{}`",
                if p.is_empty() { "." } else { p.as_str() }
            ));
        }
    }
    wanted.extend(above.iter().cloned());
    if wanted.is_empty() {
        "simplify the expression".to_string()
    } else {
        format!(
            "the estimate assumes every unbounded string, list and map fills a 3 MiB request: add {}",
            wanted.join(", ")
        )
    }
}

enum Outcome {
    Errors(Vec<String>),
    /// The result type and, when every part was modeled, the estimated cost's maximum and
    /// the unbounded nodes it read.
    Typed(Type, Option<(u64, Unbounded)>),
}

/// The unbounded nodes a cost estimate read: path below `self`, keyword that would bound it.
type Unbounded = BTreeSet<(Vec<String>, &'static str)>;

struct Compiled {
    outcome: Outcome,
    uses_old_self: bool,
    unknown: bool,
}

/// Parses, checks and costs one expression.
fn compile(src: &str, env: &checker::Env, decl: &Decl) -> Compiled {
    let expr = match crate::cel::syntax::parse(src, true) {
        Ok(expr) => expr,
        // A marker's expression was parsed where it was written; this is for schemas
        // from elsewhere (CRD files, schema patches).
        Err(e) => {
            return Compiled {
                outcome: Outcome::Errors(vec![e.message]),
                uses_old_self: false,
                unknown: false,
            };
        }
    };
    let checked = checker::check(&expr, env);
    let invalid = if checked.errors.is_empty() {
        validators::validate(&expr, &checked)
    } else {
        vec![]
    };
    let outcome = if !checked.errors.is_empty() {
        Outcome::Errors(checked.errors.clone())
    } else if !invalid.is_empty() {
        Outcome::Errors(invalid)
    } else {
        let cost = (!checked.unknown).then(|| {
            let (est, unbounded) = estimate::estimate(&expr, &checked, decl);
            (est.max, unbounded)
        });
        Outcome::Typed(checked.type_of(expr.id), cost)
    };
    Compiled {
        outcome,
        uses_old_self: checked.uses_old_self,
        unknown: checked.unknown,
    }
}

#[cfg(test)]
mod tests;
