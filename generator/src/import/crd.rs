//! Reading CRDs: YAML documents in, apiextensions.k8s.io/v1 CustomResourceDefinitions out,
//! every problem a located diagnostic (file, line of the document, JSON path).

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::diagnostics::{Diagnostic, Location};

use super::positions::Positions;

/// One input: its name for messages (`-` for stdin) and its text.
#[derive(Clone, Debug)]
pub struct Input {
    /// The file (or `-`), as messages name it.
    pub path: PathBuf,
    /// Its YAML text: one or more documents, CRDs or `List`s of CRDs.
    pub text: String,
}

/// A CRD as read, with where it came from.
#[derive(Clone, Debug)]
pub struct Crd {
    /// `metadata.name`.
    pub name: String,
    /// The whole document, as JSON.
    pub value: Value,
    /// The file and the line its document starts on.
    pub loc: Location,
    /// Where the JSON paths of its document are, for warnings.
    pub positions: Arc<Positions>,
}

impl Crd {
    pub fn spec(&self) -> &Map<String, Value> {
        self.value["spec"].as_object().expect("checked in read")
    }
    pub fn group(&self) -> &str {
        self.value["spec"]["group"].as_str().unwrap_or_default()
    }
    pub fn kind(&self) -> &str {
        self.value["spec"]["names"]["kind"]
            .as_str()
            .unwrap_or_default()
    }
}

/// The line each YAML document of `text` starts on (1-based): after a `---` line, or 1.
fn document_lines(text: &str) -> Vec<usize> {
    let mut starts = vec![1];
    let mut first_content = true;
    for (i, line) in text.lines().enumerate() {
        if line.starts_with("---") {
            if first_content {
                // A leading `---` opens the first document rather than ending one.
                starts[0] = i + 2;
            } else {
                starts.push(i + 2);
            }
        } else if !line.trim().is_empty() && !line.trim_start().starts_with('#') {
            first_content = false;
        }
    }
    starts
}

/// Every CRD of one input, or located errors (a malformed document, a `v1beta1` CRD, a
/// schema that is not structural). Documents of other kinds are warnings, not errors: a
/// manifest bundle holds Deployments beside its CRDs.
pub fn read(input: &Input, warnings: &mut Vec<Diagnostic>) -> Result<Vec<Crd>, Vec<Diagnostic>> {
    let file = &input.path;
    let lines = document_lines(&input.text);
    let mut out = vec![];
    let mut errors = vec![];
    let shared: Arc<str> = input.text.as_str().into();
    for (i, doc) in serde_yaml::Deserializer::from_str(&input.text).enumerate() {
        let line = lines.get(i).copied().unwrap_or(1);
        let value: Value = match serde::Deserialize::deserialize(doc) {
            Ok(v) => v,
            Err(e) => {
                let (l, c) = e
                    .location()
                    .map(|l| (l.line(), l.column()))
                    .unwrap_or((line, 1));
                errors.push(if e.to_string().starts_with("recursion limit exceeded") {
                    // serde_yaml's fixed bound, which keeps its recursion off the stack's end.
                    Diagnostic::new(
                        Location::new(file, l, c),
                        "the document nests more than 128 levels deep here, more than kube-codegen reads",
                    )
                    .with_hint("a schema level is two levels of YAML (`properties` and the property), so schemas nested more than about 60 levels are refused: flatten the schema, or end it early with `x-kubernetes-preserve-unknown-fields: true`")
                } else {
                    Diagnostic::new(Location::new(file, l, c), format!("malformed YAML: {e}"))
                        .with_hint("the input must be CRD YAML (or JSON), one or more documents separated by `---`")
                });
                // The parser cannot resynchronise after a syntax error.
                break;
            }
        };
        if value.is_null() {
            continue;
        }
        let loc = Location::new(file, line, 1);
        let doc = Doc {
            positions: Arc::new(Positions::new(shared.clone(), line)),
        };
        collect(value, &loc, &doc, &mut out, &mut errors, warnings);
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

/// Where a document's JSON paths are.
struct Doc {
    positions: Arc<Positions>,
}

fn collect(
    value: Value,
    loc: &Location,
    doc: &Doc,
    out: &mut Vec<Crd>,
    errors: &mut Vec<Diagnostic>,
    warnings: &mut Vec<Diagnostic>,
) {
    let api_version = value["apiVersion"].as_str().unwrap_or_default();
    let kind = value["kind"].as_str().unwrap_or_default();
    match (api_version, kind) {
        ("v1", "List") => {
            for item in value["items"].as_array().cloned().unwrap_or_default() {
                collect(item, loc, doc, out, errors, warnings);
            }
        }
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition") => match check(&value) {
            Ok(()) => out.push(Crd {
                name: value["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                value,
                loc: loc.clone(),
                positions: doc.positions.clone(),
            }),
            Err((path, msg, hint)) => {
                let at = match doc.positions.locate(&path) {
                    Some((l, c)) => Location::new(&loc.file, l, c),
                    None => loc.clone(),
                };
                errors.push(
                    Diagnostic::new(at, format!("{}: {msg}", located(&value, &path)))
                        .with_hint(hint),
                )
            }
        },
        (v, "CustomResourceDefinition") => errors.push(
            Diagnostic::new(
                match doc.positions.locate("apiVersion") {
                    Some((l, c)) => Location::new(&loc.file, l, c),
                    None => loc.clone(),
                },
                format!(
                    "{}: apiVersion `{v}` is not supported; only apiextensions.k8s.io/v1 CRDs can be imported",
                    located(&value, "apiVersion")
                ),
            )
            .with_hint("v1beta1 CRDs were removed in Kubernetes 1.22: read the CRD from a cluster (`kubectl get crd NAME -o yaml`, served as v1) or upgrade it to v1"),
        ),
        (_, k) => warnings.push(Diagnostic::warning(
            loc.clone(),
            format!(
                "a document of kind `{}` is not a CustomResourceDefinition; it is skipped",
                if k.is_empty() { "(none)" } else { k }
            ),
        )),
    }
}

/// `<crd name> at <json path>` for a message.
fn located(crd: &Value, path: &str) -> String {
    match crd["metadata"]["name"].as_str() {
        Some(n) => format!("CRD {n}, at `{path}`"),
        None => format!("at `{path}`"),
    }
}

type Problem = (String, String, String);

/// What the importer needs of a CRD, and a structural schema per version.
fn check(crd: &Value) -> Result<(), Problem> {
    let need = |path: &str, ok: bool, what: &str| -> Result<(), Problem> {
        if ok {
            Ok(())
        } else {
            Err((
                path.to_owned(),
                format!("{what} is missing or not of the right type"),
                "a CustomResourceDefinition needs metadata.name, spec.group, spec.names.kind and .plural, spec.scope and spec.versions".to_owned(),
            ))
        }
    };
    need(
        "metadata.name",
        crd["metadata"]["name"].is_string(),
        "metadata.name",
    )?;
    need("spec.group", crd["spec"]["group"].is_string(), "spec.group")?;
    let group = crd["spec"]["group"].as_str().unwrap_or_default();
    if crate::kubernetes::is_protected_group(group)
        && crd["metadata"]["annotations"][crate::kubernetes::API_APPROVED].is_null()
    {
        return Err((
            "spec.group".to_owned(),
            format!(
                "group `{group}` is protected: the API server refuses a CRD in it without the `{}` annotation",
                crate::kubernetes::API_APPROVED
            ),
            format!(
                "add the annotation `{}: <PR URL, or \"unapproved, experimental-only\">` to metadata.annotations, or import a CRD of a group you own",
                crate::kubernetes::API_APPROVED
            ),
        ));
    }
    need(
        "spec.names.kind",
        crd["spec"]["names"]["kind"].is_string(),
        "spec.names.kind",
    )?;
    let kind = crd["spec"]["names"]["kind"].as_str().unwrap_or_default();
    if let Some(why) = super::naming::kind_name_problem(kind) {
        return Err((
            "spec.names.kind".to_owned(),
            format!("kind `{kind}` cannot be imported: {why}"),
            if kind.is_empty() {
                "the API server requires a kind: a CamelCase name such as `Widget`".to_owned()
            } else {
                format!(
                    "`generate` takes the kind from the name of its Rust struct, and no struct can be named `{kind}` here; write this kind's types by hand as a kube-derive kind, whose struct may be named otherwise (`#[kube(kind = \"{kind}\", root = \"My{kind}\")]`)"
                )
            },
        ));
    }
    need(
        "spec.names.plural",
        crd["spec"]["names"]["plural"].is_string(),
        "spec.names.plural",
    )?;
    need("spec.scope", crd["spec"]["scope"].is_string(), "spec.scope")?;
    // The names as the API server checks them (and `generate` after it): a group is a DNS
    // subdomain with a dot, a plural and each version a DNS label, the name `plural.group`.
    let dns = crate::resolve::is_dns_subdomain;
    let plural = crd["spec"]["names"]["plural"].as_str().unwrap_or_default();
    let invalid = |path: &str, what: String, hint: &str| -> Result<(), Problem> {
        Err((path.to_owned(), what, hint.to_owned()))
    };
    if !dns(group) || !group.contains('.') {
        invalid(
            "spec.group",
            format!("group `{group}` is not one the API server takes"),
            "a CRD group is a lowercase DNS subdomain with at least one dot, e.g. `stable.example.com`",
        )?;
    }
    if !dns(plural) || plural.contains('.') {
        invalid(
            "spec.names.plural",
            format!("plural `{plural}` is not one the API server takes"),
            "a plural is a lowercase DNS label, e.g. `crontabs`",
        )?;
    }
    let name = crd["metadata"]["name"].as_str().unwrap_or_default();
    if name != format!("{plural}.{group}") {
        invalid(
            "metadata.name",
            format!("the name `{name}` is not `<plural>.<group>` (`{plural}.{group}`)"),
            "the API server requires a CRD's name to be its plural and group",
        )?;
    }
    let scope = crd["spec"]["scope"].as_str().unwrap_or_default();
    if scope != "Namespaced" && scope != "Cluster" {
        invalid(
            "spec.scope",
            format!("scope `{scope}` is neither `Namespaced` nor `Cluster`"),
            "a CRD's scope is `Namespaced` or `Cluster`",
        )?;
    }
    let versions = crd["spec"]["versions"].as_array();
    need(
        "spec.versions",
        versions.is_some_and(|v| !v.is_empty()),
        "spec.versions",
    )?;
    let storage: Vec<usize> = versions
        .into_iter()
        .flatten()
        .enumerate()
        .filter(|(_, v)| v["storage"] == Value::Bool(true))
        .map(|(i, _)| i)
        .collect();
    match storage.as_slice() {
        [_] => {}
        [] => {
            return Err((
                "spec.versions".to_owned(),
                "no version is the storage version".to_owned(),
                "the API server requires exactly one version with `storage: true`".to_owned(),
            ));
        }
        [first, second, ..] => {
            return Err((
                format!("spec.versions[{second}].storage"),
                format!(
                    "versions {first} and {second} are both the storage version (`storage: true`)"
                ),
                "the API server requires exactly one version with `storage: true`".to_owned(),
            ));
        }
    }
    for (i, v) in versions.into_iter().flatten().enumerate() {
        let at = format!("spec.versions[{i}]");
        need(
            &format!("{at}.name"),
            v["name"].is_string(),
            "the version's name",
        )?;
        let version = v["name"].as_str().unwrap_or_default();
        if !crate::resolve::is_version(version) {
            return Err((
                format!("{at}.name"),
                format!("version `{version}` is not one the API server takes"),
                "a version is a lowercase DNS label, e.g. `v1`".to_owned(),
            ));
        }
        let schema = &v["schema"]["openAPIV3Schema"];
        if !schema.is_object() {
            return Err((
                format!("{at}.schema.openAPIV3Schema"),
                "the version has no schema".to_owned(),
                "a typed client needs the schema; import a CRD that has one".to_owned(),
            ));
        }
        structural(schema, &format!("{at}.schema.openAPIV3Schema"), true)?;
    }
    Ok(())
}

/// The structural-schema rules the API server enforces on v1 CRDs (a type everywhere but
/// under int-or-string or preserve-unknown-fields; no `$ref`; properties and
/// additionalProperties not together; logic junctors without types or defaults).
fn structural(node: &Value, path: &str, typed_here: bool) -> Result<(), Problem> {
    let Some(n) = node.as_object() else {
        return Err((
            path.to_owned(),
            "a schema must be an object".to_owned(),
            "write the schema as an OpenAPI v3 object".to_owned(),
        ));
    };
    let not_structural = |what: String| -> Result<(), Problem> {
        Err((
            path.to_owned(),
            format!("the schema is not structural: {what}"),
            "the API server accepts only structural schemas (Kubernetes docs: \"Specifying a structural schema\"); fix the CRD first".to_owned(),
        ))
    };
    if n.contains_key("$ref") {
        return not_structural("`$ref` is not allowed".into());
    }
    let ios = n.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true));
    let pres = n.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true));
    if typed_here && !n.contains_key("type") && !ios && !pres {
        return not_structural("`type` is missing".into());
    }
    if let Some(t) = n.get("type")
        && !t
            .as_str()
            .is_some_and(|t| crate::schema::marker_keywords::SCHEMA_TYPES.contains(&t))
    {
        return Err((
            format!("{path}.type"),
            format!(
                "`type: {}` is not a type the API server takes",
                t.as_str().map_or_else(|| t.to_string(), str::to_owned)
            ),
            format!(
                "a schema's type is one of {}",
                crate::schema::marker_keywords::SCHEMA_TYPES.join(", ")
            ),
        ));
    }
    if let Some(t) = n.get("x-kubernetes-list-type")
        && n.get("type").and_then(Value::as_str) != Some("array")
    {
        return Err((
            format!("{path}.x-kubernetes-list-type"),
            format!(
                "`x-kubernetes-list-type: {t}` is on a schema that is not an array, which the API server refuses"
            ),
            "put it on the array, or remove it".to_owned(),
        ));
    }
    if n.contains_key("properties") && n.contains_key("additionalProperties") {
        return not_structural("`properties` and `additionalProperties` together".into());
    }
    for (k, child) in n {
        match k.as_str() {
            "properties" | "patternProperties" | "definitions" => {
                for (name, c) in child.as_object().into_iter().flatten() {
                    structural(c, &format!("{path}.{k}.{name}"), typed_here)?;
                }
            }
            "items" if child.is_object() => {
                structural(child, &format!("{path}.items"), typed_here)?
            }
            "additionalProperties" if child.is_object() => {
                structural(child, &format!("{path}.additionalProperties"), typed_here)?
            }
            "allOf" | "anyOf" | "oneOf" => {
                for (i, c) in child.as_array().into_iter().flatten().enumerate() {
                    let at = format!("{path}.{k}[{i}]");
                    junctor(c, &at)?;
                    structural(c, &at, false)?;
                }
            }
            "not" => {
                junctor(child, &format!("{path}.not"))?;
                structural(child, &format!("{path}.not"), false)?;
            }
            _ => {}
        }
    }
    Ok(())
}

/// Inside `allOf`/`anyOf`/`oneOf`/`not`, only value validations: no type, description,
/// default or nullable (apart from the int-or-string pattern the API server allows).
fn junctor(node: &Value, path: &str) -> Result<(), Problem> {
    for k in [
        "description",
        "default",
        "nullable",
        "additionalProperties",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-embedded-resource",
    ] {
        if node.get(k).is_some() {
            return Err((
                format!("{path}.{k}"),
                format!("the schema is not structural: `{k}` inside a logical junctor"),
                "allOf/anyOf/oneOf/not may only hold value validations".to_owned(),
            ));
        }
    }
    Ok(())
}
