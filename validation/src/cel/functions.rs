//! The function library of CRD rules, declared once for the checker, the evaluator and both
//! cost models: CEL's standard library and the Kubernetes libraries of the API server's
//! environment (cel-go checker/decls, k8s.io/apiserver pkg/cel/library, cel-go ext strings
//! v2 and sets).
//!
//! [`FUNCTIONS`] names every function (and macro) a rule may call, whether the evaluator
//! runs it and how the Kubernetes cost estimator prices its calls ([`Cost`], which the
//! runtime cost and the static estimate both read); [`ROWS`] declares the overloads the
//! checker types calls against. A function without overloads is not an error to the
//! checker: it types its call as unknown and makes no verdict on it.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use super::check::types::Type;

/// How the Kubernetes `CostEstimator` (k8s.io/apiserver pkg/cel/library/cost.go) prices a
/// call, in `EstimateCallCost` (the static estimate) and `CallCost` (the runtime cost)
/// alike; the size read is the receiver's, or the first argument's for a global function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cost {
    /// Not the Kubernetes estimator's: cel-go's own price, by overload.
    CelGo,
    /// cel-go's sets extension (runtime only; the estimate is cel-go's default).
    Sets,
    /// A traversal of a list (each element's size for strings and bytes).
    List,
    /// One traversal of a string, the result as long (`url`, `lowerAscii`...).
    Traversal,
    /// Two traversals of a string (`replace`, `split`, `ip.isCanonical`).
    DoubleTraversal,
    /// `join`: the result's size.
    Join,
    /// A regex over a string (`find`, `findAll`).
    Find,
    /// A traversal of a string to parse it (`cidr`, `isIP`, `quantity`, `semver`...).
    Parse,
    /// `ip`: a parse of a string, or 1 as `cidr.ip()`.
    Ip,
    /// 1: accessors and comparisons of the library's types (IPs and CIDRs, quantities,
    /// URLs, semvers, `format.named`).
    Constant,
    /// `containsIP`, `containsCIDR`: both addresses, and a string argument's parse.
    Contains,
    /// A named format's `validate`: its regex over the string.
    Validate,
    /// `_==_`: 1 between values of the library's types, else cel-go's.
    Equals,
}

/// One function of the library.
#[derive(Debug)]
pub(crate) struct Function {
    /// As called; qualified (`sets.contains`) for namespaced functions.
    pub name: &'static str,
    /// Whether the evaluator runs it (else it only declares its overloads for the checker,
    /// and [`super::compile`] refuses a rule that calls it).
    pub runs: bool,
    pub cost: Cost,
}

const fn runs(name: &'static str, cost: Cost) -> Function {
    Function {
        name,
        runs: true,
        cost,
    }
}

const fn declared(name: &'static str, cost: Cost) -> Function {
    Function {
        name,
        runs: false,
        cost,
    }
}

use Cost::*;

/// Every function, macro and operator a rule may call, once.
pub(crate) const FUNCTIONS: &[Function] = &[
    // CEL's standard functions and macros (`stdlib`, and the parser's macros).
    runs("size", CelGo),
    runs("contains", CelGo),
    runs("startsWith", CelGo),
    runs("endsWith", CelGo),
    runs("matches", CelGo),
    runs("string", CelGo),
    runs("bytes", CelGo),
    runs("double", CelGo),
    runs("int", CelGo),
    runs("uint", CelGo),
    declared("bool", CelGo),
    declared("type", CelGo),
    runs("has", CelGo),
    runs("all", CelGo),
    runs("exists", CelGo),
    runs("exists_one", CelGo),
    runs("map", CelGo),
    runs("filter", CelGo),
    runs("optional.none", CelGo),
    runs("optional.of", CelGo),
    runs("optional.ofNonZeroValue", CelGo),
    runs("value", CelGo),
    runs("hasValue", CelGo),
    runs("or", CelGo),
    runs("orValue", CelGo),
    runs("dyn", CelGo),
    // Timestamps and durations (the getters in UTC, as cel-go, or in the zone of their
    // argument, with chrono-tz's database).
    runs("timestamp", CelGo),
    runs("duration", CelGo),
    runs("getFullYear", CelGo),
    runs("getMonth", CelGo),
    runs("getDayOfYear", CelGo),
    runs("getDayOfMonth", CelGo),
    runs("getDate", CelGo),
    runs("getDayOfWeek", CelGo),
    runs("getHours", CelGo),
    runs("getMinutes", CelGo),
    runs("getSeconds", CelGo),
    runs("getMilliseconds", CelGo),
    // Kubernetes list library.
    runs("isSorted", List),
    runs("sum", List),
    runs("min", List),
    runs("max", List),
    runs("indexOf", List),
    runs("lastIndexOf", List),
    declared("includes", List),
    // cel-go strings extension (the version Kubernetes enables).
    runs("charAt", CelGo),
    runs("lowerAscii", Traversal),
    runs("upperAscii", Traversal),
    runs("replace", DoubleTraversal),
    runs("split", DoubleTraversal),
    runs("substring", Traversal),
    runs("trim", Traversal),
    runs("join", Join),
    runs("strings.quote", CelGo),
    runs("reverse", CelGo),
    runs("format", CelGo),
    // Kubernetes regex library.
    runs("find", Find),
    runs("findAll", Find),
    // Kubernetes sets library.
    runs("sets.contains", Sets),
    runs("sets.equivalent", Sets),
    runs("sets.intersects", Sets),
    // Kubernetes URL library.
    runs("url", Traversal),
    runs("isURL", CelGo),
    runs("getScheme", Constant),
    runs("getHost", Constant),
    runs("getHostname", Constant),
    runs("getPort", Constant),
    runs("getEscapedPath", Constant),
    runs("getQuery", Constant),
    // Kubernetes quantity library.
    runs("quantity", Parse),
    runs("isQuantity", Parse),
    runs("sign", Constant),
    runs("isInteger", Constant),
    runs("asInteger", Constant),
    runs("asApproximateFloat", Constant),
    runs("add", Constant),
    runs("sub", Constant),
    runs("isGreaterThan", Constant),
    runs("isLessThan", Constant),
    runs("compareTo", Constant),
    // Kubernetes IP and CIDR libraries.
    runs("ip", Ip),
    runs("isIP", Parse),
    runs("ip.isCanonical", DoubleTraversal),
    runs("family", Constant),
    runs("isUnspecified", Constant),
    runs("isLoopback", Constant),
    runs("isLinkLocalMulticast", Constant),
    runs("isLinkLocalUnicast", Constant),
    runs("isGlobalUnicast", Constant),
    runs("cidr", Parse),
    runs("isCIDR", Parse),
    runs("containsIP", Contains),
    runs("containsCIDR", Contains),
    runs("masked", Constant),
    runs("prefixLength", Constant),
    // Kubernetes format library.
    runs("format.named", Constant),
    runs("format.dns1123Label", CelGo),
    runs("format.dns1123Subdomain", CelGo),
    runs("format.dns1035Label", CelGo),
    runs("format.qualifiedName", CelGo),
    runs("format.dns1123LabelPrefix", CelGo),
    runs("format.dns1123SubdomainPrefix", CelGo),
    runs("format.dns1035LabelPrefix", CelGo),
    runs("format.labelValue", CelGo),
    runs("format.uri", CelGo),
    runs("format.uuid", CelGo),
    runs("format.byte", CelGo),
    runs("format.date", CelGo),
    runs("format.datetime", CelGo),
    runs("validate", Validate),
    // Kubernetes semver library.
    runs("semver", Parse),
    runs("isSemver", Parse),
    runs("major", Constant),
    runs("minor", Constant),
    runs("patch", Constant),
    // CEL operators the parser reports as functions.
    runs("_+_", CelGo),
    runs("_-_", CelGo),
    runs("_*_", CelGo),
    runs("_/_", CelGo),
    runs("_%_", CelGo),
    runs("_==_", Equals),
    runs("_!=_", CelGo),
    runs("_<_", CelGo),
    runs("_<=_", CelGo),
    runs("_>_", CelGo),
    runs("_>=_", CelGo),
    runs("_&&_", CelGo),
    runs("_||_", CelGo),
    runs("!_", CelGo),
    runs("-_", CelGo),
    runs("_?_:_", CelGo),
    runs("_[_]", CelGo),
    runs("@in", CelGo),
    runs("_[?_]", CelGo),
    runs("_?._", CelGo),
    runs("@not_strictly_false", CelGo),
];

/// The function of that name.
pub(crate) fn function(name: &str) -> Option<&'static Function> {
    static BY_NAME: OnceLock<HashMap<&'static str, &'static Function>> = OnceLock::new();
    BY_NAME
        .get_or_init(|| FUNCTIONS.iter().map(|f| (f.name, f)).collect())
        .get(name)
        .copied()
}

/// How calls of `name` are priced ([`Cost::CelGo`] for what the library does not name).
pub(crate) fn cost(name: &str) -> Cost {
    function(name).map_or(Cost::CelGo, |f| f.cost)
}

/// Whether the evaluator runs `name`. The parser reads a qualified call
/// (`sets.equivalent(...)`) as a call of its last segment on the namespace, so a name is also
/// accepted when it ends a qualified one.
pub(crate) fn is_supported(name: &str) -> bool {
    static NAMES: OnceLock<HashSet<&'static str>> = OnceLock::new();
    NAMES
        .get_or_init(|| {
            FUNCTIONS
                .iter()
                .filter(|f| f.runs)
                .flat_map(|f| {
                    let last = f.name.rsplit_once('.').map(|(_, last)| last);
                    std::iter::once(f.name).chain(last)
                })
                .collect()
        })
        .contains(name)
}

/// One overload: its id (the cost estimator reads some), whether it is called on a
/// receiver (the first parameter), its parameters and result.
#[derive(Debug)]
pub struct Overload {
    pub id: &'static str,
    pub member: bool,
    pub params: Vec<Type>,
    pub result: Type,
}

/// An overload the checker declares: `(id, function, member, parameters, result)`, types
/// written as CEL prints them; single capital letters are type parameters. Orderings
/// (`_<_`...) are added by [`functions`].
type Row = (&'static str, &'static str, bool, &'static str, &'static str);

const G: bool = false;
const M: bool = true;

#[rustfmt::skip]
pub(crate) const ROWS: &[Row] = &[
    // Operators.
    ("conditional", "_?_:_", G, "bool, A, A", "A"),
    ("logical_and", "_&&_", G, "bool, bool", "bool"),
    ("logical_or", "_||_", G, "bool, bool", "bool"),
    ("logical_not", "!_", G, "bool", "bool"),
    ("not_strictly_false", "@not_strictly_false", G, "bool", "bool"),
    ("equals", "_==_", G, "A, A", "bool"),
    ("not_equals", "_!=_", G, "A, A", "bool"),
    ("add_int64", "_+_", G, "int, int", "int"),
    ("add_uint64", "_+_", G, "uint, uint", "uint"),
    ("add_double", "_+_", G, "double, double", "double"),
    ("add_string", "_+_", G, "string, string", "string"),
    ("add_bytes", "_+_", G, "bytes, bytes", "bytes"),
    ("add_list", "_+_", G, "list(A), list(A)", "list(A)"),
    ("add_timestamp_duration", "_+_", G, "timestamp, duration", "timestamp"),
    ("add_duration_timestamp", "_+_", G, "duration, timestamp", "timestamp"),
    ("add_duration_duration", "_+_", G, "duration, duration", "duration"),
    ("subtract_int64", "_-_", G, "int, int", "int"),
    ("subtract_uint64", "_-_", G, "uint, uint", "uint"),
    ("subtract_double", "_-_", G, "double, double", "double"),
    ("subtract_timestamp_timestamp", "_-_", G, "timestamp, timestamp", "duration"),
    ("subtract_timestamp_duration", "_-_", G, "timestamp, duration", "timestamp"),
    ("subtract_duration_duration", "_-_", G, "duration, duration", "duration"),
    ("multiply_int64", "_*_", G, "int, int", "int"),
    ("multiply_uint64", "_*_", G, "uint, uint", "uint"),
    ("multiply_double", "_*_", G, "double, double", "double"),
    ("divide_int64", "_/_", G, "int, int", "int"),
    ("divide_uint64", "_/_", G, "uint, uint", "uint"),
    ("divide_double", "_/_", G, "double, double", "double"),
    ("modulo_int64", "_%_", G, "int, int", "int"),
    ("modulo_uint64", "_%_", G, "uint, uint", "uint"),
    ("negate_int64", "-_", G, "int", "int"),
    ("negate_double", "-_", G, "double", "double"),
    ("index_list", "_[_]", G, "list(A), int", "A"),
    ("index_map", "_[_]", G, "map(A, B), A", "B"),
    ("optional_list_index_int", "_[_]", G, "optional(list(V)), int", "optional(V)"),
    ("optional_map_index_value", "_[_]", G, "optional(map(K, V)), K", "optional(V)"),
    ("list_optindex_optional_int", "_[?_]", G, "list(V), int", "optional(V)"),
    ("optional_list_optindex_optional_int", "_[?_]", G, "optional(list(V)), int", "optional(V)"),
    ("map_optindex_optional_value", "_[?_]", G, "map(K, V), K", "optional(V)"),
    ("optional_map_optindex_optional_value", "_[?_]", G, "optional(map(K, V)), K", "optional(V)"),
    ("in_list", "@in", G, "A, list(A)", "bool"),
    ("in_map", "@in", G, "A, map(A, B)", "bool"),
    // size, strings.
    ("size_string", "size", G, "string", "int"),
    ("size_bytes", "size", G, "bytes", "int"),
    ("size_list", "size", G, "list(A)", "int"),
    ("size_map", "size", G, "map(A, B)", "int"),
    ("string_size", "size", M, "string", "int"),
    ("bytes_size", "size", M, "bytes", "int"),
    ("list_size", "size", M, "list(A)", "int"),
    ("map_size", "size", M, "map(A, B)", "int"),
    ("contains_string", "contains", M, "string, string", "bool"),
    ("starts_with_string", "startsWith", M, "string, string", "bool"),
    ("ends_with_string", "endsWith", M, "string, string", "bool"),
    ("matches", "matches", G, "string, string", "bool"),
    ("matches_string", "matches", M, "string, string", "bool"),
    // Conversions.
    ("int64_to_int64", "int", G, "int", "int"),
    ("uint64_to_int64", "int", G, "uint", "int"),
    ("double_to_int64", "int", G, "double", "int"),
    ("string_to_int64", "int", G, "string", "int"),
    ("timestamp_to_int64", "int", G, "timestamp", "int"),
    ("duration_to_int64", "int", G, "duration", "int"),
    ("uint64_to_uint64", "uint", G, "uint", "uint"),
    ("int64_to_uint64", "uint", G, "int", "uint"),
    ("double_to_uint64", "uint", G, "double", "uint"),
    ("string_to_uint64", "uint", G, "string", "uint"),
    ("double_to_double", "double", G, "double", "double"),
    ("int64_to_double", "double", G, "int", "double"),
    ("uint64_to_double", "double", G, "uint", "double"),
    ("string_to_double", "double", G, "string", "double"),
    ("bool_to_bool", "bool", G, "bool", "bool"),
    ("string_to_bool", "bool", G, "string", "bool"),
    ("string_to_string", "string", G, "string", "string"),
    ("bool_to_string", "string", G, "bool", "string"),
    ("int64_to_string", "string", G, "int", "string"),
    ("uint64_to_string", "string", G, "uint", "string"),
    ("double_to_string", "string", G, "double", "string"),
    ("bytes_to_string", "string", G, "bytes", "string"),
    ("timestamp_to_string", "string", G, "timestamp", "string"),
    ("duration_to_string", "string", G, "duration", "string"),
    ("ip_to_string", "string", G, "net.IP", "string"),
    ("cidr_to_string", "string", G, "net.CIDR", "string"),
    ("bytes_to_bytes", "bytes", G, "bytes", "bytes"),
    ("string_to_bytes", "bytes", G, "string", "bytes"),
    ("to_dyn", "dyn", G, "A", "dyn"),
    ("type", "type", G, "A", "type(A)"),
    ("string_to_timestamp", "timestamp", G, "string", "timestamp"),
    ("int64_to_timestamp", "timestamp", G, "int", "timestamp"),
    ("timestamp_to_timestamp", "timestamp", G, "timestamp", "timestamp"),
    ("string_to_duration", "duration", G, "string", "duration"),
    ("duration_to_duration", "duration", G, "duration", "duration"),
    // Timestamps and durations.
    ("timestamp_to_year", "getFullYear", M, "timestamp", "int"),
    ("timestamp_to_year_with_tz", "getFullYear", M, "timestamp, string", "int"),
    ("timestamp_to_month", "getMonth", M, "timestamp", "int"),
    ("timestamp_to_month_with_tz", "getMonth", M, "timestamp, string", "int"),
    ("timestamp_to_day_of_year", "getDayOfYear", M, "timestamp", "int"),
    ("timestamp_to_day_of_year_with_tz", "getDayOfYear", M, "timestamp, string", "int"),
    ("timestamp_to_day_of_month", "getDayOfMonth", M, "timestamp", "int"),
    ("timestamp_to_day_of_month_with_tz", "getDayOfMonth", M, "timestamp, string", "int"),
    ("timestamp_to_day_of_month_1_based", "getDate", M, "timestamp", "int"),
    ("timestamp_to_day_of_month_1_based_with_tz", "getDate", M, "timestamp, string", "int"),
    ("timestamp_to_day_of_week", "getDayOfWeek", M, "timestamp", "int"),
    ("timestamp_to_day_of_week_with_tz", "getDayOfWeek", M, "timestamp, string", "int"),
    ("timestamp_to_hours", "getHours", M, "timestamp", "int"),
    ("timestamp_to_hours_with_tz", "getHours", M, "timestamp, string", "int"),
    ("duration_to_hours", "getHours", M, "duration", "int"),
    ("timestamp_to_minutes", "getMinutes", M, "timestamp", "int"),
    ("timestamp_to_minutes_with_tz", "getMinutes", M, "timestamp, string", "int"),
    ("duration_to_minutes", "getMinutes", M, "duration", "int"),
    ("timestamp_to_seconds", "getSeconds", M, "timestamp", "int"),
    ("timestamp_to_seconds_with_tz", "getSeconds", M, "timestamp, string", "int"),
    ("duration_to_seconds", "getSeconds", M, "duration", "int"),
    ("timestamp_to_milliseconds", "getMilliseconds", M, "timestamp", "int"),
    ("timestamp_to_milliseconds_with_tz", "getMilliseconds", M, "timestamp, string", "int"),
    ("duration_to_milliseconds", "getMilliseconds", M, "duration", "int"),
    // Optionals.
    ("optional_of", "optional.of", G, "V", "optional(V)"),
    ("optional_ofNonZeroValue", "optional.ofNonZeroValue", G, "V", "optional(V)"),
    ("optional_none", "optional.none", G, "", "optional(V)"),
    ("optional_value", "value", M, "optional(V)", "V"),
    ("optional_hasValue", "hasValue", M, "optional(V)", "bool"),
    ("optional_or_optional", "or", M, "optional(V), optional(V)", "optional(V)"),
    ("optional_orValue_value", "orValue", M, "optional(V), V", "V"),
    // ext strings, version 2.
    ("string_char_at_int", "charAt", M, "string, int", "string"),
    ("string_index_of_string", "indexOf", M, "string, string", "int"),
    ("string_index_of_string_int", "indexOf", M, "string, string, int", "int"),
    ("string_last_index_of_string", "lastIndexOf", M, "string, string", "int"),
    ("string_last_index_of_string_int", "lastIndexOf", M, "string, string, int", "int"),
    ("string_lower_ascii", "lowerAscii", M, "string", "string"),
    ("string_upper_ascii", "upperAscii", M, "string", "string"),
    ("string_replace_string_string", "replace", M, "string, string, string", "string"),
    ("string_replace_string_string_int", "replace", M, "string, string, string, int", "string"),
    ("string_split_string", "split", M, "string, string", "list(string)"),
    ("string_split_string_int", "split", M, "string, string, int", "list(string)"),
    ("string_substring_int", "substring", M, "string, int", "string"),
    ("string_substring_int_int", "substring", M, "string, int, int", "string"),
    ("string_trim", "trim", M, "string", "string"),
    ("list_join", "join", M, "list(string)", "string"),
    ("list_join_string", "join", M, "list(string), string", "string"),
    ("strings_quote", "strings.quote", G, "string", "string"),
    ("string_format", "format", M, "string, list(dyn)", "string"),
    // ext sets.
    ("list_sets_contains_list", "sets.contains", G, "list(T), list(T)", "bool"),
    ("list_sets_equivalent_list", "sets.equivalent", G, "list(T), list(T)", "bool"),
    ("list_sets_intersects_list", "sets.intersects", G, "list(T), list(T)", "bool"),
    // Kubernetes lists (version 1).
    ("list_is_sorted", "isSorted", M, "list(A)", "bool"),
    ("list_int_sum", "sum", M, "list(int)", "int"),
    ("list_uint_sum", "sum", M, "list(uint)", "uint"),
    ("list_double_sum", "sum", M, "list(double)", "double"),
    ("list_duration_sum", "sum", M, "list(duration)", "duration"),
    ("list_min", "min", M, "list(A)", "A"),
    ("list_max", "max", M, "list(A)", "A"),
    ("list_a_index_of_int", "indexOf", M, "list(A), A", "int"),
    ("list_a_last_index_of_int", "lastIndexOf", M, "list(A), A", "int"),
    ("list_includes_dyn_dyn", "includes", M, "dyn, dyn", "bool"),
    // Kubernetes regex.
    ("string_find", "find", M, "string, string", "string"),
    ("string_find_all", "findAll", M, "string, string", "list(string)"),
    ("string_find_all_with_limit", "findAll", M, "string, string, int", "list(string)"),
    // Kubernetes URLs.
    ("string_to_url", "url", G, "string", "kubernetes.URL"),
    ("is_url_string", "isURL", G, "string", "bool"),
    ("url_get_scheme", "getScheme", M, "kubernetes.URL", "string"),
    ("url_get_host", "getHost", M, "kubernetes.URL", "string"),
    ("url_get_hostname", "getHostname", M, "kubernetes.URL", "string"),
    ("url_get_port", "getPort", M, "kubernetes.URL", "string"),
    ("url_get_escaped_path", "getEscapedPath", M, "kubernetes.URL", "string"),
    ("url_get_query", "getQuery", M, "kubernetes.URL", "map(string, list(string))"),
    // Kubernetes quantities.
    ("string_to_quantity", "quantity", G, "string", "kubernetes.Quantity"),
    ("is_quantity_string", "isQuantity", G, "string", "bool"),
    ("quantity_sign", "sign", M, "kubernetes.Quantity", "int"),
    ("quantity_is_greater_than", "isGreaterThan", M, "kubernetes.Quantity, kubernetes.Quantity", "bool"),
    ("quantity_is_less_than", "isLessThan", M, "kubernetes.Quantity, kubernetes.Quantity", "bool"),
    ("quantity_compare_to", "compareTo", M, "kubernetes.Quantity, kubernetes.Quantity", "int"),
    ("quantity_get_float", "asApproximateFloat", M, "kubernetes.Quantity", "double"),
    ("quantity_get_int", "asInteger", M, "kubernetes.Quantity", "int"),
    ("quantity_is_integer", "isInteger", M, "kubernetes.Quantity", "bool"),
    ("quantity_add", "add", M, "kubernetes.Quantity, kubernetes.Quantity", "kubernetes.Quantity"),
    ("quantity_add_int", "add", M, "kubernetes.Quantity, int", "kubernetes.Quantity"),
    ("quantity_sub", "sub", M, "kubernetes.Quantity, kubernetes.Quantity", "kubernetes.Quantity"),
    ("quantity_sub_int", "sub", M, "kubernetes.Quantity, int", "kubernetes.Quantity"),
    // Kubernetes IPs and CIDRs.
    ("string_to_ip", "ip", G, "string", "net.IP"),
    ("is_ip", "isIP", G, "string", "bool"),
    ("ip_is_canonical", "ip.isCanonical", G, "string", "bool"),
    ("ip_family", "family", M, "net.IP", "int"),
    ("ip_is_unspecified", "isUnspecified", M, "net.IP", "bool"),
    ("ip_is_loopback", "isLoopback", M, "net.IP", "bool"),
    ("ip_is_link_local_multicast", "isLinkLocalMulticast", M, "net.IP", "bool"),
    ("ip_is_link_local_unicast", "isLinkLocalUnicast", M, "net.IP", "bool"),
    ("ip_is_global_unicast", "isGlobalUnicast", M, "net.IP", "bool"),
    ("string_to_cidr", "cidr", G, "string", "net.CIDR"),
    ("is_cidr", "isCIDR", G, "string", "bool"),
    ("cidr_contains_ip_string", "containsIP", M, "net.CIDR, string", "bool"),
    ("cidr_contains_ip_ip", "containsIP", M, "net.CIDR, net.IP", "bool"),
    ("cidr_contains_cidr_string", "containsCIDR", M, "net.CIDR, string", "bool"),
    ("cidr_contains_cidr", "containsCIDR", M, "net.CIDR, net.CIDR", "bool"),
    ("cidr_ip", "ip", M, "net.CIDR", "net.IP"),
    ("cidr_masked", "masked", M, "net.CIDR", "net.CIDR"),
    ("cidr_prefix_length", "prefixLength", M, "net.CIDR", "int"),
    // Kubernetes formats.
    ("format-named", "format.named", G, "string", "optional(kubernetes.NamedFormat)"),
    ("format-dns1123Label", "format.dns1123Label", G, "", "kubernetes.NamedFormat"),
    ("format-dns1123Subdomain", "format.dns1123Subdomain", G, "", "kubernetes.NamedFormat"),
    ("format-dns1035Label", "format.dns1035Label", G, "", "kubernetes.NamedFormat"),
    ("format-qualifiedName", "format.qualifiedName", G, "", "kubernetes.NamedFormat"),
    ("format-dns1123LabelPrefix", "format.dns1123LabelPrefix", G, "", "kubernetes.NamedFormat"),
    ("format-dns1123SubdomainPrefix", "format.dns1123SubdomainPrefix", G, "", "kubernetes.NamedFormat"),
    ("format-dns1035LabelPrefix", "format.dns1035LabelPrefix", G, "", "kubernetes.NamedFormat"),
    ("format-labelValue", "format.labelValue", G, "", "kubernetes.NamedFormat"),
    ("format-uri", "format.uri", G, "", "kubernetes.NamedFormat"),
    ("format-uuid", "format.uuid", G, "", "kubernetes.NamedFormat"),
    ("format-byte", "format.byte", G, "", "kubernetes.NamedFormat"),
    ("format-date", "format.date", G, "", "kubernetes.NamedFormat"),
    ("format-datetime", "format.datetime", G, "", "kubernetes.NamedFormat"),
    ("format-validate", "validate", M, "kubernetes.NamedFormat, string", "optional(list(string))"),
    // Kubernetes semver.
    ("string_to_semver", "semver", G, "string", "kubernetes.Semver"),
    ("string_bool_to_semver", "semver", G, "string, bool", "kubernetes.Semver"),
    ("is_semver_string", "isSemver", G, "string", "bool"),
    ("is_semver_string_bool", "isSemver", G, "string, bool", "bool"),
    ("semver_is_greater_than", "isGreaterThan", M, "kubernetes.Semver, kubernetes.Semver", "bool"),
    ("semver_is_less_than", "isLessThan", M, "kubernetes.Semver, kubernetes.Semver", "bool"),
    ("semver_compare_to", "compareTo", M, "kubernetes.Semver, kubernetes.Semver", "int"),
    ("semver_major", "major", M, "kubernetes.Semver", "int"),
    ("semver_minor", "minor", M, "kubernetes.Semver", "int"),
    ("semver_patch", "patch", M, "kubernetes.Semver", "int"),
];

/// Orderings: same-type, and (cross-type numeric comparisons, on in Kubernetes since 1.28)
/// between int, uint and double.
const ORDERED: &[&str] = &[
    "bool",
    "int",
    "uint",
    "double",
    "string",
    "bytes",
    "timestamp",
    "duration",
];
const NUMERIC: &[&str] = &["int", "uint", "double"];

/// The checker's overloads by function name.
pub fn functions() -> &'static HashMap<&'static str, Vec<Overload>> {
    static FNS: OnceLock<HashMap<&'static str, Vec<Overload>>> = OnceLock::new();
    FNS.get_or_init(|| {
        let mut fns: HashMap<&'static str, Vec<Overload>> = HashMap::new();
        for (id, name, member, params, result) in ROWS {
            fns.entry(name).or_default().push(Overload {
                id,
                member: *member,
                params: parse_list(params),
                result: parse(result),
            });
        }
        for (op, prefix) in [
            ("_<_", "less"),
            ("_<=_", "less_equals"),
            ("_>_", "greater"),
            ("_>=_", "greater_equals"),
        ] {
            for t in ORDERED {
                let id = leak(format!("{prefix}_{}", id_name(t)));
                fns.entry(op).or_default().push(Overload {
                    id,
                    member: false,
                    params: vec![parse(t), parse(t)],
                    result: Type::Bool,
                });
            }
            for a in NUMERIC {
                for b in NUMERIC.iter().filter(|b| *b != a) {
                    let id = leak(format!("{prefix}_{}_{}", id_name(a), id_name(b)));
                    fns.entry(op).or_default().push(Overload {
                        id,
                        member: false,
                        params: vec![parse(a), parse(b)],
                        result: Type::Bool,
                    });
                }
            }
        }
        fns
    })
}

/// The overload ids cel-go gives orderings (`less_string`, `less_int64_double`...).
fn id_name(t: &str) -> &str {
    match t {
        "int" => "int64",
        "uint" => "uint64",
        other => other,
    }
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

fn parse_list(s: &str) -> Vec<Type> {
    let mut out = vec![];
    let mut depth = 0;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(parse(&s[start..i]));
                start = i + 1;
            }
            _ => {}
        }
    }
    if !s[start..].trim().is_empty() {
        out.push(parse(&s[start..]));
    }
    out
}

/// A type as written in [`ROWS`].
pub fn parse(s: &str) -> Type {
    let s = s.trim();
    if let Some((head, rest)) = s.split_once('(') {
        let args = parse_list(rest.strip_suffix(')').expect("balanced"));
        return match head {
            "list" => Type::list(args[0].clone()),
            "map" => Type::map(args[0].clone(), args[1].clone()),
            "optional" => Type::optional(args[0].clone()),
            "type" => Type::Type(Box::new(args[0].clone())),
            other => panic!("unknown type constructor {other}"),
        };
    }
    match s {
        "bool" => Type::Bool,
        "int" => Type::Int,
        "uint" => Type::Uint,
        "double" => Type::Double,
        "string" => Type::String,
        "bytes" => Type::Bytes,
        "null" => Type::Null,
        "timestamp" => Type::Timestamp,
        "duration" => Type::Duration,
        "dyn" => Type::Dyn,
        "net.IP" => Type::Opaque("net.IP", vec![]),
        "net.CIDR" => Type::Opaque("net.CIDR", vec![]),
        p if p.len() == 1 && p.chars().all(|c| c.is_ascii_uppercase()) => Type::Param(p.into()),
        other if other.starts_with("kubernetes.") => Type::Struct(other.into()),
        other => panic!("unknown type {other}"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn declarations_parse() {
        let fns = super::functions();
        assert!(fns["_<_"].iter().any(|o| o.id == "less_int64_double"));
        assert_eq!(fns["_[?_]"].len(), 4);
    }

    #[test]
    fn every_function_is_named_once() {
        let mut seen = std::collections::HashSet::new();
        for f in super::FUNCTIONS {
            assert!(seen.insert(f.name), "{} twice", f.name);
        }
        for name in super::functions().keys() {
            assert!(
                super::function(name).is_some(),
                "{name} has overloads but no entry"
            );
        }
        assert!(super::is_supported("equivalent"));
        assert!(!super::is_supported("includes"));
        assert!(!super::is_supported("nope"));
    }
}
