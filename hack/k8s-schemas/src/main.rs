//! Builds the generator's embedded schemas of Kubernetes types
//! (`generator/src/kubernetes/schemas/v1_NN.json`) from controller-gen's output; run
//! by `hack/gen-k8s-schemas.sh` once per Kubernetes version, which makes the inputs:
//!
//! ```text
//! gen-k8s-schemas TYPES CRD UNSUPPORTED OUT SOURCE
//! gen-k8s-schemas delta NEWEST FULL OUT
//! ```
//!
//! The first form writes one version's full data; the second writes an older version's data
//! as the difference from the newest version's (what the generator embeds for it).
//!
//! - TYPES: lines `<k8s-openapi path> <OpenAPI name without io.k8s.>` (`api::core::v1::PodSpec api.core.v1.PodSpec`)
//! - CRD: controller-gen's CRD for a kind whose spec has one field per type, named by its path
//! - UNSUPPORTED: lines `<OpenAPI name>\t<reason>` for types controller-gen cannot render
//!
//! Each type is stored de-inlined (see `kube_codegen::__private::k8s_schemas`): k8s-openapi's schemars
//! schemas, which refer to nested types instead of inlining them, say which nested positions
//! hold which type. The result is checked: expanding every type must give controller-gen's
//! schema for it exactly, also after a round trip through `JSONSchemaProps` (what the
//! generator does with it). Any difference fails the run and nothing is written.

use std::collections::{BTreeMap, BTreeSet};
use std::process::ExitCode;

use kube_codegen::__private::apiext::JSONSchemaProps;
use kube_codegen::__private::k8s_schemas::{Data, REF, inline};
use serde_json::{Map, Value};

/// Every k8s-openapi type with a schemars schema, for the version this build enables:
/// written per run by hack/gen-k8s-registry.sh (it lists what k8s-openapi's source has).
mod k8s_types {
    include!(env!("K8S_TYPES_RS"));
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gen_k8s_schemas: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let read = |p: &str| std::fs::read_to_string(p).map_err(|e| format!("{p}: {e}"));
    if let [mode, newest, full, out] = args.as_slice()
        && mode == "delta"
    {
        return delta(&read(newest)?, &read(full)?, out);
    }
    let [types, crd, unsupported, out, source] = args.as_slice() else {
        return Err(
            "usage: gen-k8s-schemas TYPES CRD UNSUPPORTED OUT SOURCE | delta NEWEST FULL OUT"
                .into(),
        );
    };

    // k8s-openapi path <-> OpenAPI definition name.
    let mut path_of: BTreeMap<String, String> = BTreeMap::new();
    let mut paths = vec![];
    for line in read(types)?.lines().filter(|l| !l.trim().is_empty()) {
        let (path, name) = line
            .split_once(' ')
            .ok_or_else(|| format!("bad TYPES line `{line}`"))?;
        path_of.insert(name.to_owned(), path.to_owned());
        paths.push(path.to_owned());
    }

    // controller-gen's schema per type: spec.properties.<path>.
    let crd: Value = serde_yaml::from_str(&read(crd)?).map_err(|e| format!("{crd}: {e}"))?;
    let fields = crd
        .pointer("/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties")
        .and_then(Value::as_object)
        .ok_or("the CRD has no spec.properties")?;

    // k8s-openapi's schemas with references: the definitions, by OpenAPI name.
    let mut generator = schemars::generate::SchemaSettings::openapi3().into_generator();
    for p in &paths {
        let f = k8s_types::lookup(p).ok_or_else(|| {
            format!("`{p}` is not in k8s_types.rs (run hack/gen-k8s-registry.sh)")
        })?;
        f(&mut generator);
    }
    let defs: BTreeMap<String, Value> = generator
        .definitions()
        .iter()
        .map(|(k, v)| (def_name(k).to_owned(), v.clone()))
        .collect();
    let def_of = |p: &str| -> Result<&Value, String> {
        let name = path_of
            .iter()
            .find(|(_, v)| *v == p)
            .map(|(k, _)| k)
            .ok_or_else(|| format!("no OpenAPI name for `{p}`"))?;
        defs.get(name)
            .ok_or_else(|| format!("schemars has no definition `{name}`"))
    };

    // Types controller-gen cannot render, and every type containing one.
    let mut unsupported_types: BTreeMap<String, String> = BTreeMap::new();
    for line in read(unsupported)?.lines().filter(|l| !l.trim().is_empty()) {
        let (name, reason) = line.split_once('\t').unwrap_or((line, "unsupported"));
        let path = path_of
            .get(name)
            .ok_or_else(|| format!("unsupported type `{name}` is not a k8s-openapi type"))?;
        unsupported_types.insert(path.clone(), reason.to_owned());
    }
    loop {
        let mut grew = false;
        for p in &paths {
            if unsupported_types.contains_key(p) {
                continue;
            }
            let mut refs = BTreeSet::new();
            collect_refs(def_of(p)?, &mut refs);
            if let Some((bad, why)) = refs.iter().find_map(|name| {
                let q = path_of.get(name)?;
                unsupported_types.get_key_value(q)
            }) {
                // Name the type controller-gen cannot render, however deep it is.
                let reason = if why.starts_with("it contains ") {
                    why.clone()
                } else {
                    format!("it contains `{bad}`: {why}")
                };
                unsupported_types.insert(p.clone(), reason);
                grew = true;
            }
        }
        if !grew {
            break;
        }
    }

    // De-inline every other type.
    let mut cg: BTreeMap<String, Value> = BTreeMap::new();
    for p in paths.iter().filter(|p| !unsupported_types.contains_key(*p)) {
        let s = fields
            .get(p)
            .ok_or_else(|| format!("controller-gen's CRD has no field `{p}`"))?;
        cg.insert(p.clone(), s.clone());
    }
    let mut stored = BTreeMap::new();
    let mut ctx = Ctx {
        cg: &cg,
        defs: &defs,
        path_of: &path_of,
        edges: BTreeMap::new(),
        current: String::new(),
    };
    for (p, s) in &cg {
        ctx.current = p.clone();
        stored.insert(p.clone(), ctx.deinline_children(s, def_of(p)?));
    }

    // The check: expanding gives controller-gen's schema, before and after JSONSchemaProps.
    let mut bad = vec![];
    for (p, want) in &cg {
        let got = inline(&stored, p)?;
        if &got != want {
            bad.push(format!(
                "{p}: expanding the stored schema differs from controller-gen's"
            ));
            continue;
        }
        let typed: JSONSchemaProps =
            serde_json::from_value(got).map_err(|e| format!("{p}: not a JSONSchemaProps: {e}"))?;
        let mut back = serde_json::to_value(&typed).map_err(|e| e.to_string())?;
        integral_floats_to_ints(&mut back);
        if &back != want {
            bad.push(format!(
                "{p}: JSONSchemaProps does not round-trip controller-gen's schema: {}",
                first_difference("", want, &back)
            ));
        }
    }
    if !bad.is_empty() {
        return Err(bad.join("\n"));
    }

    let data = Data {
        source: source.clone(),
        types: stored,
        unsupported: unsupported_types,
        ..Data::default()
    };
    let mut text = serde_json::to_string_pretty(&data).map_err(|e| e.to_string())?;
    text.push('\n');
    std::fs::write(out, text).map_err(|e| format!("{out}: {e}"))?;
    eprintln!(
        "gen_k8s_schemas: {} types, {} unsupported, wrote {out}",
        data.types.len(),
        data.unsupported.len()
    );
    Ok(())
}

/// An older version's data as the difference from the newest version's: the types whose
/// stored schema differs or that only it has, and the newest's types it lacks. Checked: the
/// generator's reading of the delta gives the full data back.
fn delta(newest: &str, full: &str, out: &str) -> Result<(), String> {
    let parse = |text: &str| serde_json::from_str::<Data>(text).map_err(|e| e.to_string());
    let (newest, full) = (parse(newest)?, parse(full)?);
    let mut d = Data {
        source: full.source.clone(),
        base: Some(newest.source.clone()),
        unsupported: full.unsupported.clone(),
        ..Data::default()
    };
    for (p, v) in &full.types {
        if newest.types.get(p) != Some(v) {
            d.types.insert(p.clone(), v.clone());
        }
    }
    d.removed = newest
        .types
        .keys()
        .filter(|p| !full.types.contains_key(*p))
        .cloned()
        .collect();
    let mut text = serde_json::to_string_pretty(&d).map_err(|e| e.to_string())?;
    text.push('\n');
    if d.apply_to(&newest).types != full.types {
        return Err("applying the delta does not give the full data back".into());
    }
    std::fs::write(out, text).map_err(|e| format!("{out}: {e}"))?;
    eprintln!(
        "gen-k8s-schemas: {} types differ from the newest version, {} removed, wrote {out}",
        d.types.len(),
        d.removed.len()
    );
    Ok(())
}

/// What the `crd` generator's `to_yaml` does before writing: JSONSchemaProps keeps bounds as
/// f64, the CRD (like controller-gen's) writes whole numbers as integers.
fn integral_floats_to_ints(v: &mut Value) {
    match v {
        Value::Number(n) => {
            if let Some(f) = n
                .as_f64()
                .filter(|f| n.is_f64() && f.fract() == 0.0 && f.abs() < 9.0e15)
            {
                *n = serde_json::Number::from(f as i64);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(integral_floats_to_ints),
        Value::Object(o) => o.values_mut().for_each(integral_floats_to_ints),
        _ => {}
    }
}

/// Where two JSON values first differ, for the error message.
fn first_difference(at: &str, a: &Value, b: &Value) -> String {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for k in x.keys().chain(y.keys()) {
                match (x.get(k), y.get(k)) {
                    (Some(u), Some(v)) if u == v => {}
                    (Some(u), Some(v)) => return first_difference(&format!("{at}/{k}"), u, v),
                    (u, v) => return format!("{at}/{k}: {u:?} vs {v:?}"),
                }
            }
            format!("{at}: equal")
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            match x.iter().zip(y).position(|(u, v)| u != v) {
                Some(i) => first_difference(&format!("{at}/{i}"), &x[i], &y[i]),
                None => format!("{at}: equal"),
            }
        }
        _ => format!("{at}: {a} vs {b}"),
    }
}

/// Every definition a schemars schema refers to, by OpenAPI name.
fn collect_refs(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            if let Some(Value::String(r)) = m.get("$ref") {
                out.insert(def_name(r).to_owned());
            }
            m.values().for_each(|v| collect_refs(v, out));
        }
        Value::Array(a) => a.iter().for_each(|v| collect_refs(v, out)),
        _ => {}
    }
}

/// The OpenAPI name without `io.k8s.`, from a definition name or a `$ref` to one.
fn def_name(r: &str) -> &str {
    let name = r.rsplit('/').next().unwrap_or(r);
    name.strip_prefix("io.k8s.").unwrap_or(name)
}

struct Ctx<'a> {
    cg: &'a BTreeMap<String, Value>,
    defs: &'a BTreeMap<String, Value>,
    path_of: &'a BTreeMap<String, String>,
    /// References made so far, stored type -> referenced types: kept acyclic, so that a
    /// recursive type (which controller-gen cuts with `{}`) is stored inline where it recurs.
    edges: BTreeMap<String, BTreeSet<String>>,
    /// The type being stored.
    current: String,
}

impl Ctx<'_> {
    /// `node` (controller-gen's) with its subschemas de-inlined, walking schemars' schema
    /// `shape` of the same type alongside to learn which positions hold which type.
    fn deinline_children(&mut self, node: &Value, shape: &Value) -> Value {
        let (Value::Object(n), Value::Object(s)) = (node, shape) else {
            return node.clone();
        };
        let mut out = n.clone();
        if let (Some(Value::Object(np)), Some(Value::Object(sp))) =
            (n.get("properties"), s.get("properties"))
        {
            let mut props = Map::new();
            for (k, v) in np {
                let v = match sp.get(k) {
                    Some(shape) => self.deinline(v, shape),
                    None => v.clone(),
                };
                props.insert(k.clone(), v);
            }
            out.insert("properties".into(), Value::Object(props));
        }
        for key in ["items", "additionalProperties"] {
            if let (Some(v), Some(shape)) = (n.get(key), s.get(key)) {
                out.insert(key.into(), self.deinline(v, shape));
            }
        }
        Value::Object(out)
    }

    /// Whether `to` is reachable from `from` by the references made so far.
    fn reaches(&self, from: &str, to: &str) -> bool {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from];
        while let Some(p) = todo.pop() {
            if p == to {
                return true;
            }
            if seen.insert(p) {
                todo.extend(self.edges.get(p).into_iter().flatten().map(String::as_str));
            }
        }
        false
    }

    /// A position: a reference with an overlay if schemars refers to a stored type there.
    fn deinline(&mut self, node: &Value, shape: &Value) -> Value {
        let target = shape
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| self.path_of.get(def_name(r)))
            .filter(|p| self.cg.contains_key(*p) && !self.reaches(p, &self.current))
            .cloned();
        let Some(target) = target else {
            // Not a reference (or to a type without a schema): walk on with the inline shape.
            let defs = self.defs;
            let shape = match shape.get("$ref").and_then(Value::as_str) {
                Some(r) => defs.get(def_name(r)).unwrap_or(shape),
                None => shape,
            };
            return self.deinline_children(node, shape);
        };
        let (Value::Object(n), Some(Value::Object(base))) = (node, self.cg.get(&target)) else {
            return node.clone();
        };
        self.edges
            .entry(self.current.clone())
            .or_default()
            .insert(target.clone());
        let mut r = Map::new();
        r.insert(REF.into(), Value::String(target.clone()));
        for (k, v) in n {
            if base.get(k) != Some(v) {
                r.insert(k.clone(), v.clone());
            }
        }
        for k in base.keys() {
            if !n.contains_key(k) {
                r.insert(k.clone(), Value::Null);
            }
        }
        Value::Object(r)
    }
}
