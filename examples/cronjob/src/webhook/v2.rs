//! CronJob v2's defaulting and validating webhooks: Go's `internal/webhook/v2`.

use kube_codegen_runtime::validation::FieldError;
use kube_codegen_runtime::webhook::admission::{
    AdmissionError, Defaulter, Request, Validator, Warnings,
};

use super::{Defaults, validate_name};
use crate::apis::batch::v2::CronJob;

/// The path of the defaulting webhook.
pub const MUTATE_PATH: &str = "/mutate-batch-tutorial-kubebuilder-io-v2-cronjob";
/// The path of the validating webhook.
pub const VALIDATE_PATH: &str = "/validate-batch-tutorial-kubebuilder-io-v2-cronjob";

/// Sets default values on a CronJob when it is created or updated (Go's `CronJobDefaulter`).
#[derive(Clone, Debug, Default)]
pub struct CronJobDefaulter(pub Defaults);

/// +kubebuilder:webhook:path=/mutate-batch-tutorial-kubebuilder-io-v2-cronjob,mutating=true,failurePolicy=fail,sideEffects=None,groups=batch.tutorial.kubebuilder.io,resources=cronjobs,verbs=create;update,versions=v2,name=mcronjob-v2.kb.io,admissionReviewVersions=v1
impl Defaulter<CronJob> for CronJobDefaulter {
    async fn default(&self, obj: &mut CronJob, _req: &Request) -> Result<(), AdmissionError> {
        tracing::info!(name = ?obj.metadata.name, "Defaulting for CronJob");
        self.apply_defaults(obj);
        Ok(())
    }
}

impl CronJobDefaulter {
    /// Go's `applyDefaults`: a field not set gets its default, a set one is kept.
    pub fn apply_defaults(&self, cron_job: &mut CronJob) {
        let d = &self.0;
        let spec = &mut cron_job.spec;
        if spec
            .concurrency_policy
            .as_deref()
            .unwrap_or_default()
            .is_empty()
        {
            spec.concurrency_policy = Some(d.concurrency_policy.to_owned());
        }
        spec.suspend.get_or_insert(d.suspend);
        spec.successful_jobs_history_limit
            .get_or_insert(d.successful_jobs_history_limit);
        spec.failed_jobs_history_limit
            .get_or_insert(d.failed_jobs_history_limit);
    }
}

/// Validates a CronJob when it is created, updated or deleted (Go's `CronJobValidator`).
#[derive(Clone, Copy, Debug, Default)]
pub struct CronJobValidator;

/// +kubebuilder:webhook:path=/validate-batch-tutorial-kubebuilder-io-v2-cronjob,mutating=false,failurePolicy=fail,sideEffects=None,groups=batch.tutorial.kubebuilder.io,resources=cronjobs,verbs=create;update,versions=v2,name=vcronjob-v2.kb.io,admissionReviewVersions=v1
impl Validator<CronJob> for CronJobValidator {
    async fn validate_create(
        &self,
        obj: &CronJob,
        _req: &Request,
    ) -> Result<Warnings, AdmissionError> {
        tracing::info!(name = ?obj.metadata.name, "Validation for CronJob upon creation");
        validate_cron_job(obj)
    }

    async fn validate_update(
        &self,
        _old: &CronJob,
        new: &CronJob,
        _req: &Request,
    ) -> Result<Warnings, AdmissionError> {
        tracing::info!(name = ?new.metadata.name, "Validation for CronJob upon update");
        validate_cron_job(new)
    }
}

/// Go's `validateCronJob`: the name and the schedule, every error at once (one cause each).
pub fn validate_cron_job(cron_job: &CronJob) -> Result<Warnings, AdmissionError> {
    let errors: Vec<FieldError> = [
        validate_name(cron_job.metadata.name.as_deref()),
        validate_cron_job_spec(cron_job),
    ]
    .into_iter()
    .flatten()
    .collect();
    if errors.is_empty() {
        Ok(vec![])
    } else {
        Err(errors.into())
    }
}

/// Go's `validateCronJobSpec`: the structured schedule as the cron string it stands for
/// (`*` for a field not set), read by robfig/cron's `ParseStandard`.
fn validate_cron_job_spec(cron_job: &CronJob) -> Option<FieldError> {
    let expression = crate::conversion::cron_string(&cron_job.spec.schedule);
    crate::cron::parse_standard(&expression).err().map(|e| {
        FieldError::invalid(
            "spec.schedule",
            &expression,
            format!("invalid cron schedule format: {e}"),
        )
    })
}
