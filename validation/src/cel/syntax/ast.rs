//! CEL's abstract syntax, as cel-go's `ast` package (and cel-rust's, whose shape this
//! keeps) has it: macros already expanded into comprehensions, operators as calls of their
//! function names ([`operators`]), every node with an id unique in its tree.

use std::collections::HashSet;
use std::sync::Arc;

/// A node and its id.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IdedExpr {
    /// Unique in the tree: the checker types nodes by it.
    pub id: u64,
    /// What the node is.
    pub expr: Expr,
}

/// An expression.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Expr {
    /// Never built by the parser.
    #[default]
    Unspecified,
    /// A function or operator call.
    Call(CallExpr),
    /// A comprehension, from a macro (`all`, `exists`, `exists_one`, `map`, `filter`).
    Comprehension(Box<ComprehensionExpr>),
    /// A variable (a leading dot kept: `.a`).
    Ident(String),
    /// `[a, ?b]`
    List(ListExpr),
    /// A constant.
    Literal(LiteralValue),
    /// `{k: v, ?k2: v2}`
    Map(MapExpr),
    /// `a.f`, or `has(a.f)` when `test`.
    Select(SelectExpr),
    /// A message literal `pkg.Type{f: v}`.
    Struct(StructExpr),
}

/// A literal's value.
#[derive(Clone, Debug, PartialEq)]
pub enum LiteralValue {
    /// `true`, `false`
    Boolean(bool),
    /// `b'…'`
    Bytes(Arc<Vec<u8>>),
    /// `1.5`
    Double(f64),
    /// `1`, `-0x10`
    Int(i64),
    /// `null`
    Null,
    /// `'…'`
    String(Arc<String>),
    /// `1u`
    UInt(u64),
}

/// A map entry or a message field.
#[derive(Clone, Debug, PartialEq)]
pub enum EntryExpr {
    /// `f: v` in a message literal.
    StructField(StructFieldExpr),
    /// `k: v` in a map literal.
    MapEntry(MapEntryExpr),
}

/// An entry and its id.
#[derive(Clone, Debug, PartialEq)]
pub struct IdedEntryExpr {
    /// Unique in the tree.
    pub id: u64,
    /// The entry.
    pub expr: EntryExpr,
}

/// `f(args)` or `target.f(args)`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CallExpr {
    /// The function (an operator's name for operators: `_+_`).
    pub func_name: String,
    /// The receiver of a member call.
    pub target: Option<Box<IdedExpr>>,
    /// The arguments.
    pub args: Vec<IdedExpr>,
}

/// `operand.field`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SelectExpr {
    /// What is selected from.
    pub operand: Box<IdedExpr>,
    /// The field's name.
    pub field: String,
    /// A presence test (`has()`), not a read.
    pub test: bool,
}

/// `type_name{entries}`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StructExpr {
    /// The message type as written.
    pub type_name: String,
    /// Its fields.
    pub entries: Vec<IdedEntryExpr>,
}

/// `{entries}`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MapExpr {
    /// Its entries, in order.
    pub entries: Vec<IdedEntryExpr>,
}

/// `[elements]`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ListExpr {
    /// Its elements, in order.
    pub elements: Vec<IdedExpr>,
    /// The indexes of the optional (`?x`) elements.
    pub optional_indices: Vec<usize>,
}

impl ListExpr {
    /// A list of `elements`, none optional.
    #[must_use]
    pub fn new(elements: Vec<IdedExpr>) -> Self {
        Self::new_with_optionals(elements, vec![])
    }

    /// A list of `elements`, those at `optional_indices` optional.
    #[must_use]
    pub fn new_with_optionals(elements: Vec<IdedExpr>, optional_indices: Vec<usize>) -> Self {
        ListExpr {
            elements,
            optional_indices,
        }
    }
}

/// `field: value` in a message literal.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StructFieldExpr {
    /// The field.
    pub field: String,
    /// Its value.
    pub value: IdedExpr,
    /// `?field: value`
    pub optional: bool,
}

/// `key: value` in a map literal.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MapEntryExpr {
    /// The key.
    pub key: IdedExpr,
    /// The value.
    pub value: IdedExpr,
    /// `?key: value`
    pub optional: bool,
}

/// A fold over a list or a map's keys.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ComprehensionExpr {
    /// The list or map.
    pub iter_range: IdedExpr,
    /// The element (or key) variable.
    pub iter_var: String,
    /// The second variable of a two-variable comprehension (none is parsed yet).
    pub iter_var2: Option<String>,
    /// The accumulator variable.
    pub accu_var: String,
    /// The accumulator's first value.
    pub accu_init: IdedExpr,
    /// Evaluated before each element; the fold stops when false.
    pub loop_cond: IdedExpr,
    /// The accumulator's next value.
    pub loop_step: IdedExpr,
    /// The fold's value, from the last accumulator.
    pub result: IdedExpr,
}

/// The functions operators parse to, and the macros' names.
pub mod operators {
    #![allow(missing_docs)]
    pub const CONDITIONAL: &str = "_?_:_";
    pub const LOGICAL_AND: &str = "_&&_";
    pub const LOGICAL_OR: &str = "_||_";
    pub const LOGICAL_NOT: &str = "!_";
    pub const SUBSTRACT: &str = "_-_";
    pub const ADD: &str = "_+_";
    pub const MULTIPLY: &str = "_*_";
    pub const DIVIDE: &str = "_/_";
    pub const MODULO: &str = "_%_";
    pub const EQUALS: &str = "_==_";
    pub const NOT_EQUALS: &str = "_!=_";
    pub const GREATER_EQUALS: &str = "_>=_";
    pub const LESS_EQUALS: &str = "_<=_";
    pub const GREATER: &str = "_>_";
    pub const LESS: &str = "_<_";
    pub const NEGATE: &str = "-_";
    pub const INDEX: &str = "_[_]";
    pub const OPT_INDEX: &str = "_[?_]";
    pub const OPT_SELECT: &str = "_?._";
    pub const EXISTS_ONE: &str = "exists_one";
    pub const HAS: &str = "has";
    pub const ALL: &str = "all";
    pub const EXISTS: &str = "exists";
    pub const MAP: &str = "map";
    pub const FILTER: &str = "filter";
    pub const NOT_STRICTLY_FALSE: &str = "@not_strictly_false";
    pub const IN: &str = "@in";
}

/// The variables and functions an expression names.
#[derive(Debug, Default)]
pub struct References<'e> {
    variables: HashSet<&'e str>,
    functions: HashSet<&'e str>,
}

impl References<'_> {
    /// Whether it reads the variable `name` (macros' own variables included).
    #[must_use]
    pub fn has_variable(&self, name: &str) -> bool {
        self.variables.contains(name)
    }

    /// The functions it calls (operators by their function names; a qualified call such
    /// as `sets.contains(…)` by its last segment), in no particular order.
    #[must_use]
    pub fn functions(&self) -> Vec<&str> {
        self.functions.iter().copied().collect()
    }
}

impl IdedExpr {
    /// The variables and functions the expression names.
    #[must_use]
    pub fn references(&self) -> References<'_> {
        let mut r = References::default();
        self.collect(&mut r);
        r
    }

    fn collect<'e>(&'e self, r: &mut References<'e>) {
        match &self.expr {
            Expr::Unspecified | Expr::Literal(_) => {}
            Expr::Call(call) => {
                r.functions.insert(&call.func_name);
                if let Some(target) = &call.target {
                    target.collect(r);
                }
                call.args.iter().for_each(|a| a.collect(r));
            }
            Expr::Comprehension(c) => {
                for e in [
                    &c.iter_range,
                    &c.accu_init,
                    &c.loop_cond,
                    &c.loop_step,
                    &c.result,
                ] {
                    e.collect(r);
                }
            }
            Expr::Ident(name) => {
                // The macros' accumulator (`@result`) is no variable of the rule's.
                if !name.starts_with('@') {
                    r.variables.insert(name);
                }
            }
            Expr::List(l) => l.elements.iter().for_each(|e| e.collect(r)),
            Expr::Map(MapExpr { entries }) | Expr::Struct(StructExpr { entries, .. }) => {
                for entry in entries {
                    match &entry.expr {
                        EntryExpr::StructField(f) => f.value.collect(r),
                        EntryExpr::MapEntry(m) => {
                            m.key.collect(r);
                            m.value.collect(r);
                        }
                    }
                }
            }
            Expr::Select(s) => s.operand.collect(r),
        }
    }
}
