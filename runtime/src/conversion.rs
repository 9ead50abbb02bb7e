//! Conversions between the versions of a kind, hub and spoke, as controller-runtime does
//! them: the storage version is the hub, every other version (a spoke) converts to and from
//! it ([`Convertible`]), so n versions need 2(n-1) conversions, not n(n-1).
//!
//! kube-codegen's `conversion` generator writes the [`Convertible`] impls (field by field,
//! with hand-written functions only where fields differ) and one [`KindConversions`] per
//! kind, which a [`Converter`] dispatches by `apiVersion`: that is what the conversion
//! webhook (`webhook`, feature `webhook`) serves.
//!
//! **Round trips.** A spoke cannot hold what only the hub has (a field added in the new
//! version). So that reading an object through an old version and writing it back loses
//! nothing, hub -> spoke stores the hub object (without its metadata) as JSON in the
//! annotation `<group>/conversion-data` ([`data_annotation`]) whenever converting the spoke
//! back would not give the hub again, and spoke -> hub takes the fields the spoke lacks from
//! it (and drops the annotation). Fields both versions have always come from the spoke, so
//! edits through the old version win. This is what Kubernetes' own types
//! (`autoscaling/v1` HorizontalPodAutoscaler's annotations) and Cluster API's
//! `conversion-data` do.

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A spoke version of a kind: converts to and from its hub, the storage version `H`.
pub trait Convertible<H>: Sized {
    /// This object in the hub version. Fields only the hub has come from the
    /// `conversion-data` annotation when the object carries one, else their defaults.
    fn to_hub(&self) -> H;
    /// The hub object in this version, with what this version cannot hold stored in the
    /// `conversion-data` annotation.
    fn from_hub(hub: &H) -> Self;
}

/// The annotation holding what a spoke cannot: `<group>/conversion-data`.
#[must_use]
pub fn data_annotation(group: &str) -> String {
    format!("{group}/conversion-data")
}

/// Removes the stored hub from `annotations` and returns it, if there is one that reads
/// as `H` (an unreadable one, say written by a version of the hub that no longer exists, is
/// dropped: the fields it held get their defaults, as for an object that never had it).
pub fn take_stored<H: DeserializeOwned>(
    annotations: &mut Option<BTreeMap<String, String>>,
    key: &str,
) -> Option<H> {
    let map = annotations.as_mut()?;
    let raw = map.remove(key)?;
    if map.is_empty() {
        *annotations = None;
    }
    serde_json::from_str(&raw).ok()
}

/// Stores `hub` (its `metadata` left out: the object carries its own) under `key`.
pub fn store<H: Serialize>(annotations: &mut Option<BTreeMap<String, String>>, key: &str, hub: &H) {
    let Ok(mut value) = serde_json::to_value(hub) else {
        return;
    };
    if let Some(obj) = value.as_object_mut() {
        obj.insert("metadata".into(), Value::Object(Default::default()));
    }
    annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(key.to_owned(), value.to_string());
}

/// Whether two objects serialize alike: how generated `from_hub` decides that a spoke loses
/// nothing (no `PartialEq` is required of API types).
#[must_use]
pub fn same<T: Serialize>(a: &T, b: &T) -> bool {
    match (serde_json::to_value(a), serde_json::to_value(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Why an object could not be converted. Every variant becomes a failed
/// `ConversionReview` response with this message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConversionError {
    /// The object has no `apiVersion` or `kind` string.
    #[error("object has no {0}")]
    Missing(&'static str),
    /// No registered kind of this group and name.
    #[error("no conversions registered for kind {kind} of group {group}")]
    UnknownKind {
        /// The object's group.
        group: String,
        /// The object's kind.
        kind: String,
    },
    /// A version the kind does not have.
    #[error("{kind}.{group} has no version {version} (known: {known})")]
    UnknownVersion {
        /// The kind's group.
        group: String,
        /// The kind.
        kind: String,
        /// The version asked for or found.
        version: String,
        /// The kind's versions, comma-separated.
        known: String,
    },
    /// The desired apiVersion is in another group than the object.
    #[error("cannot convert {from} to {to}: another group")]
    OtherGroup {
        /// The object's apiVersion.
        from: String,
        /// The desired apiVersion.
        to: String,
    },
    /// The object does not read as its version's type.
    #[error("cannot read {api_version} {kind}: {message}")]
    Decode {
        /// The object's apiVersion.
        api_version: String,
        /// The object's kind.
        kind: String,
        /// serde's message.
        message: String,
    },
    /// The converted object does not serialize.
    #[error("cannot write the converted object: {0}")]
    Encode(String),
}

/// Reads an object as its version's type (generated dispatch functions call this).
///
/// # Errors
///
/// [`ConversionError::Decode`] with serde's message.
pub fn decode<T: DeserializeOwned>(object: Value) -> Result<T, ConversionError> {
    let api_version = object
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let kind = object
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    serde_json::from_value(object).map_err(|e| ConversionError::Decode {
        api_version,
        kind,
        message: e.to_string(),
    })
}

/// Writes a converted object (generated dispatch functions call this).
///
/// # Errors
///
/// [`ConversionError::Encode`] when serialization fails.
pub fn encode<T: Serialize>(object: &T) -> Result<Value, ConversionError> {
    serde_json::to_value(object).map_err(|e| ConversionError::Encode(e.to_string()))
}

/// One multi-version kind's conversions, as generated code registers them.
#[derive(Debug, Clone, Copy)]
pub struct KindConversions {
    /// The API group.
    pub group: &'static str,
    /// The kind.
    pub kind: &'static str,
    /// The hub (storage) version.
    pub hub: &'static str,
    /// Every version, the hub included.
    pub versions: &'static [&'static str],
    /// Converts an object of any of `versions` (its `apiVersion` says which) to the
    /// version given.
    pub convert: fn(Value, &str) -> Result<Value, ConversionError>,
}

impl KindConversions {
    /// The error for a version this kind does not have.
    #[must_use]
    pub fn unknown_version(&self, version: &str) -> ConversionError {
        ConversionError::UnknownVersion {
            group: self.group.to_owned(),
            kind: self.kind.to_owned(),
            version: version.to_owned(),
            known: self.versions.join(", "),
        }
    }
}

/// Every kind's conversions, dispatched by group and kind: what a conversion webhook serves.
#[derive(Debug, Clone, Default)]
pub struct Converter {
    kinds: BTreeMap<(&'static str, &'static str), KindConversions>,
}

/// `group/version` split; the core group (`v1`) has an empty group.
fn split_api_version(api_version: &str) -> (&str, &str) {
    api_version.rsplit_once('/').unwrap_or(("", api_version))
}

impl Converter {
    /// A converter for these kinds (for instance a generated `conversion::KINDS`, or
    /// several API crates' chained).
    pub fn new<'a>(kinds: impl IntoIterator<Item = &'a KindConversions>) -> Self {
        Converter {
            kinds: kinds.into_iter().map(|k| ((k.group, k.kind), *k)).collect(),
        }
    }

    /// The registered kinds.
    pub fn kinds(&self) -> impl Iterator<Item = &KindConversions> {
        self.kinds.values()
    }

    /// Converts one object to `desired_api_version`.
    ///
    /// # Errors
    ///
    /// A [`ConversionError`] saying what is wrong: no apiVersion or kind, an unknown kind or
    /// version, another group, an object that does not read as its version.
    pub fn convert(
        &self,
        object: Value,
        desired_api_version: &str,
    ) -> Result<Value, ConversionError> {
        let api_version = object
            .get("apiVersion")
            .and_then(Value::as_str)
            .ok_or(ConversionError::Missing("apiVersion"))?;
        let kind = object
            .get("kind")
            .and_then(Value::as_str)
            .ok_or(ConversionError::Missing("kind"))?;
        let (group, _) = split_api_version(api_version);
        let (to_group, to_version) = split_api_version(desired_api_version);
        if group != to_group {
            return Err(ConversionError::OtherGroup {
                from: api_version.to_owned(),
                to: desired_api_version.to_owned(),
            });
        }
        let Some(k) = self.kinds.get(&(group, kind)) else {
            return Err(ConversionError::UnknownKind {
                group: group.to_owned(),
                kind: kind.to_owned(),
            });
        };
        if !k.versions.contains(&to_version) {
            return Err(k.unknown_version(to_version));
        }
        (k.convert)(object, to_version)
    }

    /// Answers a `ConversionReview` (apiextensions.k8s.io/v1) given as JSON: every object
    /// converted, or a failed status saying why (a malformed review, an unknown kind or
    /// version, an object that does not read). Never panics; the answer always serializes.
    #[must_use]
    pub fn review(&self, body: &[u8]) -> ConversionReview {
        let review: ConversionReview = match serde_json::from_slice(body) {
            Ok(r) => r,
            Err(e) => {
                // The uid is echoed when it can be found at all, so the API server can
                // match the answer to its request.
                let uid = serde_json::from_slice::<Value>(body)
                    .ok()
                    .and_then(|v| v.pointer("/request/uid")?.as_str().map(str::to_owned))
                    .unwrap_or_default();
                return ConversionReview::failed(uid, format!("malformed ConversionReview: {e}"));
            }
        };
        let Some(request) = review.request else {
            return ConversionReview::failed(
                String::new(),
                "malformed ConversionReview: no request".into(),
            );
        };
        if review.api_version.as_deref() != Some("apiextensions.k8s.io/v1") {
            return ConversionReview::failed(
                request.uid,
                format!(
                    "unsupported ConversionReview apiVersion {:?}: this webhook speaks apiextensions.k8s.io/v1",
                    review.api_version.unwrap_or_default()
                ),
            );
        }
        let mut converted = Vec::with_capacity(request.objects.len());
        for (i, object) in request.objects.into_iter().enumerate() {
            match self.convert(object, &request.desired_api_version) {
                Ok(o) => converted.push(o),
                Err(e) => {
                    return ConversionReview::failed(request.uid, format!("object {i}: {e}"));
                }
            }
        }
        ConversionReview {
            api_version: Some("apiextensions.k8s.io/v1".into()),
            kind: Some("ConversionReview".into()),
            request: None,
            response: Some(ConversionResponse {
                uid: request.uid,
                converted_objects: converted,
                result: Status {
                    status: "Success".into(),
                    message: None,
                },
            }),
        }
    }
}

/// `ConversionReview` of apiextensions.k8s.io/v1 (the webhook's request and answer).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConversionReview {
    /// `apiextensions.k8s.io/v1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `ConversionReview`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// What the API server asks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<ConversionRequest>,
    /// The answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<ConversionResponse>,
}

impl ConversionReview {
    /// A failed answer with a message.
    #[must_use]
    pub fn failed(uid: String, message: String) -> Self {
        ConversionReview {
            api_version: Some("apiextensions.k8s.io/v1".into()),
            kind: Some("ConversionReview".into()),
            request: None,
            response: Some(ConversionResponse {
                uid,
                converted_objects: vec![],
                result: Status {
                    status: "Failure".into(),
                    message: Some(message),
                },
            }),
        }
    }

    /// Whether this is a successful answer.
    #[must_use]
    pub fn succeeded(&self) -> bool {
        self.response
            .as_ref()
            .is_some_and(|r| r.result.status == "Success")
    }
}

/// `ConversionRequest`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConversionRequest {
    /// Echoed in the response.
    pub uid: String,
    /// The apiVersion to convert every object to.
    #[serde(rename = "desiredAPIVersion")]
    pub desired_api_version: String,
    /// The objects, in any versions of the kind.
    pub objects: Vec<Value>,
}

/// `ConversionResponse`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConversionResponse {
    /// The request's uid.
    pub uid: String,
    /// The objects converted, in the request's order.
    #[serde(default, deserialize_with = "null_as_empty")]
    pub converted_objects: Vec<Value>,
    /// Success, or Failure with a message.
    pub result: Status,
}

/// The API server sends an empty response in its request (`"convertedObjects": null`).
fn null_as_empty<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Value>, D::Error> {
    Ok(Option::<Vec<Value>>::deserialize(d)?.unwrap_or_default())
}

/// The `metav1.Status` of a response: only what the API server reads.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Status {
    /// `Success` or `Failure` (empty in the request's placeholder response).
    #[serde(default)]
    pub status: String,
    /// Why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A hand-written kind with two versions: v2 (hub) has `size` where v1 had `count`.
    fn convert_widget(object: Value, to: &str) -> Result<Value, ConversionError> {
        let from = object["apiVersion"].as_str().unwrap_or_default().to_owned();
        let mut o = object;
        let count = o["spec"]["count"].take();
        let size = o["spec"]["size"].take();
        match (from.as_str(), to) {
            (_, "v1") => {
                o["apiVersion"] = json!("example.com/v1");
                o["spec"] = json!({"count": if count.is_null() { size } else { count }});
            }
            (_, "v2") => {
                o["apiVersion"] = json!("example.com/v2");
                o["spec"] = json!({"size": if size.is_null() { count } else { size }});
            }
            _ => return Err(WIDGET.unknown_version(to)),
        }
        Ok(o)
    }

    static WIDGET: KindConversions = KindConversions {
        group: "example.com",
        kind: "Widget",
        hub: "v2",
        versions: &["v1", "v2"],
        convert: convert_widget,
    };

    /// A review as kube-apiserver sends it: with an empty placeholder response (its
    /// `convertedObjects` null, its `result` a bare Status).
    fn review(desired: &str, objects: Vec<Value>) -> Vec<u8> {
        serde_json::to_vec(&json!({
            "kind": "ConversionReview",
            "apiVersion": "apiextensions.k8s.io/v1",
            "request": {"uid": "u-1", "desiredAPIVersion": desired, "objects": objects},
            "response": {"uid": "", "convertedObjects": null, "result": {"metadata": {}}},
        }))
        .unwrap()
    }

    fn failure(r: &ConversionReview) -> String {
        let resp = r.response.as_ref().unwrap();
        assert_eq!(resp.result.status, "Failure");
        resp.result.message.clone().unwrap()
    }

    #[test]
    fn converts_every_object_and_echoes_the_uid() {
        let c = Converter::new([&WIDGET]);
        let out = c.review(&review(
            "example.com/v2",
            vec![
                json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "a"}, "spec": {"count": 3}}),
                json!({"apiVersion": "example.com/v2", "kind": "Widget", "metadata": {"name": "b"}, "spec": {"size": 4}}),
            ],
        ));
        assert!(out.succeeded(), "{out:?}");
        let resp = out.response.unwrap();
        assert_eq!(resp.uid, "u-1");
        assert_eq!(resp.converted_objects[0]["spec"], json!({"size": 3}));
        assert_eq!(resp.converted_objects[1]["spec"], json!({"size": 4}));
        assert_eq!(resp.converted_objects[0]["apiVersion"], "example.com/v2");
    }

    #[test]
    fn bad_input_answers_failure_with_a_message() {
        let c = Converter::new([&WIDGET]);
        assert!(failure(&c.review(b"{not json")).starts_with("malformed ConversionReview"));
        assert!(failure(&c.review(b"[]")).starts_with("malformed ConversionReview"));
        assert!(failure(&c.review(b"{}")).contains("no request"));
        // A review of another apiVersion (v1beta1) is refused, uid kept.
        let v1beta1 = serde_json::to_vec(&json!({
            "apiVersion": "apiextensions.k8s.io/v1beta1", "kind": "ConversionReview",
            "request": {"uid": "u-2", "desiredAPIVersion": "example.com/v1", "objects": []},
        }))
        .unwrap();
        let out = c.review(&v1beta1);
        assert!(failure(&out).contains("apiextensions.k8s.io/v1beta1"));
        assert_eq!(out.response.unwrap().uid, "u-2");
        // The uid is echoed even when the rest does not read.
        let out = c.review(br#"{"request": {"uid": "u-3", "objects": 7}}"#);
        assert_eq!(out.response.as_ref().unwrap().uid, "u-3");
        assert!(failure(&out).starts_with("malformed"));

        let widget = json!({"apiVersion": "example.com/v1", "kind": "Widget", "spec": {}});
        let msg = failure(&c.review(&review("example.com/v9", vec![widget.clone()])));
        assert_eq!(
            msg,
            "object 0: Widget.example.com has no version v9 (known: v1, v2)"
        );
        let msg = failure(&c.review(&review("other.io/v1", vec![widget])));
        assert!(msg.contains("another group"), "{msg}");
        let gadget = json!({"apiVersion": "example.com/v1", "kind": "Gadget"});
        let msg = failure(&c.review(&review("example.com/v2", vec![gadget])));
        assert!(
            msg.contains("no conversions registered for kind Gadget"),
            "{msg}"
        );
        let msg = failure(&c.review(&review("example.com/v2", vec![json!({"kind": "Widget"})])));
        assert!(msg.contains("no apiVersion"), "{msg}");
    }

    /// Arbitrary JSON values, nested a few levels.
    fn any_json() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            "[a-zA-Z/0-9.]{0,12}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                proptest::collection::btree_map(
                    prop_oneof![
                        Just("apiVersion".to_owned()),
                        Just("kind".to_owned()),
                        Just("request".to_owned()),
                        Just("uid".to_owned()),
                        Just("desiredAPIVersion".to_owned()),
                        Just("objects".to_owned()),
                        "[a-z]{1,6}",
                    ],
                    inner,
                    0..5
                )
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        /// Whatever arrives, the answer is a ConversionReview that serializes: success or a
        /// failed status with a message, never a panic.
        #[test]
        fn any_body_gets_an_answer(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64), json in any_json(), objects in proptest::collection::vec(any_json(), 0..3)) {
            let c = Converter::new([&WIDGET]);
            let mut wrapped = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
                "request": {"uid": "u", "desiredAPIVersion": "example.com/v2", "objects": objects}});
            for body in [bytes, serde_json::to_vec(&json).unwrap(), serde_json::to_vec(&wrapped).unwrap()] {
                let answer = c.review(&body);
                let resp = answer.response.as_ref().unwrap();
                proptest::prop_assert!(resp.result.status == "Success" || resp.result.message.is_some());
                proptest::prop_assert!(serde_json::to_vec(&answer).is_ok());
            }
            wrapped["request"]["objects"] = json!([json]);
            let answer = c.review(&serde_json::to_vec(&wrapped).unwrap());
            proptest::prop_assert!(answer.response.is_some());
        }
    }

    #[test]
    fn stored_data_round_trips_and_leaves_no_empty_map() {
        let mut annotations = None;
        store(
            &mut annotations,
            "example.com/conversion-data",
            &json!({"metadata": {"name": "x"}, "spec": {"size": 1}}),
        );
        let raw = &annotations.as_ref().unwrap()["example.com/conversion-data"];
        assert_eq!(raw, r#"{"metadata":{},"spec":{"size":1}}"#);
        let back: Value = take_stored(&mut annotations, "example.com/conversion-data").unwrap();
        assert_eq!(back["spec"]["size"], 1);
        assert_eq!(annotations, None);
        let mut garbled = Some(BTreeMap::from([
            ("k".to_owned(), "{".to_owned()),
            ("other".to_owned(), "v".to_owned()),
        ]));
        assert_eq!(take_stored::<Value>(&mut garbled, "k"), None);
        assert_eq!(garbled.unwrap().len(), 1);
    }
}
