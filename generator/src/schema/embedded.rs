//! Embedded Kubernetes types: controller-gen's schema of a k8s-openapi type at the run's
//! Kubernetes version (data from `hack/gen-k8s-schemas.sh`, see [`crate::kubernetes::schemas`]),
//! made acceptable to the API server where controller-gen's is not.

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::apiext::{JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool};

use crate::KubernetesVersion;
use crate::diagnostics::{Diagnostic, Location};

use super::{SchemaBuilder, lock, typed};

/// Schemas of k8s-openapi types by Kubernetes version and path, once per process: each is a
/// pure function of the two, and expanding one is costly (PodSpec inlines dozens of types).
/// Keyed by version, path and whether embedded `ObjectMeta` is written in full.
type Cache = BTreeMap<(KubernetesVersion, String, bool), JSONSchemaProps>;
static K8S_SCHEMAS: Mutex<Cache> = Mutex::new(BTreeMap::new());

impl SchemaBuilder<'_> {
    /// The schema of a k8s-openapi type: controller-gen's for the run's Kubernetes version
    /// (see [`crate::kubernetes::schemas`]), with recursion holes filled (see [`fill_recursion_holes`]).
    pub(super) fn k8s_schema(
        &mut self,
        path: &str,
        loc: &Location,
    ) -> Result<JSONSchemaProps, Diagnostic> {
        // `--max-description-len` cuts these too, with the rest of the kind's schema.
        self.k8s_schema_cached(path, loc)
    }

    fn k8s_schema_cached(
        &mut self,
        path: &str,
        loc: &Location,
    ) -> Result<JSONSchemaProps, Diagnostic> {
        let version = self.api.kubernetes;
        let full_meta = self.options.generate_embedded_object_meta;
        let key = (version, path.to_owned(), full_meta);
        if let Some(s) = lock(&K8S_SCHEMAS).get(&key) {
            return Ok(s.clone());
        }
        let fail = |e: String| {
            Diagnostic::new(
                loc.clone(),
                format!("no schema for k8s-openapi type `{path}`: {e}"),
            )
        };
        let value = if full_meta {
            crate::kubernetes::schemas::schema_with_object_meta(version, path)
        } else {
            crate::kubernetes::schemas::schema(version, path)
        }
        .map_err(fail)?;
        let mut props: JSONSchemaProps =
            serde_json::from_value(value).map_err(|e| fail(e.to_string()))?;
        fill_recursion_holes(&mut props);
        lock(&K8S_SCHEMAS).insert(key, props.clone());
        Ok(props)
    }
}

/// controller-gen cuts a recursive type where it recurs with an empty schema `{}` (the
/// scheduling API's CompositePodGroupTemplate lists itself), which is not structural: the
/// API server refuses the CRD. The closest structural schema is an object that keeps
/// whatever it holds; as the items of a `listType=map` list it also needs the map keys,
/// which are properties of the type that recurs: the enclosing object (listed in FIDELITY.md).
fn fill_recursion_holes(s: &mut JSONSchemaProps) {
    let open_object = || JSONSchemaProps {
        x_kubernetes_preserve_unknown_fields: Some(true),
        ..typed("object")
    };
    let enclosing = s.clone();
    for p in s.properties.iter_mut().flat_map(|p| p.values_mut()) {
        if **p == JSONSchemaProps::default() {
            **p = open_object();
            continue;
        }
        if let Some(JSONSchemaPropsOrArray::Schema(item)) = &mut p.items
            && **item == JSONSchemaProps::default()
        {
            let keys = p.x_kubernetes_list_map_keys.clone().unwrap_or_default();
            let pick = |k: &&String| keys.contains(*k);
            **item = JSONSchemaProps {
                properties: (!keys.is_empty()).then(|| {
                    enclosing
                        .properties
                        .iter()
                        .flatten()
                        .filter(|(k, _)| pick(k))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect()
                }),
                required: enclosing
                    .required
                    .as_ref()
                    .map(|r| r.iter().filter(pick).cloned().collect::<Vec<_>>())
                    .filter(|r| !r.is_empty()),
                ..open_object()
            };
            continue;
        }
        fill_recursion_holes(p);
    }
    match &mut s.items {
        Some(JSONSchemaPropsOrArray::Schema(item)) if **item == JSONSchemaProps::default() => {
            **item = open_object()
        }
        Some(JSONSchemaPropsOrArray::Schema(item)) => fill_recursion_holes(item),
        _ => {}
    }
    if let Some(JSONSchemaPropsOrBool::Schema(v)) = &mut s.additional_properties {
        if **v == JSONSchemaProps::default() {
            **v = open_object();
        } else {
            fill_recursion_holes(v);
        }
    }
}

/// The API server refuses a transition rule (one using `oldSelf`) where it cannot match an
/// object's old and new values: below a list that is not `listType=map`, and below the
/// properties of an atomic map (apiextensions-apiserver's `withForbidOldSelfValidations`).
/// Kubernetes' own types carry such rules (`+k8s:immutable` is `self == oldSelf`) and
/// controller-gen keeps them wherever the type lands, so its CRD with a `[]batchv1.JobSpec`
/// is refused (controller-tools#1473). Drop those rules there, and only there; a rule the
/// user wrote is not Kubernetes' and stays.
pub(super) fn drop_uncorrelatable_k8s_rules(
    s: &mut JSONSchemaProps,
    correlatable: bool,
    path: &mut String,
    dropped: &mut Vec<(String, String)>,
) {
    if !correlatable && let Some(rules) = &mut s.x_kubernetes_validations {
        let k8s = crate::kubernetes::schemas::transition_rules();
        rules.retain(|r| {
            let keep = !serde_json::to_value(r).is_ok_and(|v| k8s.contains(&v));
            if !keep {
                dropped.push((
                    if path.is_empty() {
                        ".".into()
                    } else {
                        path.clone()
                    },
                    r.rule.clone(),
                ));
            }
            keep
        });
        if rules.is_empty() {
            s.x_kubernetes_validations = None;
        }
    }
    // The path grows and shrinks in one buffer: a string formatted per node was 1% of a
    // CRD run, for a path that is read only where a rule is dropped.
    let len = path.len();
    let in_props = correlatable && s.x_kubernetes_map_type.as_deref() != Some("atomic");
    for (name, p) in s.properties.iter_mut().flat_map(|p| p.iter_mut()) {
        path.push('.');
        path.push_str(name);
        drop_uncorrelatable_k8s_rules(p, in_props, path, dropped);
        path.truncate(len);
    }
    let in_items = correlatable && s.x_kubernetes_list_type.as_deref() == Some("map");
    path.push_str("[*]");
    match &mut s.items {
        Some(JSONSchemaPropsOrArray::Schema(item)) => {
            drop_uncorrelatable_k8s_rules(item, in_items, path, dropped)
        }
        Some(JSONSchemaPropsOrArray::Schemas(all)) => all
            .iter_mut()
            .for_each(|i| drop_uncorrelatable_k8s_rules(i, in_items, path, dropped)),
        None => {}
    }
    if let Some(JSONSchemaPropsOrBool::Schema(v)) = &mut s.additional_properties {
        drop_uncorrelatable_k8s_rules(v, correlatable, path, dropped);
    }
    path.truncate(len);
    for alt in [&mut s.all_of, &mut s.any_of, &mut s.one_of]
        .into_iter()
        .flatten()
        .flatten()
    {
        drop_uncorrelatable_k8s_rules(alt, correlatable, path, dropped);
    }
    if let Some(not) = &mut s.not {
        drop_uncorrelatable_k8s_rules(not, correlatable, path, dropped);
    }
}
