//! Marker parsing: `+name`, `+name=value` and `+name:key=value,key=value` lines in doc
//! comments, following controller-gen's and code-generator's syntax.
//!
//! Every marker we understand has a [`Name`] (the one place its text is written) and a
//! [`MarkerSpec`] in its owner's table: [`CORE_MARKERS`] for the model's own, each
//! generator's for the rest. The parser reads by the table it is handed ([`Table`]; the
//! generators' registry builds it), so it knows nothing of generators. A comment line that
//! starts with `+` and names a known *prefix* (kubebuilder, genclient, listType, ...) but
//! no known marker is an error with a "did you mean" hint: a typo must never be silently
//! ignored, because the generated CRD would then lack the validation the author asked for.
//! Other tools' markers in those namespaces (`+kubebuilder:scaffold:`, `+k8s:deepcopy-gen`)
//! and elsewhere (`+patchStrategy`) are known and quiet: [`names::FOREIGN`], the one list
//! the importers read too.
//!
//! [`values`] holds the grammar of marker values (Go literals, quoted strings, lists).

mod names;
mod values;

pub use names::{ITEMS_MARKERS, ITEMS_PREFIX, Name, VALIDATION_PREFIX, is_foreign};
use values::QuoteError;
use values::split_top_level;
pub use values::{parse_any, split_list, unquote};

use crate::diagnostics::{Diagnostic, Location};

/// Where a marker may appear.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// Inner doc comment of a group/version module (`//! +groupName=...`).
    Package,
    /// Doc comment of a struct or enum.
    Type,
    /// Doc comment of a field (most validation markers also work on types).
    Field,
}

/// The shape of a marker's arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Args {
    /// `+name` and nothing else.
    Flag,
    /// `+name=value`.
    Value,
    /// `+name` alone, or `+name=true|false`.
    OptionalBool,
    /// `+name:key=value,key=value`; the listed keys are the allowed ones, `!` marks a required key.
    Named(&'static [&'static str]),
}

/// A known marker.
#[derive(Debug)]
pub struct MarkerSpec {
    /// The name after `+`, up to its arguments (`kubebuilder:validation:Minimum`).
    pub name: Name,
    /// The shape of its arguments.
    pub args: Args,
    /// Where it may appear.
    pub levels: &'static [Level],
}

pub(crate) const P: &[Level] = &[Level::Package];
pub(crate) const T: &[Level] = &[Level::Type];
pub(crate) const F: &[Level] = &[Level::Field];
pub(crate) const TF: &[Level] = &[Level::Type, Level::Field];
pub(crate) const PF: &[Level] = &[Level::Package, Level::Field];
pub(crate) const PT: &[Level] = &[Level::Package, Level::Type];

/// Arguments of `+kubebuilder:rbac` (controller-gen pkg/rbac `Rule`).
pub const RBAC_ARGS: &[&str] = &[
    "groups",
    "resources",
    "resourceNames",
    "!verbs",
    "urls",
    "namespace",
    "roleName",
];

/// Arguments of `+kubebuilder:webhook` (controller-gen pkg/webhook `Config`).
pub const WEBHOOK_ARGS: &[&str] = &[
    "!mutating",
    "!failurePolicy",
    "matchPolicy",
    "sideEffects",
    "timeoutSeconds",
    "!groups",
    "!resources",
    "!verbs",
    "!versions",
    "!name",
    "serviceName",
    "serviceNamespace",
    "path",
    "servicePort",
    "webhookVersions",
    "!admissionReviewVersions",
    "reinvocationPolicy",
    "url",
    "patch",
];

/// The markers of the model itself, owned by no generator: group/version and kind identity,
/// field presence, and controller-gen's switches kube-codegen accepts (apply
/// configurations). Each generator declares the markers whose meaning it owns
/// (`generators::REGISTRY`), which joins them into one [`Table`], so markers are parsed once.
pub const CORE_MARKERS: &[MarkerSpec] = &[
    MarkerSpec {
        name: Name::GroupName,
        args: Args::Value,
        levels: P,
    },
    MarkerSpec {
        name: Name::VersionName,
        args: Args::Value,
        levels: P,
    },
    MarkerSpec {
        name: Name::ObjectRoot,
        args: Args::OptionalBool,
        levels: T,
    },
    MarkerSpec {
        name: Name::Resource,
        args: Args::Named(&["path", "singular", "shortName", "categories", "scope"]),
        levels: T,
    },
    MarkerSpec {
        name: Name::ValidationRequired,
        args: Args::Flag,
        levels: PF,
    },
    MarkerSpec {
        name: Name::ValidationOptional,
        args: Args::Flag,
        levels: PF,
    },
    MarkerSpec {
        name: Name::Optional,
        args: Args::Flag,
        levels: F,
    },
    MarkerSpec {
        name: Name::Required,
        args: Args::Flag,
        levels: F,
    },
    MarkerSpec {
        name: Name::Skip,
        args: Args::Flag,
        levels: P,
    },
    MarkerSpec {
        name: Name::AcGenerate,
        args: Args::OptionalBool,
        levels: PT,
    },
    MarkerSpec {
        name: Name::AcOutputPackage,
        args: Args::Value,
        levels: P,
    },
    MarkerSpec {
        name: Name::K8sRequired,
        args: Args::Flag,
        levels: F,
    },
    MarkerSpec {
        name: Name::K8sOptional,
        args: Args::Flag,
        levels: F,
    },
];

/// Every marker a run understands: the model's ([`CORE_MARKERS`]) and every selected
/// generator's. Order does not matter: the longest name that matches wins, so
/// `kubebuilder:validation:XValidation` is not read as `kubebuilder:validation`.
pub type Table = [&'static MarkerSpec];

/// One parsed marker occurrence.
#[derive(Clone, Debug)]
pub struct Marker {
    pub name: Name,
    /// The `=value` part, unparsed (quotes kept), for `Args::Value` / `Args::OptionalBool`.
    pub value: Option<String>,
    /// The `key=value` pairs, values with quotes removed, in source order.
    pub args: Vec<(String, String)>,
    /// The marker text as written, without the leading `+`.
    pub text: String,
    /// Written in its `kubebuilder:validation:items:<X>` form: `name` is the plain
    /// `kubebuilder:validation:<X>`, and it applies to the array's items.
    pub items: bool,
    pub loc: Location,
}

impl Marker {
    pub fn arg(&self, key: &str) -> Option<&str> {
        self.args
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// An error about this marker, pointing at it.
    pub fn error(&self, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(self.loc.clone(), message).with_marker(&self.text)
    }

    /// A warning about this marker, pointing at it.
    pub fn warning(&self, message: impl Into<String>) -> Diagnostic {
        Diagnostic::warning(self.loc.clone(), message).with_marker(&self.text)
    }

    /// The value with surrounding quotes removed and escapes decoded.
    pub fn string_value(&self) -> Result<String, Diagnostic> {
        match &self.value {
            Some(v) => unquote(v).map_err(|e| located(e, |m| self.error(m))),
            None => Err(self.error(format!(
                "`+{}` needs a value: `+{}=...`",
                self.name, self.name
            ))),
        }
    }

    /// For `Args::OptionalBool` markers: absent value means true.
    pub fn bool_value(&self) -> Result<bool, Diagnostic> {
        match self.value.as_deref().map(str::trim) {
            None | Some("true") => Ok(true),
            Some("false") => Ok(false),
            Some(other) => Err(self
                .error(format!(
                    "`+{}` takes true or false, not `{other}`",
                    self.name
                ))
                .with_hint("allowed values: true, false")),
        }
    }

    /// The marker's name as written: the `items:` form says so.
    pub fn written_name(&self) -> String {
        match self.name.items_form() {
            Some(form) if self.items => form,
            _ => self.name.text(),
        }
    }

    /// The value exactly as written (quotes kept), for JSON-ish values such as defaults.
    pub fn string_value_raw(&self) -> Result<String, Diagnostic> {
        self.value
            .clone()
            .ok_or_else(|| self.error(format!("`+{}` needs a value", self.name)))
    }

    pub fn parse_value<N: std::str::FromStr>(&self, what: &str) -> Result<N, Diagnostic> {
        let raw = self.string_value()?;
        raw.trim()
            .parse::<N>()
            .map_err(|_| self.error(format!("`+{}` expects {what}, got `{raw}`", self.name)))
    }
}

/// A value that does not unquote, as a diagnostic `at` makes of its message, with its hint.
fn located(e: QuoteError, at: impl FnOnce(String) -> Diagnostic) -> Diagnostic {
    let d = at(e.message);
    match e.hint {
        Some(h) => d.with_hint(h),
        None => d,
    }
}

/// Find the spec whose name is the longest prefix of `body` ending at `=`, `:` or the end.
fn lookup<'b>(body: &'b str, table: &Table) -> Option<(&'static MarkerSpec, &'b str)> {
    table
        .iter()
        .copied()
        .filter_map(|spec| {
            let name = spec.name.as_str();
            // The byte after the name first: most names end elsewhere, and comparing the
            // shared `kubebuilder:validation:` of each cost half the lookup.
            if !matches!(body.as_bytes().get(name.len()), None | Some(b'=' | b':')) {
                return None;
            }
            let rest = body.strip_prefix(name)?;
            (rest.is_empty() || rest.starts_with('=') || rest.starts_with(':'))
                .then_some((spec, rest))
        })
        .max_by_key(|(spec, _)| spec.name.as_str().len())
}

/// Every marker name as written, the `items:` forms included: the candidates for a typo.
fn all_names(table: &Table) -> impl Iterator<Item = String> {
    table.iter().map(|m| m.name.text()).chain(
        ITEMS_MARKERS
            .iter()
            .filter(|n| table.iter().any(|m| m.name == **n))
            .filter_map(|n| n.items_form()),
    )
}

/// The known marker `name` is most likely a typo of, by edit distance (case-insensitive,
/// transpositions count once): `kubebuilder:validation:Minimun` is one edit from `Minimum`.
/// Every `:`-prefix of the name is tried, so arguments after the name
/// (`+kubebuilder:printcolum:name=...`) do not hide the typo. `None` when nothing is close:
/// then it is another tool's marker, not a typo of ours.
fn typo_of(name: &str, table: &Table) -> Option<(String, String)> {
    let mut ends: Vec<usize> = name.match_indices(':').map(|(i, _)| i).collect();
    ends.push(name.len());
    let mut best: Option<(usize, String, String)> = None;
    for end in ends {
        let written = &name[..end];
        let lower = written.to_lowercase();
        for candidate in all_names(table) {
            let d = strsim::damerau_levenshtein(&lower, &candidate.to_lowercase());
            // `genclient` in `+genclient:namespaced` is the marker itself, followed by a
            // name that is not a marker: not a typo of it.
            if d == 0 && end < name.len() {
                continue;
            }
            // One edit in a short name, two in a long one: `+optinal` is a typo, while
            // `+kubebuilder:scaffold` (kubebuilder's own) is nowhere near `+kubebuilder:skip`.
            // The last segment decides, so `+k8s:minItems` (declarative validation's, not
            // ours) is not taken for `+k8s:maxItems`.
            let last = candidate.rsplit(':').next().unwrap_or(&candidate);
            let allowed = if last.len() < 9 { 1 } else { 2 };
            if d <= allowed && best.as_ref().is_none_or(|(bd, _, _)| d < *bd) {
                best = Some((d, written.to_owned(), candidate));
            }
        }
    }
    best.map(|(_, written, candidate)| (written, candidate))
}

/// A `+` line that names no marker we know: a known marker of another tool ([`FOREIGN`]:
/// `+patchStrategy`, `+kubebuilder:scaffold:`, `+operator-sdk:`) is left alone without a
/// word; any other name in a namespace kube-codegen reads (`+kubebuilder:`, `+k8s:`,
/// `+genclient`, `+listType`, ...) is an error, with the markers it is likely a typo of;
/// a marker of a namespace we do not read is a warning, since it changes nothing here;
/// prose is left alone.
///
/// [`FOREIGN`]: names::FOREIGN
fn unknown_marker(body: &str, loc: Location, table: &Table) -> Result<Option<Marker>, Diagnostic> {
    let name_end = body
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, ':' | '-' | '_' | '.' | '/')))
        .unwrap_or(body.len());
    let name = body[..name_end].trim_end_matches(':');
    let after = &body[name_end..];
    // `+1 for this`, `+ a list item`: prose, not a marker.
    if !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return Ok(None);
    }
    if is_foreign(name) {
        return Ok(None);
    }
    let typo = typo_of(name, table);
    if !(after.is_empty() || after.starts_with('=')) {
        // `+foo bar` is prose too, unless it starts with one of our markers.
        return match typo {
            Some((written, candidate)) if written.eq_ignore_ascii_case(&candidate) => Err(
                Diagnostic::new(loc, format!("unexpected text after `+{written}`"))
                    .with_marker(body)
                    .with_hint(format!(
                        "a marker stands alone on its line: `+{candidate}` or `+{candidate}=<value>`; put prose on another line"
                    )),
            ),
            _ => Ok(None),
        };
    }
    if let Some((written, candidate)) = typo {
        return Err(Diagnostic::new(loc, format!("unknown marker `+{written}`"))
            .with_marker(body)
            .with_hint(format!("did you mean `+{candidate}`?")));
    }
    if let Some(rest) = name.strip_prefix(ITEMS_PREFIX) {
        let plain = format!("{VALIDATION_PREFIX}{rest}");
        if table.iter().any(|m| m.name.as_str() == plain) {
            let forms: Vec<&str> = ITEMS_MARKERS
                .iter()
                .filter_map(|n| n.as_str().strip_prefix(VALIDATION_PREFIX))
                .collect();
            return Err(
                Diagnostic::new(loc, format!("`+{plain}` has no `items:` form"))
                    .with_marker(body)
                    .with_hint(format!("`items:` forms: {}", forms.join(", "))),
            );
        }
    }
    if let Some(namespace) = owned_namespace(name, table) {
        let near = near_in_namespace(name, table);
        let hint = if let Some(ours) = kubebuilder_form(name, table) {
            format!(
                "kube-codegen reads only some of validation-gen's `+k8s:` tags (`kube-codegen \
                 markers` lists them); for this one write `+{ours}`"
            )
        } else if near.is_empty() {
            format!(
                "kube-codegen reads the `+{namespace}` markers and none is named so (`kube-codegen \
                 markers` lists them); if this is another tool's marker, please report it: \
                 kube-codegen keeps a list of those and leaves them alone"
            )
        } else {
            let near: Vec<String> = near.iter().map(|n| format!("`+{n}`")).collect();
            format!("did you mean {}?", near.join(" or "))
        };
        return Err(Diagnostic::new(loc, format!("unknown marker `+{name}`"))
            .with_marker(body)
            .with_hint(hint));
    }
    Err(Diagnostic::warning(
        loc,
        format!("`+{name}` is not a kube-codegen marker; it is ignored"),
    )
    .with_marker(body)
    .with_hint(
        "markers of other tools are left alone, as controller-gen leaves markers it does not \
         know; `kube-codegen markers` lists the ones kube-codegen uses",
    ))
}

/// The namespace of a marker kube-codegen reads that `name` is in, if any: the first
/// segment (`kubebuilder`, `k8s`, `genclient`, `listType`, ...) of a marker in the table.
fn owned_namespace<'n>(name: &'n str, table: &Table) -> Option<&'n str> {
    let first = name.split([':', '.']).next().unwrap_or(name);
    all_names(table)
        .any(|known| known.split(':').next() == Some(first))
        .then_some(first)
}

/// For a validation-gen tag kube-codegen does not read (`k8s:maxLength`, `k8s:minItems`,
/// or a slip of one), the `kubebuilder:validation:` marker that says the same.
fn kubebuilder_form(name: &str, table: &Table) -> Option<String> {
    let tag = name.strip_prefix("k8s:")?.to_lowercase();
    if tag.contains(':') {
        return None;
    }
    all_names(table)
        .filter_map(|known| {
            let x = known.strip_prefix(VALIDATION_PREFIX)?;
            (!x.contains(':')).then(|| {
                (
                    strsim::damerau_levenshtein(&tag, &x.to_lowercase()),
                    known.clone(),
                )
            })
        })
        .filter(|(d, _)| *d <= 1)
        .min()
        .map(|(_, known)| known)
}

/// Other names of a validation marker's last segment (lowercase), from other schema
/// languages and validators, each with the marker meant.
const SYNONYMS: &[(&[&str], &str)] = &[
    (&["min", "minvalue", "minval", "gte"], "Minimum"),
    (&["max", "maxvalue", "maxval", "lte"], "Maximum"),
    (&["minlen", "minchars"], "MinLength"),
    (&["maxlen", "maxchars"], "MaxLength"),
    (&["regex", "regexp"], "Pattern"),
    (&["oneof", "enums", "values"], "Enum"),
    (&["unique"], "UniqueItems"),
    (&["rule", "cel"], "XValidation"),
];

/// Markers of `name`'s namespace (all but its last segment) whose last segment is like
/// `name`'s (`MinValue` is like `Minimum`): at most three, most alike first.
fn near_in_namespace(name: &str, table: &Table) -> Vec<String> {
    let (parent, last) = name.rsplit_once(':').unwrap_or(("", name));
    let last = last.to_lowercase();
    // Names other schema languages give a bound (Go's validator `min`, `max`, `len`;
    // `MinValue`): the one marker meant, when its namespace has it.
    if let Some((_, meant)) = SYNONYMS
        .iter()
        .find(|(alias, _)| alias.contains(&last.as_str()))
    {
        let full = format!("{parent}:{meant}");
        if all_names(table).any(|known| known == full) {
            return vec![full];
        }
    }
    let mut scored: Vec<(f64, String)> = all_names(table)
        .filter(|known| known.rsplit_once(':').map_or("", |(p, _)| p) == parent)
        .map(|known| {
            let known_last = known.rsplit(':').next().unwrap_or(&known).to_lowercase();
            let common = last
                .chars()
                .zip(known_last.chars())
                .take_while(|(a, b)| a == b)
                .count();
            // A shared start of three letters (`Min`) says more than overall likeness.
            let score =
                strsim::jaro_winkler(&last, &known_last) + if common >= 3 { 1.0 } else { 0.0 };
            (score, known)
        })
        .filter(|(score, _)| *score >= 0.85)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    scored.into_iter().take(3).map(|(_, n)| n).collect()
}

fn level_name(level: Level) -> &'static str {
    match level {
        Level::Package => "a package (module inner doc comment `//!`)",
        Level::Type => "a struct or enum",
        Level::Field => "a field",
    }
}

/// Parse one doc line. Returns `Ok(None)` for ordinary prose.
pub fn parse_line(
    line: &str,
    level: Level,
    loc: Location,
    table: &Table,
) -> Result<Option<Marker>, Diagnostic> {
    let trimmed = line.trim();
    let Some(body) = trimmed.strip_prefix('+') else {
        return Ok(None);
    };
    // `+kubebuilder:default:=x` is an accepted spelling in controller-gen; normalise it.
    let body = body.replacen(":=", "=", 1);
    let body = body.trim_end();
    // `+kubebuilder:validation:items:<X>` is `<X>` applied to the items.
    let (plain, items) = match body.strip_prefix(ITEMS_PREFIX) {
        Some(rest) => (format!("{VALIDATION_PREFIX}{rest}"), true),
        None => (body.to_owned(), false),
    };
    let Some((spec, rest)) =
        lookup(&plain, table).filter(|(spec, _)| !items || ITEMS_MARKERS.contains(&spec.name))
    else {
        return unknown_marker(body, loc, table);
    };
    // Declarative validation tags may end in a `#` comment (gengo's codetags syntax).
    let rest = match (spec.name.as_str().starts_with("k8s:"), rest.find('#')) {
        (true, Some(at)) => rest[..at].trim_end(),
        _ => rest,
    };
    // `+genclient:namespaced` continues the name of a marker without arguments: a marker
    // of its namespace that does not exist, not an argument.
    if matches!(spec.args, Args::Flag | Args::OptionalBool) && rest.starts_with(':') {
        return unknown_marker(body, loc, table);
    }
    let err = |msg: String| Diagnostic::new(loc.clone(), msg).with_marker(body);
    if spec.name == Name::Default
        && rest
            .trim_start_matches('=')
            .trim_start()
            .starts_with("ref(")
    {
        return Err(Diagnostic::warning(
            loc.clone(),
            "`+default=ref(...)` is not evaluated, so it sets no default (controller-gen skips it too)",
        )
        .with_marker(body)
        .with_hint("write the value itself, e.g. `+default=\"Always\"`, or use `+kubebuilder:default=`"));
    }
    if !spec.levels.contains(&level) {
        let allowed: Vec<_> = spec.levels.iter().map(|l| level_name(*l)).collect();
        return Err(err(format!(
            "`+{}` is not allowed on {}",
            spec.name,
            level_name(level)
        ))
        .with_hint(format!("it belongs on {}", allowed.join(" or "))));
    }
    let mut marker = Marker {
        name: spec.name,
        value: None,
        args: vec![],
        text: body.to_owned(),
        items,
        loc: loc.clone(),
    };
    match spec.args {
        Args::Flag => {
            if !rest.is_empty() {
                return Err(err(format!("`+{}` takes no arguments", spec.name)));
            }
        }
        Args::Value | Args::OptionalBool => {
            if let Some(v) = rest.strip_prefix('=') {
                marker.value = Some(v.to_owned());
                // Checked here, so no reader can take a bad value for false.
                if spec.args == Args::OptionalBool {
                    marker.bool_value()?;
                }
                // The escape hatch is a JSON merge patch: an object, checked here once.
                if spec.name == Name::Schema
                    && !matches!(
                        serde_json::from_str::<serde_json::Value>(v.trim()),
                        Ok(serde_json::Value::Object(_))
                    )
                {
                    return Err(err(format!(
                        "`+{}` takes one JSON object on one line",
                        spec.name
                    ))
                    .with_hint(
                        "e.g. `+kube-codegen:schema={\"format\":null}` removes the format",
                    ));
                }
            } else if rest.starts_with(':') {
                return Err(err(format!(
                    "`+{}` takes a value: `+{}=...`",
                    spec.name, spec.name
                )));
            } else if spec.args == Args::Value {
                return Err(err(format!(
                    "`+{}` needs a value: `+{}=...`",
                    spec.name, spec.name
                )));
            }
        }
        Args::Named(allowed) => {
            let names: Vec<&str> = allowed.iter().map(|a| a.trim_start_matches('!')).collect();
            if let Some(args) = rest.strip_prefix(':') {
                for part in split_top_level(args, ',') {
                    let part = part.trim();
                    if part.is_empty() {
                        continue;
                    }
                    let Some((key, value)) = part.split_once('=') else {
                        return Err(err(format!(
                            "argument `{part}` of `+{}` needs a value: `{part}=...`",
                            spec.name
                        )));
                    };
                    let key = key.trim();
                    let Some(canonical) = names.iter().find(|n| n.eq_ignore_ascii_case(key)) else {
                        let mut d = err(format!("unknown argument `{key}` for `+{}`", spec.name));
                        let close = names
                            .iter()
                            .map(|n| {
                                (
                                    strsim::jaro_winkler(&n.to_lowercase(), &key.to_lowercase()),
                                    *n,
                                )
                            })
                            .filter(|(s, _)| *s > 0.8)
                            .max_by(|a, b| a.0.total_cmp(&b.0));
                        d = match close {
                            Some((_, n)) => d.with_hint(format!(
                                "did you mean `{n}`? allowed: {}",
                                names.join(", ")
                            )),
                            None => d.with_hint(format!("allowed arguments: {}", names.join(", "))),
                        };
                        return Err(d);
                    };
                    let value = match unquote(value) {
                        Ok(v) => v,
                        // A list of quoted items (`"a=b";"c=d"`): split_list unquotes each.
                        Err(_) if split_top_level(value.trim(), ';').len() > 1 => {
                            value.trim().to_owned()
                        }
                        Err(e) => return Err(located(e, err)),
                    };
                    marker.args.push(((*canonical).to_owned(), value));
                }
            } else if rest.starts_with('=') {
                return Err(err(format!(
                    "`+{}` takes named arguments: `+{}:key=value,...`",
                    spec.name, spec.name
                ))
                .with_hint(format!("allowed arguments: {}", names.join(", "))));
            }
            for required in allowed.iter().filter_map(|a| a.strip_prefix('!')) {
                if marker.arg(required).is_none() {
                    return Err(err(format!(
                        "`+{}` is missing its `{required}` argument",
                        spec.name
                    ))
                    .with_hint(format!("arguments: {}", names.join(", "))));
                }
            }
        }
    }
    Ok(Some(marker))
}

/// Typed readers of named arguments (`+name:key=value,...`), for the resolve stage.
impl Marker {
    /// A list argument (`a;b` or `{a,b}`) that may hold the empty string: `groups=""` is the
    /// core group.
    pub fn list_arg(&self, key: &str) -> Vec<String> {
        match self.arg(key) {
            None => vec![],
            Some(raw) if raw.trim().is_empty() => vec![String::new()],
            Some(raw) => {
                let raw = raw.trim();
                let inner = match raw.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
                    Some(inner) => split_top_level(inner, ','),
                    None => split_top_level(raw, ';'),
                };
                inner
                    .into_iter()
                    .map(|s| unquote(s).unwrap_or_else(|_| s.trim().to_owned()))
                    .collect()
            }
        }
    }

    /// A `true`/`false` argument; absent is false.
    pub fn bool_arg(&self, key: &str) -> Result<bool, Diagnostic> {
        match self.arg(key).map(str::trim) {
            Some("true") => Ok(true),
            Some("false") | None => Ok(false),
            Some(other) => Err(self
                .error(format!("`{key}` takes true or false, not `{other}`"))
                .with_hint("allowed values: true, false")),
        }
    }

    /// An integer argument.
    pub fn int_arg(&self, key: &str) -> Result<Option<i32>, Diagnostic> {
        self.arg(key)
            .map(|v| {
                v.trim()
                    .parse::<i32>()
                    .map_err(|_| self.error(format!("`{key}` takes an integer, not `{v}`")))
            })
            .transpose()
    }

    /// One of a closed set of values, matched without regard to case as controller-gen
    /// does: `allowed` pairs each canonical spelling with its value.
    pub fn choice_arg<T: Copy>(
        &self,
        key: &str,
        allowed: &[(&str, T)],
    ) -> Result<Option<T>, Diagnostic> {
        let Some(v) = self.arg(key) else {
            return Ok(None);
        };
        match allowed
            .iter()
            .find(|(a, _)| a.eq_ignore_ascii_case(v.trim()))
        {
            Some((_, t)) => Ok(Some(*t)),
            None => {
                let names: Vec<&str> = allowed.iter().map(|(a, _)| *a).collect();
                Err(self
                    .error(format!("invalid {key} `{v}`"))
                    .with_hint(format!("allowed values: {}", names.join(", "))))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc() -> Location {
        Location::new("x.rs", 1, 1)
    }

    /// The parser with the full table, as a run uses it.
    fn parse_line(line: &str, level: Level, loc: Location) -> Result<Option<Marker>, Diagnostic> {
        super::parse_line(line, level, loc, crate::generators::marker_table())
    }

    #[test]
    fn parses_value_named_and_flags() {
        let m = parse_line(
            " +kubebuilder:validation:Pattern=`^(echo).*`",
            Level::Field,
            loc(),
        )
        .unwrap()
        .unwrap();
        assert_eq!(m.name, Name::Pattern);
        assert_eq!(m.string_value().unwrap(), "^(echo).*");

        let m = parse_line(
            r#"+kubebuilder:printcolumn:name="Cmd",type=string,JSONPath=".spec.command",description="a, b""#,
            Level::Type,
            loc(),
        )
        .unwrap()
        .unwrap();
        assert_eq!(m.arg("name"), Some("Cmd"));
        assert_eq!(m.arg("JSONPath"), Some(".spec.command"));
        assert_eq!(m.arg("description"), Some("a, b"));

        let m = parse_line("+kubebuilder:subresource:status", Level::Type, loc())
            .unwrap()
            .unwrap();
        assert_eq!(m.name, Name::SubresourceStatus);
        let m = parse_line(
            "+kubebuilder:validation:XValidation:rule=\"self > 1\"",
            Level::Field,
            loc(),
        )
        .unwrap()
        .unwrap();
        assert_eq!(m.name, Name::XValidation);
        assert_eq!(m.arg("rule"), Some("self > 1"));
    }

    #[test]
    fn prose_and_foreign_markers_are_ignored() {
        assert!(
            parse_line("just text", Level::Field, loc())
                .unwrap()
                .is_none()
        );
        assert!(
            parse_line("+k8s:deepcopy-gen=package", Level::Package, loc())
                .unwrap()
                .is_none()
        );
        assert!(
            parse_line("+1 for this", Level::Field, loc())
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn typos_are_errors_with_suggestions() {
        let e = parse_line("+kubebuilder:validation:Minimun=1", Level::Field, loc()).unwrap_err();
        assert!(e.message.contains("unknown marker"), "{e:?}");
        assert_eq!(
            e.hint.as_deref(),
            Some("did you mean `+kubebuilder:validation:Minimum`?")
        );
        let e = parse_line(
            "+kubebuilder:printcolumn:name=a,typ=string,JSONPath=.x",
            Level::Type,
            loc(),
        )
        .unwrap_err();
        assert!(e.hint.unwrap().contains("did you mean `type`"));
    }

    #[test]
    fn level_and_required_args_are_checked() {
        let e = parse_line("+groupName=x.io", Level::Field, loc()).unwrap_err();
        assert!(e.message.contains("not allowed on a field"));
        let e = parse_line(
            "+kubebuilder:printcolumn:name=a,type=string",
            Level::Type,
            loc(),
        )
        .unwrap_err();
        assert!(e.message.contains("missing its `JSONPath`"));
    }

    fn any(raw: &str) -> serde_json::Value {
        parse_any(raw).unwrap_or_else(|e| panic!("{raw}: {e}"))
    }

    /// controller-gen v0.23's readings of these values, from its output on the same markers.
    #[test]
    fn go_literals_parse_as_controller_gen_does() {
        use serde_json::json;
        assert_eq!(any("{a,b}"), json!(["a", "b"]));
        assert_eq!(any("{}"), json!({}));
        assert_eq!(any("{80, 443}"), json!([80, 443]));
        assert_eq!(any("{a, 1}"), json!(["a", "1"]));
        assert_eq!(
            any("{{name: x, n: 1},{name: y}}"),
            json!([{"name": "x", "n": 1}, {"name": "y"}])
        );
        assert_eq!(
            any("{a: {b: 1, c: x;y}, d: true}"),
            json!({"a": {"b": 1, "c": ["x", "y"]}, "d": true})
        );
        assert_eq!(any(r#"{"policy": "delete"}"#), json!({"policy": "delete"}));
        assert_eq!(any("a;b;c"), json!(["a", "b", "c"]));
        assert_eq!(any("ClusterIP"), json!("ClusterIP"));
        assert_eq!(any("\"Cluster IP\""), json!("Cluster IP"));
        assert_eq!(any("`raw, text`"), json!("raw, text"));
        assert_eq!(any("'x'"), json!("x"));
        assert_eq!(any("true"), json!(true));
        assert_eq!(any("trueish"), json!("trueish"));
        assert_eq!(any("-3"), json!(-3));
        assert_eq!(any("2.0"), json!(2));
        assert_eq!(any("1.5"), json!(1.5));
        assert_eq!(any("100Mi"), json!("100Mi"));
        assert_eq!(any("2024-01-15"), json!("2024-01-15"));
        assert_eq!(any("null"), json!("null"));
        assert!(
            parse_any("{1, two}")
                .unwrap_err()
                .contains("expected an integer")
        );
        assert!(parse_any("{a: 1").is_err());
        assert!(parse_any("a, b").unwrap_err().contains("extra text"));
    }

    #[test]
    fn items_forms_name_the_plain_marker() {
        let m = parse_line(
            "+kubebuilder:validation:items:MaxLength=3",
            Level::Field,
            loc(),
        )
        .unwrap()
        .unwrap();
        assert_eq!(m.name, Name::MaxLength);
        assert!(m.items);
        assert_eq!(m.value.as_deref(), Some("3"));
        let m = parse_line(
            "+kubebuilder:validation:items:XValidation:rule=\"self != ''\"",
            Level::Type,
            loc(),
        )
        .unwrap()
        .unwrap();
        assert_eq!(m.name, Name::XValidation);
        assert!(m.items);
        let e = parse_line(
            "+kubebuilder:validation:items:Required",
            Level::Field,
            loc(),
        )
        .unwrap_err();
        assert!(
            e.is_error() && e.message.contains("has no `items:` form"),
            "{e}"
        );
    }

    #[test]
    fn declarative_markers_drop_trailing_comments() {
        let m = parse_line("+k8s:maxItems=16 # the cap", Level::Field, loc())
            .unwrap()
            .unwrap();
        assert_eq!(m.parse_value::<i64>("n").unwrap(), 16);
    }

    #[test]
    fn other_tools_markers_are_quiet_and_unknown_ones_of_ours_fail() {
        for foreign in [
            "+operator-sdk:csv:customresourcedefinitions:displayName=\"Thing\"",
            "+kubebuilder:scaffold:imports",
            "+kubebuilder:docs-gen:collapse=Advanced",
            "+patchStrategy=merge",
            "+patchMergeKey=name",
            "+protobuf=true",
            "+protobuf.options.(gogoproto.goproto_stringer)=false",
            "+enum",
            "+featureGate=MyFeature",
        ] {
            assert!(
                parse_line(foreign, Level::Field, loc()).unwrap().is_none(),
                "{foreign}"
            );
        }
        // Neither ours nor a known tool's: a warning, as controller-gen ignores it.
        let d = parse_line(
            "+crossplane:generate:reference:type=Bucket",
            Level::Field,
            loc(),
        )
        .unwrap_err();
        assert!(
            !d.is_error() && d.message.contains("not a kube-codegen marker"),
            "{d}"
        );
        // In a namespace of ours, with no marker of that name: an error, with the markers
        // of the same namespace whose name is like it.
        for (unknown, hint) in [
            (
                "+kubebuilder:validation:MinValue=1",
                "did you mean `+kubebuilder:validation:Minimum`?",
            ),
            (
                "+kubebuilder:validation:Min=1",
                "did you mean `+kubebuilder:validation:Minimum`?",
            ),
            (
                "+kubebuilder:validation:MinLen=1",
                "did you mean `+kubebuilder:validation:MinLength`?",
            ),
            (
                "+kubebuilder:validation:MinLenght=1",
                "did you mean `+kubebuilder:validation:MinLength`?",
            ),
            (
                "+kubebuilder:validation:MinSize=1",
                "did you mean `+kubebuilder:validation:MinItems` or \
                 `+kubebuilder:validation:Minimum` or `+kubebuilder:validation:MinLength`?",
            ),
            (
                "+genclient:namespaced",
                "did you mean `+genclient:nonNamespaced`?",
            ),
            (
                "+k8s:minItems=1",
                "kube-codegen reads only some of validation-gen's `+k8s:` tags (`kube-codegen \
                 markers` lists them); for this one write `+kubebuilder:validation:MinItems`",
            ),
            ("+k8s:unionMember", ""),
            ("+kube-codegen:crd=false", ""),
            ("+k8s:notATag", ""),
            ("+listType:foo=bar", ""),
        ] {
            let d = parse_line(unknown, Level::Field, loc()).unwrap_err();
            assert!(d.is_error(), "{unknown}: {d}");
            if !hint.is_empty() {
                assert_eq!(d.hint.as_deref(), Some(hint), "{unknown}");
            }
        }
        for silent in [
            "+k8s:deepcopy-gen=package",
            "+k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object",
            "+k8s:openapi-gen=true",
            "+k8s:prerelease-lifecycle-gen:introduced=1.20",
            "+groupGoName=Things",
        ] {
            assert!(
                parse_line(silent, Level::Type, loc()).unwrap().is_none(),
                "{silent}"
            );
        }
        for (typo, meant) in [
            (
                "+kubebuilder:validation:MaxLenght=3",
                "kubebuilder:validation:MaxLength",
            ),
            (
                "+kubebuilder:validation:minimum=3",
                "kubebuilder:validation:Minimum",
            ),
            (
                "+kubebuilder:printcolum:name=a,type=string,JSONPath=.x",
                "kubebuilder:printcolumn",
            ),
            ("+k8s:requried", "k8s:required"),
            ("+optinal", "optional"),
            (
                "+kubebuilder:validation:items:MaxLenght=3",
                "kubebuilder:validation:items:MaxLength",
            ),
        ] {
            let d = parse_line(typo, Level::Field, loc()).unwrap_err();
            assert!(d.is_error(), "{typo}: {d}");
            assert_eq!(
                d.hint.as_deref(),
                Some(format!("did you mean `+{meant}`?").as_str()),
                "{typo}"
            );
        }
        let d = parse_line("+default=ref(DefaultPolicy)", Level::Field, loc()).unwrap_err();
        assert!(!d.is_error() && d.message.contains("not evaluated"), "{d}");
    }

    #[test]
    fn lists_split_both_ways() {
        assert_eq!(split_list("a;b;c"), vec!["a", "b", "c"]);
        assert_eq!(split_list("{a,\"b,c\"}"), vec!["a", "b,c"]);
    }
}
