//! Marker parsing: `+name`, `+name=value` and `+name:key=value,key=value` lines in doc
//! comments, following controller-gen's and code-generator's syntax.
//!
//! Every marker we understand is listed in [`MARKERS`]. A comment line that starts with `+`
//! and names a known *prefix* (kubebuilder, genclient, listType, ...) but no known marker is
//! an error with a "did you mean" hint: a typo must never be silently ignored, because the
//! generated CRD would then lack the validation the author asked for.

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
    pub name: &'static str,
    pub args: Args,
    pub levels: &'static [Level],
}

const P: &[Level] = &[Level::Package];
const T: &[Level] = &[Level::Type];
const F: &[Level] = &[Level::Field];
const TF: &[Level] = &[Level::Type, Level::Field];
const PF: &[Level] = &[Level::Package, Level::Field];

/// Every marker kube-codegen understands. Order does not matter: the longest name that
/// matches wins, so `kubebuilder:validation:XValidation` is not read as `kubebuilder:validation`.
pub static MARKERS: &[MarkerSpec] = &[
    // package (doc.go)
    MarkerSpec {
        name: "groupName",
        args: Args::Value,
        levels: P,
    },
    MarkerSpec {
        name: "versionName",
        args: Args::Value,
        levels: P,
    },
    // type level: client generation (code-generator)
    MarkerSpec {
        name: "genclient",
        args: Args::Flag,
        levels: T,
    },
    MarkerSpec {
        name: "genclient:nonNamespaced",
        args: Args::Flag,
        levels: T,
    },
    MarkerSpec {
        name: "genclient:noStatus",
        args: Args::Flag,
        levels: T,
    },
    MarkerSpec {
        name: "genclient:noVerbs",
        args: Args::Flag,
        levels: T,
    },
    MarkerSpec {
        name: "genclient:readonly",
        args: Args::Flag,
        levels: T,
    },
    MarkerSpec {
        name: "genclient:onlyVerbs",
        args: Args::Value,
        levels: T,
    },
    MarkerSpec {
        name: "genclient:skipVerbs",
        args: Args::Value,
        levels: T,
    },
    MarkerSpec {
        name: "genclient:method",
        args: Args::Value,
        levels: T,
    },
    // type level: CRD shape (controller-gen)
    MarkerSpec {
        name: "kubebuilder:object:root",
        args: Args::OptionalBool,
        levels: T,
    },
    MarkerSpec {
        name: "kubebuilder:resource",
        args: Args::Named(&["path", "singular", "shortName", "categories", "scope"]),
        levels: T,
    },
    MarkerSpec {
        name: "kubebuilder:subresource:status",
        args: Args::Flag,
        levels: T,
    },
    MarkerSpec {
        name: "kubebuilder:subresource:scale",
        args: Args::Named(&["!specpath", "!statuspath", "selectorpath"]),
        levels: T,
    },
    MarkerSpec {
        name: "kubebuilder:printcolumn",
        args: Args::Named(&[
            "!name",
            "!type",
            "!JSONPath",
            "description",
            "format",
            "priority",
        ]),
        levels: T,
    },
    MarkerSpec {
        name: "kubebuilder:storageversion",
        args: Args::Flag,
        levels: T,
    },
    MarkerSpec {
        name: "kubebuilder:deprecatedversion",
        args: Args::Named(&["warning"]),
        levels: T,
    },
    MarkerSpec {
        name: "kubebuilder:skipversion",
        args: Args::Flag,
        levels: T,
    },
    MarkerSpec {
        name: "kubebuilder:unservedversion",
        args: Args::Flag,
        levels: T,
    },
    MarkerSpec {
        name: "kubebuilder:selectablefield",
        args: Args::Named(&["!JSONPath"]),
        levels: T,
    },
    MarkerSpec {
        name: "kubebuilder:metadata",
        args: Args::Named(&["annotations", "labels"]),
        levels: T,
    },
    // validation: field and type level
    MarkerSpec {
        name: "kubebuilder:validation:Minimum",
        args: Args::Value,
        levels: TF,
    },
    MarkerSpec {
        name: "kubebuilder:validation:Maximum",
        args: Args::Value,
        levels: TF,
    },
    MarkerSpec {
        name: "kubebuilder:validation:ExclusiveMinimum",
        args: Args::OptionalBool,
        levels: TF,
    },
    MarkerSpec {
        name: "kubebuilder:validation:ExclusiveMaximum",
        args: Args::OptionalBool,
        levels: TF,
    },
    MarkerSpec {
        name: "kubebuilder:validation:MultipleOf",
        args: Args::Value,
        levels: TF,
    },
    MarkerSpec {
        name: "kubebuilder:validation:MinLength",
        args: Args::Value,
        levels: TF,
    },
    MarkerSpec {
        name: "kubebuilder:validation:MaxLength",
        args: Args::Value,
        levels: TF,
    },
    MarkerSpec {
        name: "kubebuilder:validation:Pattern",
        args: Args::Value,
        levels: TF,
    },
    MarkerSpec {
        name: "kubebuilder:validation:MinItems",
        args: Args::Value,
        levels: TF,
    },
    MarkerSpec {
        name: "kubebuilder:validation:MaxItems",
        args: Args::Value,
        levels: TF,
    },
    MarkerSpec {
        name: "kubebuilder:validation:UniqueItems",
        args: Args::OptionalBool,
        levels: TF,
    },
    MarkerSpec {
        name: "kubebuilder:validation:MinProperties",
        args: Args::Value,
        levels: TF,
    },
    MarkerSpec {
        name: "kubebuilder:validation:MaxProperties",
        args: Args::Value,
        levels: TF,
    },
    MarkerSpec {
        name: "kubebuilder:validation:Enum",
        args: Args::Value,
        levels: TF,
    },
    MarkerSpec {
        name: "kubebuilder:validation:Format",
        args: Args::Value,
        levels: TF,
    },
    MarkerSpec {
        name: "kubebuilder:validation:Type",
        args: Args::Value,
        levels: TF,
    },
    MarkerSpec {
        name: "kubebuilder:validation:XValidation",
        args: Args::Named(&[
            "!rule",
            "message",
            "messageExpression",
            "reason",
            "fieldPath",
            "optionalOldSelf",
        ]),
        levels: TF,
    },
    MarkerSpec {
        name: "kubebuilder:validation:XPreserveUnknownFields",
        args: Args::Flag,
        levels: TF,
    },
    MarkerSpec {
        name: "kubebuilder:validation:XEmbeddedResource",
        args: Args::Flag,
        levels: TF,
    },
    MarkerSpec {
        name: "kubebuilder:validation:XIntOrString",
        args: Args::Flag,
        levels: TF,
    },
    MarkerSpec {
        name: "kubebuilder:validation:Schemaless",
        args: Args::Flag,
        levels: F,
    },
    MarkerSpec {
        name: "kubebuilder:validation:Required",
        args: Args::Flag,
        levels: PF,
    },
    MarkerSpec {
        name: "kubebuilder:validation:Optional",
        args: Args::Flag,
        levels: PF,
    },
    MarkerSpec {
        name: "kubebuilder:pruning:PreserveUnknownFields",
        args: Args::Flag,
        levels: TF,
    },
    MarkerSpec {
        name: "kubebuilder:default",
        args: Args::Value,
        levels: TF,
    },
    MarkerSpec {
        name: "kubebuilder:example",
        args: Args::Value,
        levels: TF,
    },
    MarkerSpec {
        name: "kubebuilder:title",
        args: Args::Value,
        levels: TF,
    },
    MarkerSpec {
        name: "default",
        args: Args::Value,
        levels: F,
    },
    MarkerSpec {
        name: "optional",
        args: Args::Flag,
        levels: F,
    },
    MarkerSpec {
        name: "required",
        args: Args::Flag,
        levels: F,
    },
    MarkerSpec {
        name: "nullable",
        args: Args::Flag,
        levels: F,
    },
    MarkerSpec {
        name: "listType",
        args: Args::Value,
        levels: TF,
    },
    MarkerSpec {
        name: "listMapKey",
        args: Args::Value,
        levels: TF,
    },
    MarkerSpec {
        name: "mapType",
        args: Args::Value,
        levels: TF,
    },
    MarkerSpec {
        name: "structType",
        args: Args::Value,
        levels: TF,
    },
];

/// Prefixes we own: a `+` line starting with one of these must name a known marker.
/// Anything else (`+k8s:deepcopy-gen`, `+1 for this`) is left alone, as Go tools do.
const OWNED_PREFIXES: &[&str] = &[
    "kubebuilder:",
    "genclient",
    "groupName",
    "versionName",
    "listType",
    "listMapKey",
    "mapType",
    "structType",
    "optional",
    "required",
    "nullable",
    "default",
];

/// One parsed marker occurrence.
#[derive(Clone, Debug)]
pub struct Marker {
    pub name: &'static str,
    /// The `=value` part, unparsed (quotes kept), for `Args::Value` / `Args::OptionalBool`.
    pub value: Option<String>,
    /// The `key=value` pairs, values with quotes removed, in source order.
    pub args: Vec<(String, String)>,
    /// The marker text as written, without the leading `+`.
    pub text: String,
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

    /// The value with surrounding quotes removed and escapes decoded.
    pub fn string_value(&self) -> Result<String, Diagnostic> {
        match &self.value {
            Some(v) => unquote(v).map_err(|e| self.error(e)),
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

    pub fn parse_value<N: std::str::FromStr>(&self, what: &str) -> Result<N, Diagnostic> {
        let raw = self.string_value()?;
        raw.trim()
            .parse::<N>()
            .map_err(|_| self.error(format!("`+{}` expects {what}, got `{raw}`", self.name)))
    }
}

/// Remove Go-style quoting: `"..."` (with escapes) or `` `...` ``; bare text stays as it is.
pub fn unquote(raw: &str) -> Result<String, String> {
    let raw = raw.trim();
    if let Some(inner) = raw.strip_prefix('`') {
        return inner
            .strip_suffix('`')
            .map(str::to_owned)
            .ok_or_else(|| format!("unterminated raw string `{raw}`"));
    }
    if raw.starts_with('"') {
        if raw.len() < 2 || !raw.ends_with('"') {
            return Err(format!("unterminated string {raw}"));
        }
        // Go and JSON string escapes agree on everything markers use.
        return serde_json::from_str::<String>(raw).map_err(|e| format!("bad string {raw}: {e}"));
    }
    Ok(raw.to_owned())
}

/// Split `a=1,b="x,y",c={p,q}` at top-level commas.
fn split_top_level(s: &str, sep: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut in_str, mut in_raw, mut escaped, mut start) =
        (0i32, false, false, false, 0);
    for (i, c) in s.char_indices() {
        if in_str {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_str = false,
                _ => {}
            }
            continue;
        }
        if in_raw {
            if c == '`' {
                in_raw = false;
            }
            continue;
        }
        match c {
            '"' => in_str = true,
            '`' => in_raw = true,
            '{' | '[' => depth += 1,
            '}' | ']' => depth -= 1,
            c if c == sep && depth == 0 => {
                parts.push(&s[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

/// Split a list value: `a;b;c` or `{a,b,c}`.
pub fn split_list(raw: &str) -> Vec<String> {
    let raw = raw.trim();
    let items = if let Some(inner) = raw.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
        split_top_level(inner, ',')
    } else {
        split_top_level(raw, ';')
    };
    items
        .into_iter()
        .map(|s| unquote(s).unwrap_or_else(|_| s.trim().to_owned()))
        .filter(|s| !s.is_empty())
        .collect()
}

/// Find the spec whose name is the longest prefix of `body` ending at `=`, `:` or the end.
fn lookup(body: &str) -> Option<(&'static MarkerSpec, &str)> {
    MARKERS
        .iter()
        .filter_map(|spec| {
            let rest = body.strip_prefix(spec.name)?;
            (rest.is_empty() || rest.starts_with('=') || rest.starts_with(':'))
                .then_some((spec, rest))
        })
        .max_by_key(|(spec, _)| spec.name.len())
}

fn suggest(name: &str) -> Option<&'static str> {
    MARKERS
        .iter()
        .map(|m| {
            (
                strsim::jaro_winkler(&name.to_lowercase(), &m.name.to_lowercase()),
                m.name,
            )
        })
        .filter(|(score, _)| *score > 0.85)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, n)| n)
}

fn level_name(level: Level) -> &'static str {
    match level {
        Level::Package => "a package (module inner doc comment `//!`)",
        Level::Type => "a struct or enum",
        Level::Field => "a field",
    }
}

/// Parse one doc line. Returns `Ok(None)` for ordinary prose.
pub fn parse_line(line: &str, level: Level, loc: Location) -> Result<Option<Marker>, Diagnostic> {
    let trimmed = line.trim();
    let Some(body) = trimmed.strip_prefix('+') else {
        return Ok(None);
    };
    // `+kubebuilder:default:=x` is an accepted spelling in controller-gen; normalise it.
    let body = body.replacen(":=", "=", 1);
    let body = body.trim_end();
    let owned = OWNED_PREFIXES.iter().any(|p| body.starts_with(p));
    let Some((spec, rest)) = lookup(body) else {
        if !owned {
            return Ok(None);
        }
        let name = body.split('=').next().unwrap_or(body);
        let mut d = Diagnostic::new(loc, format!("unknown marker `+{name}`")).with_marker(body);
        d = match suggest(name) {
            Some(s) => d.with_hint(format!("did you mean `+{s}`?")),
            None => d.with_hint("see the marker reference in README.md"),
        };
        return Err(d);
    };
    let err = |msg: String| Diagnostic::new(loc.clone(), msg).with_marker(body);
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
                        Err(e) => return Err(err(e)),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn loc() -> Location {
        Location::new("x.rs", 1, 1)
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
        assert_eq!(m.name, "kubebuilder:validation:Pattern");
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
        assert_eq!(m.name, "kubebuilder:subresource:status");
        let m = parse_line(
            "+kubebuilder:validation:XValidation:rule=\"self > 1\"",
            Level::Field,
            loc(),
        )
        .unwrap()
        .unwrap();
        assert_eq!(m.name, "kubebuilder:validation:XValidation");
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

    #[test]
    fn lists_split_both_ways() {
        assert_eq!(split_list("a;b;c"), vec!["a", "b", "c"]);
        assert_eq!(split_list("{a,\"b,c\"}"), vec!["a", "b,c"]);
    }
}
