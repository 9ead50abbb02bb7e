//! The webhooks (Go's `internal/webhook/v1` and `v2`, and the conversion webhook
//! controller-runtime registers for the hub and its spokes), on one HTTPS server as the Go
//! manager serves them on its webhook port: `/convert` and, per version, a defaulter and a
//! validator at the paths of their `+kubebuilder:webhook` markers.

use std::net::SocketAddr;
use std::path::Path;

use kube_codegen_runtime::conversion::Converter;
use kube_codegen_runtime::validation::FieldError;
use kube_codegen_runtime::webhook::{Server, TlsFiles, WebhookError};

pub mod v1;
pub mod v2;

/// The Defaulter's values: Go's `CronJobDefaulter` as `SetupCronJobWebhookWithManager`
/// builds it (the same for both versions).
#[derive(Clone, Debug)]
pub struct Defaults {
    /// `DefaultConcurrencyPolicy`.
    pub concurrency_policy: &'static str,
    /// `DefaultSuspend`.
    pub suspend: bool,
    /// `DefaultSuccessfulJobsHistoryLimit`.
    pub successful_jobs_history_limit: i32,
    /// `DefaultFailedJobsHistoryLimit`.
    pub failed_jobs_history_limit: i32,
}

impl Default for Defaults {
    fn default() -> Self {
        Defaults {
            concurrency_policy: "Allow",
            suspend: false,
            successful_jobs_history_limit: 3,
            failed_jobs_history_limit: 1,
        }
    }
}

/// Go's `validateCronJobName`: a Job's name is the CronJob's plus an 11-character suffix
/// (`-<unix time>`), and must fit a DNS-1035 label (63), so the CronJob's is at most 52.
fn validate_name(name: Option<&str>) -> Option<FieldError> {
    const DNS1035_LABEL_MAX_LENGTH: usize = 63;
    let name = name.unwrap_or_default();
    (name.len() > DNS1035_LABEL_MAX_LENGTH - 11)
        .then(|| FieldError::invalid("metadata.name", name, "must be no more than 52 characters"))
}

/// Binds the webhooks on `addr` (reading `tls.crt` and `tls.key` in `cert_dir`): the
/// conversion webhook of every version and both versions' defaulters and validators. Run
/// the returned server with [`Server::run`].
///
/// # Errors
///
/// The address cannot be bound, or the certificate or key cannot be read.
pub async fn bind(addr: SocketAddr, cert_dir: &Path) -> Result<Server, WebhookError> {
    Server::builder()
        .convert(Converter::new(crate::generated::conversion::KINDS))
        .defaulter(v1::MUTATE_PATH, v1::CronJobDefaulter::default())
        .validator(v1::VALIDATE_PATH, v1::CronJobValidator)
        .defaulter(v2::MUTATE_PATH, v2::CronJobDefaulter::default())
        .validator(v2::VALIDATE_PATH, v2::CronJobValidator)
        .bind(addr, TlsFiles::in_dir(cert_dir))
        .await
}
