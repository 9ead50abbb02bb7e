//! Label and field selectors, parsed from the `labelSelector` / `fieldSelector` query
//! parameters and matched against stored JSON objects.

use serde_json::Value;

/// One requirement of a label selector.
#[derive(Clone, Debug, PartialEq)]
enum LabelRequirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    DoesNotExist(String),
}

/// A parsed label selector: every requirement must hold (comma = AND).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct LabelSelector {
    requirements: Vec<LabelRequirement>,
}

/// Splits on commas that are not inside parentheses (`a in (x,y),b` is two terms).
fn split_top_level(s: &str) -> Result<Vec<&str>, String> {
    let mut terms = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth < 0 {
                    return Err(format!("unbalanced parentheses in selector {s:?}"));
                }
            }
            ',' if depth == 0 => {
                terms.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(format!("unbalanced parentheses in selector {s:?}"));
    }
    terms.push(&s[start..]);
    Ok(terms)
}

fn valid_key(key: &str) -> bool {
    !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
}

fn valid_value(value: &str) -> bool {
    value
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

fn check_key(key: &str, selector: &str) -> Result<String, String> {
    if valid_key(key) {
        Ok(key.to_string())
    } else {
        Err(format!(
            "unable to parse requirement: invalid label key {key:?} in selector {selector:?}"
        ))
    }
}

fn check_value(value: &str, selector: &str) -> Result<String, String> {
    if valid_value(value) {
        Ok(value.to_string())
    } else {
        Err(format!(
            "unable to parse requirement: invalid label value {value:?} in selector {selector:?}"
        ))
    }
}

impl LabelSelector {
    /// Parses the Kubernetes label selector syntax: `a=b`, `a==b`, `a!=b`, `a in (x,y)`,
    /// `a notin (x)`, `a`, `!a`, joined by commas.
    pub(crate) fn parse(selector: &str) -> Result<Self, String> {
        let mut requirements = Vec::new();
        if selector.trim().is_empty() {
            return Ok(LabelSelector { requirements });
        }
        for term in split_top_level(selector)? {
            let term = term.trim();
            if term.is_empty() {
                return Err(format!("found empty requirement in selector {selector:?}"));
            }
            let req = if let Some(rest) = term.strip_prefix('!') {
                LabelRequirement::DoesNotExist(check_key(rest.trim(), selector)?)
            } else if let Some(open) = term.find('(') {
                let Some(inner) = term[open + 1..].strip_suffix(')') else {
                    return Err(format!("expected ')' at the end of {term:?}"));
                };
                let head: Vec<&str> = term[..open].split_whitespace().collect();
                let [key, op] = head.as_slice() else {
                    return Err(format!("unable to parse requirement {term:?}"));
                };
                let key = check_key(key, selector)?;
                let values = inner
                    .split(',')
                    .map(|v| check_value(v.trim(), selector))
                    .collect::<Result<Vec<_>, _>>()?;
                match *op {
                    "in" => LabelRequirement::In(key, values),
                    "notin" => LabelRequirement::NotIn(key, values),
                    other => return Err(format!("unknown set operator {other:?} in {term:?}")),
                }
            } else if let Some((k, v)) = term.split_once("!=") {
                LabelRequirement::NotEquals(
                    check_key(k.trim(), selector)?,
                    check_value(v.trim(), selector)?,
                )
            } else if let Some((k, v)) = term.split_once("==") {
                LabelRequirement::Equals(
                    check_key(k.trim(), selector)?,
                    check_value(v.trim(), selector)?,
                )
            } else if let Some((k, v)) = term.split_once('=') {
                LabelRequirement::Equals(
                    check_key(k.trim(), selector)?,
                    check_value(v.trim(), selector)?,
                )
            } else {
                LabelRequirement::Exists(check_key(term, selector)?)
            };
            requirements.push(req);
        }
        Ok(LabelSelector { requirements })
    }

    /// Whether the object's `metadata.labels` satisfy every requirement.
    pub(crate) fn matches(&self, obj: &Value) -> bool {
        let labels = obj.pointer("/metadata/labels");
        let get = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
        self.requirements.iter().all(|req| match req {
            LabelRequirement::Equals(k, v) => get(k) == Some(v.as_str()),
            LabelRequirement::NotEquals(k, v) => get(k) != Some(v.as_str()),
            LabelRequirement::In(k, vs) => get(k).is_some_and(|l| vs.iter().any(|v| v == l)),
            LabelRequirement::NotIn(k, vs) => get(k).is_none_or(|l| vs.iter().all(|v| v != l)),
            LabelRequirement::Exists(k) => get(k).is_some(),
            LabelRequirement::DoesNotExist(k) => get(k).is_none(),
        })
    }
}

/// One requirement of a field selector: a dotted JSON path compared to a string.
#[derive(Clone, Debug, PartialEq)]
struct FieldRequirement {
    path: Vec<String>,
    value: String,
    negated: bool,
}

/// A parsed field selector: `metadata.name=x`, `spec.color!=Red`, ... joined by commas.
///
/// Unlike a real apiserver, which only supports a few fields per kind, any dotted path
/// into the object can be used; a missing field compares as the empty string.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct FieldSelector {
    requirements: Vec<FieldRequirement>,
}

impl FieldSelector {
    pub(crate) fn parse(selector: &str) -> Result<Self, String> {
        let mut requirements = Vec::new();
        if selector.trim().is_empty() {
            return Ok(FieldSelector { requirements });
        }
        for term in selector.split(',') {
            let term = term.trim();
            let (path, value, negated) = if let Some((p, v)) = term.split_once("!=") {
                (p, v, true)
            } else if let Some((p, v)) = term.split_once("==") {
                (p, v, false)
            } else if let Some((p, v)) = term.split_once('=') {
                (p, v, false)
            } else {
                return Err(format!(
                    "invalid selector: {selector:?}; can't understand {term:?}"
                ));
            };
            let path = path.trim();
            if path.is_empty() {
                return Err(format!(
                    "invalid selector: {selector:?}; empty field in {term:?}"
                ));
            }
            requirements.push(FieldRequirement {
                path: path.split('.').map(str::to_string).collect(),
                value: value.trim().to_string(),
                negated,
            });
        }
        Ok(FieldSelector { requirements })
    }

    pub(crate) fn matches(&self, obj: &Value) -> bool {
        self.requirements.iter().all(|req| {
            let mut cur = Some(obj);
            for seg in &req.path {
                cur = cur.and_then(|v| v.get(seg));
            }
            let actual = match cur {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
            };
            (actual == req.value) != req.negated
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(labels: Value) -> Value {
        json!({"metadata": {"name": "n", "namespace": "ns", "labels": labels}, "spec": {"color": "Red", "size": 3}})
    }

    #[test]
    fn label_selector_operators() {
        let o = obj(json!({"app": "web", "tier": "front"}));
        let m = |s: &str| LabelSelector::parse(s).unwrap().matches(&o);
        assert!(m(""));
        assert!(m("app=web"));
        assert!(m("app==web"));
        assert!(!m("app!=web"));
        assert!(m("missing!=x"));
        assert!(m("app in (db, web)"));
        assert!(!m("app notin (web)"));
        assert!(m("missing notin (web)"));
        assert!(!m("missing in (web)"));
        assert!(m("tier"));
        assert!(!m("!tier"));
        assert!(m("!missing"));
        assert!(m("app in (web),tier=front"));
        assert!(!m("app in (web),tier=back"));
        assert!(LabelSelector::parse("app in (web").is_err());
        assert!(LabelSelector::parse("a b").is_err());
        assert!(LabelSelector::parse("app=web,").is_err());
    }

    #[test]
    fn field_selector_paths() {
        let o = obj(json!({}));
        let m = |s: &str| FieldSelector::parse(s).unwrap().matches(&o);
        assert!(m("metadata.name=n"));
        assert!(m("metadata.namespace==ns,metadata.name!=x"));
        assert!(m("spec.color=Red"));
        assert!(m("spec.size=3"));
        assert!(!m("spec.color=Blue"));
        assert!(m("spec.missing="));
        assert!(FieldSelector::parse("nonsense").is_err());
    }
}
