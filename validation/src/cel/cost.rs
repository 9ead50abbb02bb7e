//! The API server's runtime cost of a rule: cel-go's `CostTracker` (interpreter/runtimecost.go,
//! cel-go v0.29.2 as Kubernetes v1.37 pins it) with the Kubernetes `CostEstimator`
//! (k8s.io/apiserver/pkg/cel/library/cost.go) and the program options the API server sets
//! (`OptOptimize`, `PresenceTestHasCost(false)`).
//!
//! cel-rust has no cost hooks, so rules run on this walker over cel-rust's parsed AST: it
//! evaluates the control flow itself (in cel-rust's order and with its semantics: `&&`,
//! `||`, `?:`, comprehensions) and hands every value operation (a call, an operator, a
//! field selection, an index, a literal) to cel-rust with the operands already evaluated,
//! so the values are cel-rust's and the Kubernetes library's, as before. Around each step it
//! charges what cel-go's cost observer charges for the same step:
//!
//! - an identifier or a field/index selection: 1 each (cel-go's attributes: `self.a.b`
//!   is the attribute `self` (1) with two qualifiers (1 each)); an operand that is not an
//!   attribute (`f(x).a`) becomes a relative attribute (1 more); the head of a ternary's
//!   branch, of an attribute used as an index and of a `has()` test is not observed (0);
//! - a constant, and what `OptOptimize` folds into one (list and map literals of constants,
//!   type conversions of a constant): 0; `x in [constant primitives]` becomes a set
//!   membership test with no call cost;
//! - a call: its `CallCost` from the argument values (see [`call_cost`]);
//! - a list literal 10, a map literal 30 (plus their elements);
//! - `&&`, `||`, `?:` and comprehensions: nothing of their own; what they evaluate is
//!   charged, so short-circuits and early loop exits cost what they skip in cel-go too.
//!
//! Evaluation stops as cel-go's does, with "operation cancelled: actual cost limit
//! exceeded", as soon as the cost passes the limit.

use cel::common::ast::{
    CallExpr, EntryExpr, Expr, IdedEntryExpr, IdedExpr, ListExpr, MapEntryExpr, MapExpr, SelectExpr,
};
use cel::context::VariableResolver;
use cel::objects::{KeyRef, OptionalValue};
use cel::{Context, ExecutionError, Value};

use super::functions::{self, Cost};
use super::library::{Cidr, Ip, NamedFormat, Quantity, Semver, Url};
use super::limits::{
    LIST_CREATE_BASE_COST, MAP_CREATE_BASE_COST, REGEX_STRING_LENGTH_COST_FACTOR,
    SELECT_AND_IDENT_COST, STRING_TRAVERSAL_COST_FACTOR,
};

/// cel-go's cancellation message, which the API server matches by prefix.
pub const COST_LIMIT_EXCEEDED: &str = "operation cancelled: actual cost limit exceeded";

/// A rule planned for metered evaluation: cel-rust's AST with cel-go's planning decisions
/// (constant folding, attributes, set membership) made once.
#[derive(Debug)]
pub(super) enum Node {
    /// A literal or a folded constant: no cost.
    Const(Value),
    /// A variable (`self`, `oldSelf`, a comprehension variable).
    Ident(IdedExpr),
    /// `a.f` or `has(a.f)`; `expr` selects from the bound operand.
    Select {
        operand: Box<Node>,
        field: String,
        test: bool,
        expr: IdedExpr,
    },
    /// `a[i]`, `a[?i]`, `a.?f`; `expr` indexes the bound operands.
    Index {
        operand: Box<Node>,
        index: Box<Node>,
        expr: IdedExpr,
    },
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
    Cond(Box<Node>, Box<Node>, Box<Node>),
    NotStrictlyFalse(Box<Node>),
    /// `x in [constant primitives]`: `expr` is `@in` of the bound operands.
    InSet {
        arg: Box<Node>,
        list: Value,
        expr: IdedExpr,
    },
    List {
        elems: Vec<Node>,
        expr: IdedExpr,
    },
    Map {
        entries: Vec<(Node, Node)>,
        expr: IdedExpr,
    },
    Fold(Box<Fold>),
    /// A function or operator call; `name` is the qualified name for `sets.contains(...)`,
    /// `cost` how the library prices it.
    Call {
        name: String,
        cost: Cost,
        target: Option<Box<Node>>,
        args: Vec<Node>,
        expr: IdedExpr,
    },
    /// What cel-rust cannot evaluate (a message literal): an error, never its panic.
    Unsupported(String),
}

#[derive(Debug)]
pub(super) struct Fold {
    range: Node,
    iter_var: String,
    accu_var: String,
    init: Node,
    cond: Node,
    step: Node,
    result: Node,
}

/// The names the operands of a delegated step are bound to: not CEL identifiers, so no rule
/// can see or shadow them.
fn arg_name(i: usize) -> String {
    format!("\u{1}{i}")
}

fn ident(id: u64, i: usize) -> IdedExpr {
    IdedExpr {
        id,
        expr: Expr::Ident(arg_name(i)),
    }
}

fn is_const(n: &Node) -> bool {
    matches!(n, Node::Const(_))
}

/// cel-go's `IsTypeConversionFunction`, which `OptOptimize` folds on a constant argument.
fn is_type_conversion(name: &str) -> bool {
    matches!(
        name,
        "bool"
            | "bytes"
            | "double"
            | "duration"
            | "dyn"
            | "int"
            | "string"
            | "timestamp"
            | "type"
            | "uint"
    )
}

/// cel-go's `IsPrimitiveType` minus bytes: what a constant list may hold to become a set.
fn is_set_primitive(v: &Value) -> bool {
    matches!(
        v,
        Value::Bool(_) | Value::Int(_) | Value::UInt(_) | Value::Float(_) | Value::String(_)
    )
}

/// Plans `e` (cel-go's planner with `OptOptimize`); `root` has the functions, for folding.
pub(super) fn plan(e: &IdedExpr, root: &Context) -> Node {
    let fold_const =
        |e: &IdedExpr| -> Option<Node> { Value::resolve(e, root).ok().map(Node::Const) };
    match &e.expr {
        Expr::Literal(_) => fold_const(e).unwrap_or_else(|| Node::Unsupported("literal".into())),
        Expr::Ident(_) => Node::Ident(e.clone()),
        Expr::Select(s) => Node::Select {
            operand: Box::new(plan(&s.operand, root)),
            field: s.field.clone(),
            test: s.test,
            expr: IdedExpr {
                id: e.id,
                expr: Expr::Select(SelectExpr {
                    operand: Box::new(ident(s.operand.id, 0)),
                    field: s.field.clone(),
                    test: s.test,
                }),
            },
        },
        Expr::Call(c) => plan_call(e, c, root),
        Expr::List(l) => {
            let elems: Vec<Node> = l.elements.iter().map(|x| plan(x, root)).collect();
            if elems.iter().all(is_const)
                && let Some(n) = fold_const(e)
            {
                return n;
            }
            let expr = IdedExpr {
                id: e.id,
                expr: Expr::List(ListExpr::new_with_optionals(
                    (0..elems.len()).map(|i| ident(e.id, i)).collect(),
                    l.optional_indices.clone(),
                )),
            };
            Node::List { elems, expr }
        }
        Expr::Map(m) => {
            let mut entries = Vec::with_capacity(m.entries.len());
            let mut synthetic = Vec::with_capacity(m.entries.len());
            for (i, entry) in m.entries.iter().enumerate() {
                let EntryExpr::MapEntry(me) = &entry.expr else {
                    return Node::Unsupported("message literals".into());
                };
                entries.push((plan(&me.key, root), plan(&me.value, root)));
                synthetic.push(IdedEntryExpr {
                    id: entry.id,
                    expr: EntryExpr::MapEntry(MapEntryExpr {
                        key: ident(me.key.id, 2 * i),
                        value: ident(me.value.id, 2 * i + 1),
                        optional: me.optional,
                    }),
                });
            }
            if entries.iter().all(|(k, v)| is_const(k) && is_const(v))
                && let Some(n) = fold_const(e)
            {
                return n;
            }
            let expr = IdedExpr {
                id: e.id,
                expr: Expr::Map(MapExpr { entries: synthetic }),
            };
            Node::Map { entries, expr }
        }
        Expr::Comprehension(c) => Node::Fold(Box::new(Fold {
            range: plan(&c.iter_range, root),
            iter_var: c.iter_var.clone(),
            accu_var: c.accu_var.clone(),
            init: plan(&c.accu_init, root),
            cond: plan(&c.loop_cond, root),
            step: plan(&c.loop_step, root),
            result: plan(&c.result, root),
        })),
        Expr::Struct(_) => Node::Unsupported("message literals".into()),
        Expr::Unspecified => Node::Unsupported("an unspecified expression".into()),
    }
}

fn plan_call(e: &IdedExpr, c: &CallExpr, root: &Context) -> Node {
    use cel::common::ast::operators;
    let args = &c.args;
    let p = |x: &IdedExpr| Box::new(plan(x, root));
    let call_of = |n: usize, target: Option<IdedExpr>| IdedExpr {
        id: e.id,
        expr: Expr::Call(CallExpr {
            func_name: c.func_name.clone(),
            target: target.map(Box::new),
            args: (0..n).map(|i| ident(e.id, i)).collect(),
        }),
    };
    if c.target.is_none() {
        match (c.func_name.as_str(), args.len()) {
            (operators::CONDITIONAL, 3) => {
                return Node::Cond(p(&args[0]), p(&args[1]), p(&args[2]));
            }
            (operators::LOGICAL_AND, 2) => return Node::And(p(&args[0]), p(&args[1])),
            (operators::LOGICAL_OR, 2) => return Node::Or(p(&args[0]), p(&args[1])),
            (operators::NOT_STRICTLY_FALSE, 1) => return Node::NotStrictlyFalse(p(&args[0])),
            (operators::INDEX | operators::OPT_INDEX | operators::OPT_SELECT, 2) => {
                return Node::Index {
                    operand: p(&args[0]),
                    index: p(&args[1]),
                    expr: call_of(2, None),
                };
            }
            (operators::IN, 2) => {
                let rhs = plan(&args[1], root);
                if let Node::Const(Value::List(l)) = &rhs
                    && l.iter().all(is_set_primitive)
                {
                    return Node::InSet {
                        arg: p(&args[0]),
                        list: Value::List(l.clone()),
                        expr: call_of(2, None),
                    };
                }
                return Node::Call {
                    name: c.func_name.clone(),
                    cost: functions::cost(&c.func_name),
                    target: None,
                    args: vec![plan(&args[0], root), rhs],
                    expr: call_of(2, None),
                };
            }
            _ => {}
        }
    }
    // `sets.contains(a, b)` parses as a call of `contains` on `sets`: cel-rust (and cel-go)
    // resolve it as the qualified function when one is registered.
    if let Some(t) = &c.target
        && let Expr::Ident(prefix) = &t.expr
    {
        let qualified = format!("{prefix}.{}", c.func_name);
        if functions::function(&qualified).is_some_and(|f| f.runs) {
            let planned: Vec<Node> = args.iter().map(|x| plan(x, root)).collect();
            let mut expr = call_of(planned.len(), Some((**t).clone()));
            if let Expr::Call(call) = &mut expr.expr {
                call.target = Some(t.clone());
            }
            return Node::Call {
                cost: functions::cost(&qualified),
                name: qualified,
                target: None,
                args: planned,
                expr,
            };
        }
    }
    let planned: Vec<Node> = args.iter().map(|x| plan(x, root)).collect();
    if c.target.is_none()
        && is_type_conversion(&c.func_name)
        && planned.len() == 1
        && is_const(&planned[0])
        && let Ok(v) = Value::resolve(e, root)
    {
        return Node::Const(v);
    }
    match &c.target {
        Some(t) => {
            // The receiver is bound first, the arguments after it.
            let mut expr = call_of(planned.len() + 1, None);
            if let Expr::Call(call) = &mut expr.expr {
                let receiver = call.args.remove(0);
                call.target = Some(Box::new(receiver));
            }
            Node::Call {
                name: c.func_name.clone(),
                cost: functions::cost(&c.func_name),
                target: Some(p(t)),
                args: planned,
                expr,
            }
        }
        None => Node::Call {
            name: c.func_name.clone(),
            cost: functions::cost(&c.func_name),
            target: None,
            args: planned,
            expr: call_of(args.len(), None),
        },
    }
}

impl Node {
    /// Whether cel-go plans it as an attribute (whose qualifiers extend it in place).
    fn is_attr(&self) -> bool {
        matches!(
            self,
            Node::Ident(_) | Node::Select { .. } | Node::Index { .. } | Node::Cond(..)
        )
    }
}

/// Why a metered evaluation stopped.
#[derive(Debug)]
pub(super) enum Fail {
    /// cel-rust's (or the library's) error.
    Error(ExecutionError),
    /// The cost passed the limit.
    Cancelled,
}

impl From<ExecutionError> for Fail {
    fn from(e: ExecutionError) -> Fail {
        Fail::Error(e)
    }
}

type Eval = Result<Value, Fail>;

/// The operands of a delegated step, as variables.
struct Bound<'v>(&'v [Value]);

impl VariableResolver for Bound<'_> {
    fn resolve(&self, name: &str) -> Option<Value> {
        let i: usize = name.strip_prefix('\u{1}')?.parse().ok()?;
        self.0.get(i).cloned()
    }
}

/// The evaluator with its cost so far.
pub(super) struct Meter {
    pub cost: u64,
    limit: u64,
}

fn as_bool(v: Value) -> Result<bool, ExecutionError> {
    match v {
        Value::Bool(b) => Ok(b),
        _ => Err(ExecutionError::NoSuchOverload),
    }
}

impl Meter {
    pub fn new(limit: u64) -> Meter {
        Meter { cost: 0, limit }
    }

    fn charge(&mut self, n: u64) -> Result<(), Fail> {
        self.cost = self.cost.saturating_add(n);
        if self.cost > self.limit {
            Err(Fail::Cancelled)
        } else {
            Ok(())
        }
    }

    /// cel-rust evaluates `expr` (a step whose operands are bound variables) on `vals`.
    fn delegate(expr: &IdedExpr, ctx: &Context, vals: &[Value]) -> Result<Value, ExecutionError> {
        let bound = Bound(vals);
        let mut scope = ctx.new_inner_scope();
        scope.set_variable_resolver(&bound);
        Value::resolve(expr, &scope)
    }

    /// Evaluates `node`; `watched` is false where cel-go does not observe an attribute's head.
    pub fn eval(&mut self, node: &Node, ctx: &Context, watched: bool) -> Eval {
        match node {
            Node::Const(v) => Ok(v.clone()),
            Node::Ident(e) => {
                let v = Value::resolve(e, ctx)?;
                if watched {
                    self.charge(SELECT_AND_IDENT_COST)?;
                }
                Ok(v)
            }
            Node::Select {
                operand,
                field,
                test,
                expr,
            } => {
                let op = self.operand(operand, ctx, watched && !test)?;
                // The common case, a field of an object (a map), read here: cel-rust's
                // selection returns the map's value as it is; anything else (a missing
                // key's error, a non-map) is cel-rust's.
                let found = match &op {
                    Value::Map(m) => m.get(&KeyRef::String(field)),
                    _ => None,
                };
                let v = match (found, test) {
                    (Some(_), true) => Value::Bool(true),
                    (Some(v), false) => v.clone(),
                    (None, _) => Self::delegate(expr, ctx, std::slice::from_ref(&op))?,
                };
                self.charge(SELECT_AND_IDENT_COST)?;
                Ok(v)
            }
            Node::Index {
                operand,
                index,
                expr,
            } => {
                let op = self.operand(operand, ctx, watched)?;
                let i = self.eval(index, ctx, false)?;
                let v = Self::delegate(expr, ctx, &[op, i])?;
                self.charge(SELECT_AND_IDENT_COST)?;
                Ok(v)
            }
            Node::And(a, b) => {
                let left = self.eval_bool(a, ctx)?;
                if matches!(left, Ok(false)) {
                    return Ok(Value::Bool(false));
                }
                let right = self.eval(b, ctx, true)?;
                match (left, right) {
                    (Ok(true), Value::Bool(r)) => Ok(Value::Bool(r)),
                    (Err(_), Value::Bool(false)) => Ok(Value::Bool(false)),
                    (left, _) => Err(left.err().unwrap_or(ExecutionError::NoSuchOverload).into()),
                }
            }
            Node::Or(a, b) => {
                let left = self.eval_bool(a, ctx)?;
                if matches!(left, Ok(true)) {
                    return Ok(Value::Bool(true));
                }
                let right = self.eval(b, ctx, true)?;
                match (left, right) {
                    (Ok(false), Value::Bool(r)) => Ok(Value::Bool(r)),
                    (Err(_), Value::Bool(true)) => Ok(Value::Bool(true)),
                    (left, _) => Err(left.err().unwrap_or(ExecutionError::NoSuchOverload).into()),
                }
            }
            Node::Cond(c, t, f) => {
                let c = as_bool(self.eval(c, ctx, true)?)?;
                // A branch is resolved, not observed: its head costs nothing.
                self.eval(if c { t } else { f }, ctx, false)
            }
            Node::NotStrictlyFalse(a) => {
                let b = self.eval_bool(a, ctx)?.unwrap_or(true);
                self.charge(1)?;
                Ok(Value::Bool(b))
            }
            Node::InSet { arg, list, expr } => {
                let a = self.eval(arg, ctx, true)?;
                Ok(Self::delegate(expr, ctx, &[a, list.clone()])?)
            }
            Node::List { elems, expr } => {
                let vals = elems
                    .iter()
                    .map(|e| self.eval(e, ctx, true))
                    .collect::<Result<Vec<_>, _>>()?;
                let v = Self::delegate(expr, ctx, &vals)?;
                self.charge(LIST_CREATE_BASE_COST)?;
                Ok(v)
            }
            Node::Map { entries, expr } => {
                let mut vals = Vec::with_capacity(entries.len() * 2);
                for (k, v) in entries {
                    vals.push(self.eval(k, ctx, true)?);
                    vals.push(self.eval(v, ctx, true)?);
                }
                let v = Self::delegate(expr, ctx, &vals)?;
                self.charge(MAP_CREATE_BASE_COST)?;
                Ok(v)
            }
            Node::Fold(f) => self.fold(f, ctx),
            Node::Call {
                name,
                cost,
                target,
                args,
                expr,
            } => {
                let mut vals = Vec::with_capacity(args.len() + 1);
                if let Some(t) = target {
                    vals.push(self.eval(t, ctx, true)?);
                }
                for a in args {
                    vals.push(self.eval(a, ctx, true)?);
                }
                let result = Self::delegate(expr, ctx, &vals)?;
                self.charge(call_cost(*cost, name, &vals, &result))?;
                Ok(result)
            }
            Node::Unsupported(what) => Err(Fail::Error(ExecutionError::function_error(
                "eval",
                format!("{what} are not supported"),
            ))),
        }
    }

    /// The operand of a selection or an index: an attribute is extended (its head observed
    /// as the whole is), anything else becomes a relative attribute, observed once more.
    fn operand(&mut self, operand: &Node, ctx: &Context, watched: bool) -> Eval {
        if operand.is_attr() {
            self.eval(operand, ctx, watched)
        } else {
            let v = self.eval(operand, ctx, true)?;
            if watched {
                self.charge(SELECT_AND_IDENT_COST)?;
            }
            Ok(v)
        }
    }

    /// A boolean operand of `&&`, `||`, `@not_strictly_false`: its error is a value here.
    fn eval_bool(
        &mut self,
        node: &Node,
        ctx: &Context,
    ) -> Result<Result<bool, ExecutionError>, Fail> {
        match self.eval(node, ctx, true) {
            Ok(v) => Ok(as_bool(v)),
            Err(Fail::Error(e)) => Ok(Err(e)),
            Err(Fail::Cancelled) => Err(Fail::Cancelled),
        }
    }

    /// A comprehension, in cel-rust's order (the accumulator's initial value first, the
    /// condition before each element).
    fn fold(&mut self, f: &Fold, ctx: &Context) -> Eval {
        let init = self.eval(&f.init, ctx, true)?;
        let range = self.eval(&f.range, ctx, true)?;
        let items: Vec<Value> = match &range {
            Value::List(l) => l.iter().cloned().collect(),
            Value::Map(m) => m.map.keys().map(Value::from).collect(),
            _ => return Err(ExecutionError::NoSuchOverload.into()),
        };
        let mut scope = ctx.new_inner_scope();
        scope.add_variable_from_value(f.accu_var.as_str(), init);
        for item in items {
            if !as_bool(self.eval(&f.cond, &scope, true)?)? {
                break;
            }
            scope.add_variable_from_value(f.iter_var.as_str(), item);
            let accu = self.eval(&f.step, &scope, true)?;
            scope.add_variable_from_value(f.accu_var.as_str(), accu);
        }
        self.eval(&f.result, &scope, true)
    }
}

// ---- CallCost --------------------------------------------------------------------------

fn opaque<T: cel::objects::Opaque + 'static>(v: &Value) -> Option<&T> {
    match v {
        Value::Opaque(o) => o.downcast_ref::<T>(),
        _ => None,
    }
}

/// `traits.Sizer`'s size, or 1: strings count code points, IPs and CIDRs their bytes
/// (Kubernetes' `IP.Size` and `CIDR.Size`, the latter of the prefix).
fn sizer(v: &Value) -> Option<u64> {
    Some(match v {
        Value::String(s) => s.chars().count() as u64,
        Value::Bytes(b) => b.len() as u64,
        Value::List(l) => l.len() as u64,
        Value::Map(m) => m.map.len() as u64,
        v => {
            if let Some(ip) = opaque::<Ip>(v) {
                ip.byte_len()
            } else if let Some(c) = opaque::<Cidr>(v) {
                c.prefix_bytes()
            } else {
                return None;
            }
        }
    })
}

/// Kubernetes' `actualSize`.
fn k8s_size(v: &Value) -> u64 {
    sizer(v).unwrap_or(1)
}

/// cel-go's `actualSize`, which also sizes an optional's value.
fn go_size(v: &Value) -> u64 {
    if let Some(n) = sizer(v) {
        return n;
    }
    match opaque::<OptionalValue>(v).and_then(OptionalValue::value) {
        Some(inner) => go_size(inner),
        None => 1,
    }
}

/// Kubernetes' `traversalCost`.
fn traversal_cost(v: &Value) -> u64 {
    match v {
        Value::String(s) => (s.len() as f64 * STRING_TRAVERSAL_COST_FACTOR) as u64,
        Value::Bytes(b) => (b.len() as f64 * STRING_TRAVERSAL_COST_FACTOR) as u64,
        Value::List(l) => l.iter().map(traversal_cost).sum(),
        Value::Map(m) => m
            .map
            .iter()
            .map(|(k, v)| traversal_cost(&Value::from(k)) + traversal_cost(v))
            .sum(),
        _ => 1,
    }
}

fn ceil(x: f64) -> u64 {
    x.ceil() as u64
}

fn scan(n: u64) -> u64 {
    ceil(n as f64 * STRING_TRAVERSAL_COST_FACTOR)
}

fn regex_cost(s: &Value, re: &Value) -> u64 {
    let str_cost = ceil((1.0 + go_size(s) as f64) * STRING_TRAVERSAL_COST_FACTOR);
    let regex_cost = ceil(go_size(re) as f64 * REGEX_STRING_LENGTH_COST_FACTOR);
    str_cost * regex_cost
}

/// The cost of one call (the receiver is `args[0]`) that the library prices as `cost`:
/// cel-go's overload trackers (the sets extension), then the Kubernetes
/// `CostEstimator.CallCost`, then cel-go's `CostTracker.costCall` defaults by `name`, in
/// that order as cel-go consults them.
pub(super) fn call_cost(cost: Cost, name: &str, args: &[Value], result: &Value) -> u64 {
    let a0 = args.first();
    let a1 = args.get(1);
    // Go's `float64(size) * STRING_TRAVERSAL_COST_FACTOR`, or `float64(size) * 2 * ...`
    // for a double traversal: multiplied in that order, for the same rounding.
    let k8s_arg0 = |twice: bool| {
        a0.map(|a| {
            let n = k8s_size(a) as f64;
            ceil(if twice { n * 2.0 } else { n } * STRING_TRAVERSAL_COST_FACTOR)
        })
    };
    let is_str = |v: Option<&Value>| matches!(v, Some(Value::String(_)));
    let is_bytes = |v: Option<&Value>| matches!(v, Some(Value::Bytes(_)));
    let k8s: Option<u64> = match cost {
        // cel-go ext/sets.go's trackers.
        Cost::Sets => {
            let factor = if name == "sets.equivalent" { 2.0 } else { 1.0 };
            return match (a0, a1) {
                (Some(a), Some(b)) => 1 + ((k8s_size(a) * k8s_size(b)) as f64 * factor) as u64,
                _ => 1,
            };
        }
        Cost::List => Some(a0.map(traversal_cost).unwrap_or(0)),
        Cost::Traversal | Cost::Parse => k8s_arg0(false),
        Cost::DoubleTraversal => k8s_arg0(true),
        Cost::Join => {
            a0.map(|_| ceil(k8s_size(result) as f64 * 2.0 * STRING_TRAVERSAL_COST_FACTOR))
        }
        Cost::Find => match (a0, a1) {
            (Some(s), Some(re)) => {
                let str_cost = ceil((1.0 + k8s_size(s) as f64) * STRING_TRAVERSAL_COST_FACTOR);
                let regex_cost = ceil(k8s_size(re) as f64 * REGEX_STRING_LENGTH_COST_FACTOR);
                Some(str_cost * regex_cost)
            }
            _ => None,
        },
        Cost::Ip => match a0 {
            Some(c) if opaque::<Cidr>(c).is_some() => Some(1),
            _ => k8s_arg0(false),
        },
        Cost::Constant => Some(1),
        Cost::Contains => match (a0, a1) {
            (Some(c), Some(other)) => {
                let c = k8s_size(c);
                let mut cost = ceil((c + c) as f64 * STRING_TRAVERSAL_COST_FACTOR);
                if name == "containsCIDR" {
                    cost += ceil(c as f64 * STRING_TRAVERSAL_COST_FACTOR) + 1;
                }
                if let Value::String(_) = other {
                    cost += ceil(k8s_size(other) as f64 * STRING_TRAVERSAL_COST_FACTOR);
                }
                Some(cost)
            }
            _ => None,
        },
        Cost::Validate => match (a0.and_then(opaque::<NamedFormat>), a1) {
            (Some(f), Some(s)) => {
                let str_cost = ceil((1.0 + k8s_size(s) as f64) * STRING_TRAVERSAL_COST_FACTOR);
                let regex_cost = ceil(f.max_regex_size() as f64 * REGEX_STRING_LENGTH_COST_FACTOR);
                Some(str_cost * regex_cost)
            }
            _ => None,
        },
        Cost::Equals => match a0 {
            Some(v)
                if opaque::<Quantity>(v).is_some()
                    || opaque::<Ip>(v).is_some()
                    || opaque::<Cidr>(v).is_some()
                    || opaque::<NamedFormat>(v).is_some()
                    || opaque::<Url>(v).is_some()
                    || opaque::<Semver>(v).is_some() =>
            {
                Some(1)
            }
            _ => None,
        },
        Cost::CelGo => None,
    };
    if let Some(c) = k8s {
        return c;
    }
    // cel-go's defaults, by the overload the argument types select.
    match (name, a0, a1) {
        ("startsWith" | "endsWith", _, Some(p)) => scan(go_size(p)),
        ("string", Some(b @ Value::Bytes(_)), None)
        | ("bytes", Some(b @ Value::String(_)), None) => scan(go_size(b)),
        ("strings.quote", Some(s), _) => scan(go_size(s)),
        ("format", Some(s @ Value::String(_)), _) => scan(go_size(s)),
        ("@in", _, Some(l @ Value::List(_))) => go_size(l),
        ("_<_" | "_>_" | "_<=_" | "_>=_", Some(a), Some(b))
            if (is_str(Some(a)) && is_str(Some(b))) || (is_bytes(Some(a)) && is_bytes(Some(b))) =>
        {
            scan(go_size(a).min(go_size(b)))
        }
        ("_==_" | "_!=_", Some(a), Some(b)) => scan(go_size(a).min(go_size(b))),
        ("_+_", Some(a), Some(b))
            if (is_str(Some(a)) && is_str(Some(b))) || (is_bytes(Some(a)) && is_bytes(Some(b))) =>
        {
            scan(go_size(a) + go_size(b))
        }
        ("matches", Some(s), Some(re)) => regex_cost(s, re),
        ("contains", Some(s @ Value::String(_)), Some(sub)) => {
            scan(go_size(s)) * scan(go_size(sub))
        }
        _ => 1,
    }
}
