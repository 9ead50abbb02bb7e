//! The API server's check of a CRD's `default` values when it creates or updates the CRD
//! (apiextensions-apiserver `structuraldefaulting.ValidateDefaults`): every default must
//! be pruned, decode and validate against its own schema node (the OpenAPI value
//! validations), and pass the CEL rules of that node and below with `self` the default.
//! Code generation runs it, so a CRD the server would refuse is not written.

use serde_json::Value;

use super::schema::Schema;
use super::walk::{Ratchet, render};
use super::{ErrorType, FieldError};
use crate::cel;

/// One step from a schema node down to a child node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SchemaStep {
    /// `properties[name]`.
    Property(String),
    /// `items`.
    Items,
}

/// A `default` the API server refuses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DefaultError {
    /// The node whose `default` it is, as steps from the schema's root.
    pub node: Vec<SchemaStep>,
    /// The violation as the server reports it: `field` is the whole path
    /// (`<prefix>.properties[spec].properties[replicas].default`, then the path inside the
    /// default).
    pub error: FieldError,
}

/// `prefix` + a path relative to the default (`""`, `a.b`, `[0]`), as `field.Path` joins them.
fn join(prefix: &str, rel: &str) -> String {
    if rel.is_empty() {
        prefix.to_owned()
    } else if rel.starts_with('[') {
        format!("{prefix}{rel}")
    } else {
        format!("{prefix}.{rel}")
    }
}

impl Schema {
    /// Every `default` of this schema (a CRD version's `openAPIV3Schema`) that the API
    /// server refuses, with field paths under `prefix` (the server's is
    /// `spec.versions[i].schema.openAPIV3Schema`).
    ///
    /// Defaults inside the root's (or an embedded resource's) `apiVersion`, `kind` and
    /// `metadata` are not checked: the server checks those as part of the surrounding
    /// object's metadata, which this crate does not model.
    pub fn validate_defaults(&self, prefix: &str) -> Vec<DefaultError> {
        let mut out = vec![];
        let mut budget = cel::RUNTIME_COST_BUDGET;
        // The server treats the root as an embedded resource (`isResourceRoot`).
        self.defaults_walk(prefix, &mut vec![], true, false, &mut budget, &mut out);
        out
    }

    fn defaults_walk(
        &self,
        path: &str,
        node: &mut Vec<SchemaStep>,
        root: bool,
        inside_meta: bool,
        budget: &mut i64,
        out: &mut Vec<DefaultError>,
    ) {
        let resource_root = root || self.embedded_resource;
        let inside_meta = inside_meta && !self.embedded_resource;
        if let Some(d) = &self.default
            && !inside_meta
        {
            let at = format!("{path}.default");
            for error in self.default_errors(d, &at, resource_root, budget) {
                out.push(DefaultError {
                    node: node.clone(),
                    error,
                });
            }
            if *budget < 0 {
                return;
            }
        }
        // Not additionalProperties: defaults are forbidden there.
        if let Some(items) = &self.items {
            node.push(SchemaStep::Items);
            items.defaults_walk(
                &format!("{path}.items"),
                node,
                false,
                inside_meta,
                budget,
                out,
            );
            node.pop();
            if *budget < 0 {
                return;
            }
        }
        for (k, p) in &self.properties {
            let meta = inside_meta
                || (resource_root && matches!(k.as_str(), "apiVersion" | "kind" | "metadata"));
            node.push(SchemaStep::Property(k.clone()));
            p.defaults_walk(
                &format!("{path}.properties[{k}]"),
                node,
                false,
                meta,
                budget,
                out,
            );
            node.pop();
            if *budget < 0 {
                return;
            }
        }
    }

    /// The server's checks of one default `d` at field path `at`, in its order: pruning
    /// (reported, not blocking), then decoding of embedded resources, their metadata, the
    /// OpenAPI value validations and the CEL rules, each only if the one before passed.
    fn default_errors(
        &self,
        d: &Value,
        at: &str,
        resource_root: bool,
        budget: &mut i64,
    ) -> Vec<FieldError> {
        let mut errs = vec![];
        let mut pruned = d.clone();
        self.prune(&mut pruned, resource_root);
        if pruned != *d {
            errs.push(FieldError {
                field: at.to_owned(),
                error_type: ErrorType::Invalid,
                value: Some(render(d)),
                detail: "must not have unknown fields".into(),
            });
        }
        let rel = |mut e: FieldError| {
            // kube-openapi names the validated value's root "" here (a default), where
            // the walk, made for objects, names it "." (`. in body should ...`).
            if e.field.is_empty()
                && let Some(rest) = e.detail.strip_prefix(". in body")
            {
                e.detail = format!(" in body{rest}");
            }
            e.field = join(at, &e.field);
            e
        };
        if let Some(e) = self.decode_error_at(d, "") {
            errs.push(rel(e));
            return errs;
        }
        let mut meta = vec![];
        self.validate_embedded(d, "", &mut meta);
        if !meta.is_empty() {
            errs.extend(meta.into_iter().map(rel));
            return errs;
        }
        let mut openapi = vec![];
        self.openapi(d, None, "", &mut openapi);
        if !openapi.is_empty() {
            // kube-openapi keeps one of identical errors (a bound repeated in an `allOf`).
            let mut seen = std::collections::HashSet::new();
            openapi.retain(|e| seen.insert((e.field.clone(), e.error_type, e.body())));
            errs.extend(openapi.into_iter().map(rel));
            return errs;
        }
        if !self.has_rules() {
            return errs;
        }
        // The default as its own old value (transition rules run), then, if that passes,
        // as a create (rules with `optionalOldSelf` see no old value), each from the same
        // budget; the server keeps the smaller remainder.
        let start = *budget;
        let mut first = start;
        let mut cel_errs = vec![];
        self.rules(
            d,
            Some(d),
            "",
            resource_root,
            Ratchet::Off,
            &mut first,
            &mut cel_errs,
        );
        if cel_errs.is_empty() {
            let mut second = start;
            self.rules(
                d,
                None,
                "",
                resource_root,
                Ratchet::Off,
                &mut second,
                &mut cel_errs,
            );
            first = first.min(second);
        }
        *budget = first;
        errs.extend(cel_errs.into_iter().map(rel));
        errs
    }
}
