//! Server-side apply with typed apply configurations (client-go's `applyconfigurations`).
//!
//! Generated apply configurations (`FooApplyConfiguration`, every field an `Option` that is
//! absent from the wire when unset) say exactly which fields a field manager owns: the API
//! server takes ownership of what is sent and nothing else. This module holds what every
//! kind shares:
//!
//! - [`meta::ObjectMetaApplyConfiguration`], the `metadata` of every apply configuration;
//! - [`ApplyError`], what the typed `apply` verbs fail with: a missing field manager is
//!   refused before any request, and a field conflict is parsed into
//!   [`ApplyConflict`] (the managers and field paths the API server named);
//! - [`extract`], client-go's `ExtractFoo`: the apply configuration one manager owns,
//!   rebuilt from an object's `managedFields`.

pub mod extract;
pub(crate) mod fieldpath;
pub mod meta;

use std::fmt;

use kube::core::Status;

use crate::error::Error;

pub use extract::{ExtractError, Subresource};
pub use meta::{ObjectMetaApplyConfiguration, OwnerReferenceApplyConfiguration};

/// One field another manager owns, from a server-side apply conflict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldConflict {
    /// The manager that owns the field (`conflict with "manager"`), as the API server
    /// names it; for an `Update` manager the server appends the operation, e.g.
    /// `"kubectl-edit" using apps/v1`, so this is the text between the first quotes.
    pub manager: String,
    /// The field path as the API server writes it: `.spec.replicas`,
    /// `.spec.containers[name="app"].image`.
    pub field: String,
    /// The cause's whole message, for what the two fields above do not carry.
    pub message: String,
}

/// A server-side apply that other managers' fields stopped (HTTP 409, reason Conflict).
#[derive(Clone, Debug, PartialEq)]
pub struct ApplyConflict {
    /// Every conflicting field, in the API server's order.
    pub conflicts: Vec<FieldConflict>,
    /// The API server's Status, whole.
    pub status: Box<Status>,
}

impl ApplyConflict {
    /// The managers that own conflicting fields, each once, in order of first mention.
    #[must_use]
    pub fn managers(&self) -> Vec<&str> {
        let mut out: Vec<&str> = vec![];
        for c in &self.conflicts {
            if !out.contains(&c.manager.as_str()) {
                out.push(&c.manager);
            }
        }
        out
    }

    /// The conflicting field paths, in the API server's order.
    #[must_use]
    pub fn fields(&self) -> Vec<&str> {
        self.conflicts.iter().map(|c| c.field.as_str()).collect()
    }

    /// The conflict in a 409 Status, when the Status is one: reason `Conflict` and
    /// `details.causes[]` of type `FieldManagerConflict`. A 409 for a stale
    /// resourceVersion (no such causes) is not an apply conflict.
    #[must_use]
    pub fn from_status(status: &Status) -> Option<ApplyConflict> {
        if status.reason != "Conflict" && status.code != 409 {
            return None;
        }
        let causes = status.details.as_ref().map(|d| d.causes.as_slice())?;
        let conflicts: Vec<FieldConflict> = causes
            .iter()
            .filter(|c| c.reason == "FieldManagerConflict")
            .map(|c| FieldConflict {
                manager: quoted(&c.message).unwrap_or_default().to_owned(),
                field: c.field.clone(),
                message: c.message.clone(),
            })
            .collect();
        if conflicts.is_empty() {
            return None;
        }
        Some(ApplyConflict {
            conflicts,
            status: Box::new(status.clone()),
        })
    }
}

/// The text between the first pair of double quotes: the manager in `conflict with
/// "mgr"` (the API server quotes it with Go's %q; manager names with quotes in them are
/// not valid, so no unescaping is needed).
fn quoted(message: &str) -> Option<&str> {
    let start = message.find('"')? + 1;
    let len = message[start..].find('"')?;
    Some(&message[start..start + len])
}

impl fmt::Display for ApplyConflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "apply conflict:")?;
        for (i, c) in self.conflicts.iter().enumerate() {
            let sep = if i == 0 { " " } else { ", " };
            write!(f, "{sep}{} owned by \"{}\"", c.field, c.manager)?;
        }
        Ok(())
    }
}

/// Why a typed server-side apply failed.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    /// [`ApplyOptions::field_manager`](crate::client::ApplyOptions) was empty: refused
    /// before any request, since the API server would reject it and a defaulted manager
    /// would own fields nobody can name later.
    #[error("server-side apply needs a field manager (ApplyOptions::new(\"my-controller\"))")]
    MissingFieldManager,
    /// The apply configuration has no `metadata.name`, so there is no URL to apply to.
    #[error("server-side apply needs metadata.name in the apply configuration")]
    MissingName,
    /// Other managers own fields this apply sets, and `force` was off.
    #[error("{0}")]
    Conflict(ApplyConflict),
    /// Any other failure, as every verb reports it.
    #[error(transparent)]
    Api(#[from] Error),
}

impl ApplyError {
    /// Sort a client error: a field-manager conflict becomes [`ApplyError::Conflict`].
    #[must_use]
    pub fn from_error(e: Error) -> ApplyError {
        if let Error::Conflict(s) = &e
            && let Some(c) = ApplyConflict::from_status(s)
        {
            return ApplyError::Conflict(c);
        }
        ApplyError::Api(e)
    }

    /// Whether this is a field conflict ([`ApplyError::Conflict`]).
    #[must_use]
    pub fn is_conflict(&self) -> bool {
        matches!(self, ApplyError::Conflict(_))
    }

    /// The conflict, when it is one.
    #[must_use]
    pub fn conflict(&self) -> Option<&ApplyConflict> {
        match self {
            ApplyError::Conflict(c) => Some(c),
            _ => None,
        }
    }
}

impl From<ApplyError> for Error {
    /// For callers that handle every verb's errors as [`Error`]: a conflict is
    /// [`Error::Conflict`] with the API server's Status, the two refusals before any
    /// request are [`Error::Invalid`] with a Status saying why (what the API server
    /// answers a request without a field manager).
    fn from(e: ApplyError) -> Error {
        match e {
            ApplyError::Conflict(c) => Error::Conflict(c.status),
            ApplyError::Api(e) => e,
            refused => Error::Invalid(Box::new(Status {
                status: Some(kube::core::response::StatusSummary::Failure),
                code: 422,
                reason: "Invalid".into(),
                message: refused.to_string(),
                ..Status::default()
            })),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::core::response::{StatusCause, StatusDetails};

    fn conflict_status(causes: Vec<(&str, &str, &str)>) -> Status {
        Status {
            code: 409,
            reason: "Conflict".into(),
            message: "Apply failed with 1 conflict".into(),
            details: Some(StatusDetails {
                causes: causes
                    .into_iter()
                    .map(|(reason, message, field)| StatusCause {
                        reason: reason.into(),
                        message: message.into(),
                        field: field.into(),
                    })
                    .collect(),
                name: "shared".into(),
                group: "samplecontroller.k8s.io".into(),
                kind: "foos".into(),
                uid: String::new(),
                retry_after_seconds: 0,
            }),
            ..Status::default()
        }
    }

    #[test]
    fn parses_field_manager_conflicts() {
        let s = conflict_status(vec![
            (
                "FieldManagerConflict",
                "conflict with \"manager-one\"",
                ".spec.replicas",
            ),
            (
                "FieldManagerConflict",
                "conflict with \"kubectl\" using apps/v1",
                ".spec.deploymentName",
            ),
            (
                "FieldManagerConflict",
                "conflict with \"manager-one\"",
                ".spec.x",
            ),
        ]);
        let e = ApplyError::from_error(Error::Conflict(Box::new(s)));
        let c = e.conflict().expect("a field conflict");
        assert_eq!(c.managers(), ["manager-one", "kubectl"]);
        assert_eq!(
            c.fields(),
            [".spec.replicas", ".spec.deploymentName", ".spec.x"]
        );
        assert_eq!(
            e.to_string(),
            "apply conflict: .spec.replicas owned by \"manager-one\", .spec.deploymentName owned by \"kubectl\", .spec.x owned by \"manager-one\""
        );
        // Back into the client error: still a conflict, with the Status.
        assert!(Error::from(e).is_conflict());
    }

    #[test]
    fn a_stale_resource_version_is_not_an_apply_conflict() {
        let s = conflict_status(vec![]);
        assert!(!ApplyError::from_error(Error::Conflict(Box::new(s))).is_conflict());
        let other = conflict_status(vec![("FieldValueInvalid", "x", ".spec")]);
        assert!(!ApplyError::from_error(Error::Conflict(Box::new(other))).is_conflict());
    }

    #[test]
    fn refusals_become_invalid() {
        assert!(Error::from(ApplyError::MissingFieldManager).is_invalid());
        assert!(Error::from(ApplyError::MissingName).is_invalid());
    }
}
