//! Defaulting and validation of custom resources as the API server does them:
//! [`kube_codegen_validation::validation`], re-exported (see there), plus the fake API
//! server's [`admission`] built on it.
//!
//! Generated code (the `validation` generator) embeds each kind's schema and implements
//! [`Validate`] with it; the fake API server calls the same code on create and update.

pub use kube_codegen_validation::validation::*;

/// The API server's `422 Invalid` Status for `errs` of the object `name` of `kind` in
/// `group`, as `apierrors.NewInvalid` words it: `Foo.group "name" is invalid: spec.x: ...`
/// (several in brackets), one cause per error with its class, message and field path
/// (`<nil>` for the object itself).
#[must_use]
pub fn invalid_status(group: &str, kind: &str, name: &str, errs: &Errors) -> kube::core::Status {
    use kube::core::response::{StatusCause, StatusDetails};
    let qualified = if group.is_empty() {
        kind.to_owned()
    } else {
        format!("{kind}.{group}")
    };
    let causes: Vec<StatusCause> = errs
        .0
        .iter()
        .map(|e| StatusCause {
            reason: e.error_type.cause_type().to_owned(),
            message: e.body(),
            field: if e.field.is_empty() {
                "<nil>".to_owned()
            } else {
                e.field.clone()
            },
        })
        .collect();
    // The message names each cause's field as the cause does (`<nil>` too).
    let parts: Vec<String> = causes
        .iter()
        .map(|c| format!("{}: {}", c.field, c.message))
        .collect();
    let joined = match parts.as_slice() {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    };
    kube::core::Status::failure(
        &format!("{qualified} \"{name}\" is invalid: {joined}"),
        "Invalid",
    )
    .with_code(422)
    .with_details(StatusDetails {
        name: name.to_owned(),
        group: group.to_owned(),
        kind: kind.to_owned(),
        uid: String::new(),
        causes,
        retry_after_seconds: 0,
    })
}

/// The fake API server's [`crate::fake::Admission`] for a kind: its schema's defaults and
/// validation, refusals as the API server's 422 `Invalid` Status with one cause per
/// violation.
#[cfg(feature = "fake")]
// The fake answers every error with a `Status` (see `fake`'s module docs).
#[allow(clippy::result_large_err)]
pub fn admission<K: Validate + kube::Resource<DynamicType = ()>>() -> crate::fake::Admission {
    std::sync::Arc::new(
        |obj: &mut serde_json::Value, old: Option<&serde_json::Value>| {
            let schema = K::schema();
            // An embedded resource that does not decode: the server's 400, before anything.
            if let Some(e) = schema.decode_error(obj) {
                let kind = K::kind(&()).to_string();
                let version = K::version(&()).to_string();
                return Err(crate::fake::errors::bad_request(&format!(
                    "{kind} in version {version:?} cannot be handled as a {kind}: {e}"
                )));
            }
            schema.default_value(obj);
            let old = old.map(|o| {
                let mut o = o.clone();
                schema.default_value(&mut o);
                o
            });
            let Err(errs) = schema.validate_value(obj, old.as_ref()) else {
                return Ok(());
            };
            let name = obj["metadata"]["name"].as_str().unwrap_or_default();
            Err(invalid_status(&K::group(&()), &K::kind(&()), name, &errs))
        },
    )
}

#[cfg(all(test, feature = "fake"))]
mod tests {
    use serde_json::json;

    use super::*;

    /// The schema of [`Holder`]: embedded resources, one with a rule.
    fn embedded_schema() -> Schema {
        Schema::from_json(
            &json!({
                "type": "object",
                "properties": {
                    "spec": {"type": "object", "properties": {
                        "template": {
                            "type": "object",
                            "x-kubernetes-embedded-resource": true,
                            "x-kubernetes-preserve-unknown-fields": true,
                            "x-kubernetes-validations": [{"rule": "self.kind != 'Secret'"}]
                        },
                        "objects": {"type": "array", "items": {
                            "type": "object",
                            "x-kubernetes-embedded-resource": true,
                            "x-kubernetes-preserve-unknown-fields": true
                        }}
                    }}
                }
            })
            .to_string(),
        )
        .unwrap()
    }

    /// A kind with an embedded resource, for the fake's admission.
    #[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
    struct Holder {
        metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
        #[serde(default)]
        spec: serde_json::Value,
    }

    impl kube::Resource for Holder {
        type DynamicType = ();
        type Scope = kube::core::NamespaceResourceScope;
        fn kind(_: &()) -> std::borrow::Cow<'_, str> {
            "Holder".into()
        }
        fn group(_: &()) -> std::borrow::Cow<'_, str> {
            "example.com".into()
        }
        fn version(_: &()) -> std::borrow::Cow<'_, str> {
            "v1".into()
        }
        fn plural(_: &()) -> std::borrow::Cow<'_, str> {
            "holders".into()
        }
        fn meta(&self) -> &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
            &self.metadata
        }
        fn meta_mut(&mut self) -> &mut k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
            &mut self.metadata
        }
    }

    impl Validate for Holder {
        fn schema() -> &'static Schema {
            static S: std::sync::OnceLock<Schema> = std::sync::OnceLock::new();
            S.get_or_init(embedded_schema)
        }
    }

    /// The fake answers an embedded resource the server cannot decode as the server does: a
    /// 400 naming it, before validation; a decodable one is validated (422) and its metadata
    /// rewritten.
    #[test]
    fn fake_admission_refuses_undecodable_embedded_resources_with_a_400() {
        let admit = admission::<Holder>();
        let mut bad = json!({"metadata": {"name": "h"}, "spec": {"template": {"apiVersion": 1, "kind": "K"}}});
        let status = admit(&mut bad, None).unwrap_err();
        assert_eq!(status.code, 400);
        assert_eq!(
            status.message,
            "Holder in version \"v1\" cannot be handled as a Holder: spec.template.apiVersion: Invalid value: 1: must be a string"
        );
        let mut invalid =
            json!({"metadata": {"name": "h"}, "spec": {"template": {"apiVersion": "v1"}}});
        assert_eq!(admit(&mut invalid, None).unwrap_err().code, 422);
        let mut ok = json!({"metadata": {"name": "h"}, "spec": {"template": {
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "labels": {}, "x": 1}
        }}});
        assert_eq!(admit(&mut ok, None), Ok(()));
        assert_eq!(ok["spec"]["template"]["metadata"], json!({"name": "c"}));
    }
}
