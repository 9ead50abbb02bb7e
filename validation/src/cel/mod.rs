//! The CEL evaluator for CRD validation rules (`x-kubernetes-validations`): our own parser
//! ([`syntax`], cel-go's grammar), values ([`Value`]), standard functions (`stdlib`) and the
//! Kubernetes CEL libraries that CRD rules may call (`library`): lists, sets, strings,
//! regex, URLs, quantities, IPs and CIDRs, named formats and semantic versions.
//!
//! The API server compiles a rule against the schema (CEL's type checker) and runs it with a
//! cost budget; rules run here on a walker (`cost`) that charges the same runtime cost and
//! stops where cel-go stops. This evaluator is dynamic: a rule that type-checks runs to the
//! same result,
//! and [`compile`] refuses what the evaluator cannot run (a function it lacks), so code
//! generation fails on such a rule instead of a program silently disagreeing with the
//! cluster. What is not supported is listed in [`UNSUPPORTED`] and in the book (docs/src/guide/validation.md)
//! ("Defaulting and validation").

pub mod check;
mod cost;
pub(crate) mod duration;
mod functions;
mod library;
mod limits;
mod stdlib;
pub mod syntax;
mod value;

pub use cost::COST_LIMIT_EXCEEDED;
pub use limits::{
    MAX_REQUEST_SIZE_BYTES, PER_CALL_LIMIT, RUNTIME_COST_BUDGET, STATIC_ESTIMATED_COST_LIMIT,
    STATIC_ESTIMATED_CRD_COST_LIMIT,
};

pub(crate) use value::time_value;
pub use value::{
    ExecutionError, Key, Map, Opaque, OpaqueEq, OptionalValue, Value, equals, json_to_cel,
    object as value_object_from, type_name,
};

/// A CEL map from owned string keys.
pub fn value_object(entries: Vec<(String, Value)>) -> Value {
    value_object_from(entries.iter().map(|(k, v)| (k, v.clone())))
}

use std::fmt;

/// Kubernetes CEL features this evaluator does not run, as (what, why). A rule that uses
/// one is refused by [`compile`] (and so at generation time).
pub const UNSUPPORTED: &[(&str, &str)] = &[(
    "authorizer, `type()`, `dyn()`-typed checks, CEL type identifiers",
    "no type checker: rules are evaluated dynamically",
)];

/// The evaluation error of a time-zone name in a timestamp getter (`getHours('Europe/Paris')`)
/// when the crate is built without its `time-zones` feature (fixed offsets such as `'+01:00'`
/// work without it): the generator, which leaves the database out, treats it as no verdict.
pub const NO_ZONE_DATABASE: &str =
    "time-zone names need kube-codegen-validation's `time-zones` feature";

/// CEL's reserved words: a property so named is reached as `__name__` ([`escape`]).
pub const RESERVED: &[&str] = &[
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// The CEL name of a property (Kubernetes' `apiservercel.Escape`): `__` becomes
/// `__underscores__`, `.` `__dot__`, `-` `__dash__`, `/` `__slash__`, a reserved word `w`
/// `__w__`; `None` for a name CEL cannot reach (empty, led by a digit, or with any other
/// character). The checker declares no field for such a name; in values the API server
/// keeps it as it is (`UnstructuredToVal`'s objects), where `dyn(self)` iterates and indexes
/// it.
pub fn escape(name: &str) -> Option<String> {
    let first = name.chars().next()?;
    if first.is_ascii_digit() {
        return None;
    }
    if RESERVED.contains(&name) {
        return Some(format!("__{name}__"));
    }
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(c) = rest.chars().next() {
        if let Some(r) = rest.strip_prefix("__") {
            out.push_str("__underscores__");
            rest = r;
            continue;
        }
        match c {
            '.' => out.push_str("__dot__"),
            '-' => out.push_str("__dash__"),
            '/' => out.push_str("__slash__"),
            c if c.is_ascii_alphanumeric() || c == '_' => out.push(c),
            _ => return None,
        }
        rest = &rest[c.len_utf8()..];
    }
    Some(out)
}

/// A compiled CEL expression.
pub struct Program {
    /// The rule planned for the metered evaluator (see `cost`), which runs it.
    node: cost::Node,
    source: String,
    uses_old_self: bool,
}

impl fmt::Debug for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Program")
            .field("source", &self.source)
            .finish()
    }
}

/// Why a rule does not compile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CompileError {
    /// Not CEL.
    Syntax(String),
    /// Calls a function this evaluator does not implement.
    UnsupportedFunction(String),
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompileError::Syntax(e) => write!(f, "syntax error: {e}"),
            CompileError::UnsupportedFunction(name) => write!(
                f,
                "`{name}` is not supported by kube-codegen's CEL evaluator"
            ),
        }
    }
}

impl std::error::Error for CompileError {}

/// The functions `source` calls that this evaluator does not implement, sorted, each once
/// (empty when it runs them all); `None` when `source` does not parse.
pub fn unsupported_functions(source: &str) -> Option<Vec<String>> {
    let expr = syntax::parse(source, true).ok()?;
    let refs = expr.references();
    let mut missing: Vec<String> = refs
        .functions()
        .into_iter()
        .filter(|f| !functions::is_supported(f))
        .map(str::to_owned)
        .collect();
    missing.sort();
    missing.dedup();
    Some(missing)
}

/// Compiles `source`, refusing functions the evaluator lacks.
pub fn compile(source: &str) -> Result<Program, CompileError> {
    let expr = syntax::parse(source, true).map_err(|e| CompileError::Syntax(e.to_string()))?;
    let refs = expr.references();
    for f in refs.functions() {
        if !functions::is_supported(f) {
            return Err(CompileError::UnsupportedFunction(f.to_owned()));
        }
    }
    let uses_old_self = refs.has_variable("oldSelf");
    let node = cost::plan(&expr);
    Ok(Program {
        node,
        source: source.to_owned(),
        uses_old_self,
    })
}

impl Program {
    /// The expression as written.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Whether it reads `oldSelf`: a transition rule, evaluated only on updates (unless
    /// `optionalOldSelf`).
    pub fn uses_old_self(&self) -> bool {
        self.uses_old_self
    }

    /// Evaluates with `self` (and `oldSelf`: `Some(None)` binds `optional.none()`, for
    /// `optionalOldSelf` rules on create; `Some(Some(v))` binds `v`, or `optional.of(v)`
    /// when `optional_old_self`), within the API server's per-call cost limit.
    pub fn evaluate(
        &self,
        this: &Value,
        old: Option<&Value>,
        optional_old_self: bool,
    ) -> Result<Value, EvalError> {
        self.evaluate_with_cost(this, old, optional_old_self, PER_CALL_LIMIT)
            .result
    }

    /// Evaluates as [`Program::evaluate`] does and returns the runtime cost cel-go's cost
    /// tracker charges for it (with the Kubernetes libraries' call costs). Past `limit`
    /// the evaluation stops, as the API server's does, with the error
    /// [`COST_LIMIT_EXCEEDED`] and the cost reached then.
    pub fn evaluate_with_cost(
        &self,
        this: &Value,
        old: Option<&Value>,
        optional_old_self: bool,
        limit: u64,
    ) -> Evaluation {
        let mut scope = cost::Scope::default();
        scope.bind("self", this.clone());
        if optional_old_self {
            let opt = match old {
                Some(v) => OptionalValue::of(v.clone()),
                None => OptionalValue::none(),
            };
            scope.bind("oldSelf", Value::Opaque(std::sync::Arc::new(opt)));
        } else if let Some(old) = old {
            scope.bind("oldSelf", old.clone());
        }
        let mut meter = cost::Meter::new(limit);
        let result = meter.eval(&self.node, &scope, true).map_err(|e| match e {
            cost::Fail::Cancelled => EvalError(COST_LIMIT_EXCEEDED.to_owned()),
            cost::Fail::Error(e) => EvalError(e.to_string()),
        });
        Evaluation {
            result,
            cost: meter.cost,
        }
    }
}

/// A metered evaluation: the result and the runtime cost (cel-go's `ActualCost`).
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluation {
    /// The value, or why there is none.
    pub result: Result<Value, EvalError>,
    /// What cel-go's cost tracker charged.
    pub cost: u64,
}

impl EvalError {
    /// Whether the evaluation was stopped by the per-call cost limit.
    pub fn is_cost_limit(&self) -> bool {
        self.0.starts_with(COST_LIMIT_EXCEEDED)
    }
}

/// A rule failed to evaluate (a missing key, a type error, an overflow): the API server's
/// "... evaluating rule" error, never a panic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvalError(pub String);

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for EvalError {}

#[cfg(test)]
mod tests;
