//! Defaulting and validation of custom resources as the API server does them, from the
//! CRD's structural schema: pruning, null pruning and defaulting
//! (`structuraldefaulting`), the OpenAPI value validations (kube-openapi's validators and
//! the error classes apiextensions-apiserver maps them to), list-type uniqueness
//! (`structurallisttype`), and `x-kubernetes-validations` rules on the [`crate::cel`]
//! evaluator, with transition rules and ratcheting on updates.
//!
//! Generated code (the `validation` generator) embeds each kind's schema and implements
//! [`Validate`] with it; the fake API server calls the same code on create and update.

mod defaults;
mod embedded;
pub mod formats;
pub mod names;
mod schema;
mod walk;

use std::fmt;

pub use defaults::{DefaultError, SchemaStep};
pub use schema::{Schema, SchemaError};

/// The class of a violation: the API server's `field.ErrorType`, worded as it words them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorType {
    /// `FieldValueNotFound`: "Not found".
    NotFound,
    /// `FieldValueRequired`: "Required value".
    Required,
    /// `FieldValueDuplicate`: "Duplicate value".
    Duplicate,
    /// `FieldValueInvalid`: "Invalid value".
    Invalid,
    /// `FieldValueNotSupported`: "Unsupported value".
    NotSupported,
    /// `FieldValueForbidden`: "Forbidden".
    Forbidden,
    /// `FieldValueTooLong`: "Too long".
    TooLong,
    /// `FieldValueTooMany`: "Too many".
    TooMany,
    /// `InternalError`: "Internal error".
    Internal,
    /// `FieldValueTypeInvalid`: "Invalid value" (a wrong type or format).
    TypeInvalid,
}

impl ErrorType {
    /// The words the API server prints.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorType::NotFound => "Not found",
            ErrorType::Required => "Required value",
            ErrorType::Duplicate => "Duplicate value",
            ErrorType::Invalid | ErrorType::TypeInvalid => "Invalid value",
            ErrorType::NotSupported => "Unsupported value",
            ErrorType::Forbidden => "Forbidden",
            ErrorType::TooLong => "Too long",
            ErrorType::TooMany => "Too many",
            ErrorType::Internal => "Internal error",
        }
    }

    /// The `reason` of a `StatusCause` (`metav1.CauseType`).
    pub fn cause_type(self) -> &'static str {
        match self {
            ErrorType::NotFound => "FieldValueNotFound",
            ErrorType::Required => "FieldValueRequired",
            ErrorType::Duplicate => "FieldValueDuplicate",
            ErrorType::Invalid => "FieldValueInvalid",
            ErrorType::NotSupported => "FieldValueNotSupported",
            ErrorType::Forbidden => "FieldValueForbidden",
            ErrorType::TooLong => "FieldValueTooLong",
            ErrorType::TooMany => "FieldValueTooMany",
            ErrorType::Internal => "InternalError",
            ErrorType::TypeInvalid => "FieldValueTypeInvalid",
        }
    }

    /// The class of a `StatusCause` reason.
    pub fn from_cause_type(s: &str) -> Option<ErrorType> {
        use ErrorType::*;
        [
            NotFound,
            Required,
            Duplicate,
            Invalid,
            NotSupported,
            Forbidden,
            TooLong,
            TooMany,
            Internal,
            TypeInvalid,
        ]
        .into_iter()
        .find(|t| t.cause_type() == s)
    }
}

/// One violation: `field.Error`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    /// The field path as the API server prints it (`spec.items[0].name`, `spec.labels[k]`).
    pub field: String,
    /// Its class.
    pub error_type: ErrorType,
    /// The bad value as the API server prints it (`"abc"`, `5`, `null`), if it prints one.
    pub value: Option<String>,
    /// What is wrong.
    pub detail: String,
}

impl FieldError {
    /// `field.Invalid`: `value` (printed as the API server prints a bad value) is wrong
    /// for `field` because of `detail`.
    pub fn invalid(
        field: impl Into<String>,
        value: impl serde::Serialize,
        detail: impl Into<String>,
    ) -> Self {
        FieldError {
            field: field.into(),
            error_type: ErrorType::Invalid,
            value: Some(walk::render(
                &serde_json::to_value(value).unwrap_or(serde_json::Value::Null),
            )),
            detail: detail.into(),
        }
    }

    /// `field.Required`: `field` must be set (`detail` may be empty).
    pub fn required(field: impl Into<String>, detail: impl Into<String>) -> Self {
        FieldError {
            field: field.into(),
            error_type: ErrorType::Required,
            value: None,
            detail: detail.into(),
        }
    }

    /// `field.Forbidden`: `field` may not be set, or not so, because of `detail`.
    pub fn forbidden(field: impl Into<String>, detail: impl Into<String>) -> Self {
        FieldError {
            field: field.into(),
            error_type: ErrorType::Forbidden,
            value: None,
            detail: detail.into(),
        }
    }

    /// `field.NotSupported`: `value` is not one of `supported`.
    pub fn not_supported(
        field: impl Into<String>,
        value: impl serde::Serialize,
        supported: &[&str],
    ) -> Self {
        let quoted: Vec<String> = supported
            .iter()
            .map(|s| walk::render(&serde_json::Value::from(*s)))
            .collect();
        FieldError {
            field: field.into(),
            error_type: ErrorType::NotSupported,
            value: Some(walk::render(
                &serde_json::to_value(value).unwrap_or(serde_json::Value::Null),
            )),
            detail: format!("supported values: {}", quoted.join(", ")),
        }
    }

    /// The message of the API server's `StatusCause` (`field.Error.ErrorBody()`).
    pub fn body(&self) -> String {
        let mut s = self.error_type.as_str().to_owned();
        if let Some(v) = &self.value {
            s.push_str(": ");
            s.push_str(v);
        }
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            f.write_str(&self.body())
        } else {
            write!(f, "{}: {}", self.field, self.body())
        }
    }
}

/// Every violation of an object, in the API server's order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Errors(pub Vec<FieldError>);

impl fmt::Display for Errors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // As the API server joins them in a Status message: `[a, b]` for several.
        let parts: Vec<String> = self.0.iter().map(ToString::to_string).collect();
        match parts.as_slice() {
            [one] => f.write_str(one),
            _ => write!(f, "[{}]", parts.join(", ")),
        }
    }
}

impl std::error::Error for Errors {}

impl From<Vec<FieldError>> for Errors {
    fn from(errors: Vec<FieldError>) -> Self {
        Errors(errors)
    }
}

impl From<FieldError> for Errors {
    fn from(error: FieldError) -> Self {
        Errors(vec![error])
    }
}

impl Errors {
    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The scale subresource's checks of the replicas at `spec_replicas_path` (a JSON path like
/// `.spec.replicas`), which the API server runs with schema validation for kinds that
/// have one: a non-negative 32-bit integer.
pub fn validate_scale(v: &serde_json::Value, spec_replicas_path: &str) -> Vec<FieldError> {
    let mut at = v;
    for part in spec_replicas_path.trim_start_matches('.').split('.') {
        match at.get(part) {
            Some(x) => at = x,
            None => return vec![],
        }
    }
    let Some(n) = at.as_i64() else {
        return vec![];
    };
    let detail = if n < 0 {
        "should be a non-negative integer".to_owned()
    } else if n > i32::MAX as i64 {
        format!("should be less than or equal to {}", i32::MAX)
    } else {
        return vec![];
    };
    vec![FieldError {
        field: spec_replicas_path.to_owned(),
        error_type: ErrorType::Invalid,
        value: Some(n.to_string()),
        detail,
    }]
}

/// Defaulting and validation of a kind, from its CRD schema; implemented by generated code
/// (the `validation` generator), which supplies [`Validate::schema`].
pub trait Validate: serde::Serialize + serde::de::DeserializeOwned {
    /// The kind's structural schema (the CRD version's `openAPIV3Schema`), compiled once.
    fn schema() -> &'static Schema;

    /// Whether the kind has the status subresource: the API server then ignores `status`
    /// in writes of the main resource (drops it on create, keeps the stored one on update).
    const STATUS_SUBRESOURCE: bool = false;

    /// The scale subresource's `specReplicasPath` (`.spec.replicas`), whose value the API
    /// server checks on writes ([`validate_scale`]).
    const SCALE_SPEC_REPLICAS_PATH: Option<&'static str> = None;

    /// The object as the API server validates a write of it: `status` handled as the
    /// status subresource has it, defaults applied.
    fn admitted_value(&self, old: Option<&serde_json::Value>) -> serde_json::Value {
        let mut v = serde_json::to_value(self).expect("API objects serialize to JSON");
        if Self::STATUS_SUBRESOURCE
            && let Some(m) = v.as_object_mut()
        {
            m.remove("status");
            if let Some(s) = old.and_then(|o| o.get("status")) {
                m.insert("status".into(), s.clone());
            }
        }
        Self::schema().default_value(&mut v);
        v
    }

    /// [`Schema::validate_value`] plus the scale subresource's check.
    fn check_value(v: &serde_json::Value, old: Option<&serde_json::Value>) -> Result<(), Errors> {
        let mut errs = match Self::schema().validate_value(v, old) {
            Ok(()) => vec![],
            Err(e) => e.0,
        };
        if let Some(p) = Self::SCALE_SPEC_REPLICAS_PATH {
            errs.extend(validate_scale(v, p));
        }
        if errs.is_empty() {
            Ok(())
        } else {
            Err(Errors(errs))
        }
    }

    /// Applies every default as the API server does before it stores the object: unknown
    /// fields and non-nullable nulls without a default pruned, then defaults, recursively.
    ///
    /// Panics if the defaulted object does not deserialize into the Rust type: defaults
    /// are checked against their fields at generation time, so that is a kube-codegen bug.
    fn set_defaults(&mut self) {
        let mut v = serde_json::to_value(&*self).expect("API objects serialize to JSON");
        Self::schema().default_value(&mut v);
        *self = serde_json::from_value(v)
            .expect("defaulted objects deserialize: defaults were checked at generation time");
    }

    /// The API server's verdict on creating this object: defaults applied to a copy, then
    /// every violation with its field path and class. `Ok` when the server would accept it.
    fn validate(&self) -> Result<(), Errors> {
        Self::check_value(&self.admitted_value(None), None)
    }

    /// The verdict on updating `old` to this object: transition rules (`oldSelf`) run, and
    /// errors on values that did not change are ratcheted away, as the server does.
    fn validate_update(&self, old: &Self) -> Result<(), Errors> {
        let mut o = serde_json::to_value(old).expect("API objects serialize to JSON");
        Self::schema().default_value(&mut o);
        Self::check_value(&self.admitted_value(Some(&o)), Some(&o))
    }
}

#[cfg(test)]
mod tests;
