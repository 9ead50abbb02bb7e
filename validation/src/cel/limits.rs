//! The numbers of the API server's CEL budgets (k8s.io/apiserver pkg/apis/cel/config.go,
//! apiextensions-apiserver's CRD validation) and of cel-go's cost model (common/cost.go,
//! with the Kubernetes library's own), once for the evaluator's runtime cost (`cost`) and
//! the static estimate of the checks (`check`).

/// The API server's limit on one evaluation's cost (`celconfig.PerCallLimit`).
pub const PER_CALL_LIMIT: u64 = 1_000_000;

/// The API server's cost budget for all rules of one object
/// (`celconfig.RuntimeCELCostBudget`).
pub const RUNTIME_COST_BUDGET: i64 = 10_000_000;

/// `StaticEstimatedCostLimit`: the most one expression may cost (a rule times its
/// cardinality).
pub const STATIC_ESTIMATED_COST_LIMIT: u64 = 10_000_000;

/// `StaticEstimatedCRDCostLimit`: the most all expressions of a schema may cost together.
pub const STATIC_ESTIMATED_CRD_COST_LIMIT: u64 = 100_000_000;

/// The largest request the API server takes (`celconfig.MaxRequestSizeBytes`): the static
/// estimate assumes every unbounded string, list and map fills it.
pub const MAX_REQUEST_SIZE_BYTES: i64 = 3 * 1024 * 1024;

/// cel-go's `common.SelectAndIdentCost`: an identifier, a field selection, an index.
pub(crate) const SELECT_AND_IDENT_COST: u64 = 1;
/// cel-go's `common.ConstCost`.
pub(crate) const CONST_COST: u64 = 0;
/// cel-go's `common.ListCreateBaseCost`.
pub(crate) const LIST_CREATE_BASE_COST: u64 = 10;
/// cel-go's `common.MapCreateBaseCost`.
pub(crate) const MAP_CREATE_BASE_COST: u64 = 30;
/// cel-go's `common.StructCreateBaseCost`.
pub(crate) const STRUCT_CREATE_BASE_COST: u64 = 40;
/// cel-go's `common.StringTraversalCostFactor`: per byte (or element) traversed.
pub(crate) const STRING_TRAVERSAL_COST_FACTOR: f64 = 0.1;
/// cel-go's `common.RegexStringLengthCostFactor`: per byte of a regex.
pub(crate) const REGEX_STRING_LENGTH_COST_FACTOR: f64 = 0.25;
/// `apiservercel.MaxNameFormatRegexSize`: the longest regex of a named format, which the
/// static estimate of `validate` assumes.
pub(crate) const MAX_NAME_FORMAT_REGEX_SIZE: f64 = 128.0;
/// `apiservercel.MaxFormatSize`: the size of a named format in comparisons.
pub(crate) const MAX_FORMAT_SIZE: u64 = 64;
