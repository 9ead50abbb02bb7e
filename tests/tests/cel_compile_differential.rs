//! Differential test of the generator's CEL compile checks (`kube_codegen_validation::cel::check`:
//! type checking and static cost estimation of `x-kubernetes-validations`) against the real
//! API server: CRDs chosen to hit each check go to a dry-run create of the CRD, and to
//! `check_schema`. The verdicts must agree for every CRD, and so must the cost factors
//! ("exceeds budget by factor of ...") the server gives.
//!
//! CRDs whose `default`s break (or keep) their own schema node's validation go the same way:
//! the server's `ValidateDefaults` against the generator's default check
//! (`Schema::validate_defaults`, which `generate` runs on every CRD), verdict and wording.
//!
//! Cost thresholds are bisected on the server: for each family of CRDs varying one bound
//! (maxLength, maxItems, maxProperties), the smallest bound the server refuses is found,
//! and the checker must flip at exactly that bound, with the same factor text on both
//! sides of it.

use std::sync::atomic::{AtomicUsize, Ordering};

use futures::StreamExt;
use kube_codegen_envtest::Environment;
use kube_codegen_runtime::cel::check::check_schema;
use kube_codegen_runtime::validation::Schema;
use kube_codegen_tests::{Rng, send_json};
use serde_json::{Value, json};

const GROUP: &str = "celdiff.example.com";

static NEXT: AtomicUsize = AtomicUsize::new(0);

/// A CRD whose `spec` has the given schema (its rules included).
fn crd(spec: Value) -> Value {
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let plural = format!("cases{n}");
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{GROUP}")},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": format!("case{n}"), "kind": format!("Case{n}"), "listKind": format!("Case{n}List")},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}},
            }],
        },
    })
}

#[derive(Debug, PartialEq)]
struct Verdict {
    accepted: bool,
    /// How many expressions do not compile (type errors).
    failed: usize,
    /// The cost factors named, sorted (`1.000123x`, `more than 100x`...).
    factors: Vec<String>,
    text: String,
}

fn factors(text: &str) -> Vec<String> {
    let mut out: Vec<String> = text
        .match_indices("exceeds budget by factor of ")
        .map(|(i, m)| {
            let rest = &text[i + m.len()..];
            let end = rest.find(" (").unwrap_or(rest.len());
            rest[..end].to_string()
        })
        .collect();
    out.sort();
    out
}

fn ours(crd: &Value) -> Verdict {
    let schema = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
    let problems = check_schema(schema);
    let text = problems
        .iter()
        .map(|p| p.message.clone())
        .collect::<Vec<_>>()
        .join("; ");
    Verdict {
        accepted: problems.is_empty(),
        failed: text.matches("does not compile").count(),
        factors: factors(&text),
        text,
    }
}

async fn server(client: &kube::Client, crd: &Value) -> Verdict {
    let (status, v) = send_json(
        client,
        http::Method::POST,
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions?dryRun=All",
        crd,
    )
    .await
    .expect("the API server answers");
    if status.is_success() {
        return Verdict {
            accepted: true,
            failed: 0,
            factors: vec![],
            text: String::new(),
        };
    }
    assert_eq!(status.as_u16(), 422, "unexpected answer: {v}");
    let text = v["message"].as_str().unwrap_or_default().to_string();
    Verdict {
        accepted: false,
        failed: text.matches("compilation failed").count(),
        factors: factors(&text),
        text,
    }
}

/// A verdict, and the errors (`field: body`) behind it.
type DefaultVerdict = (Verdict, Vec<String>);

/// Our verdict with the default check `generate` runs too: the compile checks, then every
/// default against its node, as the server's `ValidateDefaults`.
fn ours_with_defaults(crd: &Value) -> DefaultVerdict {
    let mut v = ours(crd);
    let schema = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
    let compiled = Schema::from_json(&schema.to_string()).expect("the cases compile");
    let errors: Vec<String> = compiled
        // One version: the server's internal CRD has the schema at `spec.validation`.
        .validate_defaults("spec.validation.openAPIV3Schema")
        .into_iter()
        .map(|e| e.error.to_string())
        .collect();
    v.accepted &= errors.is_empty();
    (v, errors)
}

/// CRDs whose `spec.x` has a default that breaks (`false`) or keeps (`true`) each kind of
/// validation the server runs on defaults.
fn default_cases() -> Vec<(&'static str, bool, Value)> {
    let x = |node: Value| json!({"type": "object", "properties": {"x": node}});
    let int = |extra: Value, d: Value| {
        let mut n = json!({"type": "integer", "default": d});
        n.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        x(n)
    };
    let string = |extra: Value, d: &str| {
        let mut n = json!({"type": "string", "default": d});
        n.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        x(n)
    };
    let rule =
        |r: &str| json!({"x-kubernetes-validations": [{"rule": r, "message": "rule broken"}]});
    vec![
        (
            "maximum broken",
            false,
            int(json!({"maximum": 10}), json!(11)),
        ),
        ("maximum kept", true, int(json!({"maximum": 10}), json!(10))),
        (
            "exclusiveMaximum broken",
            false,
            int(json!({"maximum": 10, "exclusiveMaximum": true}), json!(10)),
        ),
        (
            "minimum broken",
            false,
            int(json!({"minimum": 1}), json!(0)),
        ),
        (
            "multipleOf broken",
            false,
            int(json!({"multipleOf": 3}), json!(4)),
        ),
        (
            "enum broken",
            false,
            string(json!({"enum": ["a", "b"]}), "c"),
        ),
        ("enum kept", true, string(json!({"enum": ["a", "b"]}), "b")),
        (
            "pattern broken",
            false,
            string(json!({"pattern": "^[a-z]+$"}), "A1"),
        ),
        (
            "pattern kept",
            true,
            string(json!({"pattern": "^[a-z]+$"}), "abc"),
        ),
        (
            "maxLength broken",
            false,
            string(json!({"maxLength": 3}), "abcd"),
        ),
        (
            "minLength broken",
            false,
            string(json!({"minLength": 3}), "ab"),
        ),
        (
            "maxLength kept",
            true,
            string(json!({"maxLength": 3}), "abc"),
        ),
        (
            "date-time format broken",
            false,
            string(json!({"format": "date-time"}), "yesterday"),
        ),
        (
            "date-time format kept",
            true,
            string(json!({"format": "date-time"}), "2024-01-02T03:04:05Z"),
        ),
        (
            "maxItems broken",
            false,
            x(
                json!({"type": "array", "maxItems": 1, "items": {"type": "integer"}, "default": [1, 2]}),
            ),
        ),
        (
            "set with duplicates (ValidateDefaults does not check list types)",
            true,
            x(
                json!({"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "integer"}, "default": [1, 1]}),
            ),
        ),
        (
            "map list with duplicate keys (nor list-map keys)",
            true,
            x(
                json!({"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"], "items": {"type": "object", "required": ["k"], "properties": {"k": {"type": "string"}}}, "default": [{"k": "a"}, {"k": "a"}]}),
            ),
        ),
        (
            "set kept",
            true,
            x(
                json!({"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "integer"}, "default": [1, 2]}),
            ),
        ),
        (
            "item default broken",
            false,
            x(json!({"type": "array", "items": {"type": "integer", "maximum": 3, "default": 4}})),
        ),
        (
            "maxProperties broken",
            false,
            x(
                json!({"type": "object", "maxProperties": 1, "additionalProperties": {"type": "string"}, "default": {"a": "1", "b": "2"}}),
            ),
        ),
        (
            "unknown field in default",
            false,
            x(
                json!({"type": "object", "properties": {"a": {"type": "integer"}}, "default": {"a": 1, "b": 2}}),
            ),
        ),
        (
            "known fields in default",
            true,
            x(
                json!({"type": "object", "properties": {"a": {"type": "integer"}}, "default": {"a": 1}}),
            ),
        ),
        (
            "required field missing from default",
            false,
            x(
                json!({"type": "object", "required": ["a"], "properties": {"a": {"type": "integer"}}, "default": {}}),
            ),
        ),
        (
            "rule on the node broken",
            false,
            int(rule("self % 2 == 0"), json!(3)),
        ),
        (
            "rule on the node kept",
            true,
            int(rule("self % 2 == 0"), json!(4)),
        ),
        (
            "rule below the node broken",
            false,
            x(
                json!({"type": "object", "properties": {"a": {"type": "integer", "x-kubernetes-validations": [{"rule": "self > 5"}]}}, "default": {"a": 1}}),
            ),
        ),
        (
            "rule above the node is not the default's",
            true,
            json!({"type": "object", "x-kubernetes-validations": [{"rule": "self.x > 5"}], "properties": {"x": {"type": "integer", "default": 1}}}),
        ),
        (
            "transition rule sees the default as old",
            true,
            int(rule("self == oldSelf"), json!(1)),
        ),
        (
            "optionalOldSelf rule runs as a create",
            false,
            x(
                json!({"type": "integer", "default": 1, "x-kubernetes-validations": [{"rule": "oldSelf.hasValue()", "optionalOldSelf": true}]}),
            ),
        ),
        (
            "rule broken and value broken: only the value is reported",
            false,
            int(
                json!({"maximum": 2, "x-kubernetes-validations": [{"rule": "self < 0"}]}),
                json!(3),
            ),
        ),
    ]
}

/// The schema of the fixed and random cases: a field of every type, and `rules`.
fn base_schema(rules: Value) -> Value {
    json!({"type": "object", "properties": {
        "n": {"type": "integer"},
        "d": {"type": "number"},
        "s": {"type": "string", "maxLength": 64},
        "ios": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]},
        "ts": {"type": "string", "format": "date-time"},
        "dur": {"type": "string", "format": "duration"},
        "l": {"type": "array", "maxItems": 10, "items": {"type": "integer"}},
        "ls": {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 10}},
        "m": {"type": "object", "maxProperties": 10, "additionalProperties": {"type": "string", "maxLength": 10}},
        "o": {"type": "object", "properties": {"a": {"type": "string", "maxLength": 5}}},
        "p": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
        "u": {"type": "string"},
        "ul": {"type": "array", "items": {"type": "string"}},
    }, "x-kubernetes-validations": rules})
}

/// The cases with a fixed verdict: (what, expected to be accepted, spec schema).
fn fixed_cases() -> Vec<(&'static str, bool, Value)> {
    let base = base_schema;
    let rule = |r: &str| base(json!([{"rule": r}]));
    vec![
        ("int comparison", true, rule("self.n > 0")),
        ("cross-type numeric comparison", true, rule("self.n > 1.5")),
        ("int == double", false, rule("self.n == 1.0")),
        ("int == string", false, rule("self.n == 'a'")),
        ("not a bool", false, rule("self.n + 1")),
        ("undefined field", false, rule("self.nope > 0")),
        ("undeclared variable", false, rule("nope > 0")),
        ("has on a field", true, rule("has(self.s)")),
        ("has on no field", false, rule("has(self.nope)")),
        ("field of an int", false, rule("self.n.x == 1")),
        (
            "heterogeneous list literal",
            false,
            rule("[1, 'a'].size() > 0"),
        ),
        (
            "heterogeneous map literal",
            false,
            rule("{'a': 1, 'b': 'c'}.size() > 0"),
        ),
        (
            "mixed list in format",
            true,
            rule("'%s %d'.format(['a', 1]) != ''"),
        ),
        (
            "dyn and int in a list",
            false,
            rule("[self.ios, 1].size() > 0"),
        ),
        (
            "valid regex literal",
            true,
            rule("self.s.matches('^[a-z]+$')"),
        ),
        ("invalid regex literal", false, rule("self.s.matches('[')")),
        (
            "valid duration literal",
            true,
            rule("self.dur < duration('1h30m')"),
        ),
        (
            "invalid duration literal",
            false,
            rule("self.dur < duration('1x')"),
        ),
        (
            "valid timestamp literal",
            true,
            rule("self.ts < timestamp('2020-02-29T10:00:00.5+01:00')"),
        ),
        (
            "invalid timestamp literal",
            false,
            rule("self.ts < timestamp('2021-02-29T00:00:00Z')"),
        ),
        ("wrong argument type", false, rule("self.s.startsWith(1)")),
        (
            "branches of different types",
            false,
            rule("(self.n > 0 ? self.s : 1) == 1"),
        ),
        ("in a list", true, rule("self.n in [1, 2]")),
        ("string in int list", false, rule("self.s in [1]")),
        (
            "int-or-string is dyn",
            true,
            rule("self.ios == 1 || self.ios == 'a'"),
        ),
        ("dyn is no bool", false, rule("self.ios")),
        ("string is null", false, rule("self.s == null")),
        ("object is null", true, rule("self.o != null")),
        (
            "timestamps",
            true,
            rule("self.ts < timestamp('2020-01-01T00:00:00Z')"),
        ),
        ("durations", true, rule("self.dur > duration('1s')")),
        ("timestamp vs string", false, rule("self.ts < '2020'")),
        (
            "list macros",
            true,
            rule(
                "self.l.all(x, x > 0) && self.l.exists(x, x == 1) && self.l.exists_one(x, x == 2)",
            ),
        ),
        (
            "map and filter",
            true,
            rule("self.l.map(x, x * 2).filter(x, x > 2).size() >= 0"),
        ),
        (
            "map keys and values",
            true,
            rule("self.m.all(k, self.m[k] != '')"),
        ),
        (
            "map value type",
            false,
            rule("self.m.all(k, self.m[k] > 0)"),
        ),
        (
            "k8s lists",
            true,
            rule("self.l.sum() > 0 && self.l.isSorted() && self.l.max() > self.l.min()"),
        ),
        (
            "ext strings",
            true,
            rule(
                "self.s.split(',').size() > 0 && self.s.indexOf('a') >= 0 && self.s.lowerAscii() != ''",
            ),
        ),
        ("join", true, rule("self.ls.join(',') != ''")),
        // The elements of a split have no size estimate: joining them is "unbounded".
        (
            "join of a split",
            false,
            rule("self.s.split(',').join('-') != ''"),
        ),
        ("sets", true, rule("sets.contains(self.l, [1])")),
        (
            "quantity",
            true,
            rule("quantity(self.s).isGreaterThan(quantity('1'))"),
        ),
        ("ip", true, rule("ip(self.s).family() == 4")),
        ("cidr", true, rule("cidr(self.s).containsIP(self.s)")),
        ("url", true, rule("url(self.s).getScheme() == 'https'")),
        (
            "format",
            true,
            rule("format.dns1123Label().validate(self.s).hasValue()"),
        ),
        ("optional field", true, rule("self.?s.orValue('') != ''")),
        ("optional index", true, rule("self.m[?'a'].hasValue()")),
        ("object fields", true, rule("self.o.a != ''")),
        ("two objects", false, rule("self.o == self.p")),
        (
            "preserve-unknown-fields has no fields",
            false,
            rule("self.p.x == 1"),
        ),
        ("string conversion", true, rule("string(self.n) != ''")),
        ("int conversion", true, rule("int(self.s) > 0")),
        ("no such overload", false, rule("int(self.l) > 0")),
        ("transition rule", true, rule("self.n >= oldSelf.n")),
        ("self == oldSelf", true, rule("self == oldSelf")),
        (
            "message expression",
            true,
            base(json!([{"rule": "self.n > 0", "messageExpression": "'n is ' + self.s"}])),
        ),
        (
            "message expression not a string",
            false,
            base(json!([{"rule": "self.n > 0", "messageExpression": "self.n"}])),
        ),
        (
            "message expression type error",
            false,
            base(json!([{"rule": "self.n > 0", "messageExpression": "'n is ' + self.n"}])),
        ),
        (
            "message expression of a number's string",
            false,
            base(
                json!([{"rule": "self.d > 0.0", "messageExpression": "'d ' + string(self.d) + ' is not positive'"}]),
            ),
        ),
        (
            "fieldPath",
            true,
            base(json!([{"rule": "self.n > 0", "fieldPath": ".n"}])),
        ),
        (
            "fieldPath of a map key",
            true,
            base(json!([{"rule": "self.n > 0", "fieldPath": ".m['a.b']"}])),
        ),
        (
            "fieldPath of no field",
            false,
            base(json!([{"rule": "self.n > 0", "fieldPath": ".nope"}])),
        ),
        (
            "fieldPath into a list",
            false,
            base(json!([{"rule": "self.n > 0", "fieldPath": ".l[0]"}])),
        ),
        (
            "optionalOldSelf compared to self",
            false,
            base(json!([{"rule": "self == oldSelf", "optionalOldSelf": true}])),
        ),
        (
            "optionalOldSelf unwrapped",
            true,
            base(
                json!([{"rule": "!oldSelf.hasValue() || oldSelf.value() == self", "optionalOldSelf": true}]),
            ),
        ),
        (
            "optionalOldSelf without oldSelf",
            false,
            base(json!([{"rule": "self.n > 0", "optionalOldSelf": true}])),
        ),
        (
            "oldSelf in atomic list items",
            false,
            json!({"type": "object", "properties": {"l": {"type": "array", "maxItems": 5, "items": {
                "type": "object", "properties": {"a": {"type": "integer"}},
                "x-kubernetes-validations": [{"rule": "self.a == oldSelf.a"}]}}}}),
        ),
        (
            "oldSelf in map list items",
            true,
            json!({"type": "object", "properties": {"l": {"type": "array", "maxItems": 5,
                "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"], "items": {
                "type": "object", "required": ["k"], "properties": {"k": {"type": "string", "maxLength": 5}, "a": {"type": "integer"}},
                "x-kubernetes-validations": [{"rule": "self.a == oldSelf.a"}]}}}}),
        ),
        (
            "oldSelf under an atomic map (atomic maps correlate)",
            true,
            json!({"type": "object", "x-kubernetes-map-type": "atomic", "properties": {"a": {"type": "integer",
                "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}}}),
        ),
        (
            "unbounded quadratic",
            false,
            json!({"type": "object", "properties": {"l": {"type": "array", "items": {"type": "string"}}},
                "x-kubernetes-validations": [{"rule": "self.l.all(x, self.l.all(y, x == y))"}]}),
        ),
        (
            "unbounded strings in unbounded list items",
            false,
            json!({"type": "object", "properties": {"l": {"type": "array", "items": {"type": "string",
                "x-kubernetes-validations": [{"rule": "self.contains('a')"}]}}}}),
        ),
        // Property names and `apiservercel.Escape`: escaped names are fields, a name led by
        // a digit is none (it cannot be written as one), but `dyn(self)` reads it.
        (
            "escaped property names",
            true,
            escaped_names(
                "has(self.a__dash__b) && has(self.a__dot__b) && has(self.__namespace__) && has(self.x__underscores__y)",
            ),
        ),
        (
            "a digit-led property through dyn",
            true,
            escaped_names("dyn(self).exists(k, k == '1a-b') || dyn(self)['1a-b'] == 'x'"),
        ),
        (
            "a digit-led property is no field",
            false,
            escaped_names("self.1a == 'x'"),
        ),
        (
            "a digit-led property has no escaped field",
            false,
            escaped_names("has(self.__1a__dash__b__)"),
        ),
    ]
}

/// An object with property names CEL escapes or cannot name, and `rule`.
fn escaped_names(rule: &str) -> Value {
    let s = json!({"type": "string", "maxLength": 5});
    json!({"type": "object", "properties": {
        "a-b": s, "a.b": s, "namespace": s, "x__y": s, "1a-b": s, "1st": s, "a b": s,
    }, "x-kubernetes-validations": [{"rule": rule}]})
}

/// The cases on the resource root (the CRD's whole schema): rules there see apiVersion,
/// kind and metadata.name/generateName only.
fn root_cases() -> Vec<(&'static str, bool, Value)> {
    [
        (
            "root metadata.name",
            true,
            "self.metadata.name.size() < 300",
        ),
        (
            "root metadata.labels",
            false,
            "self.metadata.labels.size() > 0",
        ),
        ("root transition", true, "self.spec.n >= oldSelf.spec.n"),
    ]
    .into_iter()
    .map(|(what, ok, rule)| {
        let mut c = crd(json!({"type": "object", "properties": {"n": {"type": "integer"}}}));
        c["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["x-kubernetes-validations"] =
            json!([{"rule": rule}]);
        (what, ok, c)
    })
    .collect()
}

/// A random expression over the `base` schema of [`fixed_cases`]: fields of every type,
/// literals, operators, functions and macros, well-typed or not.
fn random_expr(rng: &mut Rng, depth: u32) -> String {
    const ATOMS: &[&str] = &[
        "self.n",
        "self.d",
        "self.s",
        "self.ios",
        "self.ts",
        "self.dur",
        "self.l",
        "self.ls",
        "self.m",
        "self.o",
        "self.o.a",
        "self.p",
        "1",
        "2.5",
        "'x'",
        "true",
        "null",
        "[1, 2]",
        "['a']",
        "{'k': 'v'}",
        "1u",
        "b'x'",
        "self.l[0]",
        "self.m['k']",
        "oldSelf.n",
        "duration('1s')",
        "timestamp('2020-01-01T00:00:00Z')",
        "[]",
    ];
    if depth == 0 || rng.below(4) == 0 {
        return rng.choose(ATOMS).to_string();
    }
    let a = random_expr(rng, depth - 1);
    let b = random_expr(rng, depth - 1);
    match rng.below(9) {
        0..=2 => {
            let op = rng.choose(&[
                "==", "!=", "<", "<=", ">", "+", "-", "*", "/", "%", "&&", "||", "in",
            ]);
            format!("({a} {op} {b})")
        }
        3 => format!(
            "{}({a})",
            rng.choose(&[
                "size", "string", "int", "double", "!", "-", "has", "dyn", "bytes", "uint"
            ])
        ),
        4 => {
            let f = rng.choose(&[
                "size",
                "lowerAscii",
                "trim",
                "sum",
                "min",
                "isSorted",
                "join",
                "hasValue",
                "value",
            ]);
            format!("{a}.{f}()")
        }
        5 => {
            let f = rng.choose(&[
                "startsWith",
                "contains",
                "matches",
                "split",
                "indexOf",
                "orValue",
                "endsWith",
                "find",
                "charAt",
            ]);
            format!("{a}.{f}({b})")
        }
        6 => {
            let m = rng.choose(&["all", "exists", "exists_one", "map", "filter"]);
            format!(
                "{a}.{m}(x, {})",
                random_expr(rng, depth - 1).replace("self.n", "x")
            )
        }
        7 => format!("({a} ? {b} : {})", random_expr(rng, depth - 1)),
        _ => format!("{a}[{b}]"),
    }
}

/// The types [`typed_expr`] writes expressions of.
#[derive(Clone, Copy)]
enum T {
    Bool,
    Int,
    Double,
    Str,
    Ints,
    Strs,
}

/// A random expression of type `t` over the `base` schema, mostly well-typed (one in
/// twenty subexpressions is of a wrong type), with unbounded fields (`u`, `ul`) so that
/// some estimated costs go over the limits.
fn typed_expr(rng: &mut Rng, t: T, depth: u32) -> String {
    if rng.below(20) == 0 {
        return random_expr(rng, 1);
    }
    let leaf = depth == 0 || rng.below(3) == 0;
    let sub = |rng: &mut Rng, t: T| typed_expr(rng, t, depth.saturating_sub(1));
    match t {
        T::Int if leaf => rng.choose(&["self.n", "1", "0", "self.l[0]"]).into(),
        T::Int => match rng.below(7) {
            0 => format!("size({})", sub(rng, T::Str)),
            1 => format!(
                "({} {} {})",
                sub(rng, T::Int),
                rng.choose(&["+", "-", "*"]),
                sub(rng, T::Int)
            ),
            2 => format!("{}.size()", sub(rng, T::Strs)),
            3 => format!("{}.indexOf({})", sub(rng, T::Str), sub(rng, T::Str)),
            4 => format!("{}.sum()", sub(rng, T::Ints)),
            5 => format!("int({})", sub(rng, T::Double)),
            _ => rng
                .choose(&[
                    "self.dur.getSeconds()",
                    "self.ts.getFullYear()",
                    "self.l.max()",
                ])
                .into(),
        },
        T::Double if leaf => rng.choose(&["self.d", "2.5"]).into(),
        T::Double => match rng.below(2) {
            0 => format!("double({})", sub(rng, T::Int)),
            _ => format!(
                "({} {} {})",
                sub(rng, T::Double),
                rng.choose(&["+", "*", "/"]),
                sub(rng, T::Double)
            ),
        },
        T::Str if leaf => rng
            .choose(&[
                "self.s",
                "'x'",
                "self.o.a",
                "self.m['k']",
                "self.u",
                "self.ls[0]",
            ])
            .into(),
        T::Str => match rng.below(7) {
            0 => format!("({} + {})", sub(rng, T::Str), sub(rng, T::Str)),
            1 => format!(
                "{}.{}()",
                sub(rng, T::Str),
                rng.choose(&["lowerAscii", "upperAscii", "trim"])
            ),
            2 => format!("string({})", sub(rng, T::Int)),
            3 => format!("{}.join(',')", sub(rng, T::Strs)),
            4 => format!("{}.replace('a', 'bc')", sub(rng, T::Str)),
            5 => format!("{}.substring(1)", sub(rng, T::Str)),
            _ => format!(
                "({} ? {} : {})",
                sub(rng, T::Bool),
                sub(rng, T::Str),
                sub(rng, T::Str)
            ),
        },
        T::Ints if leaf => rng.choose(&["self.l", "[1, 2]"]).into(),
        T::Ints => match rng.below(3) {
            0 => format!("({} + {})", sub(rng, T::Ints), sub(rng, T::Ints)),
            1 => format!("{}.map(x, x * {})", sub(rng, T::Ints), sub(rng, T::Int)),
            _ => format!("{}.filter(x, x > {})", sub(rng, T::Ints), sub(rng, T::Int)),
        },
        T::Strs if leaf => rng.choose(&["self.ls", "['a']", "self.ul"]).into(),
        T::Strs => match rng.below(3) {
            0 => format!("{}.split(',')", sub(rng, T::Str)),
            1 => format!("{}.filter(x, x != {})", sub(rng, T::Strs), sub(rng, T::Str)),
            _ => format!("{}.map(x, x + {})", sub(rng, T::Strs), sub(rng, T::Str)),
        },
        T::Bool if leaf => rng
            .choose(&["true", "has(self.o.a)", "self.n == oldSelf.n"])
            .into(),
        T::Bool => match rng.below(12) {
            0 => format!(
                "({} {} {})",
                sub(rng, T::Int),
                rng.choose(&["<", "<=", "==", "!=", ">"]),
                sub(rng, T::Int)
            ),
            1 => format!("({} > {})", sub(rng, T::Double), sub(rng, T::Int)),
            2 => format!("({} == {})", sub(rng, T::Str), sub(rng, T::Str)),
            3 => format!(
                "{}.{}({})",
                sub(rng, T::Str),
                rng.choose(&["startsWith", "endsWith", "contains"]),
                sub(rng, T::Str)
            ),
            4 => format!("{}.matches('^[a-z]+$')", sub(rng, T::Str)),
            5 => format!(
                "({} {} {})",
                sub(rng, T::Bool),
                rng.choose(&["&&", "||"]),
                sub(rng, T::Bool)
            ),
            6 => format!("!{}", sub(rng, T::Bool)),
            7 => format!("{}.all(x, x > {})", sub(rng, T::Ints), sub(rng, T::Int)),
            8 => format!("{}.exists(x, x == {})", sub(rng, T::Strs), sub(rng, T::Str)),
            9 => format!("({} in {})", sub(rng, T::Str), sub(rng, T::Strs)),
            10 => format!("{}.isSorted()", sub(rng, T::Ints)),
            _ => rng
                .choose(&[
                    "self.ts < timestamp('2020-01-01T00:00:00Z')",
                    "self.dur > duration('1s')",
                ])
                .into(),
        },
    }
}

/// Families of CRDs varying one bound, whose estimated cost crosses a limit somewhere in
/// `1..=max`: (what, family, max).
#[allow(clippy::type_complexity)]
fn families() -> Vec<(&'static str, Box<dyn Fn(i64) -> Value>, i64)> {
    vec![
        (
            "string length under a bounded list (rule)",
            Box::new(|n| {
                json!({"type": "object", "properties": {"l": {"type": "array", "maxItems": 100,
                    "items": {"type": "string", "maxLength": n}}},
                    "x-kubernetes-validations": [{"rule": "self.l.all(x, x.contains('abc'))"}]})
            }),
            3_000_000,
        ),
        (
            "cardinality: list size above the rule",
            Box::new(|n| {
                json!({"type": "object", "properties": {"l": {"type": "array", "maxItems": n,
                    "items": {"type": "object", "properties": {"s": {"type": "string", "maxLength": 64}},
                        "x-kubernetes-validations": [{"rule": "self.s.contains('xy')"}]}}}})
            }),
            3_000_000,
        ),
        (
            "cardinality: map size above the rule",
            Box::new(|n| {
                json!({"type": "object", "properties": {"m": {"type": "object", "maxProperties": n,
                    "additionalProperties": {"type": "string", "maxLength": 32,
                        "x-kubernetes-validations": [{"rule": "self.endsWith('x') || self.matches('^a+$')"}]}}}})
            }),
            3_000_000,
        ),
        (
            "messageExpression string length",
            Box::new(|n| {
                json!({"type": "object", "properties": {"s": {"type": "string", "maxLength": n}},
                    "x-kubernetes-validations": [{"rule": "self.s != ''", "messageExpression": "self.s + self.s"}]})
            }),
            50_000_000,
        ),
        (
            "quadratic in list size",
            Box::new(|n| {
                json!({"type": "object", "properties": {"l": {"type": "array", "maxItems": n,
                    "items": {"type": "string", "maxLength": 8}}},
                    "x-kubernetes-validations": [{"rule": "self.l.all(x, self.l.exists(y, x == y))"}]})
            }),
            100_000,
        ),
        (
            "total cost of the schema",
            Box::new(|n| {
                let rules: Vec<Value> = (0..12)
                    .map(|i| json!({"rule": format!("self.l.all(x, x.contains('{i}'))")}))
                    .collect();
                json!({"type": "object", "properties": {"l": {"type": "array", "maxItems": n,
                    "items": {"type": "string", "maxLength": 100}}},
                    "x-kubernetes-validations": rules})
            }),
            3_000_000,
        ),
        (
            "string functions on a bounded string",
            Box::new(|n| {
                json!({"type": "object", "properties": {"s": {"type": "string", "maxLength": n}},
                    "x-kubernetes-validations": [{"rule": "self.s.replace('a', 'bb').lowerAscii().size() < 10 && self.s.split(',').size() < 10 && self.s.find('[0-9]+') != ''"}]})
            }),
            50_000_000,
        ),
    ]
}

/// The corpus CRDs with rules, each with every maxLength, maxItems and maxProperties
/// removed: real-world rules whose estimated costs now go over the budgets (or not), each
/// with its factor.
fn unbounded_corpus() -> Vec<(String, Value)> {
    corpus_with(|v| strip(&mut v["spec"]["versions"]))
}

/// The corpus CRDs whose transition rules (those naming `oldSelf`) are made
/// `optionalOldSelf`: `oldSelf` becomes an optional, which most of them do not expect, a
/// type-checking sweep over real-world rules.
fn optional_old_self_corpus() -> Vec<(String, Value)> {
    fn mark(v: &mut Value) -> bool {
        let mut any = false;
        match v {
            Value::Object(m) => {
                if let Some(Value::Array(rules)) = m.get_mut("x-kubernetes-validations") {
                    for r in rules {
                        if r["rule"].as_str().is_some_and(|x| x.contains("oldSelf")) {
                            r["optionalOldSelf"] = json!(true);
                            any = true;
                        }
                    }
                }
                for (k, x) in m.iter_mut() {
                    if k != "default" && k != "enum" && k != "example" {
                        any |= mark(x);
                    }
                }
            }
            Value::Array(a) => {
                for x in a {
                    any |= mark(x);
                }
            }
            _ => {}
        }
        any
    }
    let mut out = corpus_with(|v| {
        let marked = mark(&mut v["spec"]["versions"]);
        v["marked"] = json!(marked);
    });
    out.retain_mut(|(_, v)| {
        v.as_object_mut().and_then(|m| m.remove("marked")) == Some(json!(true))
    });
    out
}

fn strip(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for k in ["maxLength", "maxItems", "maxProperties"] {
                m.remove(k);
            }
            for (k, x) in m.iter_mut() {
                if k != "default" && k != "enum" && k != "example" {
                    strip(x);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(strip),
        _ => {}
    }
}

/// The corpus CRDs with rules, changed by `mutate`.
fn corpus_with(mutate: impl Fn(&mut Value)) -> Vec<(String, Value)> {
    fn files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).expect("corpus") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                files(&p, out);
            } else if p.extension().is_some_and(|e| e == "yaml") {
                out.push(p);
            }
        }
    }
    let mut paths = vec![];
    files(
        &kube_codegen_tests::repo_root().join("tests/fixtures/crd-corpus"),
        &mut paths,
    );
    paths.sort();
    let mut out = vec![];
    for p in paths {
        let text = std::fs::read_to_string(&p).expect("read");
        if !text.contains("x-kubernetes-validations") {
            continue;
        }
        for doc in serde_yaml::Deserializer::from_str(&text) {
            let Ok(mut v) = <Value as serde::Deserialize>::deserialize(doc) else {
                continue;
            };
            if v["kind"] != "CustomResourceDefinition" {
                continue;
            }
            mutate(&mut v);
            // No webhook to call for a dry run.
            if let Some(spec) = v["spec"].as_object_mut() {
                spec.remove("conversion");
            }
            let name = v["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            out.push((name, v));
        }
    }
    out
}

/// Our verdict on every version of a CRD. The server checks a schema all versions share
/// once (it keeps it as the CRD's `spec.validation`), so do we.
fn ours_all_versions(crd: &Value) -> Verdict {
    let mut text = vec![];
    let mut schemas: Vec<&Value> = vec![];
    for v in crd["spec"]["versions"].as_array().into_iter().flatten() {
        let schema = &v["schema"]["openAPIV3Schema"];
        if !schemas.contains(&schema) {
            schemas.push(schema);
        }
    }
    let schemas = if schemas.len() == 1 {
        schemas
    } else {
        crd["spec"]["versions"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|v| &v["schema"]["openAPIV3Schema"])
            .collect()
    };
    for schema in schemas {
        for p in check_schema(schema) {
            text.push(p.message);
        }
    }
    let text = text.join("; ");
    Verdict {
        accepted: text.is_empty(),
        failed: text.matches("does not compile").count(),
        factors: factors(&text),
        text,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cel_compile_checks_agree_with_the_api_server() {
    let env = Environment::builder().start().await.expect("control plane");
    let client = env.client();

    let mut cases: Vec<(&str, bool, Value)> = fixed_cases()
        .into_iter()
        .map(|(what, ok, spec)| (what, ok, crd(spec)))
        .collect();
    cases.extend(root_cases());
    let verdicts: Vec<(&str, bool, Verdict, Verdict)> = futures::stream::iter(cases)
        .map(|(what, ok, c)| {
            let client = client.clone();
            async move { (what, ok, server(&client, &c).await, ours(&c)) }
        })
        .buffered(8)
        .collect()
        .await;
    let mut disagreements = vec![];
    for (what, ok, theirs, mine) in &verdicts {
        if theirs.accepted != *ok {
            disagreements.push(format!(
                "{what}: the case does not test what it says: the server {} it: {}",
                if theirs.accepted {
                    "accepts"
                } else {
                    "refuses"
                },
                theirs.text
            ));
        }
        if theirs.accepted != mine.accepted
            || theirs.factors != mine.factors
            || theirs.failed != mine.failed
        {
            disagreements.push(format!("{what}: server {theirs:?}\n  ours {mine:?}"));
        }
    }

    // Defaults that break their own node's validation, and ones that keep it.
    let default_verdicts: Vec<(&str, bool, Verdict, DefaultVerdict)> =
        futures::stream::iter(default_cases())
            .map(|(what, ok, spec)| {
                let client = client.clone();
                let c = crd(spec);
                async move { (what, ok, server(&client, &c).await, ours_with_defaults(&c)) }
            })
            .buffered(8)
            .collect()
            .await;
    for (what, ok, theirs, (mine, errors)) in &default_verdicts {
        if theirs.accepted != *ok {
            disagreements.push(format!(
                "default {what}: the case does not test what it says: {}",
                theirs.text
            ));
        }
        // Our errors, with the server's paths and words, are in its message.
        let missing: Vec<&String> = errors
            .iter()
            .filter(|e| !theirs.text.contains(e.as_str()))
            .collect();
        if theirs.accepted != mine.accepted || !missing.is_empty() {
            disagreements.push(format!(
                "default {what}: server {theirs:?}\n  ours {mine:?}, not in the server's message: {missing:?}"
            ));
        }
    }

    // Real-world rules, their bounds removed.
    let corpus: Vec<(String, Verdict, Verdict)> = futures::stream::iter(unbounded_corpus())
        .map(|(name, c)| {
            let client = client.clone();
            async move { (name, server(&client, &c).await, ours_all_versions(&c)) }
        })
        .buffered(8)
        .collect()
        .await;
    for (name, theirs, mine) in &corpus {
        if theirs.accepted != mine.accepted || theirs.factors != mine.factors {
            disagreements.push(format!(
                "{name} (bounds removed): server {theirs:?}\n  ours {mine:?}"
            ));
        }
    }
    let corpus_factors: usize = corpus.iter().map(|c| c.1.factors.len()).sum();
    let optional: Vec<(String, Verdict, Verdict)> =
        futures::stream::iter(optional_old_self_corpus())
            .map(|(name, c)| {
                let client = client.clone();
                async move { (name, server(&client, &c).await, ours_all_versions(&c)) }
            })
            .buffered(8)
            .collect()
            .await;
    for (name, theirs, mine) in &optional {
        // A rule that fails on a default stops the server before it compiles the other
        // rules (its "rule compile error" at `default`): then only the verdicts compare.
        let stopped_early = theirs.text.contains("rule compile error");
        if theirs.accepted != mine.accepted || (!stopped_early && theirs.failed != mine.failed) {
            disagreements.push(format!(
                "{name} (optionalOldSelf): server {theirs:?}\n  ours {mine:?}"
            ));
        }
    }
    let optional_failed: usize = optional.iter().map(|c| c.1.failed).sum();

    // Random rules: one per CRD, as the server stops at some errors.
    let mut rng = Rng(0x5DEE_CE66_D1CE_4E5B);
    let mut random: Vec<String> = (0..200).map(|_| random_expr(&mut rng, 3)).collect();
    random.extend((0..300).map(|i| {
        let t = if i % 10 == 0 { T::Str } else { T::Bool };
        typed_expr(&mut rng, t, 4)
    }));
    let random_verdicts: Vec<(String, Verdict, Verdict)> = futures::stream::iter(random)
        .map(|rule| {
            let client = client.clone();
            let c = crd(base_schema(json!([{"rule": rule}])));
            async move { (rule, server(&client, &c).await, ours(&c)) }
        })
        .buffered(8)
        .collect()
        .await;
    for (rule, theirs, mine) in &random_verdicts {
        if theirs.accepted != mine.accepted
            || theirs.factors != mine.factors
            || theirs.failed != mine.failed
        {
            disagreements.push(format!(
                "random rule `{rule}`: server {theirs:?}\n  ours {mine:?}"
            ));
        }
    }
    let random_accepted = random_verdicts.iter().filter(|v| v.1.accepted).count();

    let mut thresholds = vec![];
    for (what, family, max) in families() {
        // The smallest bound the server refuses.
        let refused = |v: &Verdict| !v.accepted;
        let (mut lo, mut hi) = (1i64, max);
        let top = server(&client, &crd(family(hi))).await;
        let bottom = server(&client, &crd(family(lo))).await;
        if !refused(&top) || refused(&bottom) {
            disagreements.push(format!(
                "{what}: the family does not cross the limit in 1..={max}: at 1 {bottom:?}, at {max} {top:?}"
            ));
            continue;
        }
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if refused(&server(&client, &crd(family(mid))).await) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        let (below, at) = (crd(family(lo)), crd(family(hi)));
        let (theirs_below, theirs_at) = (server(&client, &below).await, server(&client, &at).await);
        let (mine_below, mine_at) = (ours(&below), ours(&at));
        thresholds.push(format!(
            "{what}: server flips at {hi}, factor {:?}",
            theirs_at.factors
        ));
        if mine_below != theirs_below
            || mine_at.accepted != theirs_at.accepted
            || mine_at.factors != theirs_at.factors
        {
            disagreements.push(format!(
                "{what}: the server flips at {hi}: at {lo} server {theirs_below:?} ours {mine_below:?}; at {hi} server {theirs_at:?} ours {mine_at:?}"
            ));
        }
        // Far over the limit, the factor text agrees too.
        let mine_top = ours(&crd(family(max)));
        if mine_top.accepted || mine_top.factors != top.factors {
            disagreements.push(format!("{what} at {max}: server {top:?} ours {mine_top:?}"));
        }
    }
    println!(
        "cel compile differential: {} CRDs with fixed verdicts ({} refused by the server); {} CRDs with defaults ({} refused); {} corpus CRDs without their bounds ({} refused, {corpus_factors} cost factors); {} corpus CRDs with optionalOldSelf transition rules ({optional_failed} rules fail to compile); {} random rules ({random_accepted} accepted); {} cost thresholds:\n  {}",
        verdicts.len(),
        verdicts.iter().filter(|v| !v.2.accepted).count(),
        default_verdicts.len(),
        default_verdicts.iter().filter(|v| !v.2.accepted).count(),
        corpus.len(),
        corpus.iter().filter(|c| !c.1.accepted).count(),
        optional.len(),
        random_verdicts.len(),
        thresholds.len(),
        thresholds.join("\n  ")
    );
    assert!(
        disagreements.is_empty(),
        "disagreements with the API server:\n{}",
        disagreements.join("\n")
    );
}
