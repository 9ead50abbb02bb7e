//! The static cost estimate of a checked expression: cel-go's checker/cost.go with the
//! Kubernetes `CostEstimator` (k8s.io/apiserver pkg/cel/library/cost.go) and the CRD size
//! estimator (apiextensions-apiserver pkg/apiserver/schema/cel/compilation.go), whose sizes
//! come from the schema's declared type ([`Decl`]).

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};

use crate::cel::syntax::ast::{EntryExpr, Expr, IdedExpr, LiteralValue};

use super::checker::Checked;
use super::types::{Decl, Type};
use crate::cel::functions::{self, Cost};
use crate::cel::limits::{
    CONST_COST, LIST_CREATE_BASE_COST, MAP_CREATE_BASE_COST, MAX_FORMAT_SIZE,
    MAX_NAME_FORMAT_REGEX_SIZE, REGEX_STRING_LENGTH_COST_FACTOR, SELECT_AND_IDENT_COST,
    STRING_TRAVERSAL_COST_FACTOR, STRUCT_CREATE_BASE_COST,
};

/// The accumulator of macros.
const ACCUMULATOR: &str = "@result";
const HIDDEN_ACCUMULATOR: &str = "__result__";

/// A (min, max) estimate; sizes and costs share the arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Est {
    pub min: u64,
    pub max: u64,
}

const UNKNOWN: Est = Est {
    min: 0,
    max: u64::MAX,
};

impl Est {
    pub fn fixed(v: u64) -> Est {
        Est { min: v, max: v }
    }
    fn add(self, o: Est) -> Est {
        Est {
            min: self.min.saturating_add(o.min),
            max: self.max.saturating_add(o.max),
        }
    }
    fn mul(self, o: Est) -> Est {
        Est {
            min: self.min.saturating_mul(o.min),
            max: self.max.saturating_mul(o.max),
        }
    }
    fn factor(self, f: f64) -> Est {
        Est {
            min: by_factor(self.min, f),
            max: by_factor(self.max, f),
        }
    }
    fn union(self, o: Est) -> Est {
        Est {
            min: self.min.min(o.min),
            max: self.max.max(o.max),
        }
    }
}

fn by_factor(x: u64, y: f64) -> u64 {
    let xf = x as f64;
    if xf > 0.0 && y > 0.0 && xf > u64::MAX as f64 / y {
        return u64::MAX;
    }
    let ceil = (xf * y).ceil();
    if ceil >= 18446744073709551616.0 {
        return u64::MAX;
    }
    ceil as u64
}

#[derive(Clone, Debug)]
struct EntrySize {
    list: bool,
    key: Est,
    val: Est,
}

fn union_entries(a: Option<EntrySize>, b: Option<EntrySize>) -> Option<EntrySize> {
    let (a, b) = (a?, b?);
    Some(EntrySize {
        list: a.list,
        key: a.key.union(b.key),
        val: a.val.union(b.val),
    })
}

#[derive(Clone)]
struct Local {
    path: Vec<String>,
    size: Option<Est>,
    entry: Option<EntrySize>,
}

/// What the estimator functions see of an argument (`checker.AstNode`).
struct Node<'e> {
    path: Vec<String>,
    ty: Type,
    expr: Option<&'e IdedExpr>,
    size: Option<Est>,
}

struct Coster<'a> {
    checked: &'a Checked,
    root: &'a Decl,
    paths: HashMap<u64, Vec<String>>,
    locals: HashMap<String, Vec<Local>>,
    sizes: HashMap<u64, Est>,
    entries: HashMap<u64, EntrySize>,
    /// Nodes whose size the estimate read and that only the request size bounds: their
    /// path below `self` and the keyword that would bound them.
    unbounded: RefCell<BTreeSet<(Vec<String>, &'static str)>>,
}

/// The estimated cost of `expr` (`EstimateCost(ast, estimator)`), `root` being the declared
/// type of the rule's `self`.
/// Also returns the unbounded nodes the estimate read.
pub fn estimate(
    expr: &IdedExpr,
    checked: &Checked,
    root: &Decl,
) -> (Est, BTreeSet<(Vec<String>, &'static str)>) {
    let mut c = Coster {
        checked,
        root,
        paths: HashMap::new(),
        locals: HashMap::new(),
        sizes: HashMap::new(),
        entries: HashMap::new(),
        unbounded: RefCell::default(),
    };
    let cost = c.cost(expr);
    (cost, c.unbounded.into_inner())
}

impl<'a> Coster<'a> {
    fn ty(&self, e: &IdedExpr) -> Type {
        self.checked.type_of(e.id)
    }

    fn peek(&self, name: &str) -> Option<&Local> {
        self.locals.get(name).and_then(|v| v.last())
    }

    fn push(&mut self, name: &str, local: Local) {
        self.locals.entry(name.to_string()).or_default().push(local);
    }

    fn pop(&mut self, name: &str) {
        if let Some(v) = self.locals.get_mut(name) {
            v.pop();
        }
    }

    fn path(&self, e: &IdedExpr) -> Vec<String> {
        if let Expr::Ident(n) = &e.expr
            && let Some(l) = self.peek(n)
        {
            return l.path.clone();
        }
        self.paths.get(&e.id).cloned().unwrap_or_default()
    }

    /// The CRD size estimator: the declared max elements of the node the path reaches.
    fn estimate_size(&self, path: &[String]) -> Option<Est> {
        if path.is_empty() {
            return None;
        }
        let node = self.root.walk(&path[1..])?;
        if let Some(k) = node.unbounded {
            self.unbounded.borrow_mut().insert((path[1..].to_vec(), k));
        }
        Some(Est {
            min: 0,
            max: node.max_elements.max(0) as u64,
        })
    }

    fn compute_size(&mut self, e: &IdedExpr) -> Option<Est> {
        if let Some(s) = self.sizes.get(&e.id) {
            return Some(*s);
        }
        if let Some(s) = expr_size(e) {
            return Some(s);
        }
        let path = self.path(e);
        if let Some(s) = self.estimate_size(&path) {
            self.sizes.insert(e.id, s);
            return Some(s);
        }
        if self.ty(e).is_scalar() {
            return Some(Est::fixed(1));
        }
        if let Expr::Ident(n) = &e.expr
            && let Some(s) = self.peek(n).and_then(|l| l.size)
        {
            return Some(s);
        }
        None
    }

    fn size_or_unknown(&mut self, e: &IdedExpr) -> Est {
        self.compute_size(e).unwrap_or(UNKNOWN)
    }

    fn entry_size(&self, e: &IdedExpr) -> Option<EntrySize> {
        if let Some(s) = self.entries.get(&e.id) {
            return Some(s.clone());
        }
        if let Expr::Ident(n) = &e.expr {
            return self.peek(n).and_then(|l| l.entry.clone());
        }
        None
    }

    fn node<'e>(&mut self, e: &'e IdedExpr) -> Node<'e> {
        let mut path = self.path(e);
        if path
            .first()
            .is_some_and(|p| p == ACCUMULATOR || p == HIDDEN_ACCUMULATOR)
        {
            path = vec![];
        }
        Node {
            path,
            ty: self.ty(e),
            expr: Some(e),
            size: self.compute_size(e),
        }
    }

    /// The size the Kubernetes estimator reads for a node (`sizeEstimate`).
    fn k8s_size(&self, n: &Node) -> Est {
        n.size
            .or_else(|| self.estimate_size(&n.path))
            .unwrap_or(UNKNOWN)
    }

    fn cost(&mut self, e: &IdedExpr) -> Est {
        match &e.expr {
            Expr::Literal(_) => Est::fixed(CONST_COST),
            Expr::Ident(n) => {
                let path = match self.peek(n) {
                    Some(l) => l.path.clone(),
                    None => vec![n.clone()],
                };
                self.paths.insert(e.id, path);
                Est::fixed(SELECT_AND_IDENT_COST)
            }
            Expr::Select(sel) => {
                if sel.test {
                    // `PresenceTestHasCost(false)` in Kubernetes.
                    return self.cost(&sel.operand);
                }
                let mut sum = self.cost(&sel.operand);
                if matches!(
                    self.ty(&sel.operand),
                    Type::Map(..) | Type::Struct(_) | Type::Param(_)
                ) {
                    sum = sum.add(Est::fixed(SELECT_AND_IDENT_COST));
                }
                let mut p = self.path(&sel.operand);
                p.push(sel.field.clone());
                self.paths.insert(e.id, p);
                sum
            }
            Expr::Call(call) => self.cost_call(e, call),
            Expr::List(list) => {
                let mut sum = Est::fixed(0);
                let mut item = Est {
                    min: if list.elements.is_empty() {
                        0
                    } else {
                        u64::MAX
                    },
                    max: 0,
                };
                for el in &list.elements {
                    sum = sum.add(self.cost(el));
                    item = item.union(self.size_or_unknown(el));
                }
                self.entries.insert(
                    e.id,
                    EntrySize {
                        list: true,
                        key: Est::fixed(1),
                        val: item,
                    },
                );
                sum.add(Est::fixed(LIST_CREATE_BASE_COST))
            }
            Expr::Map(map) => {
                let mut sum = Est::fixed(0);
                let empty = map.entries.is_empty();
                let mut key = Est {
                    min: if empty { 0 } else { u64::MAX },
                    max: 0,
                };
                let mut val = key;
                for entry in &map.entries {
                    if let EntryExpr::MapEntry(m) = &entry.expr {
                        sum = sum.add(self.cost(&m.key));
                        sum = sum.add(self.cost(&m.value));
                        key = key.union(self.size_or_unknown(&m.key));
                        val = val.union(self.size_or_unknown(&m.value));
                    }
                }
                self.entries.insert(
                    e.id,
                    EntrySize {
                        list: false,
                        key,
                        val,
                    },
                );
                sum.add(Est::fixed(MAP_CREATE_BASE_COST))
            }
            Expr::Struct(s) => {
                let mut sum = Est::fixed(0);
                for entry in &s.entries {
                    if let EntryExpr::StructField(f) = &entry.expr {
                        sum = sum.add(self.cost(&f.value));
                    }
                }
                sum.add(Est::fixed(STRUCT_CREATE_BASE_COST))
            }
            Expr::Comprehension(comp) => {
                let is_bind = matches!(&comp.iter_range.expr, Expr::List(l) if l.elements.is_empty())
                    && matches!(&comp.loop_cond.expr, Expr::Literal(LiteralValue::Boolean(b)) if !*b)
                    && comp.accu_var != ACCUMULATOR;
                if is_bind {
                    let mut sum = self.cost(&comp.iter_range);
                    sum = sum.add(self.cost(&comp.accu_init));
                    self.push_local(&comp.accu_var, &comp.accu_init);
                    sum = sum.add(self.cost(&comp.result));
                    self.pop(&comp.accu_var);
                    self.copy_sizes(e, &comp.result);
                    return sum;
                }
                let mut sum = self.cost(&comp.iter_range);
                sum = sum.add(self.cost(&comp.accu_init));
                self.push_local(&comp.accu_var, &comp.accu_init);
                match &comp.iter_var2 {
                    Some(v2) => {
                        self.push_iter(&comp.iter_var, &comp.iter_range, IterVar::Key);
                        self.push_iter(v2, &comp.iter_range, IterVar::Value);
                    }
                    None => self.push_iter(&comp.iter_var, &comp.iter_range, IterVar::Single),
                }
                let loop_cost = self.cost(&comp.loop_cond);
                let step_cost = self.cost(&comp.loop_step);
                self.pop(&comp.iter_var);
                if let Some(v2) = &comp.iter_var2 {
                    self.pop(v2);
                }
                sum = sum.add(self.cost(&comp.result));
                self.pop(&comp.accu_var);
                let range = self.size_or_unknown(&comp.iter_range);
                sum = sum.add(range.mul(step_cost.add(loop_cost)));
                match &comp.accu_init.expr {
                    Expr::Literal(_) => {
                        if let Some(s) = self.compute_size(&comp.accu_init) {
                            self.sizes.insert(e.id, s);
                        }
                    }
                    Expr::List(_) | Expr::Map(_) => {
                        self.sizes.insert(e.id, range);
                        if let Some(s) = self.entry_size(&comp.loop_step) {
                            self.entries.insert(e.id, s);
                        }
                    }
                    _ => {}
                }
                sum
            }
            Expr::Unspecified => Est::fixed(0),
        }
    }

    fn push_local(&mut self, name: &str, e: &IdedExpr) {
        let local = Local {
            path: self.path(e),
            size: self.compute_size(e),
            entry: self.entry_size(e),
        };
        self.push(name, local);
    }

    fn push_iter(&mut self, name: &str, range: &IdedExpr, which: IterVar) {
        let entry = self.entry_size(range);
        let is_list = match &entry {
            Some(en) => en.list,
            None => matches!(self.ty(range), Type::List(_)),
        };
        let (size, sub) = match (which, is_list) {
            (IterVar::Key, true) => (entry.as_ref().map(|e| e.key), "@indices"),
            (IterVar::Key, false) => (entry.as_ref().map(|e| e.key), "@keys"),
            (IterVar::Value, true) => (entry.as_ref().map(|e| e.val), "@items"),
            (IterVar::Value, false) => (entry.as_ref().map(|e| e.val), "@values"),
            (IterVar::Single, true) => (entry.as_ref().map(|e| e.val), "@items"),
            (IterVar::Single, false) => (entry.as_ref().map(|e| e.key), "@keys"),
        };
        let mut path = self.path(range);
        path.push(sub.to_string());
        self.push(
            name,
            Local {
                path,
                size,
                entry: None,
            },
        );
    }

    fn copy_sizes(&mut self, dst: &IdedExpr, src: &IdedExpr) {
        if let Some(s) = self.compute_size(src) {
            self.sizes.insert(dst.id, s);
        }
        if let Some(s) = self.entry_size(src) {
            self.entries.insert(dst.id, s);
        }
    }

    fn cost_call(&mut self, e: &IdedExpr, call: &crate::cel::syntax::ast::CallExpr) -> Est {
        let Some(resolved) = self.checked.calls.get(&e.id) else {
            // An unresolved call costs nothing in cel-go; here it only happens for what
            // the checker does not model, and then no verdict is made.
            for a in &call.args {
                self.cost(a);
            }
            return Est::fixed(0);
        };
        let resolved = resolved.clone();
        if resolved.function == "dyn" && call.args.len() == 1 {
            let c = self.cost(&call.args[0]);
            self.copy_sizes(e, &call.args[0]);
            return Est::fixed(1).add(c);
        }
        let mut arg_costs = vec![];
        let mut args = vec![];
        for a in &call.args {
            arg_costs.push(self.cost(a));
            args.push(self.node(a));
        }
        let mut sum = Est::fixed(0);
        let target = match (&call.target, resolved.member) {
            (Some(t), true) => {
                sum = sum.add(self.cost(t));
                Some(self.node(t))
            }
            _ => None,
        };
        let mut fn_cost = Est {
            min: u64::MAX,
            max: 0,
        };
        let mut result: Option<Est> = None;
        for id in &resolved.overloads {
            let (c, r) = self.function_cost(
                e,
                &resolved.function,
                id,
                target.as_ref(),
                &args,
                &arg_costs,
            );
            fn_cost = fn_cost.union(c);
            if let Some(r) = r {
                result = Some(match result {
                    None => r,
                    Some(prev) => prev.union(r),
                });
            }
            match *id {
                "index_list" | "index_map" if !call.args.is_empty() => {
                    result = self.entry_size(&call.args[0]).map(|s| s.val);
                    let mut p = self.path(&call.args[0]);
                    p.push(
                        if *id == "index_list" {
                            "@items"
                        } else {
                            "@values"
                        }
                        .to_string(),
                    );
                    self.paths.insert(e.id, p);
                }
                _ => {}
            }
            if result.is_none() {
                result = self.compute_size(e);
            }
        }
        if let Some(r) = result {
            self.sizes.insert(e.id, r);
        }
        sum.add(fn_cost)
    }

    /// `functionCost`: the Kubernetes estimator first, then cel-go's own cases.
    fn function_cost(
        &mut self,
        e: &IdedExpr,
        function: &str,
        id: &str,
        target: Option<&Node>,
        args: &[Node],
        arg_costs: &[Est],
    ) -> (Est, Option<Est>) {
        let arg_sum = arg_costs.iter().fold(Est::fixed(0), |s, c| s.add(*c));
        if let Some((c, r)) = self.k8s_call_cost(function, id, target, args) {
            return (c.add(arg_sum), r);
        }
        let size = |n: &Node| n.size.unwrap_or(UNKNOWN);
        match id {
            "string_format" => {
                if let Some(t) = target {
                    return (
                        size(t).factor(STRING_TRAVERSAL_COST_FACTOR).add(arg_sum),
                        None,
                    );
                }
            }
            "string_to_bytes" if args.len() == 1 => {
                let sz = size(&args[0]);
                return (
                    sz.factor(STRING_TRAVERSAL_COST_FACTOR).add(arg_sum),
                    Some(Est {
                        min: sz.min,
                        max: sz.max.saturating_mul(4),
                    }),
                );
            }
            "bytes_to_string" if args.len() == 1 => {
                let sz = size(&args[0]);
                return (
                    sz.factor(STRING_TRAVERSAL_COST_FACTOR).add(arg_sum),
                    Some(Est {
                        min: sz.min / 4,
                        max: sz.max,
                    }),
                );
            }
            "strings_quote" if args.len() == 1 => {
                let sz = size(&args[0]);
                return (
                    sz.factor(STRING_TRAVERSAL_COST_FACTOR).add(arg_sum),
                    Some(Est {
                        min: sz.min.saturating_add(2),
                        max: sz.max.saturating_mul(2).saturating_add(2),
                    }),
                );
            }
            "starts_with_string" | "ends_with_string" if args.len() == 1 => {
                return (
                    size(&args[0])
                        .factor(STRING_TRAVERSAL_COST_FACTOR)
                        .add(arg_sum),
                    None,
                );
            }
            "in_list" if args.len() == 2 => {
                return (size(&args[1]).factor(1.0).add(arg_sum), None);
            }
            "matches" | "matches_string" => {
                let (s, r) = match (id, target) {
                    ("matches_string", Some(t)) if args.len() == 1 => (Some(t), Some(&args[0])),
                    ("matches", None) if args.len() == 2 => (Some(&args[0]), Some(&args[1])),
                    _ => (None, None),
                };
                if let (Some(s), Some(r)) = (s, r) {
                    let str_cost = size(s)
                        .add(Est::fixed(1))
                        .factor(STRING_TRAVERSAL_COST_FACTOR);
                    let regex_cost = size(r).factor(REGEX_STRING_LENGTH_COST_FACTOR);
                    return (str_cost.mul(regex_cost).add(arg_sum), None);
                }
            }
            "contains_string" => {
                if let (Some(t), 1) = (target, args.len()) {
                    let s = size(t).factor(STRING_TRAVERSAL_COST_FACTOR);
                    let sub = size(&args[0]).factor(STRING_TRAVERSAL_COST_FACTOR);
                    return (s.mul(sub).add(arg_sum), None);
                }
            }
            "logical_or" | "logical_and" => {
                let (l, r) = (arg_costs[0], arg_costs[1]);
                return (
                    Est {
                        min: l.min,
                        max: l.add(r).max,
                    },
                    None,
                );
            }
            "conditional" => {
                let sz = size(&args[1]).union(size(&args[2]));
                let en = union_entries(
                    args[1].expr.and_then(|x| self.entry_size(x)),
                    args[2].expr.and_then(|x| self.entry_size(x)),
                );
                if let Some(en) = en {
                    self.entries.insert(e.id, en);
                }
                return (arg_costs[0].add(arg_costs[1].union(arg_costs[2])), Some(sz));
            }
            "add_string" | "add_bytes" | "add_list" if args.len() == 2 => {
                let result = size(&args[0]).add(size(&args[1]));
                let en = union_entries(
                    args[0].expr.and_then(|x| self.entry_size(x)),
                    args[1].expr.and_then(|x| self.entry_size(x)),
                );
                if let Some(en) = en {
                    self.entries.insert(e.id, en);
                }
                return if id == "add_list" {
                    (Est::fixed(1).add(arg_sum), Some(result))
                } else {
                    (
                        result.factor(STRING_TRAVERSAL_COST_FACTOR).add(arg_sum),
                        Some(result),
                    )
                };
            }
            "less_string"
            | "greater_string"
            | "less_equals_string"
            | "greater_equals_string"
            | "less_bytes"
            | "greater_bytes"
            | "less_equals_bytes"
            | "greater_equals_bytes"
            | "equals"
            | "not_equals" => {
                let smallest = size(&args[0]).max.min(size(&args[1]).max);
                let min = u64::from(smallest > 0);
                return (
                    Est { min, max: smallest }
                        .factor(STRING_TRAVERSAL_COST_FACTOR)
                        .add(arg_sum),
                    None,
                );
            }
            _ => {}
        }
        (Est::fixed(1).add(arg_sum), None)
    }

    /// The element node of a list (`listElementNode`).
    fn element_node(&self, list: &Node) -> Option<Node<'static>> {
        let Type::List(el) = &list.ty else {
            return None;
        };
        let path = if list.path.is_empty() {
            vec![]
        } else {
            let mut p = list.path.clone();
            p.push("@items".into());
            p
        };
        Some(Node {
            path,
            ty: (**el).clone(),
            expr: None,
            size: None,
        })
    }

    /// `library.CostEstimator.EstimateCallCost`: cost and result size, or `None` to fall
    /// back to cel-go's own estimate.
    fn k8s_call_cost(
        &self,
        function: &str,
        id: &str,
        target: Option<&Node>,
        args: &[Node],
    ) -> Option<(Est, Option<Est>)> {
        let f = STRING_TRAVERSAL_COST_FACTOR;
        let one = Est::fixed(1);
        match functions::cost(function) {
            Cost::List => {
                let t = target?;
                let mut el_cost = one;
                if let Some(el) = self.element_node(t) {
                    if matches!(el.ty, Type::String | Type::Bytes) {
                        el_cost = el_cost.add(self.k8s_size(&el).factor(f));
                    }
                    Some((self.k8s_size(t).mul(el_cost), None))
                } else if function == "includes" {
                    Some((self.k8s_size(t).mul(el_cost), None))
                } else {
                    Some((self.k8s_size(t).factor(f), None))
                }
            }
            Cost::Traversal => {
                let sz = match (target, args) {
                    (Some(t), _) => self.k8s_size(t),
                    (None, [arg]) => self.k8s_size(arg),
                    (None, _) => return None,
                };
                Some((sz.factor(f), Some(sz)))
            }
            Cost::DoubleTraversal if function == "replace" => {
                if target.is_none() || args.len() < 2 {
                    return None;
                }
                let sz = self.k8s_size(target?);
                let to_replace = self.k8s_size(&args[0]);
                let with = self.k8s_size(&args[1]);
                let mut count = Est::fixed(0);
                let mut retained = Est::fixed(0);
                if to_replace.min == 0 {
                    count.max = if sz.max < u64::MAX {
                        sz.max + 1
                    } else {
                        sz.max
                    };
                    retained.max = sz.max;
                } else if with.max <= to_replace.min {
                    count.max = 0;
                    retained.max = sz.max;
                } else {
                    count.max = (sz.max as f64 / to_replace.min as f64).ceil() as u64;
                }
                if to_replace.max == 0 {
                    count.min = if sz.min < u64::MAX {
                        sz.min + 1
                    } else {
                        sz.min
                    };
                    retained.min = sz.min;
                } else if to_replace.max <= with.min {
                    count.min = 0;
                    retained.min = sz.min;
                } else {
                    count.min = (sz.min as f64 / to_replace.max as f64).ceil() as u64;
                }
                let size = count.mul(with).add(retained);
                Some((sz.factor(2.0 * f), Some(size)))
            }
            Cost::DoubleTraversal if function == "split" => {
                let sz = self.k8s_size(target?);
                let mut max = sz.max;
                if let Some(Expr::Literal(LiteralValue::Int(i))) =
                    args.get(1).and_then(|a| a.expr).map(|x| &x.expr)
                {
                    max = *i as u64;
                }
                Some((sz.factor(2.0 * f), Some(Est { min: 0, max })))
            }
            // `ip.isCanonical`.
            Cost::DoubleTraversal => Some((self.k8s_size(args.first()?).factor(2.0 * f), None)),
            Cost::Join => {
                let t = target?;
                let list = self.k8s_size(t);
                let mut sz = Est::fixed(0);
                if let Some(el) = self.element_node(t) {
                    sz = list.mul(self.k8s_size(&el));
                }
                if let Some(sep) = args.first() {
                    let seps = Est {
                        min: list.min.saturating_sub(1),
                        max: list.max.saturating_sub(1),
                    };
                    sz = sz.add(self.k8s_size(sep).mul(seps));
                }
                Some((sz.factor(f), Some(sz)))
            }
            Cost::Find if target.is_some() && !args.is_empty() => {
                let sz = self.k8s_size(target?);
                let str_cost = sz.add(one).factor(f);
                let regex_cost = self
                    .k8s_size(&args[0])
                    .factor(REGEX_STRING_LENGTH_COST_FACTOR);
                Some((
                    str_cost.mul(regex_cost),
                    Some(Est {
                        min: 0,
                        max: sz.max,
                    }),
                ))
            }
            Cost::Parse if !args.is_empty() => Some((self.k8s_size(&args[0]).factor(f), None)),
            Cost::Ip => {
                if id == "cidr_ip" {
                    return Some((one, None));
                }
                Some((self.k8s_size(args.first()?).factor(f), None))
            }
            Cost::Constant => Some((one, None)),
            Cost::Contains if !args.is_empty() => {
                let sz = Est { min: 4, max: 16 };
                let mut c = sz.add(sz).factor(f);
                if function == "containsCIDR" {
                    c = c.add(sz.factor(f)).add(one);
                }
                if id == "cidr_contains_ip_string" || id == "cidr_contains_cidr_string" {
                    c = c.add(self.k8s_size(&args[0]).factor(f));
                }
                Some((c, None))
            }
            Cost::Validate if !args.is_empty() => Some((
                self.k8s_size(&args[0])
                    .factor(f)
                    .factor(MAX_NAME_FORMAT_REGEX_SIZE * REGEX_STRING_LENGTH_COST_FACTOR),
                None,
            )),
            Cost::Equals if args.len() == 2 => {
                let (l, r) = (&args[0], &args[1]);
                if l.ty != r.ty {
                    return None;
                }
                match &l.ty {
                    Type::Opaque("net.IP" | "net.CIDR", _) => Some((one, None)),
                    Type::Struct(n) if n == "kubernetes.Quantity" || n == "kubernetes.Semver" => {
                        Some((one, None))
                    }
                    Type::Struct(n) if n == "kubernetes.NamedFormat" => Some((
                        Est {
                            min: 1,
                            max: MAX_FORMAT_SIZE,
                        }
                        .factor(f),
                        None,
                    )),
                    Type::Struct(n) if n == "kubernetes.URL" => {
                        // The server unions the right-hand size with itself.
                        let size = r.size.unwrap_or(one);
                        Some((
                            Est {
                                min: 1,
                                max: size.max,
                            }
                            .factor(f),
                            None,
                        ))
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

#[derive(Clone, Copy)]
enum IterVar {
    Key,
    Value,
    Single,
}

/// Sizes of literals (`computeExprSize`).
fn expr_size(e: &IdedExpr) -> Option<Est> {
    let v = match &e.expr {
        Expr::Literal(LiteralValue::String(s)) => s.chars().count() as u64,
        Expr::Literal(LiteralValue::Bytes(b)) => b.len() as u64,
        Expr::Literal(_) => 1,
        Expr::List(l) => l.elements.len() as u64,
        Expr::Map(m) => m.entries.len() as u64,
        _ => return None,
    };
    Some(Est::fixed(v))
}
