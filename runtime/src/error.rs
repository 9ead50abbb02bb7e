//! Typed API errors. The apiserver's `Status` reason decides the variant, so callers
//! match `Error::NotFound(_)` or ask `err.is_conflict()` instead of comparing codes.

use kube::core::Status;

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// An error of a typed client call: what the apiserver answered, by reason, or that it
/// did not answer.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// 404: the object (or the resource type) does not exist.
    #[error("not found: {}", .0.message)]
    NotFound(Box<Status>),
    /// 409 with reason AlreadyExists: create of an existing name.
    #[error("already exists: {}", .0.message)]
    AlreadyExists(Box<Status>),
    /// 409 (Conflict): a stale resourceVersion, or a server-side apply field conflict.
    #[error("conflict: {}", .0.message)]
    Conflict(Box<Status>),
    /// 422: the object failed validation.
    #[error("invalid: {}", .0.message)]
    Invalid(Box<Status>),
    /// 410: a watch or list resourceVersion is too old.
    #[error("expired: {}", .0.message)]
    Expired(Box<Status>),
    /// Any other error the apiserver returned.
    #[error("api error {}: {}", .0.code, .0.message)]
    Api(Box<Status>),
    /// No answer from the apiserver: transport, TLS, serialization, ...
    #[error(transparent)]
    Client(kube::Error),
}

impl From<kube::Error> for Error {
    fn from(e: kube::Error) -> Self {
        match e {
            kube::Error::Api(s) => match (s.code, s.reason.as_str()) {
                (404, _) | (_, "NotFound") => Error::NotFound(s),
                (409, "AlreadyExists") | (_, "AlreadyExists") => Error::AlreadyExists(s),
                (409, _) | (_, "Conflict") => Error::Conflict(s),
                (422, _) | (_, "Invalid") => Error::Invalid(s),
                (410, _) | (_, "Expired") | (_, "Gone") => Error::Expired(s),
                _ => Error::Api(s),
            },
            other => Error::Client(other),
        }
    }
}

impl Error {
    /// Whether this is [`Error::NotFound`] (client-go's `errors.IsNotFound`).
    #[must_use]
    pub fn is_not_found(&self) -> bool {
        matches!(self, Error::NotFound(_))
    }
    /// Whether this is [`Error::AlreadyExists`] (`errors.IsAlreadyExists`).
    #[must_use]
    pub fn is_already_exists(&self) -> bool {
        matches!(self, Error::AlreadyExists(_))
    }
    /// Whether this is [`Error::Conflict`] (`errors.IsConflict`): retry on a fresh copy.
    #[must_use]
    pub fn is_conflict(&self) -> bool {
        matches!(self, Error::Conflict(_))
    }
    /// Whether this is [`Error::Invalid`] (`errors.IsInvalid`).
    #[must_use]
    pub fn is_invalid(&self) -> bool {
        matches!(self, Error::Invalid(_))
    }

    /// The apiserver's Status, when the server answered.
    #[must_use]
    pub fn status(&self) -> Option<&Status> {
        match self {
            Error::NotFound(s)
            | Error::AlreadyExists(s)
            | Error::Conflict(s)
            | Error::Invalid(s)
            | Error::Expired(s)
            | Error::Api(s) => Some(s),
            Error::Client(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(code: u16, reason: &str) -> kube::Error {
        kube::Error::Api(Box::new(Status {
            code,
            reason: reason.into(),
            message: "m".into(),
            ..Status::default()
        }))
    }

    #[test]
    fn reasons_map_to_variants() {
        assert!(Error::from(status(404, "NotFound")).is_not_found());
        assert!(Error::from(status(409, "AlreadyExists")).is_already_exists());
        assert!(Error::from(status(409, "Conflict")).is_conflict());
        assert!(Error::from(status(422, "Invalid")).is_invalid());
        assert!(matches!(
            Error::from(status(410, "Expired")),
            Error::Expired(_)
        ));
        assert!(matches!(
            Error::from(status(500, "InternalError")),
            Error::Api(_)
        ));
        assert_eq!(
            Error::from(status(500, "InternalError"))
                .status()
                .unwrap()
                .code,
            500
        );
    }
}
