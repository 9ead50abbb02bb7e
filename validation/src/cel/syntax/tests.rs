//! The parser against cel-rust's (the oracle while cel-rust is a dependency) and against
//! cel-go's answers where the two differ.

use super::ast::{EntryExpr, Expr, IdedExpr, LiteralValue};
use super::{MAX_DEPTH, parse};

use cel::common::ast as c;

fn theirs(src: &str, optional: bool) -> Result<c::IdedExpr, String> {
    cel::parser::Parser::new()
        .enable_optional_syntax(optional)
        .parse(src)
        .map_err(|e| e.to_string())
}

/// Our tree in cel-rust's types, to compare with its parser's.
fn to_cel(e: &IdedExpr) -> c::IdedExpr {
    let entry = |en: &super::ast::IdedEntryExpr| c::IdedEntryExpr {
        id: en.id,
        expr: match &en.expr {
            EntryExpr::MapEntry(m) => c::EntryExpr::MapEntry(c::MapEntryExpr {
                key: to_cel(&m.key),
                value: to_cel(&m.value),
                optional: m.optional,
            }),
            EntryExpr::StructField(f) => c::EntryExpr::StructField(c::StructFieldExpr {
                field: f.field.clone(),
                value: to_cel(&f.value),
                optional: f.optional,
            }),
        },
    };
    let expr = match &e.expr {
        Expr::Unspecified => c::Expr::Unspecified,
        Expr::Call(call) => c::Expr::Call(c::CallExpr {
            func_name: call.func_name.clone(),
            target: call.target.as_ref().map(|t| Box::new(to_cel(t))),
            args: call.args.iter().map(to_cel).collect(),
        }),
        Expr::Comprehension(k) => c::Expr::Comprehension(Box::new(c::ComprehensionExpr {
            iter_range: to_cel(&k.iter_range),
            iter_var: k.iter_var.clone(),
            iter_var2: k.iter_var2.clone(),
            accu_var: k.accu_var.clone(),
            accu_init: to_cel(&k.accu_init),
            loop_cond: to_cel(&k.loop_cond),
            loop_step: to_cel(&k.loop_step),
            result: to_cel(&k.result),
        })),
        Expr::Ident(n) => c::Expr::Ident(n.clone()),
        Expr::List(l) => c::Expr::List(c::ListExpr::new_with_optionals(
            l.elements.iter().map(to_cel).collect(),
            l.optional_indices.clone(),
        )),
        Expr::Literal(l) => c::Expr::Literal(match l {
            LiteralValue::Boolean(b) => c::LiteralValue::Boolean((*b).into()),
            LiteralValue::Bytes(b) => c::LiteralValue::Bytes(b.to_vec().into()),
            LiteralValue::Double(d) => c::LiteralValue::Double((*d).into()),
            LiteralValue::Int(i) => c::LiteralValue::Int((*i).into()),
            LiteralValue::Null => c::LiteralValue::Null,
            LiteralValue::String(s) => c::LiteralValue::String(s.to_string().into()),
            LiteralValue::UInt(u) => c::LiteralValue::UInt((*u).into()),
        }),
        Expr::Map(m) => c::Expr::Map(c::MapExpr {
            entries: m.entries.iter().map(entry).collect(),
        }),
        Expr::Select(s) => c::Expr::Select(c::SelectExpr {
            operand: Box::new(to_cel(&s.operand)),
            field: s.field.clone(),
            test: s.test,
        }),
        Expr::Struct(st) => c::Expr::Struct(c::StructExpr {
            type_name: st.type_name.clone(),
            entries: st.entries.iter().map(entry).collect(),
        }),
    };
    c::IdedExpr { id: e.id, expr }
}

/// Where cel-rust departs from cel-go (module docs): not compared with cel-rust.
fn diverges(src: &str) -> bool {
    let s = src.replace([' ', '\n', '\t'], "");
    s.contains("!!")
        || s.contains("--")
        || s.contains('`')
        || s.starts_with('.')
        || s.contains("(.")
        || s.contains("-0x")
        || src
            .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
            .any(|w| {
                crate::cel::RESERVED.contains(&w) && !matches!(w, "true" | "false" | "null" | "in")
            })
}

fn compare(src: &str, optional: bool) -> Result<(), String> {
    let ours = parse(src, optional).map(|e| to_cel(&e));
    let theirs = theirs(src, optional);
    match (ours, theirs) {
        (Ok(a), Ok(b)) if a == b => Ok(()),
        (Ok(a), Ok(b)) => Err(format!("trees differ:\nours   {a:?}\ntheirs {b:?}")),
        (Err(_), Err(_)) => Ok(()),
        (Ok(a), Err(e)) => Err(format!("cel-rust refuses ({e}), we parse {a:?}")),
        (Err(e), Ok(b)) => Err(format!("we refuse ({e}), cel-rust parses {b:?}")),
    }
}

#[test]
fn same_trees_and_ids_as_cel_rust_on_the_corpus() {
    let corpus = include_str!("testdata/corpus.jsonl");
    let mut failures = vec![];
    let mut n = 0;
    for line in corpus.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let src = v["expr"].as_str().unwrap();
        if diverges(src) {
            continue;
        }
        for optional in [false, true] {
            n += 1;
            if let Err(e) = compare(src, optional) {
                failures.push(format!(
                    "{src:?} (optional {optional}, from {}): {e}",
                    v["from"]
                ));
            }
        }
    }
    assert!(n > 700, "the corpus shrank: {n} parses");
    assert!(
        failures.is_empty(),
        "{} of {n}:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// Hand-written cases: every rule of the grammar, literals, precedence, macros, optional
/// syntax, and refusals.
const CASES: &[&str] = &[
    "a",
    "a.b.c",
    "a.b(c, d)",
    "f()",
    "f(a, b, c)",
    "a[0]",
    "a['k'].b[1][2]",
    "a ? b : c",
    "a ? b : c ? d : e",
    "(a ? b : c) ? d : e",
    "a || b",
    "a || b || c || d || e",
    "a && b && c",
    "a && b || c && d",
    "a || b && c",
    "a < b",
    "a <= b == c",
    "a in b",
    "a != b && c >= d",
    "1 + 2 * 3 - 4 / 5 % 6",
    "(1 + 2) * 3",
    "a - -b",
    "-a",
    "-1",
    "- 1",
    "-1.5",
    "-1u",
    "-a.b",
    "!a",
    "!a.b()",
    "1 - 1",
    "a-1",
    "[1, 2, 3]",
    "[1, 2, 3,]",
    "[]",
    "{}",
    "{'a': 1, 'b': 2}",
    "{'a': 1,}",
    "{a: b}",
    "A{}",
    "a.b.C{f: 1, g: 2}",
    "a.b.C{f: 1,}",
    "0",
    "123",
    "0x1F",
    "0x1Fu",
    "42u",
    "42U",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "18446744073709551615u",
    "18446744073709551616u",
    "1.5",
    "1e3",
    "1E-3",
    "1.5e+3",
    ".5",
    "1e400",
    "true",
    "false",
    "null",
    "'s'",
    "\"s\"",
    "'''a\nb'''",
    "r'a\\nb'",
    "R\"a\\b\"",
    "'\\x41\\101\\u00e9\\U0001F600'",
    "'é' + \"ü\"",
    "b'abc'",
    "B\"x\"",
    "'\\q'",
    "'\\uD800'",
    "'unterminated",
    "'a\nb'",
    "has(a.b)",
    "has(a)",
    "has(a.b.c)",
    "a.all(x, x > 0)",
    "a.exists(x, x > 0)",
    "a.exists_one(x, x > 0)",
    "a.existsOne(x, x > 0)",
    "a.map(x, x * 2)",
    "a.map(x, x > 0, x * 2)",
    "a.filter(x, x > 0)",
    "a.all(x.y, true)",
    "a.all(x, y, z)",
    "all(a, b)",
    "a.b.all(x, x.c.exists(y, y == x))",
    "self.items.map(i, i.name).filter(n, n.startsWith('a')).size() > 0",
    "a.?b",
    "a[?0]",
    "[?a, b]",
    "{?'k': v}",
    "A{?f: v}",
    "a.?b.?c[?d]",
    "a // comment\n + b",
    "a\n&&\nb",
    "",
    " ",
    "a b",
    "a +",
    "a + * b",
    "(a",
    "a)",
    "a[",
    "a[1",
    "f(a,",
    "f(a,)",
    "[1 2]",
    "{'a' 1}",
    "a.",
    "a.1",
    "a ? b",
    "a ? b :",
    "@",
    "a | b",
    "a & b",
    "a = b",
    "#",
    "a.b(",
    "in",
    "a in",
    "true.b",
    "1.a",
    "1.size()",
    "a.true",
    "a.in",
    "{1: 2}.size()",
    "[1][0]",
    "'a'.size()",
    "x.map(y, y).size() == 1",
    "size(x) + size(y)",
    "a.b[c].d(e)[f]",
    "int(a) + uint(b) + double(c) + string(d) + bytes(e) + bool(f)",
    "dyn(a)",
    "type(a) == int",
    "a.?b.orValue(c)",
    "optional.of(1)",
    "optional.none()",
    "\u{1F600}",
    "a\u{00a0}b",
];

#[test]
fn same_trees_and_ids_as_cel_rust_on_hand_written_cases() {
    let mut failures = vec![];
    for src in CASES {
        for optional in [false, true] {
            if let Err(e) = compare(src, optional) {
                failures.push(format!("{src:?} (optional {optional}): {e}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

fn ok(src: &str) -> IdedExpr {
    parse(src, true).unwrap_or_else(|e| panic!("{src:?}: {e}"))
}

fn err(src: &str) -> String {
    match parse(src, true) {
        Ok(e) => panic!("{src:?} parsed: {e:?}"),
        Err(e) => format!("{}:{}: {}", e.line, e.column, e.message),
    }
}

#[test]
fn cel_go_where_cel_rust_differs() {
    // A run of `!` or `-`: applied when odd, dropped when even.
    assert_eq!(ok("!!a").expr, Expr::Ident("a".into()));
    assert!(matches!(ok("!!!a").expr, Expr::Call(c) if c.func_name == "!_"));
    assert_eq!(ok("--a").expr, Expr::Ident("a".into()));
    assert_eq!(
        ok("--1").expr,
        Expr::Literal(LiteralValue::Int(1.into())),
        "two minus signs before a number negate twice"
    );
    assert!(matches!(ok("---1").expr, Expr::Call(c) if c.func_name == "-_"));
    // The leading dot stays on the name.
    assert_eq!(ok(".a").expr, Expr::Ident(".a".into()));
    assert!(matches!(ok(".f(1)").expr, Expr::Call(c) if c.func_name == ".f"));
    // Reserved words.
    assert_eq!(err("if"), "1:1: reserved identifier: if");
    assert_eq!(err("a + let(1)"), "1:5: reserved identifier: let");
    // A reserved word is fine as a field.
    assert!(matches!(ok("a.var").expr, Expr::Select(s) if s.field == "var"));
    // Backquoted fields.
    assert!(matches!(ok("a.`b-c`").expr, Expr::Select(s) if s.field == "b-c"));
    assert!(matches!(ok("a.?`b.c`").expr, Expr::Call(c) if c.func_name == "_?._"));
    // Escapes: cel-rust keeps `\"` in a single-quoted string, refuses a triple-quoted one
    // holding both quotes, and a raw bytes literal with a backslash.
    let string = |src: &str| match ok(src).expr {
        Expr::Literal(LiteralValue::String(s)) => s.to_string(),
        other => panic!("{other:?}"),
    };
    let bytes = |src: &str| match ok(src).expr {
        Expr::Literal(LiteralValue::Bytes(b)) => b.to_vec(),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        string(r#"'\a\b\f\n\r\t\v\\\'\"\`\?'"#),
        "\u{7}\u{8}\u{c}\n\r\t\u{b}\\'\"`?"
    );
    assert_eq!(string(r#""""a'"b""""#), "a'\"b");
    assert_eq!(bytes(r"br'\x'"), b"\\x");
    assert_eq!(bytes(r"b'\xff\377é'"), [255, 255, 0xc3, 0xa9]);
    assert_eq!(string(r"'\xff\377'"), "\u{ff}\u{ff}");
    // cel-go refuses `\u` in bytes.
    assert!(err(r"b'\u00e9'").contains("invalid bytes literal"));
    // A negative hex literal.
    assert_eq!(
        ok("-0x10").expr,
        Expr::Literal(LiteralValue::Int((-16).into()))
    );
}

#[test]
fn errors_are_located() {
    assert_eq!(
        err("self.a <= self.b &&"),
        "1:20: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}"
    );
    assert_eq!(err("f('a'"), "1:6: missing ')' at '<EOF>'");
    assert_eq!(
        err("f('a' 'b')"),
        "1:7: extraneous input ''b'' expecting {')', ','}"
    );
    assert_eq!(err("[1, 2"), "1:6: missing ']' at '<EOF>'");
    assert_eq!(err("a\n  @"), "2:3: token recognition error at: '@'");
    assert_eq!(err("a b"), "1:3: extraneous input 'b' expecting <EOF>");
    assert_eq!(err("'é' + @"), "1:7: token recognition error at: '@'");
    assert_eq!(err("é"), "1:1: token recognition error at: 'é'");
    assert_eq!(
        err("'\\q'"),
        "1:1: invalid string literal: unknown escape \\q at offset 0"
    );
    assert_eq!(
        err("a.all(x.y, true)"),
        "1:7: argument must be a simple name"
    );
    assert_eq!(err("has(a)"), "1:5: invalid argument to has() macro");
    assert_eq!(err("9223372036854775808"), "1:1: invalid int literal");
    assert_eq!(err("'''a"), "1:1: token recognition error at: ''''a'");
    // The optional syntax only when asked for.
    assert_eq!(
        parse("a.?b", false).unwrap_err().message,
        "unsupported syntax '.?'"
    );
    assert_eq!(
        parse("[?a]", false).unwrap_err().message,
        "unsupported syntax '?'"
    );
}

/// On a thread of the generator's stack size (`kube_codegen::parallel::STACK_SIZE`): an
/// unoptimised build's frames hold every local of a function, and at 250 levels of nesting
/// the parser's recursion (8 rules a level) outgrows a test thread's 2 MiB; an optimised
/// one's does not.
#[test]
fn limits() {
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(limits_on_a_big_stack)
        .unwrap()
        .join()
        .unwrap();
}

fn limits_on_a_big_stack() {
    let nested = |n: usize| format!("{}a{}", "(".repeat(n), ")".repeat(n));
    ok(&nested(MAX_DEPTH - 1));
    assert!(err(&nested(MAX_DEPTH + 1)).contains("expression recursion limit exceeded: 250"));
    let lists = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    ok(&lists(MAX_DEPTH - 1));
    assert!(err(&lists(MAX_DEPTH + 1)).contains("recursion limit"));
    // Left-deep chains are nesting too.
    let sum = |n: usize| vec!["1"; n].join(" + ");
    ok(&sum(MAX_DEPTH));
    assert!(err(&sum(MAX_DEPTH + 2)).contains("recursion limit"));
    let chain = |n: usize| format!("a{}", ".b".repeat(n));
    ok(&chain(MAX_DEPTH - 1));
    assert!(err(&chain(MAX_DEPTH + 1)).contains("recursion limit"));
    // `&&` and `||` build balanced trees: a long conjunction is shallow.
    ok(&vec!["a"; 5_000].join(" && "));
    let big = "a".repeat(super::MAX_CODE_POINTS + 1);
    assert!(err(&big).contains("code point size exceeds limit"));
    ok(&"a".repeat(super::MAX_CODE_POINTS));
}

#[test]
fn ids_are_unique() {
    fn walk(e: &IdedExpr, seen: &mut std::collections::HashSet<u64>) {
        assert!(seen.insert(e.id), "id {} twice", e.id);
        match &e.expr {
            Expr::Call(c) => {
                if let Some(t) = &c.target {
                    walk(t, seen);
                }
                c.args.iter().for_each(|a| walk(a, seen));
            }
            Expr::Select(s) => walk(&s.operand, seen),
            Expr::List(l) => l.elements.iter().for_each(|a| walk(a, seen)),
            Expr::Map(m) => {
                for entry in &m.entries {
                    assert!(seen.insert(entry.id), "id {} twice", entry.id);
                    if let EntryExpr::MapEntry(e) = &entry.expr {
                        walk(&e.key, seen);
                        walk(&e.value, seen);
                    }
                }
            }
            Expr::Struct(st) => {
                for entry in &st.entries {
                    assert!(seen.insert(entry.id), "id {} twice", entry.id);
                    if let EntryExpr::StructField(f) = &entry.expr {
                        walk(&f.value, seen);
                    }
                }
            }
            Expr::Comprehension(c) => {
                for e in [
                    &c.iter_range,
                    &c.accu_init,
                    &c.loop_cond,
                    &c.loop_step,
                    &c.result,
                ] {
                    walk(e, seen);
                }
            }
            _ => {}
        }
    }
    for src in [
        "a.all(x, x.exists(y, y > 0)) && b.map(z, z, z + 1).size() > [1][0]",
        "{'k': [a.filter(x, x > 0), has(b.c)]}.size() + M{f: d.exists_one(y, y)}.g",
    ] {
        walk(&ok(src), &mut Default::default());
    }
}

/// No input panics: random token soups and byte strings.
#[test]
fn never_panics_on_token_soup() {
    let pieces = [
        "a", "b", ".", "?", ":", "(", ")", "[", "]", "{", "}", ",", "!", "-", "+", "*", "/", "%",
        "<", "<=", "==", "!=", "in", "&&", "||", "1", "1u", "1.5", "'s'", "b'x'", "has", "all",
        "map", "x", "`q`", " ", "\n", "'''", "\\", "0x", "e", "é",
    ];
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..20_000 {
        let n = (next() % 12) as usize;
        let src: String = (0..n)
            .map(|_| pieces[(next() % pieces.len() as u64) as usize])
            .collect();
        let _ = parse(&src, true);
        let _ = parse(&src, false);
    }
}
