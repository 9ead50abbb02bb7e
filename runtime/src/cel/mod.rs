//! The CEL evaluator for CRD validation rules (`x-kubernetes-validations`), on the
//! [`cel`] interpreter (cel-rust) with the Kubernetes CEL libraries that CRD rules may call
//! added in `library`: lists, sets, strings, regex, URLs, quantities, IPs and CIDRs,
//! named formats and semantic versions.
//!
//! The API server compiles a rule against the schema (CEL's type checker) and runs it with a
//! cost budget; this evaluator is dynamic: a rule that type-checks runs to the same result,
//! and [`compile`] refuses what the evaluator cannot run (a function it lacks), so code
//! generation fails on such a rule instead of a program silently disagreeing with the
//! cluster. What is not supported is listed in [`UNSUPPORTED`] and in README
//! ("Defaulting and validation").

mod library;
mod value;

pub use library::SUPPORTED_FUNCTIONS;
pub(crate) use value::time_value;
pub use value::{json_to_cel, object as value_object_from, type_name};

/// A CEL map from owned string keys.
pub fn value_object(entries: Vec<(String, Value)>) -> Value {
    value_object_from(entries.iter().map(|(k, v)| (k, v.clone())))
}

use std::fmt;

pub use cel::Value;
use cel::objects::OptionalValue;

/// Kubernetes CEL features this evaluator does not run, as (what, why). A rule that uses
/// one is refused by [`compile`] (and so at generation time).
pub const UNSUPPORTED: &[(&str, &str)] = &[
    (
        "authorizer, `type()`, `dyn()`-typed checks, CEL type identifiers",
        "no type checker: rules are evaluated dynamically",
    ),
    (
        "the runtime cost budget",
        "no cost estimation: a rule runs to completion",
    ),
];

/// A compiled CEL expression.
pub struct Program {
    program: cel::Program,
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

/// Compiles `source`, refusing functions the evaluator lacks.
pub fn compile(source: &str) -> Result<Program, CompileError> {
    let program = cel::Program::compile(source).map_err(|e| CompileError::Syntax(e.to_string()))?;
    let refs = program.references();
    for f in refs.functions() {
        if !library::is_supported(f) {
            return Err(CompileError::UnsupportedFunction(f.to_owned()));
        }
    }
    let uses_old_self = refs.has_variable("oldSelf");
    Ok(Program {
        program,
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
    /// when `optional_old_self`).
    pub fn evaluate(
        &self,
        this: &Value,
        old: Option<&Value>,
        optional_old_self: bool,
    ) -> Result<Value, EvalError> {
        library::with_root(|root| {
            let mut ctx = root.new_inner_scope();
            ctx.add_variable_from_value("self", this.clone());
            if optional_old_self {
                let opt = match old {
                    Some(v) => OptionalValue::of(v.clone()),
                    None => OptionalValue::none(),
                };
                ctx.add_variable_from_value("oldSelf", Value::Opaque(std::sync::Arc::new(opt)));
            } else if let Some(old) = old {
                ctx.add_variable_from_value("oldSelf", old.clone());
            }
            self.program.execute(&ctx).map_err(|e| match e {
                // cel-go's wording, which the API server's messages carry.
                cel::ExecutionError::NoSuchKey(k) => EvalError(format!("no such key: {k}")),
                e => EvalError(e.to_string()),
            })
        })
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
