//! CEL's parser: cel-go's grammar (`CEL.g4`), hand-written, building cel-rust's AST.
//!
//! The checker, the cost estimator and the evaluator all read the trees this parser builds,
//! so a rule means one thing to all three. It replaces cel-rust's ANTLR-generated parser
//! (a step toward dropping cel-rust and its ANTLR runtime from the build, issue 35) and is
//! compared with it on every CEL rule of the CRD corpus and of this repository
//! (`tests.rs`): the same trees, with the same ids, except where cel-rust departs from
//! cel-go, where this parser gives cel-go's answer:
//!
//! - a run of one unary operator applies it once when odd and not at all when even
//!   (`!!x` is `x`; cel-rust reads `!x`);
//! - a leading dot names the root scope (`.a` is the identifier `.a`; cel-rust drops the dot);
//! - reserved words (`if`, `let`, `var`, …) are not identifiers or function names;
//! - a backquoted field (`` a.`b-c` ``) is the field `b-c`;
//! - `-0x10` is a negative hex literal.
//!
//! Limits, as cel-go's defaults: 250 levels of nesting and 100,000 code points.

mod lexer;
mod literal;
mod parser;
#[cfg(test)]
mod tests;

pub mod ast;

use ast::IdedExpr;

/// cel-go's default `maxRecursionDepth`.
pub(crate) const MAX_DEPTH: usize = 250;
/// cel-go's default `expressionSizeCodePointLimit`.
pub(crate) const MAX_CODE_POINTS: usize = 100_000;

/// Why an expression does not parse: the first error, where it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    /// What is wrong, in cel-go's words where it has them (without `Syntax error: `).
    pub message: String,
    /// The line (1-based).
    pub line: usize,
    /// The column (1-based, in characters).
    pub column: usize,
}

impl std::fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

impl std::error::Error for SyntaxError {}

/// Parses `source`; `optional` enables the optional syntax (`a.?b`, `a[?i]`, `[?x]`,
/// `{?k: v}`), as the Kubernetes environments do (the checker, the evaluator and the
/// generator all parse with it; without it is cel-rust's default, for the tests).
///
/// # Errors
///
/// The first syntax error, or a limit exceeded.
pub fn parse(source: &str, optional: bool) -> Result<IdedExpr, SyntaxError> {
    let size = source.chars().count();
    if size > MAX_CODE_POINTS {
        return Err(SyntaxError {
            message: format!(
                "expression code point size exceeds limit: size: {size}, limit {MAX_CODE_POINTS}"
            ),
            line: 1,
            column: 1,
        });
    }
    let tokens = lexer::tokenize(source).map_err(|e| SyntaxError {
        message: format!("token recognition error at: '{}'", e.text),
        line: e.line,
        column: e.column + 1,
    })?;
    parser::Parser::new(source, tokens, optional).parse()
}
