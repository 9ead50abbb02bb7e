use serde_json::json;

use super::*;

fn problems(schema: Value) -> Vec<String> {
    check_schema(&schema)
        .into_iter()
        .map(|p| p.message)
        .collect()
}

fn obj(props: Value, rules: Value) -> Value {
    json!({"type": "object", "properties": {"spec": {"type": "object", "properties": props, "x-kubernetes-validations": rules}}})
}

#[test]
fn the_widget_fixture_is_refused_as_the_server_refuses_it() {
    let s = obj(
        json!({"ratio": {"type": "number"}, "name": {"type": "string", "maxLength": 10}}),
        json!([
            {"rule": "self == oldSelf", "optionalOldSelf": true},
            {"rule": "self.ratio > 0.0", "messageExpression": "'ratio ' + string(self.ratio) + ' is not positive'"},
        ]),
    );
    let p = problems(s);
    // The server counts the message's cost into the total as well.
    assert_eq!(p.len(), 3, "{p:?}");
    assert!(p[2].starts_with("x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x"));
    assert!(
        p[0].contains("found no matching overload for '_==_'"),
        "{p:?}"
    );
    assert!(p[1].ends_with(&format!("estimated messageExpression cost exceeds budget by factor of more than 100x ({COST_HINT})")), "{p:?}");
}

#[test]
fn clean_rules_pass() {
    let s = obj(
        json!({"ratio": {"type": "number"}, "name": {"type": "string", "maxLength": 10},
               "tags": {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 20}}}),
        json!([
            {"rule": "self == oldSelf"},
            {"rule": "oldSelf.hasValue() ? oldSelf.value().name == self.name : true", "optionalOldSelf": true},
            {"rule": "self.tags.all(t, t.startsWith('a'))", "messageExpression": "'bad name ' + self.name"},
            {"rule": "has(self.name)"},
        ]),
    );
    assert_eq!(problems(s), Vec::<String>::new());
}

#[test]
fn result_types_are_checked() {
    let s = obj(
        json!({"n": {"type": "integer"}}),
        json!([{"rule": "self.n + 1"}, {"rule": "self.n > 0", "messageExpression": "self.n"}]),
    );
    let p = problems(s);
    assert!(
        p[0].contains("cel expression must evaluate to a bool"),
        "{p:?}"
    );
    assert!(
        p[1].contains("messageExpression must evaluate to a string"),
        "{p:?}"
    );
}

#[test]
fn old_self_needs_correlation() {
    let s = json!({"type": "object", "properties": {"l": {"type": "array", "maxItems": 10, "items": {"type": "object", "properties": {"a": {"type": "string", "maxLength": 10}},
        "x-kubernetes-validations": [{"rule": "self.a == oldSelf.a"}]}}}});
    let p = problems(s);
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(
        p[0].contains(
            "oldSelf cannot be used on the uncorrelatable portion of the schema within `.l`"
        ),
        "{p:?}"
    );
    let s = json!({"type": "object", "properties": {"a": {"type": "string", "x-kubernetes-validations": [{"rule": "self == 'x'", "optionalOldSelf": true}]}}});
    assert!(problems(s)[0].contains("may not be set if oldSelf is not used in rule"));
}

#[test]
fn cost_factors_match_the_server() {
    // Unbounded list of unbounded strings, each compared: cost grows with the request size.
    let s = obj(
        json!({"l": {"type": "array", "items": {"type": "string"}}}),
        json!([{"rule": "self.l.all(x, x.contains('a'))"}]),
    );
    let p = problems(s);
    assert!(
        p[0].contains("estimated rule cost exceeds budget by factor of"),
        "{p:?}"
    );
    assert_eq!(
        cost_message("x", 10_500_000, 10_000_000),
        format!("x exceeds budget by factor of 1.050000x ({COST_HINT})")
    );
    assert_eq!(
        cost_message("x", 25_000_000, 10_000_000),
        format!("x exceeds budget by factor of 2.5x ({COST_HINT})")
    );
}

#[test]
fn unknown_functions_never_refuse() {
    let s = obj(
        json!({"l": {"type": "array", "items": {"type": "string"}}}),
        json!([{"rule": "self.l.someFunction()"}, {"rule": "self.l.sortBy(x, x).size() > 0"}]),
    );
    assert_eq!(problems(s), Vec::<String>::new());
}

#[test]
fn field_paths_are_checked() {
    let s = |fp: &str| {
        obj(
            json!({"a": {"type": "object", "properties": {"b": {"type": "integer"}}},
                   "m": {"type": "object", "additionalProperties": {"type": "string"}},
                   "l": {"type": "array", "items": {"type": "string"}}}),
            json!([{"rule": "true", "fieldPath": fp}]),
        )
    };
    for ok in [".a", ".a.b", "['a'].b", ".m.anything", ".m['x.y']", ".l"] {
        assert_eq!(problems(s(ok)), Vec::<String>::new(), "{ok}");
    }
    for bad in [".nope", ".a.c", ".l[0]", "a", ".a.b.c", ".a["] {
        let p = problems(s(bad));
        assert!(
            p.len() == 1 && p[0].contains("must be a valid path"),
            "{bad}: {p:?}"
        );
    }
}

#[test]
fn odd_schemas_do_not_panic() {
    for s in [
        json!(null),
        json!(true),
        json!([]),
        json!({"type": "object", "properties": {"a": null}}),
        json!({"x-kubernetes-validations": [{"rule": "self"}]}),
    ] {
        let _ = check_schema(&s);
    }
}

#[test]
fn repeated_unary_operators_read_as_the_server_reads_them() {
    // A run of `!` (or `-`) applies once when odd and not at all when even, as cel-go's
    // parser reads it (cel-rust's applied it once for any run, so these had no verdict).
    let rule = |r: &str| obj(json!({"n": {"type": "integer"}}), json!([{ "rule": r }]));
    assert_eq!(
        problems(rule("!!self.n == oldSelf.n")),
        Vec::<String>::new()
    );
    assert_eq!(
        problems(rule("- -self.n < oldSelf.n")),
        Vec::<String>::new()
    );
    for odd in ["!self.n == oldSelf.n", "!!!self.n == oldSelf.n"] {
        let p = problems(rule(odd));
        assert!(
            p.iter()
                .any(|m| m.contains("found no matching overload for '!_'")),
            "{odd}: {p:?}"
        );
    }
}
