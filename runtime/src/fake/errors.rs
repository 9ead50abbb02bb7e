//! Constructors for the `metav1.Status` errors a real apiserver returns, with the same
//! `reason`, `code`, `message` wording and `details`, as
//! `k8s.io/apimachinery/pkg/api/errors` builds them.
//!
//! The fake server uses them itself; tests use them in reactors
//! ([`FakeApiServer::prepend_reactor`](super::FakeApiServer::prepend_reactor)) to inject
//! failures:
//!
//! ```
//! use kube_codegen_runtime::fake::errors;
//! let s = errors::conflict("samplecontroller.k8s.io", "foos", "x", "injected");
//! assert_eq!(s.code, 409);
//! assert_eq!(s.reason, "Conflict");
//! assert_eq!(s.message, r#"Operation cannot be fulfilled on foos.samplecontroller.k8s.io "x": injected"#);
//! ```
//!
//! `group` and `resource` are the group and plural resource name (`""`, `"configmaps"`);
//! messages use the qualified form `resource.group` like Go's `GroupResource.String()`.

use kube::core::{Status, response::StatusCause, response::StatusDetails};

/// The message suffix of a stale-resourceVersion conflict.
pub const OBJECT_MODIFIED: &str =
    "the object has been modified; please apply your changes to the latest version and try again";

fn qualified(group: &str, name: &str) -> String {
    if group.is_empty() {
        name.to_string()
    } else {
        format!("{name}.{group}")
    }
}

fn details(group: &str, kind: &str, name: &str) -> StatusDetails {
    StatusDetails {
        name: name.to_string(),
        group: group.to_string(),
        kind: kind.to_string(),
        uid: String::new(),
        causes: Vec::new(),
        retry_after_seconds: 0,
    }
}

/// 404 NotFound: `configmaps "x" not found`.
#[must_use]
pub fn not_found(group: &str, resource: &str, name: &str) -> Status {
    let qr = qualified(group, resource);
    let message = if name.is_empty() {
        format!("{qr} not found")
    } else {
        format!("{qr} \"{name}\" not found")
    };
    Status::failure(&message, "NotFound")
        .with_code(404)
        .with_details(details(group, resource, name))
}

/// 404 NotFound for a path the server does not serve (an unregistered resource or
/// subresource): `the server could not find the requested resource`.
#[must_use]
pub fn resource_not_found() -> Status {
    let mut d = details("", "", "");
    d.causes.push(StatusCause {
        reason: "UnexpectedServerResponse".into(),
        message: "404 page not found".into(),
        field: String::new(),
    });
    Status::failure(
        "the server could not find the requested resource",
        "NotFound",
    )
    .with_code(404)
    .with_details(d)
}

/// 409 AlreadyExists: `configmaps "x" already exists`.
#[must_use]
pub fn already_exists(group: &str, resource: &str, name: &str) -> Status {
    let message = format!("{} \"{name}\" already exists", qualified(group, resource));
    Status::failure(&message, "AlreadyExists")
        .with_code(409)
        .with_details(details(group, resource, name))
}

/// 409 Conflict: `Operation cannot be fulfilled on configmaps "x": {reason}`.
#[must_use]
pub fn conflict(group: &str, resource: &str, name: &str, reason: &str) -> Status {
    let message = format!(
        "Operation cannot be fulfilled on {} \"{name}\": {reason}",
        qualified(group, resource)
    );
    Status::failure(&message, "Conflict")
        .with_code(409)
        .with_details(details(group, resource, name))
}

/// 409 Conflict for a stale `metadata.resourceVersion`, worded like the real apiserver's
/// (`...: the object has been modified; please apply your changes to the latest version and
/// try again`).
#[must_use]
pub fn stale_conflict(group: &str, resource: &str, name: &str) -> Status {
    conflict(group, resource, name, OBJECT_MODIFIED)
}

/// 422 Invalid: `Foo.samplecontroller.k8s.io "x" is invalid: spec.replicas: Invalid value: ...`.
///
/// `kind` is the Kind (not the plural); `causes` are `(field, message)` pairs, where the
/// message is e.g. `Required value: name or generateName is required`.
#[must_use]
pub fn invalid(group: &str, kind: &str, name: &str, causes: &[(&str, &str)]) -> Status {
    let errs: Vec<String> = causes.iter().map(|(f, m)| format!("{f}: {m}")).collect();
    let joined = match errs.as_slice() {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    };
    let message = format!("{} \"{name}\" is invalid: {joined}", qualified(group, kind));
    let mut d = details(group, kind, name);
    for (field, msg) in causes {
        let reason = if msg.starts_with("Required value") {
            "FieldValueRequired"
        } else if msg.starts_with("Forbidden") {
            "FieldValueForbidden"
        } else if msg.starts_with("Too long") {
            "FieldValueTooLong"
        } else {
            "FieldValueInvalid"
        };
        d.causes.push(StatusCause {
            reason: reason.into(),
            message: (*msg).into(),
            field: (*field).into(),
        });
    }
    Status::failure(&message, "Invalid")
        .with_code(422)
        .with_details(d)
}

/// 400 BadRequest with the given message.
#[must_use]
pub fn bad_request(message: &str) -> Status {
    Status::failure(message, "BadRequest").with_code(400)
}

/// 403 Forbidden: `pods "x" is forbidden: {reason}`.
#[must_use]
pub fn forbidden(group: &str, resource: &str, name: &str, reason: &str) -> Status {
    let qr = qualified(group, resource);
    let message = if name.is_empty() {
        format!("{qr} is forbidden: {reason}")
    } else {
        format!("{qr} \"{name}\" is forbidden: {reason}")
    };
    Status::failure(&message, "Forbidden")
        .with_code(403)
        .with_details(details(group, resource, name))
}

/// 405 MethodNotAllowed.
#[must_use]
pub fn method_not_allowed() -> Status {
    Status::failure(
        "the server does not allow this method on the requested resource",
        "MethodNotAllowed",
    )
    .with_code(405)
}

/// 410 Expired, as sent in a watch `ERROR` event when the requested resourceVersion has
/// been compacted away: `too old resource version: 3 (10)`.
#[must_use]
pub fn expired(message: &str) -> Status {
    Status::failure(message, "Expired").with_code(410)
}

/// 415 UnsupportedMediaType for an unknown PATCH content type.
#[must_use]
pub fn unsupported_media_type(content_type: &str) -> Status {
    Status::failure(
        &format!(
            "the body of the request was in an unknown format ({content_type}) - accepted media types include: \
             application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, \
             application/strategic-merge-patch+json"
        ),
        "UnsupportedMediaType",
    )
    .with_code(415)
}

/// 429 TooManyRequests.
#[must_use]
pub fn too_many_requests(message: &str) -> Status {
    Status::failure(message, "TooManyRequests").with_code(429)
}

/// 500 InternalError: `Internal error occurred: {message}`.
#[must_use]
pub fn internal_error(message: &str) -> Status {
    let mut d = details("", "", "");
    d.causes.push(StatusCause {
        reason: String::new(),
        message: message.into(),
        field: String::new(),
    });
    Status::failure(
        &format!("Internal error occurred: {message}"),
        "InternalError",
    )
    .with_code(500)
    .with_details(d)
}

/// 503 ServiceUnavailable.
#[must_use]
pub fn service_unavailable(message: &str) -> Status {
    Status::failure(message, "ServiceUnavailable").with_code(503)
}

/// The wire form of a Status: adds `kind`, `apiVersion` and `metadata` the way the
/// apiserver serializes it.
pub(crate) fn to_json(status: &Status) -> serde_json::Value {
    let mut v = serde_json::to_value(status).unwrap_or_else(|_| serde_json::json!({}));
    if let Some(map) = v.as_object_mut() {
        map.insert("kind".into(), "Status".into());
        map.insert("apiVersion".into(), "v1".into());
        map.entry("metadata")
            .or_insert_with(|| serde_json::json!({}));
        map.entry("status").or_insert_with(|| "Failure".into());
    }
    v
}
