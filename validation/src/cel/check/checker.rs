//! CEL type checking as cel-go's checker does it (checker/checker.go, checker/types.go):
//! types every node of a parsed expression against the declared variables and
//! [`functions`](super::super::functions), unifying overload type parameters, and records the overloads
//! each call may take (the cost estimator reads them).

use std::collections::{BTreeMap, HashMap};

use crate::cel::syntax::ast::{EntryExpr, Expr, IdedExpr, LiteralValue};

use super::super::functions::{Overload, functions};
use super::types::Type;

/// The declared environment: variables and the schema's object types (fields by name).
pub struct Env {
    pub vars: HashMap<&'static str, Type>,
    pub structs: BTreeMap<String, BTreeMap<String, Type>>,
}

/// How a call was resolved.
#[derive(Clone, Debug)]
pub struct Call {
    /// The function, qualified when it was written `ns.fn(..)` (`optional.of`).
    pub function: String,
    /// Whether the call has a receiver (a qualified call's prefix is no receiver).
    pub member: bool,
    pub overloads: Vec<&'static str>,
}

/// The checked expression.
#[derive(Debug, Default)]
pub struct Checked {
    pub types: HashMap<u64, Type>,
    pub calls: HashMap<u64, Call>,
    /// cel-go's issues, first one first.
    pub errors: Vec<String>,
    pub uses_old_self: bool,
    /// Something this checker does not model was met: no verdict may rest on the result.
    pub unknown: bool,
}

impl Checked {
    pub fn type_of(&self, id: u64) -> Type {
        self.types.get(&id).cloned().unwrap_or(Type::Unknown)
    }
}

type Mapping = HashMap<String, Type>;

struct Checker<'a> {
    env: &'a Env,
    scopes: Vec<(String, Type)>,
    mappings: Mapping,
    next_var: usize,
    out: Checked,
}

/// Type checks `expr` (parsed, macros expanded) in `env`.
pub fn check(expr: &IdedExpr, env: &Env) -> Checked {
    let mut c = Checker {
        env,
        scopes: vec![],
        mappings: Mapping::new(),
        next_var: 0,
        out: Checked::default(),
    };
    c.check(expr);
    let mappings = std::mem::take(&mut c.mappings);
    for t in c.out.types.values_mut() {
        *t = substitute(&mappings, t, true);
    }
    c.out
}

const TYPE_IDENTS: &[(&str, Type)] = &[
    ("bool", Type::Bool),
    ("int", Type::Int),
    ("uint", Type::Uint),
    ("double", Type::Double),
    ("string", Type::String),
    ("bytes", Type::Bytes),
    ("null_type", Type::Null),
    ("google.protobuf.Timestamp", Type::Timestamp),
    ("google.protobuf.Duration", Type::Duration),
];

impl Checker<'_> {
    fn set(&mut self, e: &IdedExpr, t: Type) {
        if t.has_unknown() {
            self.out.unknown = true;
        }
        self.out.types.insert(e.id, t);
    }

    fn get(&self, e: &IdedExpr) -> Type {
        self.out.types.get(&e.id).cloned().unwrap_or(Type::Unknown)
    }

    fn error(&mut self, msg: String) {
        self.out.errors.push(msg);
    }

    fn new_var(&mut self) -> Type {
        let v = Type::Param(format!("_var{}", self.next_var));
        self.next_var += 1;
        v
    }

    fn is_assignable(&mut self, t1: &Type, t2: &Type) -> bool {
        let mut m = self.mappings.clone();
        if assignable(&mut m, t1, t2) {
            self.mappings = m;
            true
        } else {
            false
        }
    }

    fn lookup_var(&self, name: &str) -> Option<Type> {
        if let Some((_, t)) = self.scopes.iter().rev().find(|(n, _)| n == name) {
            return Some(t.clone());
        }
        self.env.vars.get(name).cloned()
    }

    fn check(&mut self, e: &IdedExpr) {
        match &e.expr {
            Expr::Literal(l) => {
                let t = match l {
                    LiteralValue::Boolean(_) => Type::Bool,
                    LiteralValue::Bytes(_) => Type::Bytes,
                    LiteralValue::Double(_) => Type::Double,
                    LiteralValue::Int(_) => Type::Int,
                    LiteralValue::Null => Type::Null,
                    LiteralValue::String(_) => Type::String,
                    LiteralValue::UInt(_) => Type::Uint,
                };
                self.set(e, t);
            }
            Expr::Ident(name) => {
                if let Some(t) = self.lookup_var(name) {
                    if name == "oldSelf" {
                        self.out.uses_old_self = true;
                    }
                    self.set(e, t);
                } else if let Some((_, t)) = TYPE_IDENTS.iter().find(|(n, _)| n == name) {
                    self.set(e, Type::Type(Box::new(t.clone())));
                } else if matches!(name.as_str(), "list" | "map" | "type" | "dyn") {
                    // Type values of parameterized types: not modeled.
                    self.set(e, Type::Unknown);
                } else {
                    self.error(format!(
                        "undeclared reference to '{name}' (in container '')"
                    ));
                    self.set(e, Type::Error);
                }
            }
            Expr::Select(sel) => {
                let t = self.check_select_field(&sel.operand, &sel.field, false);
                let t = if sel.test { Type::Bool } else { t };
                let t = substitute(&self.mappings, &t, false);
                self.set(e, t);
            }
            Expr::Call(call) => self.check_call(e, call),
            Expr::List(list) => {
                let mut elems: Option<Type> = None;
                for (i, el) in list.elements.iter().enumerate() {
                    self.check(el);
                    let mut t = self.get(el);
                    if list.optional_indices.contains(&i) {
                        match t {
                            Type::Opaque(super::types::OPTIONAL, ps) => t = ps[0].clone(),
                            other if other.is_dyn() => t = other,
                            other => {
                                self.error(format!(
                                    "expected type '{}' but found '{other}'",
                                    Type::optional(other.clone())
                                ));
                                t = other;
                            }
                        }
                    }
                    elems = Some(self.join(elems, t));
                }
                let elems = elems.unwrap_or_else(|| self.new_var());
                self.set(e, Type::list(elems));
            }
            Expr::Map(map) => {
                let (mut kt, mut vt): (Option<Type>, Option<Type>) = (None, None);
                for entry in &map.entries {
                    let EntryExpr::MapEntry(entry) = &entry.expr else {
                        self.out.unknown = true;
                        continue;
                    };
                    self.check(&entry.key);
                    let k = self.get(&entry.key);
                    kt = Some(self.join(kt, k));
                    self.check(&entry.value);
                    let mut v = self.get(&entry.value);
                    if entry.optional
                        && let Type::Opaque(super::types::OPTIONAL, ps) = &v
                    {
                        v = ps[0].clone();
                    }
                    vt = Some(self.join(vt, v));
                }
                let (k, v) = match (kt, vt) {
                    (Some(k), Some(v)) => (k, v),
                    _ => (self.new_var(), self.new_var()),
                };
                self.set(e, Type::map(k, v));
            }
            Expr::Struct(s) => {
                // Message construction (`google.protobuf...{}`): not modeled.
                for entry in &s.entries {
                    if let EntryExpr::StructField(f) = &entry.expr {
                        self.check(&f.value);
                    }
                }
                self.set(e, Type::Unknown);
            }
            Expr::Comprehension(comp) => {
                self.check(&comp.iter_range);
                self.check(&comp.accu_init);
                let range = substitute(&self.mappings, &self.get(&comp.iter_range), false);
                let accu = self.get(&comp.accu_init);
                self.scopes.push((comp.accu_var.clone(), accu.clone()));
                let two = comp.iter_var2.is_some();
                let (var, var2) = match &range {
                    Type::List(el) if two => (Type::Int, (**el).clone()),
                    Type::List(el) => ((**el).clone(), Type::Error),
                    Type::Map(k, v) => ((**k).clone(), (**v).clone()),
                    Type::Unknown => (Type::Unknown, Type::Unknown),
                    t if t.is_dyn_or_error() || matches!(t, Type::Param(_)) => {
                        let t = t.clone();
                        self.is_assignable(&Type::Dyn, &t);
                        (Type::Dyn, Type::Dyn)
                    }
                    other => {
                        self.error(format!("expression of type '{other}' cannot be range of a comprehension (must be list, map, or dynamic)"));
                        (Type::Error, Type::Error)
                    }
                };
                let depth = self.scopes.len();
                self.scopes.push((comp.iter_var.clone(), var));
                if let Some(v2) = &comp.iter_var2 {
                    self.scopes.push((v2.clone(), var2));
                }
                self.check(&comp.loop_cond);
                self.assert_type(&comp.loop_cond, &Type::Bool);
                self.check(&comp.loop_step);
                self.assert_type(&comp.loop_step, &accu);
                self.scopes.truncate(depth);
                self.check(&comp.result);
                self.scopes.pop();
                let t = substitute(&self.mappings, &self.get(&comp.result), false);
                self.set(e, t);
            }
            Expr::Unspecified => self.set(e, Type::Unknown),
        }
    }

    fn assert_type(&mut self, e: &IdedExpr, t: &Type) {
        let actual = self.get(e);
        if !self.is_assignable(t, &actual) {
            self.error(format!("expected type '{t}' but found '{actual}'"));
        }
    }

    /// The element type of a literal: mixed elements make it `dyn` (Kubernetes refuses
    /// them afterwards, outside `format` calls: [`super::validators`]).
    fn join(&mut self, previous: Option<Type>, current: Type) -> Type {
        let Some(previous) = previous else {
            return current;
        };
        if self.is_assignable(&previous, &current) {
            return most_general(previous, current);
        }
        Type::Dyn
    }

    fn check_select_field(&mut self, operand: &IdedExpr, field: &str, optional: bool) -> Type {
        self.check(operand);
        let operand_t = substitute(&self.mappings, &self.get(operand), false);
        let (target, is_opt) = match operand_t {
            Type::Opaque(super::types::OPTIONAL, ps) => (ps[0].clone(), true),
            t => (t, false),
        };
        let result = match &target {
            Type::Map(_, v) => (**v).clone(),
            Type::Struct(name) => match self.env.structs.get(name) {
                Some(fields) => match fields.get(field) {
                    Some(t) => t.clone(),
                    None => {
                        self.error(format!("undefined field '{field}'"));
                        Type::Error
                    }
                },
                None => {
                    // The Kubernetes library's object types have no fields to select.
                    self.error(format!("undefined field '{field}'"));
                    Type::Error
                }
            },
            Type::Param(_) => {
                self.is_assignable(&Type::Dyn, &target);
                Type::Dyn
            }
            Type::Unknown => Type::Unknown,
            t => {
                if !t.is_dyn_or_error() {
                    self.error(format!("type '{t}' does not support field selection"));
                }
                Type::Dyn
            }
        };
        if is_opt || optional {
            Type::optional(result)
        } else {
            result
        }
    }

    fn check_call(&mut self, e: &IdedExpr, call: &crate::cel::syntax::ast::CallExpr) {
        let name = call.func_name.as_str();
        if name == "_?._" {
            let field = match call.args.get(1).map(|a| &a.expr) {
                Some(Expr::Literal(LiteralValue::String(s))) => s.to_string(),
                _ => {
                    self.set(e, Type::Unknown);
                    return;
                }
            };
            let t = self.check_select_field(&call.args[0], &field, true);
            let t = substitute(&self.mappings, &t, false);
            self.set(e, t);
            return;
        }
        let fns = functions();
        let known = fns.contains_key(name)
            || call
                .target
                .as_deref()
                .and_then(qualified_name)
                .is_some_and(|p| fns.contains_key(format!("{p}.{name}").as_str()));
        if !known {
            // A function (or macro: `sortBy(x, ...)` binds `x`) this checker does not
            // declare: its arguments' errors may be no errors to the server.
            let errors = self.out.errors.len();
            if let Some(t) = &call.target {
                self.check(t);
            }
            for a in &call.args {
                self.check(a);
            }
            self.out.errors.truncate(errors);
            self.out.unknown = true;
            self.set(e, Type::Unknown);
            return;
        }
        for a in &call.args {
            self.check(a);
        }
        let Some(target) = &call.target else {
            match fns.get(name) {
                Some(overloads) => self.resolve(e, name, overloads, None, &call.args),
                None => {
                    self.out.unknown = true;
                    self.set(e, Type::Unknown);
                }
            }
            return;
        };
        if let Some(prefix) = qualified_name(target) {
            let qualified = format!("{prefix}.{name}");
            if let Some(overloads) = fns.get(qualified.as_str()) {
                self.resolve(e, &qualified, overloads, None, &call.args);
                return;
            }
        }
        self.check(target);
        match fns.get(name) {
            Some(overloads) => self.resolve(e, name, overloads, Some(target), &call.args),
            None => {
                self.out.unknown = true;
                self.set(e, Type::Unknown);
            }
        }
    }

    fn resolve(
        &mut self,
        e: &IdedExpr,
        function: &str,
        overloads: &[Overload],
        target: Option<&IdedExpr>,
        args: &[IdedExpr],
    ) {
        let mut arg_types: Vec<Type> = target.iter().map(|t| self.get(t)).collect();
        arg_types.extend(args.iter().map(|a| self.get(a)));
        let mut result: Option<Type> = None;
        let mut ids = vec![];
        for o in overloads.iter().filter(|o| o.member == target.is_some()) {
            if function == "_&&_" || function == "_||_" {
                let mut ok = true;
                for t in &arg_types {
                    if !self.is_assignable(t, &Type::Bool) {
                        self.error(format!("expected type 'bool' but found '{t}'"));
                        ok = false;
                    }
                }
                self.record(e, function, target.is_some(), vec![o.id]);
                self.set(e, if ok { Type::Bool } else { Type::Error });
                return;
            }
            // Fresh type variables for the overload's parameters.
            let mut fresh = Mapping::new();
            let mut params = o.params.clone();
            params.push(o.result.clone());
            for p in &params {
                collect_params(p, &mut |n| {
                    if !fresh.contains_key(n) {
                        let v = self.new_var();
                        fresh.insert(n.to_string(), v);
                    }
                });
            }
            let params: Vec<Type> = params
                .iter()
                .map(|p| substitute(&fresh, p, false))
                .collect();
            let (candidates, ret) = params.split_at(params.len() - 1);
            if candidates.len() != arg_types.len() {
                continue;
            }
            let mut m = self.mappings.clone();
            if arg_types
                .iter()
                .zip(candidates)
                .all(|(a, p)| assignable(&mut m, a, p))
            {
                self.mappings = m;
                ids.push(o.id);
                let r = substitute(&self.mappings, &ret[0], false);
                result = Some(match result {
                    None => r,
                    Some(prev) if !prev.is_dyn() && prev != r => Type::Dyn,
                    Some(prev) => prev,
                });
            }
        }
        match result {
            Some(t) => {
                self.record(e, function, target.is_some(), ids);
                self.set(e, t);
            }
            None if arg_types.iter().any(Type::has_unknown) => self.set(e, Type::Unknown),
            None => {
                let shown: Vec<String> = arg_types
                    .iter()
                    .map(|t| substitute(&self.mappings, t, true).to_string())
                    .collect();
                let sig = if target.is_some() {
                    format!("{}.({})", shown[0], shown[1..].join(", "))
                } else {
                    format!("({})", shown.join(", "))
                };
                self.error(format!(
                    "found no matching overload for '{function}' applied to '{sig}'"
                ));
                self.set(e, Type::Error);
            }
        }
    }

    fn record(&mut self, e: &IdedExpr, function: &str, member: bool, overloads: Vec<&'static str>) {
        self.out.calls.insert(
            e.id,
            Call {
                function: function.to_string(),
                member,
                overloads,
            },
        );
    }
}

/// `a.b.c` as a qualified name, for namespaced functions (`optional.of`, `sets.contains`).
pub fn qualified_name(e: &IdedExpr) -> Option<String> {
    match &e.expr {
        Expr::Ident(n) => Some(n.clone()),
        Expr::Select(s) if !s.test => Some(format!("{}.{}", qualified_name(&s.operand)?, s.field)),
        _ => None,
    }
}

fn collect_params(t: &Type, f: &mut impl FnMut(&str)) {
    match t {
        Type::Param(n) => f(n),
        other => other
            .params()
            .into_iter()
            .for_each(|p| collect_params(p, f)),
    }
}

fn find<'m>(m: &'m Mapping, t: &Type) -> Option<&'m Type> {
    match t {
        Type::Param(n) => m.get(n),
        _ => None,
    }
}

pub fn substitute(m: &Mapping, t: &Type, param_to_dyn: bool) -> Type {
    if let Some(s) = find(m, t) {
        return substitute(m, s, param_to_dyn);
    }
    match t {
        Type::Param(_) if param_to_dyn => Type::Dyn,
        Type::Opaque(n, ps) => Type::Opaque(
            n,
            ps.iter().map(|p| substitute(m, p, param_to_dyn)).collect(),
        ),
        Type::List(e) => Type::list(substitute(m, e, param_to_dyn)),
        Type::Map(k, v) => Type::map(
            substitute(m, k, param_to_dyn),
            substitute(m, v, param_to_dyn),
        ),
        Type::Type(p) => Type::Type(Box::new(substitute(m, p, param_to_dyn))),
        other => other.clone(),
    }
}

fn is_equal_or_less_specific(t1: &Type, t2: &Type) -> bool {
    if t1.is_dyn() || matches!(t1, Type::Param(_)) {
        return true;
    }
    if t2.is_dyn() || matches!(t2, Type::Param(_)) {
        return false;
    }
    match (t1, t2) {
        (Type::Opaque(n1, p1), Type::Opaque(n2, p2)) => {
            n1 == n2
                && p1.len() == p2.len()
                && p1
                    .iter()
                    .zip(p2)
                    .all(|(a, b)| is_equal_or_less_specific(a, b))
        }
        (Type::List(a), Type::List(b)) => is_equal_or_less_specific(a, b),
        (Type::Map(k1, v1), Type::Map(k2, v2)) => {
            is_equal_or_less_specific(k1, k2) && is_equal_or_less_specific(v1, v2)
        }
        (Type::Type(_), Type::Type(_)) => true,
        _ => t1 == t2,
    }
}

fn most_general(t1: Type, t2: Type) -> Type {
    if is_equal_or_less_specific(&t1, &t2) {
        t1
    } else {
        t2
    }
}

fn not_referenced_in(m: &Mapping, t: &Type, within: &Type) -> bool {
    if t == within {
        return false;
    }
    match within {
        Type::Param(_) => match find(m, within) {
            None => true,
            Some(s) => not_referenced_in(m, t, s),
        },
        other => other
            .params()
            .into_iter()
            .all(|p| not_referenced_in(m, t, p)),
    }
}

/// Returns (valid, t2 has a substitution).
fn valid_substitution(m: &mut Mapping, t1: &Type, t2: &Type) -> (bool, bool) {
    if t1 == t2 {
        return (true, true);
    }
    if let Some(sub) = find(m, t2).cloned() {
        if *t1 == sub {
            return (true, true);
        }
        if assignable(m, t1, &sub) {
            let new = most_general(t1.clone(), sub);
            if not_referenced_in(m, t2, &new)
                && let Type::Param(n) = t2
            {
                m.insert(n.clone(), new);
            }
            return (true, true);
        }
        return (false, true);
    }
    if not_referenced_in(m, t2, t1) {
        if let Type::Param(n) = t2 {
            m.insert(n.clone(), t1.clone());
        }
        return (true, false);
    }
    (false, false)
}

/// cel-go's `internalIsAssignable(m, t1, t2)`.
pub fn assignable(m: &mut Mapping, t1: &Type, t2: &Type) -> bool {
    if matches!(t2, Type::Param(_)) {
        let (valid, has_sub) = valid_substitution(m, t1, t2);
        if valid {
            return true;
        }
        if has_sub {
            return false;
        }
    }
    if matches!(t1, Type::Param(_)) {
        return valid_substitution(m, t2, t1).0;
    }
    if t1.is_dyn_or_error() || t2.is_dyn_or_error() {
        return true;
    }
    let nullable = |t: &Type| {
        matches!(
            t,
            Type::Opaque(..) | Type::Struct(_) | Type::Duration | Type::Timestamp | Type::Null
        )
    };
    if *t1 == Type::Null {
        return nullable(t2);
    }
    if *t2 == Type::Null {
        return nullable(t1);
    }
    match (t1, t2) {
        (Type::Type(_), t2) => matches!(t2, Type::Type(_)),
        (Type::Opaque(n1, p1), Type::Opaque(n2, p2)) => {
            n1 == n2 && p1.len() == p2.len() && p1.iter().zip(p2).all(|(a, b)| assignable(m, a, b))
        }
        (Type::List(a), Type::List(b)) => assignable(m, a, b),
        (Type::Map(k1, v1), Type::Map(k2, v2)) => assignable(m, k1, k2) && assignable(m, v1, v2),
        (Type::Opaque(..) | Type::List(_) | Type::Map(..), _) => false,
        (a, b) => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> Env {
        let mut structs = BTreeMap::new();
        structs.insert(
            "self".to_string(),
            BTreeMap::from([
                ("name".to_string(), Type::String),
                ("n".to_string(), Type::Int),
                ("items".to_string(), Type::list(Type::String)),
                ("ratio".to_string(), Type::Double),
            ]),
        );
        Env {
            vars: HashMap::from([
                ("self", Type::Struct("self".into())),
                ("oldSelf", Type::optional(Type::Struct("self".into()))),
            ]),
            structs,
        }
    }

    fn out(src: &str) -> (Type, Vec<String>) {
        let e = crate::cel::syntax::parse(src, true).unwrap();
        let c = check(&e, &env());
        (c.type_of(e.id), c.errors)
    }

    #[test]
    fn types_as_cel_go() {
        assert_eq!(out("self.n > 0"), (Type::Bool, vec![]));
        assert_eq!(
            out("self.items.all(i, i.startsWith('a'))"),
            (Type::Bool, vec![])
        );
        assert_eq!(out("self.items.map(i, size(i))").0, Type::list(Type::Int));
        assert_eq!(
            out("self.items.filter(i, i != '')").0,
            Type::list(Type::String)
        );
        assert_eq!(out("[]").0, Type::list(Type::Dyn));
        assert_eq!(out("self.n > 1.5").0, Type::Bool);
        assert_eq!(out("oldSelf.hasValue()").0, Type::Bool);
        assert_eq!(out("oldSelf.orValue(self).n == self.n").0, Type::Bool);
        assert_eq!(out("optional.of(1).value()").0, Type::Int);
        assert_eq!(out("'ratio ' + string(self.ratio)").0, Type::String);
        assert_eq!(out("has(self.name)").0, Type::Bool);
        assert_eq!(out("self.name.size()").0, Type::Int);
        assert_eq!(
            out("quantity('1').isGreaterThan(quantity('2'))").0,
            Type::Bool
        );
        assert_eq!(out("self.name.split(',').join('-')").0, Type::String);
    }

    #[test]
    fn refuses_as_cel_go() {
        let (_, e) = out("self == oldSelf");
        assert!(
            e[0].starts_with(
                "found no matching overload for '_==_' applied to '(self, optional_type(self))'"
            ),
            "{e:?}"
        );
        assert_eq!(out("self.nope").1, vec!["undefined field 'nope'"]);
        assert_eq!(
            out("nope == 1").1,
            vec!["undeclared reference to 'nope' (in container '')"]
        );
        assert!(!out("self.n == 'a'").1.is_empty());
        // Mixed literals type as dyn lists; the validators refuse them.
        assert_eq!(out("[1, 'a']").0, Type::list(Type::Dyn));
        assert!(!out("self.n.foo").1.is_empty());
        assert!(!out("self.name == null").1.is_empty());
        assert!(out("self.n.unknownFunction()").1.is_empty());
    }
}
