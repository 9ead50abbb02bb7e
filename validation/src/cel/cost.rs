//! The API server's runtime cost of a rule: cel-go's `CostTracker` (interpreter/runtimecost.go,
//! cel-go v0.29.2 as Kubernetes v1.37 pins it) with the Kubernetes `CostEstimator`
//! (k8s.io/apiserver/pkg/cel/library/cost.go) and the program options the API server sets
//! (`OptOptimize`, `PresenceTestHasCost(false)`).
//!
//! Rules run on this walker over the parsed AST ([`super::syntax`]), planned once: it
//! evaluates the control flow itself (`&&`, `||`, `?:` with CEL's error absorption,
//! comprehensions) and each value operation (a call, an operator, a field selection, an
//! index, a literal) with the standard functions (`stdlib`) and the Kubernetes libraries
//! (`library`). Around each step it charges what cel-go's cost observer charges for the
//! same step:
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

use std::sync::Arc;

use super::functions::{self, Cost};
use super::library::{self, Cidr, Ip, NamedFormat, Quantity, Semver, Url};
use super::limits::{
    LIST_CREATE_BASE_COST, MAP_CREATE_BASE_COST, REGEX_STRING_LENGTH_COST_FACTOR,
    SELECT_AND_IDENT_COST, STRING_TRAVERSAL_COST_FACTOR,
};
use super::stdlib;
use super::syntax::ast::{CallExpr, EntryExpr, Expr, IdedExpr, LiteralValue, operators};
use super::value::{ExecutionError, Key, Map, OptionalValue, Value, as_optional, downcast};

/// cel-go's cancellation message, which the API server matches by prefix.
pub const COST_LIMIT_EXCEEDED: &str = "operation cancelled: actual cost limit exceeded";

/// A rule planned for metered evaluation: the AST with cel-go's planning decisions
/// (constant folding, attributes, set membership) made once.
#[derive(Debug)]
pub(super) enum Node {
    /// A literal or a folded constant: no cost.
    Const(Value),
    /// A variable (`self`, `oldSelf`, a comprehension variable).
    Ident(String),
    /// `a.f` or `has(a.f)`.
    Select {
        operand: Box<Node>,
        field: String,
        test: bool,
    },
    /// `a[i]`, `a[?i]`, `a.?f` (`func` says which).
    Index {
        operand: Box<Node>,
        index: Box<Node>,
        func: &'static str,
    },
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
    Cond(Box<Node>, Box<Node>, Box<Node>),
    NotStrictlyFalse(Box<Node>),
    /// `x in [constant primitives]`.
    InSet {
        arg: Box<Node>,
        list: Value,
    },
    List {
        elems: Vec<Node>,
        optional: Vec<usize>,
    },
    Map {
        entries: Vec<(Node, Node, bool)>,
    },
    Fold(Box<Fold>),
    /// A function or operator call; `name` is the qualified name for `sets.contains(...)`,
    /// `cost` how the library prices it.
    Call {
        name: String,
        cost: Cost,
        target: Option<Box<Node>>,
        args: Vec<Node>,
    },
    /// What the evaluator does not run (a message literal): an error, never a panic.
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

fn literal(l: &LiteralValue) -> Value {
    match l {
        LiteralValue::Boolean(b) => Value::Bool(*b),
        LiteralValue::Bytes(b) => Value::Bytes(b.clone()),
        LiteralValue::Double(d) => Value::Float(*d),
        LiteralValue::Int(i) => Value::Int(*i),
        LiteralValue::Null => Value::Null,
        LiteralValue::String(s) => Value::String(s.clone()),
        LiteralValue::UInt(u) => Value::UInt(*u),
    }
}

/// A node all of whose parts are constants, evaluated now (cel-go's `OptOptimize`), or as
/// it is when its evaluation fails (the error is the rule's, at run time).
fn folded(node: Node) -> Node {
    let mut meter = Meter::new(u64::MAX);
    match meter.eval(&node, &Scope::default(), false) {
        Ok(v) => Node::Const(v),
        Err(_) => node,
    }
}

/// Plans `e` (cel-go's planner with `OptOptimize`).
pub(super) fn plan(e: &IdedExpr) -> Node {
    match &e.expr {
        Expr::Literal(l) => Node::Const(literal(l)),
        Expr::Ident(name) => Node::Ident(name.clone()),
        Expr::Select(s) => Node::Select {
            operand: Box::new(plan(&s.operand)),
            field: s.field.clone(),
            test: s.test,
        },
        Expr::Call(c) => plan_call(c),
        Expr::List(l) => {
            let elems: Vec<Node> = l.elements.iter().map(plan).collect();
            let all_const = elems.iter().all(is_const);
            let node = Node::List {
                elems,
                optional: l.optional_indices.clone(),
            };
            if all_const { folded(node) } else { node }
        }
        Expr::Map(m) => {
            let mut entries = Vec::with_capacity(m.entries.len());
            for entry in &m.entries {
                let EntryExpr::MapEntry(me) = &entry.expr else {
                    return Node::Unsupported("message literals".into());
                };
                entries.push((plan(&me.key), plan(&me.value), me.optional));
            }
            let all_const = entries.iter().all(|(k, v, _)| is_const(k) && is_const(v));
            let node = Node::Map { entries };
            if all_const { folded(node) } else { node }
        }
        Expr::Comprehension(c) => Node::Fold(Box::new(Fold {
            range: plan(&c.iter_range),
            iter_var: c.iter_var.clone(),
            accu_var: c.accu_var.clone(),
            init: plan(&c.accu_init),
            cond: plan(&c.loop_cond),
            step: plan(&c.loop_step),
            result: plan(&c.result),
        })),
        Expr::Struct(_) => Node::Unsupported("message literals".into()),
        Expr::Unspecified => Node::Unsupported("an unspecified expression".into()),
    }
}

fn plan_call(c: &CallExpr) -> Node {
    let args = &c.args;
    let p = |x: &IdedExpr| Box::new(plan(x));
    if c.target.is_none() {
        match (c.func_name.as_str(), args.len()) {
            (operators::CONDITIONAL, 3) => {
                return Node::Cond(p(&args[0]), p(&args[1]), p(&args[2]));
            }
            (operators::LOGICAL_AND, 2) => return Node::And(p(&args[0]), p(&args[1])),
            (operators::LOGICAL_OR, 2) => return Node::Or(p(&args[0]), p(&args[1])),
            (operators::NOT_STRICTLY_FALSE, 1) => return Node::NotStrictlyFalse(p(&args[0])),
            (f @ (operators::INDEX | operators::OPT_INDEX | operators::OPT_SELECT), 2) => {
                let func = match f {
                    operators::INDEX => operators::INDEX,
                    operators::OPT_INDEX => operators::OPT_INDEX,
                    _ => operators::OPT_SELECT,
                };
                return Node::Index {
                    operand: p(&args[0]),
                    index: p(&args[1]),
                    func,
                };
            }
            (operators::IN, 2) => {
                let rhs = plan(&args[1]);
                if let Node::Const(Value::List(l)) = &rhs
                    && l.iter().all(is_set_primitive)
                {
                    return Node::InSet {
                        arg: p(&args[0]),
                        list: Value::List(l.clone()),
                    };
                }
                return Node::Call {
                    name: c.func_name.clone(),
                    cost: functions::cost(&c.func_name),
                    target: None,
                    args: vec![plan(&args[0]), rhs],
                };
            }
            _ => {}
        }
    }
    // `sets.contains(a, b)` parses as a call of `contains` on `sets`: cel-go resolves it as
    // the qualified function when one is declared.
    if let Some(t) = &c.target
        && let Expr::Ident(prefix) = &t.expr
    {
        let qualified = format!("{prefix}.{}", c.func_name);
        if functions::function(&qualified).is_some_and(|f| f.runs) {
            return Node::Call {
                cost: functions::cost(&qualified),
                name: qualified,
                target: None,
                args: args.iter().map(plan).collect(),
            };
        }
    }
    let planned: Vec<Node> = args.iter().map(plan).collect();
    let node = Node::Call {
        name: c.func_name.clone(),
        cost: functions::cost(&c.func_name),
        target: c.target.as_ref().map(|t| p(t)),
        args: planned,
    };
    if c.target.is_none()
        && is_type_conversion(&c.func_name)
        && let Node::Call { args, .. } = &node
        && args.len() == 1
        && is_const(&args[0])
    {
        return folded(node);
    }
    node
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

/// Calls `name`: the Kubernetes library's function of that name, else the standard one.
pub(super) fn call(
    name: &str,
    this: Option<Value>,
    args: Vec<Value>,
) -> Result<Value, ExecutionError> {
    if let Some(f) = library::function(name) {
        return f.call(this, args);
    }
    match stdlib::call(name, this.as_ref(), &args)? {
        Some(v) => Ok(v),
        None => Err(ExecutionError::NoSuchOverload),
    }
}

/// Why a metered evaluation stopped.
#[derive(Debug)]
pub(super) enum Fail {
    /// The evaluation's error (a missing key, no overload...).
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

/// The variables in scope: a rule's (`self`, `oldSelf`), and a comprehension's over its
/// enclosing scope.
#[derive(Default)]
pub(super) struct Scope<'p> {
    parent: Option<&'p Scope<'p>>,
    vars: Vec<(String, Value)>,
}

impl Scope<'_> {
    /// Binds `name` (shadowing an outer binding).
    pub fn bind(&mut self, name: &str, v: Value) {
        self.vars.push((name.to_owned(), v));
    }

    fn get(&self, name: &str) -> Option<&Value> {
        match self.vars.iter().rev().find(|(n, _)| n == name) {
            Some((_, v)) => Some(v),
            None => self.parent?.get(name),
        }
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

    /// Evaluates `node`; `watched` is false where cel-go does not observe an attribute's head.
    pub fn eval(&mut self, node: &Node, scope: &Scope<'_>, watched: bool) -> Eval {
        match node {
            Node::Const(v) => Ok(v.clone()),
            Node::Ident(name) => {
                let v = scope
                    .get(name)
                    .cloned()
                    .ok_or_else(|| ExecutionError::UndeclaredReference(name.clone()))?;
                if watched {
                    self.charge(SELECT_AND_IDENT_COST)?;
                }
                Ok(v)
            }
            Node::Select {
                operand,
                field,
                test,
            } => {
                let op = self.operand(operand, scope, watched && !test)?;
                let v = stdlib::select(&op, field, *test)?;
                self.charge(SELECT_AND_IDENT_COST)?;
                Ok(v)
            }
            Node::Index {
                operand,
                index,
                func,
            } => {
                let op = self.operand(operand, scope, watched)?;
                let i = self.eval(index, scope, false)?;
                let v = call(func, None, vec![op, i])?;
                self.charge(SELECT_AND_IDENT_COST)?;
                Ok(v)
            }
            Node::And(a, b) => {
                let left = self.eval_bool(a, scope)?;
                if matches!(left, Ok(false)) {
                    return Ok(Value::Bool(false));
                }
                let right = self.eval_bool(b, scope)?;
                // cel-go's `evalAnd`: a false side wins, then the left error.
                match (left, right) {
                    (Ok(false), _) | (_, Ok(false)) => Ok(Value::Bool(false)),
                    (Ok(true), Ok(true)) => Ok(Value::Bool(true)),
                    (Err(e), _) | (_, Err(e)) => Err(e.into()),
                }
            }
            Node::Or(a, b) => {
                let left = self.eval_bool(a, scope)?;
                if matches!(left, Ok(true)) {
                    return Ok(Value::Bool(true));
                }
                let right = self.eval_bool(b, scope)?;
                // cel-go's `evalOr`: a true side wins, then the left error.
                match (left, right) {
                    (Ok(true), _) | (_, Ok(true)) => Ok(Value::Bool(true)),
                    (Ok(false), Ok(false)) => Ok(Value::Bool(false)),
                    (Err(e), _) | (_, Err(e)) => Err(e.into()),
                }
            }
            Node::Cond(c, t, f) => {
                let c = as_bool(self.eval(c, scope, true)?)?;
                // A branch is resolved, not observed: its head costs nothing.
                self.eval(if c { t } else { f }, scope, false)
            }
            Node::NotStrictlyFalse(a) => {
                let b = self.eval_bool(a, scope)?.unwrap_or(true);
                self.charge(1)?;
                Ok(Value::Bool(b))
            }
            Node::InSet { arg, list } => {
                let a = self.eval(arg, scope, true)?;
                Ok(call(operators::IN, None, vec![a, list.clone()])?)
            }
            Node::List { elems, optional } => {
                let mut vals = Vec::with_capacity(elems.len());
                for (i, e) in elems.iter().enumerate() {
                    let v = self.eval(e, scope, true)?;
                    if optional.contains(&i) {
                        // `[?x]`: the optional's value, or nothing.
                        match as_optional(&v) {
                            Some(o) => vals.extend(o.value().cloned()),
                            None => return Err(ExecutionError::NoSuchOverload.into()),
                        }
                    } else {
                        vals.push(v);
                    }
                }
                self.charge(LIST_CREATE_BASE_COST)?;
                Ok(Value::List(Arc::new(vals)))
            }
            Node::Map { entries } => {
                let mut map = std::collections::HashMap::with_capacity(entries.len());
                for (k, v, optional) in entries {
                    let key = self.eval(k, scope, true)?;
                    let value = self.eval(v, scope, true)?;
                    let key = Key::of(&key).ok_or_else(|| {
                        ExecutionError::msg(format!("unsupported key type: {}", key.type_name()))
                    })?;
                    let value = if *optional {
                        match as_optional(&value) {
                            Some(o) => match o.value() {
                                Some(v) => v.clone(),
                                None => continue,
                            },
                            None => return Err(ExecutionError::NoSuchOverload.into()),
                        }
                    } else {
                        value
                    };
                    if map.insert(key.clone(), value).is_some() {
                        return Err(ExecutionError::msg(format!(
                            "Failed with repeated key: {}",
                            match &key {
                                Key::String(s) => s.to_string(),
                                other => format!("{:?}", Value::from(other)),
                            }
                        ))
                        .into());
                    }
                }
                self.charge(MAP_CREATE_BASE_COST)?;
                Ok(Value::Map(Map { map: Arc::new(map) }))
            }
            Node::Fold(f) => self.fold(f, scope),
            Node::Call {
                name,
                cost,
                target,
                args,
            } => {
                let this = match target {
                    Some(t) => Some(self.eval(t, scope, true)?),
                    None => None,
                };
                let mut vals = Vec::with_capacity(args.len() + 1);
                for a in args {
                    vals.push(self.eval(a, scope, true)?);
                }
                let result = call(name, this.clone(), vals.clone())?;
                let charged: Vec<Value> = this.into_iter().chain(vals).collect();
                self.charge(call_cost(*cost, name, &charged, &result))?;
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
    fn operand(&mut self, operand: &Node, scope: &Scope<'_>, watched: bool) -> Eval {
        if operand.is_attr() {
            self.eval(operand, scope, watched)
        } else {
            let v = self.eval(operand, scope, true)?;
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
        scope: &Scope<'_>,
    ) -> Result<Result<bool, ExecutionError>, Fail> {
        match self.eval(node, scope, true) {
            Ok(v) => Ok(as_bool(v)),
            Err(Fail::Error(e)) => Ok(Err(e)),
            Err(Fail::Cancelled) => Err(Fail::Cancelled),
        }
    }

    /// A comprehension, as cel-go's `evalFold`: the accumulator's initial value first, then
    /// for each element the iteration variable bound, the condition (the loop stops
    /// unless it is `true`), and the step.
    fn fold(&mut self, f: &Fold, scope: &Scope<'_>) -> Eval {
        let init = self.eval(&f.init, scope, true)?;
        let range = self.eval(&f.range, scope, true)?;
        let items: Vec<Value> = match &range {
            Value::List(l) => l.iter().cloned().collect(),
            Value::Map(m) => m.map.keys().map(Value::from).collect(),
            _ => return Err(ExecutionError::NoSuchOverload.into()),
        };
        let mut inner = Scope {
            parent: Some(scope),
            vars: vec![
                (f.accu_var.clone(), init),
                (f.iter_var.clone(), Value::Null),
            ],
        };
        for item in items {
            inner.vars[1].1 = item;
            if !matches!(self.eval(&f.cond, &inner, true)?, Value::Bool(true)) {
                break;
            }
            let accu = self.eval(&f.step, &inner, true)?;
            inner.vars[0].1 = accu;
        }
        // The result sees the accumulator, not the iteration variable.
        inner.vars.truncate(1);
        self.eval(&f.result, &inner, true)
    }
}

// ---- CallCost --------------------------------------------------------------------------

/// `traits.Sizer`'s size, or 1: strings count code points, IPs and CIDRs their bytes
/// (Kubernetes' `IP.Size` and `CIDR.Size`, the latter of the prefix).
fn sizer(v: &Value) -> Option<u64> {
    Some(match v {
        Value::String(s) => s.chars().count() as u64,
        Value::Bytes(b) => b.len() as u64,
        Value::List(l) => l.len() as u64,
        Value::Map(m) => m.map.len() as u64,
        v => {
            if let Some(ip) = downcast::<Ip>(v) {
                ip.byte_len()
            } else if let Some(c) = downcast::<Cidr>(v) {
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
    match downcast::<OptionalValue>(v).and_then(OptionalValue::value) {
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
            Some(c) if downcast::<Cidr>(c).is_some() => Some(1),
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
        Cost::Validate => match (a0.and_then(downcast::<NamedFormat>), a1) {
            (Some(f), Some(s)) => {
                let str_cost = ceil((1.0 + k8s_size(s) as f64) * STRING_TRAVERSAL_COST_FACTOR);
                let regex_cost = ceil(f.max_regex_size() as f64 * REGEX_STRING_LENGTH_COST_FACTOR);
                Some(str_cost * regex_cost)
            }
            _ => None,
        },
        Cost::Equals => match a0 {
            Some(v)
                if downcast::<Quantity>(v).is_some()
                    || downcast::<Ip>(v).is_some()
                    || downcast::<Cidr>(v).is_some()
                    || downcast::<NamedFormat>(v).is_some()
                    || downcast::<Url>(v).is_some()
                    || downcast::<Semver>(v).is_some() =>
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
