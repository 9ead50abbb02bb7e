use super::*;

fn eval(src: &str, this: serde_json::Value) -> Result<Value, EvalError> {
    compile(src)
        .unwrap_or_else(|e| panic!("{src}: {e}"))
        .evaluate(&json_to_cel(&this), None, false)
}

fn is_true(src: &str, this: serde_json::Value) {
    assert_eq!(eval(src, this), Ok(Value::Bool(true)), "{src}");
}

#[test]
fn standard_expressions() {
    let obj = serde_json::json!({"a": 1, "s": "abc", "l": [3, 1, 2]});
    is_true(
        "self.a == 1 && self.s.startsWith('a') && size(self.l) == 3",
        obj.clone(),
    );
    is_true("has(self.a) && !has(self.b)", obj.clone());
    is_true(
        "self.l.all(x, x > 0) && self.l.exists(x, x == 2)",
        obj.clone(),
    );
    is_true("self.l.map(x, x * 2) == [6, 2, 4]", obj.clone());
    is_true("self.s.matches('^a.c$')", obj);
}

#[test]
fn missing_key_is_an_error_in_cel_go_words() {
    let e = eval("self.b == 1", serde_json::json!({"a": 1})).unwrap_err();
    assert_eq!(e.0, "no such key: b");
}

#[test]
fn lists_library() {
    let l = serde_json::json!([3, 1, 2]);
    is_true("!self.isSorted() && [1, 2, 2].isSorted()", l.clone());
    is_true(
        "self.sum() == 6 && self.min() == 1 && self.max() == 3",
        l.clone(),
    );
    is_true(
        "self.indexOf(1) == 1 && self.lastIndexOf(9) == -1",
        l.clone(),
    );
    is_true("max(1, 5) == 5 && min([4, 2]) == 2", l);
    assert!(eval("self.min()", serde_json::json!([])).is_err());
}

#[test]
fn strings_library() {
    let s = serde_json::json!("Hello, World");
    is_true(
        "self.lowerAscii() == 'hello, world' && self.upperAscii() == 'HELLO, WORLD'",
        s.clone(),
    );
    is_true(
        "self.indexOf('o') == 4 && self.lastIndexOf('o') == 8 && self.charAt(1) == 'e'",
        s.clone(),
    );
    is_true(
        "self.substring(7) == 'World' && self.substring(0, 5) == 'Hello'",
        s.clone(),
    );
    is_true(
        "self.split(', ') == ['Hello', 'World'] && ['a', 'b'].join('-') == 'a-b'",
        s.clone(),
    );
    is_true(
        "self.replace('l', 'L', 1) == 'HeLlo, World' && '  x '.trim() == 'x'",
        s.clone(),
    );
    is_true(
        "'%s has %d items'.format(['list', 3]) == 'list has 3 items'",
        s.clone(),
    );
    is_true("strings.quote('a\"b') == '\"a\\\\\"b\"'", s);
}

#[test]
fn regex_and_sets_libraries() {
    let s = serde_json::json!("abc 123 def 456");
    is_true(
        "self.find('[0-9]+') == '123' && self.findAll('[0-9]+') == ['123', '456']",
        s.clone(),
    );
    is_true(
        "self.findAll('[a-z]+', 1) == ['abc'] && self.find('x') == ''",
        s.clone(),
    );
    is_true(
        "sets.contains([1, 2, 3], [2, 3]) && !sets.contains([1], [2])",
        s.clone(),
    );
    is_true(
        "sets.equivalent([1, 2], [2, 1, 1]) && sets.intersects([1, 2], [2, 5])",
        s,
    );
}

#[test]
fn url_library() {
    let s = serde_json::json!("https://user@example.com:8443/a/b?x=1&x=2&y=3");
    is_true("isURL(self) && url(self).getScheme() == 'https'", s.clone());
    is_true(
        "url(self).getHost() == 'example.com:8443' && url(self).getHostname() == 'example.com'",
        s.clone(),
    );
    is_true(
        "url(self).getPort() == '8443' && url(self).getEscapedPath() == '/a/b'",
        s.clone(),
    );
    is_true("url(self).getQuery()['x'] == ['1', '2']", s.clone());
    is_true("!isURL('not a url') && isURL('/absolute/path')", s);
}

#[test]
fn quantity_library() {
    let q = serde_json::json!("1.5Gi");
    is_true(
        "isQuantity(self) && quantity(self).isGreaterThan(quantity('1Gi'))",
        q.clone(),
    );
    is_true(
        "quantity('1Gi').isLessThan(quantity(self)) && quantity('1k').asInteger() == 1000",
        q.clone(),
    );
    is_true(
        "quantity('1000m') == quantity('1') && quantity('500m').isInteger() == false",
        q.clone(),
    );
    is_true(
        "quantity('1').add(quantity('500m')).asApproximateFloat() == 1.5",
        q.clone(),
    );
    is_true(
        "quantity('2').sub(1).compareTo(quantity('1')) == 0 && quantity('-1').sign() == -1",
        q.clone(),
    );
    is_true("!isQuantity('1.5.5') && !isQuantity('1Gb')", q);
}

#[test]
fn ip_and_cidr_libraries() {
    let s = serde_json::json!("192.168.0.1");
    is_true(
        "isIP(self) && ip(self).family() == 4 && !ip(self).isLoopback()",
        s.clone(),
    );
    is_true(
        "ip('::1').isLoopback() && ip('::1').family() == 6 && ip('fe80::1').isLinkLocalUnicast()",
        s.clone(),
    );
    is_true(
        "ip('0.0.0.0').isUnspecified() && ip('8.8.8.8').isGlobalUnicast()",
        s.clone(),
    );
    is_true(
        "cidr('192.168.0.0/16').containsIP(self) && cidr('192.168.0.0/16').containsIP(ip(self))",
        s.clone(),
    );
    is_true(
        "cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16') && !cidr('10.1.0.0/16').containsCIDR('10.0.0.0/8')",
        s.clone(),
    );
    is_true(
        "string(cidr('10.1.2.3/8').masked()) == '10.0.0.0/8' && cidr('10.1.2.3/8').prefixLength() == 8",
        s.clone(),
    );
    is_true(
        "string(cidr('10.1.2.3/8').ip()) == '10.1.2.3' && !isCIDR('10.0.0.0/33') && !isIP('::ffff:1.2.3.4')",
        s,
    );
}

#[test]
fn format_library() {
    let s = serde_json::json!("my-name");
    is_true(
        "!format.dns1123Label().validate(self).hasValue()",
        s.clone(),
    );
    is_true(
        "format.dns1123Label().validate('My_Name').hasValue()",
        s.clone(),
    );
    is_true(
        "format.named('dns1123Subdomain').value().validate('a.b').hasValue() == false",
        s.clone(),
    );
    is_true(
        "!format.named('nope').hasValue() && format.labelValue().validate('').hasValue() == false",
        s,
    );
}

#[test]
fn semver_library() {
    let s = serde_json::json!("1.2.3");
    is_true(
        "isSemver(self) && semver(self).major() == 1 && semver(self).minor() == 2",
        s.clone(),
    );
    is_true(
        "semver(self).isLessThan(semver('1.10.0')) && semver('v1.2', true).patch() == 0",
        s.clone(),
    );
    is_true("!isSemver('v1.2') && isSemver('v1.2', true)", s);
}

#[test]
fn transition_rules_bind_old_self() {
    let p = compile("self == oldSelf").unwrap();
    assert!(p.uses_old_self());
    let v = json_to_cel(&serde_json::json!(1));
    let w = json_to_cel(&serde_json::json!(2));
    assert_eq!(p.evaluate(&v, Some(&v), false), Ok(Value::Bool(true)));
    assert_eq!(p.evaluate(&v, Some(&w), false), Ok(Value::Bool(false)));
    let opt = compile("!oldSelf.hasValue() || self >= oldSelf.value()").unwrap();
    assert_eq!(opt.evaluate(&v, None, true), Ok(Value::Bool(true)));
    assert_eq!(opt.evaluate(&v, Some(&w), true), Ok(Value::Bool(false)));
}

#[test]
fn unsupported_functions_are_refused_at_compile_time() {
    assert_eq!(
        compile("type(self) == int").unwrap_err(),
        CompileError::UnsupportedFunction("type".into())
    );
    assert!(matches!(
        compile("self.a ==").unwrap_err(),
        CompileError::Syntax(_)
    ));
}

#[test]
fn timestamps_and_durations_as_cel_go() {
    let o = serde_json::json!({"t": "2020-01-01T23:30:15.250-05:00", "d": "90m"});
    is_true(
        "timestamp(self.t) > timestamp('2020-01-01T00:00:00Z') && duration(self.d) == duration('1h30m')",
        o.clone(),
    );
    // Getters read UTC, as cel-go's do without a zone (cel-rust's would say 23 and 1).
    is_true(
        "timestamp(self.t).getHours() == 4 && timestamp(self.t).getDate() == 2 \
         && timestamp(self.t).getMonth() == 0 && timestamp(self.t).getFullYear() == 2020 \
         && timestamp(self.t).getDayOfWeek() == 4 && timestamp(self.t).getMilliseconds() == 250",
        o.clone(),
    );
    is_true(
        "duration(self.d).getMinutes() == 90 && duration(self.d).getHours() == 1",
        o.clone(),
    );
    is_true(
        "timestamp(self.t) - timestamp('2020-01-02T04:00:00Z') == duration('30m15s250ms')",
        o.clone(),
    );
}

#[cfg(feature = "time-zones")]
#[test]
fn timestamp_getters_read_the_zone_of_their_argument_as_cel_go() {
    // 2020-01-02T04:30:15.250Z.
    let o = serde_json::json!({"t": "2020-01-01T23:30:15.250-05:00"});
    for (rule, want) in [
        ("getHours('UTC')", 4),
        ("getHours('')", 4),
        ("getHours('Local')", 4),
        // IANA names, with their summer time: Paris is UTC+1 in January.
        ("getHours('Europe/Paris')", 5),
        ("getHours('America/New_York')", 23),
        ("getDate('America/New_York')", 1),
        ("getDayOfWeek('America/New_York')", 3),
        ("getFullYear('Pacific/Kiritimati')", 2020),
        ("getMinutes('Asia/Kolkata')", 0),
        ("getHours('Asia/Kolkata')", 10),
        // Fixed offsets, parsed as Go's strconv.Atoi does.
        ("getHours('+05:30')", 10),
        ("getMinutes('+05:30')", 0),
        ("getHours('05:00')", 9),
        ("getHours('-07:00')", 21),
        ("getDayOfYear('-07:00')", 0),
        ("getMonth('-07:00')", 0),
        ("getDayOfMonth('-07:00')", 0),
        // `-00:30`: the minutes count westward when the offset starts with `-`.
        ("getHours('-00:30')", 4),
        ("getMinutes('-00:30')", 0),
        ("getMinutes('-00:45')", 45),
        ("getHours('+30:00')", 10),
        ("getSeconds('+01:00')", 15),
        ("getMilliseconds('Europe/Paris')", 250),
        // Minutes are not range-checked (cel-go's stdlib): six hours, then 299 minutes.
        ("getHours('+05:60')", 10),
        ("getMinutes('+05:-1')", 29),
        ("getHours('-0:59')", 3),
    ] {
        is_true(&format!("timestamp(self.t).{rule} == {want}"), o.clone());
    }
    // The New Year in Auckland (UTC+13 in summer).
    is_true(
        "timestamp('2020-12-31T11:00:00Z').getFullYear('Pacific/Auckland') == 2021",
        o.clone(),
    );
    for bad in [
        "getHours('Mars/Olympus')",
        "getHours('europe/paris')",
        "getHours('../etc/passwd')",
        "getHours(':30')",
        "getHours('5h:30')",
        "getHours('01:02:03')",
        "getHours(1)",
    ] {
        assert!(
            eval(&format!("timestamp(self.t).{bad} == 0"), o.clone()).is_err(),
            "{bad}"
        );
    }
    // Durations have no zone overload.
    assert!(eval("duration('1h').getHours('UTC') == 1", o).is_err());
}

#[test]
fn formatted_strings_are_times_in_rules() {
    use super::value::time_value;
    let t = |f: &str, s: &str| time_value(f, s);
    assert_eq!(
        t("date-time", "2020-01-01 10:00:00+0100"),
        t("date-time", "2020-01-01T09:00:00Z")
            .map(|_| t("date-time", "2020-01-01T10:00:00+01:00").unwrap())
    );
    assert!(matches!(
        t("date-time", "2020-01-01t10:00:00z"),
        Some(Value::Timestamp(_))
    ));
    assert!(matches!(
        t("date-time", "2020-01-01T10:00:00"),
        Some(Value::Timestamp(_))
    ));
    assert!(matches!(t("date", "2020-01-01"), Some(Value::Timestamp(_))));
    assert_eq!(t("duration", "3 days"), t("duration", "72h"));
    assert_eq!(t("duration", "1w"), t("duration", "168h"));
    assert!(matches!(t("duration", "1h30m"), Some(Value::Duration(_))));
    assert_eq!(t("date-time", "yesterday"), None);
}

/// The runtime cost cel-go charges (its interpreter/runtimecost_test.go cases, with the API
/// server's `OptOptimize` and `PresenceTestHasCost(false)`), on `self`.
fn cost(src: &str, this: serde_json::Value) -> u64 {
    let e = compile(src)
        .unwrap_or_else(|e| panic!("{src}: {e}"))
        .evaluate_with_cost(&json_to_cel(&this), None, false, PER_CALL_LIMIT);
    assert!(e.result.is_ok(), "{src}: {:?}", e.result);
    e.cost
}

#[test]
fn runtime_costs_are_cel_go_s() {
    use serde_json::json;
    let s500 = "a".repeat(500);
    for (src, this, want) in [
        ("self", json!([1, 2]), 1),
        ("self['key']", json!({"key": "v"}), 2),
        ("self[0]", json!(["v"]), 2),
        ("self['ke' + 'y']", json!({"key": "v"}), 3),
        ("self[3-3]", json!(["v"]), 3),
        ("has(self.a.b)", json!({"a": {"b": 1}}), 2),
        ("self.all(x, true)", json!([]), 2),
        ("self.matches('[0-9]')", json!(s500), 103),
        ("'123'.matches('[0-9]')", json!(null), 2),
        ("!(false || false)", json!(null), 1),
        ("1 < 2", json!(null), 1),
        // A constant list is a set: no call cost.
        ("2 in [1, 2, 3]", json!(null), 0),
        ("true ? true : false", json!(null), 0),
        ("size('123') == 3", json!(null), 2),
        (
            "'12345678901234567890' != '123456789012345678901234567890'",
            json!(null),
            2,
        ),
        // Type conversions of constants are folded.
        ("string(1) == '1'", json!(null), 1),
        (
            "!self.a.contains(self.b)",
            json!({"a": s500, "b": s500}),
            2505,
        ),
        (
            "!self.a.startsWith(self.b)",
            json!({"a": "idc", "b": s500}),
            55,
        ),
        (
            "(self.x > 2 ? self.l1 : self.l2).all(y, true)",
            json!({"x": 1, "l1": [1], "l2": [1]}),
            8,
        ),
        ("false ? false : 1 < 3", json!(null), 1),
        ("self.all(k, self[k].v < 3)", json!({"val": {"v": 1}}), 9),
        (
            "(self.a + self.b).all(x, true)",
            json!({"a": [], "b": []}),
            6,
        ),
        ("(1 > 2 ? 5 : 3) > 1", json!(null), 2),
        ("(1 > 2 || 2 > 1) == true", json!(null), 3),
        ("[{'k1': 1}, {'k2': 2}].all(x, true)", json!(null), 7),
        (
            "[1,2,3,4,5].filter(x, x % 2 == 0) == [2, 4]",
            json!(null),
            43,
        ),
        ("self.map(x, x * 2) == [2, 4, 6]", json!([1, 2, 3]), 45),
        ("self.exists(x, x == 2)", json!([1, 2, 3]), 17),
        ("self.exists_one(x, x > 1) == false", json!([1, 2, 3]), 14),
        // Kubernetes libraries.
        ("self.isSorted()", json!([1, 2, 3]), 4),
        ("self.s.lowerAscii() != ''", json!({"s": "a".repeat(25)}), 5),
        (
            "self.s.split(',').size() > 0",
            json!({"s": "a".repeat(30)}),
            10,
        ),
        (
            "sets.contains(self.a, self.b)",
            json!({"a": vec![1; 10], "b": vec![1; 5]}),
            55,
        ),
        ("ip(self.ip).family() == 4", json!({"ip": "10.0.0.1"}), 5),
        (
            "cidr(self.c).containsIP(self.ip)",
            json!({"c": "10.0.0.0/8", "ip": "10.0.0.1"}),
            7,
        ),
    ] {
        assert_eq!(cost(src, this), want, "{src}");
    }
}

#[test]
fn the_per_call_limit_cancels_evaluation() {
    let p = compile("self.all(x, self.all(y, x >= 0))").unwrap();
    let this = json_to_cel(&serde_json::json!(vec![1; 500]));
    let e = p.evaluate_with_cost(&this, None, false, PER_CALL_LIMIT);
    assert_eq!(e.result, Err(EvalError(COST_LIMIT_EXCEEDED.into())));
    assert!(e.result.unwrap_err().is_cost_limit());
    assert!(
        e.cost > PER_CALL_LIMIT && e.cost < PER_CALL_LIMIT + 10,
        "{}",
        e.cost
    );
    // Below the limit the same rule runs to its value.
    let small = json_to_cel(&serde_json::json!(vec![1; 10]));
    assert_eq!(p.evaluate(&small, None, false), Ok(Value::Bool(true)));
}

#[test]
fn message_literals_are_an_error_not_a_panic() {
    let p = compile("Foo{a: 1} == self").unwrap();
    assert!(p.evaluate(&Value::Int(1), None, false).is_err());
}

/// Runs of one unary operator as cel-go reads them (cel-rust's parser applies a run once).
#[test]
fn unary_runs_apply_by_parity() {
    for (e, want) in [
        ("!!true", Value::Bool(true)),
        ("!!!true", Value::Bool(false)),
        ("--1", Value::Int(1)),
        ("1 - --1", Value::Int(0)),
        ("[1].all(x, !!(x == 1))", Value::Bool(true)),
        ("'!!' + '--' == '!!--'", Value::Bool(true)),
    ] {
        let p = super::compile(e).unwrap();
        assert_eq!(p.evaluate(&Value::Null, None, false), Ok(want), "{e}");
    }
}

/// Without the zone database a zone name is an evaluation error the generator recognizes
/// (`NO_ZONE_DATABASE`); fixed offsets still work.
#[cfg(not(feature = "time-zones"))]
#[test]
fn zone_names_need_the_time_zones_feature() {
    let this = Value::Null;
    let p =
        super::compile("timestamp('2024-01-01T00:00:00Z').getHours('Europe/Paris') == 1").unwrap();
    let e = p.evaluate(&this, None, false).unwrap_err();
    assert!(e.0.contains(super::NO_ZONE_DATABASE), "{e}");
    let p = super::compile("timestamp('2024-01-01T00:00:00Z').getHours('+01:00') == 1").unwrap();
    assert_eq!(p.evaluate(&this, None, false), Ok(Value::Bool(true)));
}

#[test]
fn escapes_as_the_api_server() {
    assert_eq!(escape("foo-bar").as_deref(), Some("foo__dash__bar"));
    assert_eq!(escape("a__b").as_deref(), Some("a__underscores__b"));
    assert_eq!(escape("a___b").as_deref(), Some("a__underscores___b"));
    assert_eq!(escape("namespace").as_deref(), Some("__namespace__"));
    assert_eq!(escape("x.y/z").as_deref(), Some("x__dot__y__slash__z"));
    assert_eq!(escape("_1").as_deref(), Some("_1"));
    assert_eq!(escape("1a"), None);
    assert_eq!(escape("1a-b"), None);
    assert_eq!(escape("a b"), None);
    assert_eq!(escape("é"), None);
    assert_eq!(escape(""), None);
}

#[test]
fn durations_are_go_s_to_the_nanosecond() {
    is_true(
        "duration('2.000000003s') == duration('2000000003ns') && duration('1h30m') == duration('90m')",
        serde_json::json!({}),
    );
    assert!(eval("duration('1x') == duration('1s')", serde_json::json!({})).is_err());
}

/// The standard library's values and errors as cel-go gives them (cel-go's
/// `interpreter` and `common/types` tests; the e2e differentials check them against the
/// API server).
#[test]
fn standard_library_as_cel_go() {
    let o = serde_json::json!({"i": 3, "s": "héllo", "l": [1, 2], "m": {"k": "v"}});
    for e in [
        // Heterogeneous numeric equality and ordering.
        "1 == 1u && 1 == 1.0 && 1u == 1.0 && 2 > 1u && -1 < 0u && 1.5 > 1 && [1] == [1.0]",
        "!(1 == 'a') && 1 != 'a' && null == null && {'a': 1} == {'a': 1.0}",
        "{1: 'x'}[1u] == 'x' && {1: 'x'}[1.0] == 'x' && 1u in {1: 'x'} && 2.0 in [1, 2]",
        // Arithmetic.
        "7 / 2 == 3 && -7 / 2 == -3 && 7 % 3 == 1 && -7 % 3 == -1 && 7u / 2u == 3u",
        "1.0 / 0.0 > 1e308 && 0.1 + 0.2 != 0.3 && 2.5 * 2.0 == 5.0",
        // NaN has no order: every comparison with it is false, not an error.
        "!(0.0 / 0.0 < 1.0) && !(0.0 / 0.0 >= 1.0) && !(1 > 0.0 / 0.0) && !(0.0 / 0.0 <= 0.0 / 0.0)",
        "'a' + 'b' == 'ab' && b'a' + b'b' == b'ab' && [1] + [2] == [1, 2]",
        // Conversions.
        "int(3.9) == 3 && int(-3.9) == -3 && int('42') == 42 && uint(7) == 7u",
        "double('1.5') == 1.5 && double(2) == 2.0 && string(1.5) == '1.5'",
        "string(1000000.0) == '1e+06' && string(123456.0) == '123456' && string(0.0001) == '0.0001'",
        "string(0.00001) == '1e-05' && string(-2.0) == '-2' && string(true) == 'true'",
        "string(b'abc') == 'abc' && bytes('abc') == b'abc' && string(7u) == '7'",
        "string(duration('1h30m')) == '5400s' && string(duration('1.5s')) == '1.5s'",
        "string(timestamp('2020-01-02T03:04:05.120Z')) == '2020-01-02T03:04:05.12Z'",
        "int(timestamp('1970-01-01T00:01:00Z')) == 60",
        // Strings count code points.
        "size(self.s) == 5 && self.s.size() == 5 && self.s.startsWith('hé')",
        "self.s.contains('ll') && self.s.endsWith('lo') && self.s.matches('^h.llo$')",
        // Timestamps and durations.
        "timestamp('2020-01-01T00:00:00Z') + duration('1h') == timestamp('2020-01-01T01:00:00Z')",
        "timestamp('2020-01-01T01:00:00Z') - timestamp('2020-01-01T00:00:00Z') == duration('1h')",
        "timestamp('2020-01-01T00:00:00+01:00') < timestamp('2020-01-01T00:00:00Z')",
        // Optionals.
        "self.?i.orValue(0) == 3 && self.?x.orValue(0) == 0 && !self.?x.hasValue()",
        "self.m.?k.value() == 'v' && self.l[?5].orValue(9) == 9 && self.l[?0].value() == 1",
        "optional.of(1).or(optional.of(2)).value() == 1 && optional.none().or(optional.of(2)).value() == 2",
        "[?optional.none(), ?optional.of(1)] == [1] && {?'a': optional.none(), 'b': 2} == {'b': 2}",
        "optional.ofNonZeroValue('').hasValue() == false && optional.ofNonZeroValue(1).hasValue()",
        // Error absorption in && and ||.
        "(self.x == 1 || true) && !(self.x == 1 && false) && (false && self.x == 1) == false",
        // Macros.
        "self.l.exists_one(x, x > 1) && self.l.filter(x, x > 1) == [2] && self.l.map(x, x > 1, x * 10) == [20]",
        "self.m.all(k, k == 'k') && {'a': 1, 'b': 2}.exists(k, k == 'b')",
        "[[1, 2], [3]].all(l, l.all(x, x > 0)) && [1, 2].map(x, [1, 2].map(y, x * y)) == [[1, 2], [2, 4]]",
    ] {
        let p = compile(e).unwrap_or_else(|err| panic!("{e}: {err}"));
        assert_eq!(
            p.evaluate(&json_to_cel(&o), None, false),
            Ok(Value::Bool(true)),
            "{e}"
        );
    }
    for (e, want) in [
        ("9223372036854775807 + 1 == 0", "integer overflow"),
        ("-9223372036854775808 - 1 == 0", "integer overflow"),
        ("0u - 1u == 0u", "unsigned integer overflow"),
        ("1 / 0 == 0", "division by zero"),
        ("1 % 0 == 0", "modulus by zero"),
        ("int(1e19) == 0", "integer overflow"),
        ("uint(-1) == 0u", "unsigned integer overflow"),
        ("self.l[2] == 0", "index out of bounds: 2"),
        ("self.m.x == 0", "no such key: x"),
        ("self.m['x'] == 0", "no such key: x"),
        ("1 + 1u == 2", "no such overload"),
        ("[1] < [2]", "no such overload"),
        ("self.l <= self.l", "no such overload"),
        ("self.m > self.m", "no such overload"),
        ("null >= null", "no such overload"),
        ("self.x == 1 && true", "no such key: x"),
        ("self.?x.value() == 1", "optional.none() dereference"),
        (
            "timestamp('nope') == timestamp('nope')",
            "type conversion error",
        ),
        ("{'a': 1, 'a': 2}.size() == 1", "repeated key"),
        ("y == 1", "undeclared reference to 'y'"),
    ] {
        let p = compile(e).unwrap_or_else(|err| panic!("{e}: {err}"));
        let got = p.evaluate(&json_to_cel(&o), None, false);
        match got {
            Err(err) => assert!(err.0.contains(want), "{e}: {err} (want {want})"),
            Ok(v) => panic!("{e}: {v:?}, want the error {want}"),
        }
    }
}

/// No rule panics or runs away, whatever it says: random token soups over the standard
/// and Kubernetes functions, compiled and evaluated against an object within a small cost
/// limit (an admission webhook evaluates rules from CRDs it did not write).
#[test]
fn evaluation_never_panics_on_token_soup() {
    let pieces = [
        "self",
        "self.a",
        "self.l",
        "self.m",
        "self.s",
        "self.t",
        "self.d",
        "oldSelf",
        "x",
        ".",
        "?",
        ":",
        "(",
        ")",
        "[",
        "]",
        "{",
        "}",
        ",",
        "!",
        "-",
        "+",
        "*",
        "/",
        "%",
        "<",
        "<=",
        "==",
        "!=",
        "in",
        "&&",
        "||",
        "0",
        "1",
        "-1",
        "9223372036854775807",
        "1u",
        "1.5",
        "0.0",
        "'s'",
        "''",
        "b'x'",
        "null",
        "true",
        "size",
        "int",
        "uint",
        "double",
        "string",
        "bytes",
        "duration",
        "timestamp",
        "'1h'",
        "'2020-01-01T00:00:00Z'",
        "all",
        "exists",
        "exists_one",
        "map",
        "filter",
        "has",
        "matches",
        "'[a-'",
        "'^a*$'",
        "contains",
        "startsWith",
        "split",
        "join",
        "substring",
        "charAt",
        "indexOf",
        "min",
        "max",
        "sum",
        "isSorted",
        "quantity",
        "'1Gi'",
        "ip",
        "cidr",
        "'10.0.0.0/8'",
        "url",
        "semver",
        "'1.2.3'",
        "format",
        "optional",
        "of",
        "none",
        "orValue",
        "value",
        "sets",
        "getHours",
        "'+01:00'",
        "format.named",
        "'dns1123Label'",
        "validate",
    ];
    let this = json_to_cel(&serde_json::json!({
        "a": 1, "l": [1, 2, 3], "m": {"k": "v"}, "s": "héllo", "t": "2020-01-01T00:00:00Z", "d": "1h"
    }));
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut compiled = 0;
    for _ in 0..100_000 {
        let n = 1 + (next() % 10) as usize;
        let src: String = (0..n)
            .map(|_| pieces[(next() % pieces.len() as u64) as usize])
            .collect::<Vec<_>>()
            .join(" ");
        if let Ok(p) = compile(&src) {
            compiled += 1;
            let e = p.evaluate_with_cost(&this, Some(&this), false, 10_000);
            assert!(e.cost <= 10_000 + 1_000_000, "{src}: cost {}", e.cost);
        }
    }
    assert!(
        compiled > 5_000,
        "too few soups compiled ({compiled}) to say much"
    );
}

/// As above, with well-formed expressions: random trees of operators, calls, macros,
/// selections, indexes and literals, which compile far more often than token soups.
#[test]
fn evaluation_never_panics_on_random_trees() {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    fn tree(next: &mut dyn FnMut() -> u64, depth: u32) -> String {
        const ATOMS: &[&str] = &[
            "self",
            "self.a",
            "self.l",
            "self.m",
            "self.s",
            "self.m.k",
            "x",
            "0",
            "1",
            "-1",
            "2u",
            "1.5",
            "-0.0",
            "'a'",
            "'1h'",
            "'2020-01-01T00:00:00Z'",
            "'10.0.0.1'",
            "'1Gi'",
            "'^[a-z]+$'",
            "b'x'",
            "null",
            "true",
            "false",
            "[]",
            "{}",
            "[1, 2]",
            "{'k': 'v'}",
            "9223372036854775807",
            "optional.none()",
        ];
        const BINARY: &[&str] = &[
            "+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "&&", "||", "in",
        ];
        const CALLS: &[&str] = &[
            "size",
            "int",
            "uint",
            "double",
            "string",
            "bytes",
            "duration",
            "timestamp",
            "dyn",
            "optional.of",
            "quantity",
            "ip",
            "cidr",
            "url",
            "semver",
            "isQuantity",
        ];
        const METHODS: &[&str] = &[
            "size()",
            "startsWith('a')",
            "contains('l')",
            "matches('^h')",
            "lowerAscii()",
            "split('l')",
            "join('-')",
            "charAt(1)",
            "indexOf(1)",
            "min()",
            "max()",
            "sum()",
            "isSorted()",
            "getHours()",
            "orValue(0)",
            "hasValue()",
            "value()",
            "isInteger()",
            "asInteger()",
            "family()",
            "prefixLength()",
            "getHost()",
            "major()",
            "substring(1)",
            "reverse()",
            "trim()",
            "format([1])",
        ];
        let pick = |next: &mut dyn FnMut() -> u64, xs: &[&str]| {
            xs[(next() % xs.len() as u64) as usize].to_owned()
        };
        if depth == 0 {
            return pick(next, ATOMS);
        }
        let sub = |next: &mut dyn FnMut() -> u64| tree(next, depth - 1);
        let macros = ["all", "exists", "exists_one", "map", "filter"];
        match next() % 9 {
            0 => format!("({} {} {})", sub(next), pick(next, BINARY), sub(next)),
            1 => format!("{}({})", pick(next, CALLS), sub(next)),
            2 => format!("({}).{}", sub(next), pick(next, METHODS)),
            3 => format!("({}).{}(x, {})", sub(next), pick(next, &macros), sub(next)),
            4 => format!("({})[{}]", sub(next), sub(next)),
            5 => format!("({}) ? ({}) : ({})", sub(next), sub(next), sub(next)),
            6 => format!("!({})", sub(next)),
            7 => format!("({}).?k", sub(next)),
            _ => pick(next, ATOMS),
        }
    }
    let this =
        json_to_cel(&serde_json::json!({"a": 1, "l": [3, 1, 2], "m": {"k": "v"}, "s": "héllo"}));
    let (mut compiled, mut values) = (0, 0);
    for _ in 0..20_000 {
        let depth = 1 + (next() % 4) as u32;
        let src = tree(&mut next, depth);
        if let Ok(p) = compile(&src) {
            compiled += 1;
            let e = p.evaluate_with_cost(&this, None, false, 100_000);
            values += usize::from(e.result.is_ok());
        }
    }
    assert!(
        compiled > 15_000,
        "only {compiled} of 20,000 trees compiled"
    );
    // Most trees are type errors at run time; enough of them must evaluate to a value.
    assert!(
        values > 2_000,
        "only {values} of {compiled} trees had a value"
    );
}
