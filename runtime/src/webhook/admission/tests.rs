//! The patch computation and the review handling, without a network; the server over TLS
//! is in `webhook/tests.rs`, the real API server calling it in the e2e `admission` test.

use std::sync::atomic::{AtomicUsize, Ordering};

use k8s_openapi::api::core::v1::ConfigMap;
use serde_json::{Value, json};

use super::*;

/// The object `raw` after the API server applies `patch` to it.
fn patched(raw: &Value, patch: &json_patch::Patch) -> Value {
    let mut v = raw.clone();
    json_patch::patch(&mut v, patch).expect("the patch applies to the object as sent");
    v
}

/// The patch of a defaulter that turns the typed `before` into `after`, checked to apply.
fn patch_for(raw: Value, before: Value, after: Value) -> (json_patch::Patch, Value) {
    let p = defaulting_patch(&raw, &before, &after);
    let out = patched(&raw, &p);
    (p, out)
}

fn ops(p: &json_patch::Patch) -> Vec<Value> {
    serde_json::to_value(p).unwrap().as_array().unwrap().clone()
}

/// Fields the Rust type does not know stay as sent: diffing the re-encoded typed object
/// against the raw one, as a naive defaulter webhook does, would remove them.
#[test]
fn fields_the_type_does_not_know_are_kept() {
    let raw = json!({"metadata": {"name": "a", "futureField": 1},
        "spec": {"x": 1, "unknown": {"deep": true}}, "extra": [1, 2]});
    // The type knows metadata.name and spec.x only.
    let before = json!({"metadata": {"name": "a"}, "spec": {"x": 1}});
    let after = json!({"metadata": {"name": "a"}, "spec": {"x": 1, "y": "default"}});
    let (p, out) = patch_for(raw.clone(), before, after);
    assert_eq!(
        ops(&p),
        [json!({"op": "add", "path": "/spec/y", "value": "default"})]
    );
    let mut want = raw;
    want["spec"]["y"] = json!("default");
    assert_eq!(out, want);
}

/// Round-trip noise is not a change: a `null` the type reads as absent, a serde default
/// the raw object lacks. Only the defaulter's change is sent, and it applies to the raw
/// object (a `replace` of a path the raw object lacks would fail there).
#[test]
fn round_trip_noise_is_not_in_the_patch() {
    // spec.replicas: null in the request, None in the type, defaulted to 1.
    let (p, out) = patch_for(
        json!({"spec": {"replicas": null, "tags": null}}),
        json!({"spec": {"items": []}}),
        json!({"spec": {"items": [], "replicas": 1}}),
    );
    assert_eq!(
        ops(&p),
        [json!({"op": "replace", "path": "/spec/replicas", "value": 1})]
    );
    assert_eq!(out, json!({"spec": {"replicas": 1, "tags": null}}));
    // A list the type defaults to [] (absent in the request) that the defaulter fills.
    let (_, out) = patch_for(
        json!({"spec": {}}),
        json!({"spec": {"items": []}}),
        json!({"spec": {"items": ["a"]}}),
    );
    assert_eq!(out, json!({"spec": {"items": ["a"]}}));
    // Nothing changed: no operations at all.
    let (p, _) = patch_for(
        json!({"spec": {"x": null, "u": 1}}),
        json!({"spec": {}}),
        json!({"spec": {}}),
    );
    assert!(p.0.is_empty(), "{p:?}");
}

/// A defaulter's deliberate removal is sent (controller-runtime v0.20 drops every `remove`
/// to keep unknown fields, and with them a defaulter's removals).
#[test]
fn removals_by_the_defaulter_are_kept() {
    let (p, out) = patch_for(
        json!({"spec": {"legacy": "x", "other": 1}}),
        json!({"spec": {"legacy": "x"}}),
        json!({"spec": {}}),
    );
    assert_eq!(ops(&p), [json!({"op": "remove", "path": "/spec/legacy"})]);
    assert_eq!(out, json!({"spec": {"other": 1}}));
}

/// Lists: elements keep their unknown fields when the defaulter changes a known one;
/// appended and removed elements are sent.
#[test]
fn list_elements_keep_their_unknown_fields() {
    let raw = json!({"spec": {"ports": [{"port": 80, "x-vendor": "a"}, {"port": 81}]}});
    let before = json!({"spec": {"ports": [{"port": 80}, {"port": 81}]}});
    let after = json!({"spec": {"ports": [{"port": 80, "protocol": "TCP"}, {"port": 81, "protocol": "TCP"}, {"port": 82}]}});
    let (_, out) = patch_for(raw, before, after);
    assert_eq!(
        out,
        json!({"spec": {"ports": [
            {"port": 80, "x-vendor": "a", "protocol": "TCP"},
            {"port": 81, "protocol": "TCP"},
            {"port": 82}
        ]}})
    );
    let (_, out) = patch_for(
        json!({"l": [{"a": 1, "u": 1}, {"a": 2}]}),
        json!({"l": [{"a": 1}, {"a": 2}]}),
        json!({"l": [{"a": 1}]}),
    );
    assert_eq!(out, json!({"l": [{"a": 1, "u": 1}]}));
}

/// A defaulter for ConfigMaps: `data.mode` defaults to "fast"; a `refuse` label refuses.
struct ModeDefaulter;

impl Defaulter<ConfigMap> for ModeDefaulter {
    async fn default(&self, cm: &mut ConfigMap, _req: &Request) -> Result<(), AdmissionError> {
        if cm
            .metadata
            .labels
            .as_ref()
            .is_some_and(|l| l.contains_key("refuse"))
        {
            return Err(AdmissionError::forbidden("labelled refuse"));
        }
        cm.data
            .get_or_insert_default()
            .entry("mode".into())
            .or_insert_with(|| "fast".into());
        Ok(())
    }
}

/// A validator for ConfigMaps: `data.mode` must be fast or slow; "slow" warns; updates may
/// not change the mode; deletes of a `keep`-labelled map are forbidden.
#[derive(Default)]
struct ModeValidator {
    updates: AtomicUsize,
}

fn mode(cm: &ConfigMap) -> Option<&str> {
    cm.data
        .as_ref()
        .and_then(|d| d.get("mode"))
        .map(String::as_str)
}

impl Validator<ConfigMap> for ModeValidator {
    async fn validate_create(
        &self,
        cm: &ConfigMap,
        _req: &Request,
    ) -> Result<Warnings, AdmissionError> {
        match mode(cm) {
            Some("fast") => Ok(vec![]),
            Some("slow") => Ok(vec!["data.mode: slow is deprecated".into()]),
            Some(m) => Err(AdmissionError::from(vec![
                FieldError::not_supported("data.mode", m, &["fast", "slow"]),
                FieldError::required("data.owner", ""),
            ])
            .with_warnings(vec!["see the docs".into()])),
            None => Err(FieldError::required("data.mode", "").into()),
        }
    }

    async fn validate_update(
        &self,
        old: &ConfigMap,
        new: &ConfigMap,
        req: &Request,
    ) -> Result<Warnings, AdmissionError> {
        self.updates.fetch_add(1, Ordering::Relaxed);
        if mode(old) != mode(new) {
            return Err(FieldError::invalid("data.mode", mode(new), "field is immutable").into());
        }
        self.validate_create(new, req).await
    }

    async fn validate_delete(
        &self,
        cm: &ConfigMap,
        _req: &Request,
    ) -> Result<Warnings, AdmissionError> {
        if cm
            .metadata
            .labels
            .as_ref()
            .is_some_and(|l| l.contains_key("keep"))
        {
            return Err(AdmissionError::forbidden("this ConfigMap is kept"));
        }
        Ok(vec![])
    }
}

fn defaulter() -> Box<dyn Route> {
    Box::new(Typed::<ConfigMap, _>::new(Defaulting(ModeDefaulter)))
}

fn validator() -> Box<dyn Route> {
    Box::new(Typed::<ConfigMap, _>::new(Validating(
        ModeValidator::default(),
    )))
}

/// A review as the API server sends it.
fn review_of(operation: &str, object: Value, old: Value) -> Value {
    json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {
            "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
            "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
            "resource": {"group": "", "version": "v1", "resource": "configmaps"},
            "requestKind": {"group": "", "version": "v1", "kind": "ConfigMap"},
            "requestResource": {"group": "", "version": "v1", "resource": "configmaps"},
            "name": "cm", "namespace": "ns", "operation": operation,
            "userInfo": {"username": "admin", "groups": ["system:masters"]},
            "object": object, "oldObject": old, "dryRun": false,
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"}
        }
    })
}

fn cm(data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "cm", "namespace": "ns", "creationTimestamp": null},
        "data": data})
}

/// The patch of a response (kube's types send its bytes as a JSON array, which the API
/// server's decoder reads as it reads base64).
fn patch_of(r: &Value) -> json_patch::Patch {
    let bytes: Vec<u8> = serde_json::from_value(r["patch"].clone()).expect("patch bytes");
    serde_json::from_slice(&bytes).expect("a JSON patch")
}

async fn answer(route: &dyn Route, body: &[u8]) -> (Value, AdmissionOutcome) {
    let (bytes, outcome) = review(route, body).await;
    let v: Value = serde_json::from_slice(&bytes).expect("the answer is JSON");
    assert_eq!(v["kind"], "AdmissionReview", "{v}");
    (v["response"].clone(), outcome)
}

#[tokio::test]
async fn a_defaulter_answers_with_the_patch_to_the_object_as_sent() {
    let route = defaulter();
    // An unknown top-level field and `creationTimestamp: null` stay untouched.
    let mut object = cm(json!({"other": "x"}));
    object["futureField"] = json!({"a": 1});
    let body = review_of("CREATE", object.clone(), Value::Null).to_string();
    let (r, outcome) = answer(route.as_ref(), body.as_bytes()).await;
    assert_eq!(outcome, AdmissionOutcome::Allowed);
    assert_eq!(r["uid"], "705ab4f5-6393-11e8-b7cc-42010a800002");
    assert_eq!(r["allowed"], true);
    assert_eq!(r["patchType"], "JSONPatch");
    let patch = patch_of(&r);
    assert_eq!(
        ops(&patch),
        [json!({"op": "add", "path": "/data/mode", "value": "fast"})]
    );
    let mut want = object.clone();
    want["data"]["mode"] = json!("fast");
    assert_eq!(patched(&object, &patch), want);

    // Already defaulted: allowed with no patch.
    let body = review_of("UPDATE", cm(json!({"mode": "slow"})), cm(json!({}))).to_string();
    let (r, _) = answer(route.as_ref(), body.as_bytes()).await;
    assert_eq!(r["allowed"], true);
    assert!(
        r.get("patch").is_none() && r.get("patchType").is_none(),
        "{r}"
    );

    // A DELETE is not defaulted.
    let body = review_of("DELETE", Value::Null, cm(json!({}))).to_string();
    let (r, outcome) = answer(route.as_ref(), body.as_bytes()).await;
    assert_eq!(
        (r["allowed"].clone(), outcome),
        (json!(true), AdmissionOutcome::Allowed)
    );

    // A refusal from the defaulter: 403 with its message.
    let mut refused = cm(json!({}));
    refused["metadata"]["labels"] = json!({"refuse": ""});
    let body = review_of("CREATE", refused, Value::Null).to_string();
    let (r, outcome) = answer(route.as_ref(), body.as_bytes()).await;
    assert_eq!(outcome, AdmissionOutcome::Denied);
    assert_eq!(r["allowed"], false);
    assert_eq!(
        r["status"],
        json!({"status": "Failure", "code": 403, "reason": "Forbidden", "message": "labelled refuse"})
    );
}

#[tokio::test]
async fn a_validator_refuses_with_the_api_servers_invalid_status_and_passes_warnings() {
    let route = validator();
    let body = review_of("CREATE", cm(json!({"mode": "fast"})), Value::Null).to_string();
    let (r, outcome) = answer(route.as_ref(), body.as_bytes()).await;
    assert_eq!(
        (r["allowed"].clone(), outcome),
        (json!(true), AdmissionOutcome::Allowed)
    );
    assert!(r.get("warnings").is_none(), "{r}");

    let body = review_of("CREATE", cm(json!({"mode": "slow"})), Value::Null).to_string();
    let (r, _) = answer(route.as_ref(), body.as_bytes()).await;
    assert_eq!(r["allowed"], true);
    assert_eq!(r["warnings"], json!(["data.mode: slow is deprecated"]));

    // Two invalid fields: 422 Invalid, worded as the API server words its own, one cause
    // per field; the refusal's warnings are sent too.
    let body = review_of("CREATE", cm(json!({"mode": "turbo"})), Value::Null).to_string();
    let (r, outcome) = answer(route.as_ref(), body.as_bytes()).await;
    assert_eq!(outcome, AdmissionOutcome::Denied);
    assert_eq!(r["allowed"], false);
    assert_eq!(r["warnings"], json!(["see the docs"]));
    assert_eq!(
        r["status"],
        json!({
            "status": "Failure", "code": 422, "reason": "Invalid",
            "message": "ConfigMap \"cm\" is invalid: [data.mode: Unsupported value: \"turbo\": supported values: \"fast\", \"slow\", data.owner: Required value]",
            "details": {"name": "cm", "kind": "ConfigMap", "causes": [
                {"reason": "FieldValueNotSupported", "message": "Unsupported value: \"turbo\": supported values: \"fast\", \"slow\"", "field": "data.mode"},
                {"reason": "FieldValueRequired", "message": "Required value", "field": "data.owner"}
            ]}
        })
    );

    // Updates get the old object.
    let body = review_of(
        "UPDATE",
        cm(json!({"mode": "slow"})),
        cm(json!({"mode": "fast"})),
    )
    .to_string();
    let (r, _) = answer(route.as_ref(), body.as_bytes()).await;
    assert_eq!(r["status"]["code"], 422);
    assert_eq!(
        r["status"]["message"],
        "ConfigMap \"cm\" is invalid: data.mode: Invalid value: \"slow\": field is immutable"
    );
    let body = review_of(
        "UPDATE",
        cm(json!({"mode": "fast"})),
        cm(json!({"mode": "fast"})),
    )
    .to_string();
    let (r, _) = answer(route.as_ref(), body.as_bytes()).await;
    assert_eq!(r["allowed"], true);
    // An update without its old object is not judged.
    let body = review_of("UPDATE", cm(json!({"mode": "fast"})), Value::Null).to_string();
    let (r, outcome) = answer(route.as_ref(), body.as_bytes()).await;
    assert_eq!(outcome, AdmissionOutcome::Errored);
    assert_eq!(r["status"]["code"], 400);
    assert_eq!(r["status"]["message"], "the review has no oldObject");

    // Deletes get the object being deleted, sent as the oldObject.
    let mut kept = cm(json!({}));
    kept["metadata"]["labels"] = json!({"keep": "yes"});
    let body = review_of("DELETE", Value::Null, kept).to_string();
    let (r, _) = answer(route.as_ref(), body.as_bytes()).await;
    assert_eq!(r["status"]["code"], 403);
    assert_eq!(r["status"]["message"], "this ConfigMap is kept");
    let body = review_of("DELETE", Value::Null, cm(json!({}))).to_string();
    let (r, _) = answer(route.as_ref(), body.as_bytes()).await;
    assert_eq!(r["allowed"], true);
}

/// Whatever the body, the answer is a review refusing it with a 400 and a message (the
/// uid echoed when readable): never a panic, never an HTTP error the API server would
/// report as a failed call.
#[tokio::test]
async fn malformed_reviews_are_refused_with_a_message() {
    let route = validator();
    let good = review_of("CREATE", cm(json!({"mode": "fast"})), Value::Null);
    let mut wrong_kind = good.clone();
    wrong_kind["request"]["kind"] = json!({"group": "apps", "version": "v1", "kind": "Deployment"});
    let mut undecodable = good.clone();
    undecodable["request"]["object"]["data"] = json!({"mode": 5});
    let mut not_a_review = good.clone();
    not_a_review["kind"] = json!("ConversionReview");
    let mut no_user = good.clone();
    no_user["request"]
        .as_object_mut()
        .unwrap()
        .remove("userInfo");
    let mut no_object = good.clone();
    no_object["request"]["object"] = Value::Null;
    let cases: Vec<(Vec<u8>, &str, &str)> = vec![
        (
            b"\x00\x01 not json".to_vec(),
            "",
            "malformed AdmissionReview",
        ),
        (
            b"[]".to_vec(),
            "",
            "expected an admission.k8s.io/v1 AdmissionReview",
        ),
        (
            json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"})
                .to_string()
                .into_bytes(),
            "",
            "has no request",
        ),
        (
            not_a_review.to_string().into_bytes(),
            "705ab4f5-6393-11e8-b7cc-42010a800002",
            "got kind Some(\"ConversionReview\")",
        ),
        (
            wrong_kind.to_string().into_bytes(),
            "705ab4f5-6393-11e8-b7cc-42010a800002",
            "this webhook serves v1, Kind=ConfigMap, not apps/v1, Kind=Deployment",
        ),
        (
            undecodable.to_string().into_bytes(),
            "705ab4f5-6393-11e8-b7cc-42010a800002",
            "the review's object cannot be decoded as ConfigMap./v1",
        ),
        (
            no_user.to_string().into_bytes(),
            "705ab4f5-6393-11e8-b7cc-42010a800002",
            "malformed AdmissionReview: missing field `userInfo`",
        ),
        (
            no_object.to_string().into_bytes(),
            "705ab4f5-6393-11e8-b7cc-42010a800002",
            "the review has no object",
        ),
    ];
    for (body, uid, message) in cases {
        let (r, outcome) = answer(route.as_ref(), &body).await;
        assert_eq!(outcome, AdmissionOutcome::Errored, "{r}");
        assert_eq!(r["uid"], uid, "{r}");
        assert_eq!(r["allowed"], false, "{r}");
        assert_eq!(r["status"]["code"], 400, "{r}");
        assert_eq!(r["status"]["reason"], "BadRequest", "{r}");
        let got = r["status"]["message"].as_str().unwrap();
        assert!(got.contains(message), "{message:?} in {got:?}");
    }
}

/// A v1beta1 review (a configuration listing only v1beta1) is answered as v1beta1.
#[tokio::test]
async fn a_v1beta1_review_is_answered_in_kind() {
    let mut body = review_of("CREATE", cm(json!({"mode": "fast"})), Value::Null);
    body["apiVersion"] = json!("admission.k8s.io/v1beta1");
    let (bytes, _) = review(validator().as_ref(), body.to_string().as_bytes()).await;
    let v: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(v["apiVersion"], "admission.k8s.io/v1beta1");
    assert_eq!(v["response"]["allowed"], true);
}

/// SchemaRules routes a kind through its generated schema defaults and validation.
#[tokio::test]
async fn schema_rules_run_the_generated_defaults_and_validation() {
    use crate::validation::{Schema, Validate};
    #[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
    struct Widget {
        metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
        #[serde(default)]
        spec: Value,
    }
    impl kube::Resource for Widget {
        type DynamicType = ();
        type Scope = kube::core::NamespaceResourceScope;
        fn kind(_: &()) -> std::borrow::Cow<'_, str> {
            "Widget".into()
        }
        fn group(_: &()) -> std::borrow::Cow<'_, str> {
            "example.com".into()
        }
        fn version(_: &()) -> std::borrow::Cow<'_, str> {
            "v1".into()
        }
        fn plural(_: &()) -> std::borrow::Cow<'_, str> {
            "widgets".into()
        }
        fn meta(&self) -> &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
            &self.metadata
        }
        fn meta_mut(&mut self) -> &mut k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
            &mut self.metadata
        }
    }
    impl Validate for Widget {
        fn schema() -> &'static Schema {
            static S: std::sync::OnceLock<Schema> = std::sync::OnceLock::new();
            S.get_or_init(|| {
                Schema::from_json(
                    &json!({"type": "object", "properties": {
                        "metadata": {"type": "object"},
                        "spec": {"type": "object", "properties": {
                            "size": {"type": "integer", "default": 3, "maximum": 10}
                        }}
                    }})
                    .to_string(),
                )
                .unwrap()
            })
        }
    }
    let review = |spec: Value| {
        let mut r = review_of(
            "CREATE",
            json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": spec}),
            Value::Null,
        );
        r["request"]["kind"] = json!({"group": "example.com", "version": "v1", "kind": "Widget"});
        r.to_string()
    };
    let d: Box<dyn Route> = Box::new(Typed::<Widget, _>::new(Defaulting(SchemaRules)));
    let (r, _) = answer(d.as_ref(), review(json!({})).as_bytes()).await;
    assert_eq!(
        serde_json::to_value(patch_of(&r)).unwrap(),
        json!([{"op": "add", "path": "/spec/size", "value": 3}])
    );
    let v: Box<dyn Route> = Box::new(Typed::<Widget, _>::new(Validating(SchemaRules)));
    let (r, _) = answer(v.as_ref(), review(json!({"size": 11})).as_bytes()).await;
    assert_eq!(r["status"]["code"], 422, "{r}");
    assert_eq!(
        r["status"]["details"]["causes"][0]["field"], "spec.size",
        "{r}"
    );
}
