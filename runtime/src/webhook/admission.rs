//! Admission webhooks (feature `admission`): a typed [`Defaulter`] and [`Validator`] per
//! kind, served by the same [`Server`](super::Server) as the conversion webhook, on the
//! paths the `webhook` generator's `+kubebuilder:webhook:path=...` markers name. The shape
//! is controller-runtime's generic `admission.Defaulter[T]` / `admission.Validator[T]`
//! registered with `ctrl.NewWebhookManagedBy(mgr, &T{})`:
//!
//! ```no_run
//! # async fn f() -> Result<(), kube_codegen_runtime::webhook::WebhookError> {
//! use kube_codegen_runtime::validation::FieldError;
//! use kube_codegen_runtime::webhook::admission::{
//!     AdmissionError, Defaulter, Request, Validator, Warnings,
//! };
//! use kube_codegen_runtime::webhook::{Server, TlsFiles};
//! # use k8s_openapi::api::core::v1::ConfigMap as Foo;
//!
//! struct FooWebhook;
//!
//! impl Defaulter<Foo> for FooWebhook {
//!     async fn default(&self, foo: &mut Foo, _req: &Request) -> Result<(), AdmissionError> {
//!         foo.data.get_or_insert_default().entry("mode".into()).or_insert("fast".into());
//!         Ok(())
//!     }
//! }
//!
//! impl Validator<Foo> for FooWebhook {
//!     async fn validate_create(&self, foo: &Foo, _req: &Request) -> Result<Warnings, AdmissionError> {
//!         match foo.data.as_ref().and_then(|d| d.get("mode")) {
//!             Some(m) if m == "fast" || m == "slow" => Ok(vec![]),
//!             Some(m) => Err(FieldError::not_supported("data.mode", m, &["fast", "slow"]).into()),
//!             None => Err(FieldError::required("data.mode", "").into()),
//!         }
//!     }
//!     async fn validate_update(&self, _old: &Foo, new: &Foo, req: &Request) -> Result<Warnings, AdmissionError> {
//!         self.validate_create(new, req).await
//!     }
//! }
//!
//! let server = Server::builder()
//!     .defaulter("/mutate--v1-configmap", FooWebhook)
//!     .validator("/validate--v1-configmap", FooWebhook)
//!     .bind("0.0.0.0:9443".parse().unwrap(), TlsFiles::in_dir("/tmp/k8s-webhook-server/serving-certs"))
//!     .await?;
//! server.run(async { tokio::signal::ctrl_c().await.ok(); }).await
//! # }
//! ```
//!
//! - The review is `admission.k8s.io/v1` (or `v1beta1`, answered in kind) in kube's types
//!   ([`kube::core::admission`]); the answer echoes the request's `uid`.
//! - A defaulter's answer is the RFC 6902 JSON patch that makes its changes to the object
//!   *as the API server sent it*: the runtime diffs the typed object before and after
//!   [`Defaulter::default`] and replays that change on the raw request object, so fields
//!   the Rust type does not know (a newer API version's, a pruned-later unknown field) and
//!   round-trip noise (`null` versus absent, a serde default) never become `remove` or
//!   `replace` operations. controller-runtime fixed the same loss in v0.20 by dropping
//!   every `remove`, which also drops a defaulter's deliberate removals; this keeps them.
//! - A refusal is a `Status`: an [`AdmissionError::invalid`] is the API server's `422
//!   Invalid` with one cause per field (`Foo.group "name" is invalid: spec.x: ...`, as the
//!   API server words its own validation errors), [`AdmissionError::forbidden`] a `403 Forbidden`, as
//!   controller-runtime answers a plain error. Warnings go back in `warnings` whether the
//!   request is allowed or not.
//! - Whatever the body, the answer is an `AdmissionReview`: a malformed review, a kind the
//!   path does not serve, an object that does not decode into `T` are refused with a
//!   `400` status and a message, never a panic.
//! - `DELETE` and `CONNECT` are allowed untouched by a defaulter; a validator sees a
//!   `DELETE` with the object being deleted (the review's `oldObject`). `dryRun` requests
//!   are handled like any other; [`Request::dry_run`](kube::core::admission::AdmissionRequest::dry_run)
//!   tells a webhook with side effects to skip them.

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;

use kube::core::admission::{AdmissionRequest, AdmissionResponse, AdmissionReview, Operation};
use kube::core::{DynamicObject, Status};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::metrics::AdmissionOutcome;
use crate::validation::{Errors, FieldError};

/// The review's request as the webhook sees it: operation, user, dry-run, names. Its
/// `object` and `old_object` are `None` here: the objects are the typed arguments of
/// [`Defaulter::default`] and the [`Validator`] methods.
pub type Request = AdmissionRequest<DynamicObject>;

/// Warnings for the client (`kubectl` prints them as `Warning: ...`), at most a few short
/// lines: the API server truncates long ones.
pub type Warnings = Vec<String>;

/// Sets a kind's defaults before it is stored: controller-runtime's `admission.Defaulter[T]`.
///
/// Async, as controller-runtime's takes a context: a defaulter may read other objects
/// through a client while the API server waits (within the configuration's
/// `timeoutSeconds`). An implementation writes `async fn default(...)`.
pub trait Defaulter<T>: Send + Sync + 'static {
    /// Sets `obj`'s defaults in place; the runtime sends the API server the patch.
    ///
    /// # Errors
    ///
    /// An [`AdmissionError`] refuses the request with its status.
    fn default(
        &self,
        obj: &mut T,
        req: &Request,
    ) -> impl Future<Output = Result<(), AdmissionError>> + Send;
}

/// Accepts or refuses writes of a kind: controller-runtime's `admission.Validator[T]`.
///
/// Async for the same reason as [`Defaulter`]. An implementation writes `async fn`.
pub trait Validator<T>: Send + Sync + 'static {
    /// A create of `obj`.
    ///
    /// # Errors
    ///
    /// An [`AdmissionError`] refuses the create.
    fn validate_create(
        &self,
        obj: &T,
        req: &Request,
    ) -> impl Future<Output = Result<Warnings, AdmissionError>> + Send;

    /// An update of `old` to `new`.
    ///
    /// # Errors
    ///
    /// An [`AdmissionError`] refuses the update.
    fn validate_update(
        &self,
        old: &T,
        new: &T,
        req: &Request,
    ) -> impl Future<Output = Result<Warnings, AdmissionError>> + Send;

    /// A delete of `obj` (only called when the configuration's rules include `DELETE`);
    /// allowed by default.
    ///
    /// # Errors
    ///
    /// An [`AdmissionError`] refuses the delete.
    fn validate_delete(
        &self,
        obj: &T,
        req: &Request,
    ) -> impl Future<Output = Result<Warnings, AdmissionError>> + Send {
        let _ = (obj, req);
        async { Ok(Vec::new()) }
    }
}

/// Why a request is refused, and the warnings to send with the refusal.
#[derive(Clone, Debug)]
pub struct AdmissionError {
    reason: Refusal,
    warnings: Warnings,
}

#[derive(Clone, Debug)]
enum Refusal {
    Invalid(Errors),
    Forbidden(String),
    /// Not judged: the review or its objects cannot be read (a `400`, counted as an error
    /// rather than a denial).
    Malformed(String),
    // Boxed: a Status is ten times the size of the other refusals.
    Status(Box<Status>),
}

impl AdmissionError {
    /// Invalid fields: the API server's `422 Invalid`, message and causes as it words
    /// them for its own validation.
    #[must_use]
    pub fn invalid(errors: impl Into<Errors>) -> Self {
        AdmissionError {
            reason: Refusal::Invalid(errors.into()),
            warnings: vec![],
        }
    }

    /// A refusal that is not about a field: `403 Forbidden` with `message` (what
    /// controller-runtime answers for any error that is not a Kubernetes status).
    #[must_use]
    pub fn forbidden(message: impl Into<String>) -> Self {
        AdmissionError {
            reason: Refusal::Forbidden(message.into()),
            warnings: vec![],
        }
    }

    /// Any status (its code and reason as given; the API server turns a code below 400
    /// into 400).
    #[must_use]
    pub fn status(status: Status) -> Self {
        AdmissionError {
            reason: Refusal::Status(Box::new(status)),
            warnings: vec![],
        }
    }

    /// Warnings sent with the refusal.
    #[must_use]
    pub fn with_warnings(mut self, warnings: Warnings) -> Self {
        self.warnings = warnings;
        self
    }

    /// The `Status` the API server gets: an invalid names `group`/`kind` and `name`.
    fn to_status(&self, group: &str, kind: &str, name: &str) -> Status {
        match &self.reason {
            Refusal::Invalid(errors) => {
                crate::validation::invalid_status(group, kind, name, errors)
            }
            Refusal::Forbidden(message) => Status::failure(message, "Forbidden").with_code(403),
            Refusal::Malformed(message) => Status::failure(message, "BadRequest").with_code(400),
            Refusal::Status(s) => (**s).clone(),
        }
    }

    fn bad_request(message: String) -> Self {
        AdmissionError {
            reason: Refusal::Malformed(message),
            warnings: vec![],
        }
    }
}

impl std::fmt::Display for AdmissionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.reason {
            Refusal::Invalid(e) => write!(f, "invalid: {e}"),
            Refusal::Forbidden(m) | Refusal::Malformed(m) => f.write_str(m),
            Refusal::Status(s) => f.write_str(&s.message),
        }
    }
}

impl std::error::Error for AdmissionError {}

impl From<Errors> for AdmissionError {
    fn from(errors: Errors) -> Self {
        AdmissionError::invalid(errors)
    }
}

impl From<FieldError> for AdmissionError {
    fn from(error: FieldError) -> Self {
        AdmissionError::invalid(Errors(vec![error]))
    }
}

impl From<Vec<FieldError>> for AdmissionError {
    fn from(errors: Vec<FieldError>) -> Self {
        AdmissionError::invalid(Errors(errors))
    }
}

/// A kind's generated schema defaults and validation (the `validation` generator's
/// [`Validate`](crate::validation::Validate) impl) as a [`Defaulter`] and [`Validator`], so
/// a webhook runs exactly what the CRD makes the API server run, e.g. for checks the API
/// server of an older cluster does not make: `.validator("/validate-...", SchemaRules)`.
#[derive(Clone, Copy, Debug, Default)]
pub struct SchemaRules;

impl<T: crate::validation::Validate + Send + Sync + 'static> Defaulter<T> for SchemaRules {
    async fn default(&self, obj: &mut T, _req: &Request) -> Result<(), AdmissionError> {
        obj.set_defaults();
        Ok(())
    }
}

impl<T: crate::validation::Validate + Send + Sync + 'static> Validator<T> for SchemaRules {
    async fn validate_create(&self, obj: &T, _req: &Request) -> Result<Warnings, AdmissionError> {
        obj.validate()?;
        Ok(vec![])
    }

    async fn validate_update(
        &self,
        old: &T,
        new: &T,
        _req: &Request,
    ) -> Result<Warnings, AdmissionError> {
        new.validate_update(old)?;
        Ok(vec![])
    }
}

/// What a kind needs to be served: a Kubernetes kind of fixed group, version and kind
/// that round-trips through JSON.
pub trait Kind:
    kube::Resource<DynamicType = ()> + Serialize + DeserializeOwned + Send + Sync + 'static
{
}

impl<T> Kind for T where
    T: kube::Resource<DynamicType = ()> + Serialize + DeserializeOwned + Send + Sync + 'static
{
}

type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A judged request: the patch of a defaulter, the warnings of a validator.
#[derive(Debug, Default)]
pub(super) struct Verdict {
    patch: Option<json_patch::Patch>,
    warnings: Warnings,
}

/// One admission path's handler, its kind erased, so the server holds defaulters and
/// validators of every kind in one table.
pub(super) trait Route: Send + Sync {
    /// The kind served: (group, version, kind).
    fn gvk(&self) -> (String, String, String);

    /// Judges a request whose objects were taken out raw.
    fn judge<'a>(
        &'a self,
        req: &'a Request,
        object: Option<Value>,
        old: Option<Value>,
    ) -> BoxFuture<'a, Result<Verdict, AdmissionError>>;
}

fn gvk_of<T: Kind>() -> (String, String, String) {
    (
        T::group(&()).into_owned(),
        T::version(&()).into_owned(),
        T::kind(&()).into_owned(),
    )
}

fn decode<T: Kind>(raw: Option<Value>, which: &str) -> Result<T, AdmissionError> {
    let raw =
        raw.ok_or_else(|| AdmissionError::bad_request(format!("the review has no {which}")))?;
    serde_json::from_value(raw).map_err(|e| {
        let (group, version, kind) = gvk_of::<T>();
        AdmissionError::bad_request(format!(
            "the review's {which} cannot be decoded as {kind}.{group}/{version}: {e}"
        ))
    })
}

fn encode<T: Kind>(obj: &T) -> Result<Value, AdmissionError> {
    serde_json::to_value(obj).map_err(|e| {
        AdmissionError::status(
            Status::failure(
                &format!("cannot encode the defaulted object: {e}"),
                "InternalError",
            )
            .with_code(500),
        )
    })
}

/// A handler of kind `T`: [`Defaulting`] or [`Validating`].
pub(super) struct Typed<T, H> {
    handler: H,
    // `fn() -> T`: the route is Send and Sync whatever T is.
    kind: PhantomData<fn() -> T>,
}

impl<T, H> Typed<T, H> {
    pub(super) fn new(handler: H) -> Self {
        Typed {
            handler,
            kind: PhantomData,
        }
    }
}

/// A defaulter, as a route.
pub(super) struct Defaulting<D>(pub(super) D);

/// A validator, as a route.
pub(super) struct Validating<V>(pub(super) V);

impl<T: Kind, D: Defaulter<T>> Route for Typed<T, Defaulting<D>> {
    fn gvk(&self) -> (String, String, String) {
        gvk_of::<T>()
    }

    fn judge<'a>(
        &'a self,
        req: &'a Request,
        object: Option<Value>,
        _old: Option<Value>,
    ) -> BoxFuture<'a, Result<Verdict, AdmissionError>> {
        Box::pin(async move {
            if !matches!(req.operation, Operation::Create | Operation::Update) {
                return Ok(Verdict::default());
            }
            let Some(raw) = object else {
                return Err(AdmissionError::bad_request(
                    "the review has no object".into(),
                ));
            };
            let mut obj: T = decode(Some(raw.clone()), "object")?;
            let before = encode(&obj)?;
            self.handler.0.default(&mut obj, req).await?;
            let after = encode(&obj)?;
            let patch = defaulting_patch(&raw, &before, &after);
            Ok(Verdict {
                patch: (!patch.0.is_empty()).then_some(patch),
                warnings: vec![],
            })
        })
    }
}

impl<T: Kind, V: Validator<T>> Route for Typed<T, Validating<V>> {
    fn gvk(&self) -> (String, String, String) {
        gvk_of::<T>()
    }

    fn judge<'a>(
        &'a self,
        req: &'a Request,
        object: Option<Value>,
        old: Option<Value>,
    ) -> BoxFuture<'a, Result<Verdict, AdmissionError>> {
        Box::pin(async move {
            let warnings = match req.operation {
                Operation::Create => {
                    let obj: T = decode(object, "object")?;
                    self.handler.0.validate_create(&obj, req).await?
                }
                Operation::Update => {
                    let new: T = decode(object, "object")?;
                    let old: T = decode(old, "oldObject")?;
                    self.handler.0.validate_update(&old, &new, req).await?
                }
                // The API server sends the object being deleted as the oldObject.
                Operation::Delete => {
                    let obj: T = decode(old, "oldObject")?;
                    self.handler.0.validate_delete(&obj, req).await?
                }
                Operation::Connect => vec![],
            };
            Ok(Verdict {
                patch: None,
                warnings,
            })
        })
    }
}

/// The patch that makes, on `raw` (the object as the API server sent it), the change the
/// defaulter made from `before` to `after` (the typed object encoded before and after it).
///
/// The change is replayed on a copy of `raw` and the patch is the diff of `raw` to that
/// copy: what the Rust type does not hold (unknown fields, `null`s it reads as absent)
/// stays as sent, and only what the defaulter changed is in the patch, removals included.
#[must_use]
pub fn defaulting_patch(raw: &Value, before: &Value, after: &Value) -> json_patch::Patch {
    let mut defaulted = raw.clone();
    replay(&mut defaulted, before, after);
    json_patch::diff(raw, &defaulted)
}

/// Makes on `target` the change from `before` to `after`, leaving alone what both lack.
fn replay(target: &mut Value, before: &Value, after: &Value) {
    if before == after {
        return;
    }
    match (before, after, target) {
        (Value::Object(b), Value::Object(a), Value::Object(t)) => {
            for (k, av) in a {
                match (b.get(k), t.get_mut(k)) {
                    // Unchanged by the defaulter: as sent, even if sent otherwise.
                    (Some(bv), _) if bv == av => {}
                    (Some(bv), Some(tv)) => replay(tv, bv, av),
                    // New, or present before only through the type (a serde default):
                    // the defaulter's value.
                    _ => {
                        t.insert(k.clone(), av.clone());
                    }
                }
            }
            for k in b.keys() {
                if !a.contains_key(k) {
                    t.remove(k);
                }
            }
        }
        // Element by element while the raw list is the typed one's length, so unknown
        // fields of kept elements stay.
        (Value::Array(b), Value::Array(a), Value::Array(t)) if t.len() == b.len() => {
            for ((tv, bv), av) in t.iter_mut().zip(b).zip(a) {
                replay(tv, bv, av);
            }
            t.truncate(a.len());
            t.extend(a.iter().skip(b.len()).cloned());
        }
        (_, after, target) => *target = after.clone(),
    }
}

/// Answers the review in `body` with `route`: the serialized `AdmissionReview` and how it
/// went. Never fails: whatever is wrong with the body is in the answer.
pub(super) async fn review(route: &dyn Route, body: &[u8]) -> (Vec<u8>, AdmissionOutcome) {
    let (response, outcome) = match parse(route, body) {
        Ok((req, object, old)) => {
            let (g, _, k) = route.gvk();
            let name = if req.name.is_empty() {
                object
                    .as_ref()
                    .and_then(|o| o.pointer("/metadata/name"))
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned()
            } else {
                req.name.clone()
            };
            let mut response = AdmissionResponse::from(&req);
            let outcome = match route.judge(&req, object, old).await {
                Ok(verdict) => {
                    response.warnings = non_empty(verdict.warnings);
                    // kube sends the patch's bytes as a JSON array of numbers rather than
                    // base64; the API server's decoder reads both (tests/admission.rs).
                    match verdict.patch.map(|p| response.clone().with_patch(p)) {
                        Some(Ok(patched)) => response = patched,
                        Some(Err(e)) => {
                            response = response.deny(e);
                            response.result.code = 500;
                        }
                        None => {}
                    }
                    if response.allowed {
                        AdmissionOutcome::Allowed
                    } else {
                        AdmissionOutcome::Errored
                    }
                }
                Err(e) => {
                    response.allowed = false;
                    response.warnings = non_empty(e.warnings.clone());
                    let errored = matches!(e.reason, Refusal::Malformed(_));
                    response.result = e.to_status(&g, &k, &name);
                    if errored {
                        AdmissionOutcome::Errored
                    } else {
                        AdmissionOutcome::Denied
                    }
                }
            };
            (response, outcome)
        }
        Err((uid, message)) => return (refused(uid, message), AdmissionOutcome::Errored),
    };
    (encode_review(response), outcome)
}

/// The answer to a request that is not a review this path can judge: refused with a
/// `400` and `message`, under `uid` if the request had a readable one.
pub(super) fn refused(uid: String, message: String) -> Vec<u8> {
    let mut response = AdmissionResponse::invalid(&message);
    response.uid = uid;
    response.result = Status::failure(&message, "BadRequest").with_code(400);
    encode_review(response)
}

fn encode_review(response: AdmissionResponse) -> Vec<u8> {
    serde_json::to_vec(&response.into_review()).unwrap_or_else(|e| {
        // Our own types always serialize; should that ever fail, the client still gets JSON.
        format!(r#"{{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{{"uid":"","allowed":false,"status":{{"status":"Failure","code":500,"message":"cannot encode the response: {e}"}}}}}}"#).into_bytes()
    })
}

fn non_empty(warnings: Warnings) -> Option<Warnings> {
    (!warnings.is_empty()).then_some(warnings)
}

/// A review's request and its object and old object, raw.
type Parsed = (Request, Option<Value>, Option<Value>);

/// The review's request, with its objects taken out raw, or the uid (if readable) and
/// why the body is not a review this path serves.
fn parse(route: &dyn Route, body: &[u8]) -> Result<Parsed, (String, String)> {
    let mut review: Value = serde_json::from_slice(body)
        .map_err(|e| (String::new(), format!("malformed AdmissionReview: {e}")))?;
    let uid = review
        .pointer("/request/uid")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let fail = |message: String| (uid.clone(), message);
    let api_version = review.get("apiVersion").and_then(Value::as_str);
    let kind = review.get("kind").and_then(Value::as_str);
    if kind != Some("AdmissionReview")
        || !matches!(
            api_version,
            Some("admission.k8s.io/v1" | "admission.k8s.io/v1beta1")
        )
    {
        return Err(fail(format!(
            "expected an admission.k8s.io/v1 AdmissionReview, got kind {kind:?} of apiVersion {api_version:?}"
        )));
    }
    // Taken out raw: the defaulter's patch is computed against the object exactly as sent.
    let (object, old) = match review.get_mut("request").and_then(Value::as_object_mut) {
        Some(r) => (
            r.remove("object").filter(|o| !o.is_null()),
            r.remove("oldObject").filter(|o| !o.is_null()),
        ),
        None => return Err(fail("the AdmissionReview has no request".into())),
    };
    let review: AdmissionReview<DynamicObject> = serde_json::from_value(review)
        .map_err(|e| fail(format!("malformed AdmissionReview: {e}")))?;
    let req: Request = review
        .try_into()
        .map_err(|e| fail(format!("malformed AdmissionReview: {e}")))?;
    let (group, version, kind) = route.gvk();
    let k = &req.kind;
    if (k.group.as_str(), k.version.as_str(), k.kind.as_str())
        != (group.as_str(), version.as_str(), kind.as_str())
    {
        let gvk = |g: &str, v: &str, k: &str| {
            if g.is_empty() {
                format!("{v}, Kind={k}")
            } else {
                format!("{g}/{v}, Kind={k}")
            }
        };
        return Err(fail(format!(
            "this webhook serves {}, not {} (its configuration's rules must name only the served version)",
            gvk(&group, &version, &kind),
            gvk(&k.group, &k.version, &k.kind),
        )));
    }
    Ok((req, object, old))
}

#[cfg(test)]
mod tests;
