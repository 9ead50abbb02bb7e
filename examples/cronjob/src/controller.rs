//! The CronJob controller (Go's `internal/controller/cronjob_controller.go`) on the runtime's
//! controller builder: for CronJob (v1, the hub), owns Jobs, with an index of Jobs by their
//! controlling CronJob, and a clock tests can set. The reconcile is the Go one, step by step:
//! load the CronJob, list its Jobs, rebuild the status (active Jobs, last schedule time,
//! conditions), prune finished Jobs beyond the history limits, and, unless suspended, start
//! the Job of the latest missed run within the deadline and the concurrency policy, then
//! requeue for the next run.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use jiff::tz::TimeZone;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::api::{Api, DeleteParams, PostParams, PropagationPolicy};
use kube::{Client, Resource, ResourceExt};
use kube_codegen_runtime::controller::{
    Action, Builder, Controller, Request, set_controller_reference, set_status_condition,
};
use kube_codegen_runtime::informer::Informer;

use crate::apis::batch::v1::CronJob;
use crate::cron;

/// The annotation on a Job with the run it was started for (RFC 3339).
pub const SCHEDULED_TIME_ANNOTATION: &str = "batch.tutorial.kubebuilder.io/scheduled-at";
/// The index of Jobs by their controlling CronJob (Go's `jobOwnerKey` field index); its
/// values are `<namespace>/<name>`, as controller-runtime's field indexes are per namespace.
pub const JOB_OWNER_KEY: &str = ".metadata.controller";

// Condition types.
const TYPE_AVAILABLE: &str = "Available";
const TYPE_PROGRESSING: &str = "Progressing";
const TYPE_DEGRADED: &str = "Degraded";

/// What time it is (Go's `Clock`): the real one in production, one tests set.
pub trait Clock: Send + Sync {
    /// Now.
    fn now(&self) -> Timestamp;
}

/// The system clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct RealClock;

impl Clock for RealClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }
}

/// A clock that says what it was last set to.
#[derive(Debug)]
pub struct FakeClock(std::sync::Mutex<Timestamp>);

impl FakeClock {
    /// A clock at `now`.
    #[must_use]
    pub fn new(now: Timestamp) -> Self {
        FakeClock(std::sync::Mutex::new(now))
    }

    /// Moves the clock to `now`.
    pub fn set(&self, now: Timestamp) {
        *self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = now;
    }
}

impl Clock for FakeClock {
    fn now(&self) -> Timestamp {
        *self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A reconcile that did not finish; the builder requeues the CronJob with backoff.
#[derive(Debug)]
pub struct Error(String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

fn fail(what: &str) -> impl FnOnce(kube::Error) -> Error + '_ {
    move |e| Error(format!("{what}: {e}"))
}

/// Go's `CronJobReconciler`: a client, the Jobs' informer (its index by owner) and a clock.
pub struct CronJobReconciler {
    /// The client the reconcile writes with.
    pub client: Client,
    /// Jobs, indexed by [`JOB_OWNER_KEY`].
    pub jobs: Informer<Job>,
    /// What time it is.
    pub clock: Arc<dyn Clock>,
    /// The zone schedules are read in: the process's local one, as Go's `time.Now()` is.
    pub time_zone: TimeZone,
}

/// The index function of [`JOB_OWNER_KEY`]: a Job's controller, when it is a CronJob of this
/// API (`batch.tutorial.kubebuilder.io/v1`).
fn job_owner(job: &Job) -> Vec<String> {
    let Some(owner) = job
        .metadata
        .owner_references
        .iter()
        .flatten()
        .find(|r| r.controller == Some(true))
    else {
        return vec![];
    };
    if owner.api_version != CronJob::api_version(&()) || owner.kind != CronJob::kind(&()) {
        return vec![];
    }
    vec![format!(
        "{}/{}",
        job.metadata.namespace.as_deref().unwrap_or_default(),
        owner.name
    )]
}

// ANCHOR: setup
/// Go's `SetupWithManager`: the index of Jobs by owner, and the controller for CronJob that
/// owns Jobs. Take both informers from the process's shared factories, and start them after.
///
/// # Errors
///
/// The index is there already.
pub fn setup(
    cron_jobs: Informer<CronJob>,
    jobs: &Informer<Job>,
) -> Result<Controller<CronJob>, kube_codegen_runtime::store::IndexExists> {
    jobs.add_indexers([(JOB_OWNER_KEY.to_owned(), Arc::new(job_owner) as _)])?;
    Ok(Builder::for_kind(cron_jobs)
        .owns(jobs.clone())
        .named("cronjob")
        .build())
}
// ANCHOR_END: setup

fn condition(type_: &str, status: &str, reason: &str, message: String) -> Condition {
    Condition {
        type_: type_.into(),
        status: status.into(),
        reason: reason.into(),
        message,
        observed_generation: None,
        // Unset: set_status_condition stamps it when the status changes.
        last_transition_time: Time(Timestamp::UNIX_EPOCH),
    }
}

/// Whether a Job has finished, and how (a `Complete` or `Failed` condition that is true).
fn finished(job: &Job) -> Option<&str> {
    job.status
        .iter()
        .flat_map(|s| s.conditions.iter().flatten())
        .find(|c| (c.type_ == "Complete" || c.type_ == "Failed") && c.status == "True")
        .map(|c| c.type_.as_str())
}

/// Go's `time.Time.Format(time.RFC3339)` in `tz`: seconds, and the zone's offset (`Z` in UTC).
fn rfc3339(t: Timestamp, tz: &TimeZone) -> String {
    let zoned = t.to_zoned(tz.clone());
    let offset = zoned.offset().seconds();
    let local = zoned.datetime();
    let zone = if offset == 0 {
        "Z".to_owned()
    } else {
        let sign = if offset < 0 { '-' } else { '+' };
        let o = offset.unsigned_abs();
        format!("{sign}{:02}:{:02}", o / 3600, o % 3600 / 60)
    };
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}{zone}",
        local.year(),
        local.month(),
        local.day(),
        local.hour(),
        local.minute(),
        local.second()
    )
}

/// Go's `getNextSchedule`: the latest run missed since the last one (or the CronJob's
/// creation, or the starting deadline), or Go's zero time when none; and the next run.
fn next_schedule(
    cron_job: &CronJob,
    now: Timestamp,
    tz: &TimeZone,
) -> Result<(Option<Timestamp>, Timestamp), String> {
    let schedule = &cron_job.spec.schedule;
    let sched = cron::parse_standard(schedule)
        .map_err(|e| format!("unparseable schedule {schedule:?}: {e}"))?;
    let mut earliest = match &cron_job.status.last_schedule_time {
        Some(t) => t.0,
        None => cron_job
            .metadata
            .creation_timestamp
            .as_ref()
            .map_or(cron::go_zero_time(), |t| t.0),
    };
    if let Some(deadline) = cron_job.spec.starting_deadline_seconds {
        // The controller is not going to schedule anything below this point.
        let scheduling_deadline =
            Timestamp::from_second(now.as_second() - deadline).unwrap_or(Timestamp::MIN);
        if scheduling_deadline > earliest {
            earliest = scheduling_deadline;
        }
    }
    if earliest > now {
        return Ok((None, sched.next(now, tz)));
    }
    let mut last_missed = None;
    let mut starts = 0;
    let mut t = sched.next(earliest, tz);
    while t <= now {
        last_missed = Some(t);
        // A wedged controller, or a clock off by decades, must not list every missed run.
        starts += 1;
        if starts > 100 {
            return Err("Too many missed start times (> 100). Set or decrease .spec.startingDeadlineSeconds or check clock skew.".into());
        }
        t = sched.next(t, tz);
    }
    Ok((last_missed, sched.next(now, tz)))
}

impl CronJobReconciler {
    fn api(&self, namespace: &str) -> Api<CronJob> {
        Api::namespaced(self.client.clone(), namespace)
    }

    async fn update_status(&self, cron_job: &CronJob) -> Result<CronJob, kube::Error> {
        let ns = cron_job.namespace().unwrap_or_default();
        self.api(&ns)
            .replace_status(&cron_job.name_any(), &PostParams::default(), cron_job)
            .await
    }

    /// Re-reads the CronJob and records `condition` in its status, best effort (Go's pattern
    /// before returning on an error): a failure is logged.
    async fn degraded(&self, ns: &str, name: &str, c: Condition) -> Result<(), Error> {
        let mut fresh = self
            .api(ns)
            .get(name)
            .await
            .map_err(fail("Failed to re-fetch CronJob"))?;
        set_status_condition(&mut fresh.status.conditions, c);
        if let Err(e) = self.update_status(&fresh).await {
            tracing::error!(error = %e, "Failed to update CronJob status");
        }
        Ok(())
    }

    fn construct_job(&self, cron_job: &CronJob, scheduled: Timestamp) -> Result<Job, Error> {
        let template = &cron_job.spec.job_template;
        let mut annotations: BTreeMap<String, String> = template
            .metadata
            .as_ref()
            .and_then(|m| m.annotations.clone())
            .unwrap_or_default();
        annotations.insert(
            SCHEDULED_TIME_ANNOTATION.into(),
            rfc3339(scheduled, &self.time_zone),
        );
        let labels = template
            .metadata
            .as_ref()
            .and_then(|m| m.labels.clone())
            .unwrap_or_default();
        let mut job = Job {
            metadata: kube::api::ObjectMeta {
                // Deterministic for a run, so that it is never created twice.
                name: Some(format!("{}-{}", cron_job.name_any(), scheduled.as_second())),
                namespace: cron_job.namespace(),
                labels: Some(labels),
                annotations: Some(annotations),
                ..Default::default()
            },
            spec: template.spec.clone(),
            status: None,
        };
        set_controller_reference(cron_job, &mut job).map_err(|e| Error(e.to_string()))?;
        Ok(job)
    }
}

// ANCHOR: reconcile
/// Go's `Reconcile`. What it may do, as kubebuilder writes it on `Reconcile` (the `rbac`
/// generator writes config/rbac/role.yaml from these):
///
/// +kubebuilder:rbac:groups=batch.tutorial.kubebuilder.io,resources=cronjobs,verbs=get;list;watch;create;update;patch;delete
/// +kubebuilder:rbac:groups=batch.tutorial.kubebuilder.io,resources=cronjobs/status,verbs=get;update;patch
/// +kubebuilder:rbac:groups=batch.tutorial.kubebuilder.io,resources=cronjobs/finalizers,verbs=update
/// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;update;patch;delete
/// +kubebuilder:rbac:groups=batch,resources=jobs/status,verbs=get
///
/// # Errors
///
/// A write the API server refused; the builder retries with backoff.
pub async fn reconcile(req: Request<CronJob>, r: Arc<CronJobReconciler>) -> Result<Action, Error> {
    // 1: Load the CronJob by name (from the cache, as Go's manager client reads).
    let Some(cached) = req.object else {
        tracing::info!(key = %req.key, "CronJob resource not found. Ignoring since object must be deleted");
        return Ok(Action::Done);
    };
    let mut cron_job = (*cached).clone();
    let ns = cron_job.namespace().unwrap_or_default();
    let name = cron_job.name_any();

    // Initialize status conditions if not yet present.
    if cron_job.status.conditions.is_empty() {
        set_status_condition(
            &mut cron_job.status.conditions,
            condition(
                TYPE_PROGRESSING,
                "Unknown",
                "Reconciling",
                "Starting reconciliation".into(),
            ),
        );
        // Work on from what the update returns: the latest resource version.
        cron_job = r
            .update_status(&cron_job)
            .await
            .map_err(fail("Failed to update CronJob status"))?;
    }

    // 2: List all active jobs, and update the status (the index of Jobs by owner).
    let child_jobs = r
        .jobs
        .store()
        .by_index(JOB_OWNER_KEY, &format!("{ns}/{name}"));
    let (mut active, mut successful, mut failed) = (vec![], vec![], vec![]);
    let mut most_recent: Option<Timestamp> = None;
    for job in &child_jobs {
        match finished(job) {
            None => active.push(job.clone()),
            Some("Failed") => failed.push(job.clone()),
            Some(_) => successful.push(job.clone()),
        }
        // The launch time is in an annotation: the status is rebuilt from the Jobs.
        let Some(raw) = job
            .annotations()
            .get(SCHEDULED_TIME_ANNOTATION)
            .filter(|t| !t.is_empty())
        else {
            continue;
        };
        match raw.parse::<Timestamp>() {
            Ok(t) => {
                if most_recent.is_none_or(|m| m < t) {
                    most_recent = Some(t);
                }
            }
            Err(e) => {
                tracing::error!(job = %job.name_any(), error = %e, "unable to parse schedule time for child job");
            }
        }
    }
    cron_job.status.last_schedule_time = most_recent.map(Time);
    let refs: Vec<ObjectReference> = active
        .iter()
        .map(|job| ObjectReference {
            api_version: Some("batch/v1".into()),
            kind: Some("Job".into()),
            name: job.metadata.name.clone(),
            namespace: job.metadata.namespace.clone(),
            uid: job.metadata.uid.clone(),
            resource_version: job.metadata.resource_version.clone(),
            field_path: None,
        })
        .collect();
    cron_job.status.active = refs;
    tracing::debug!(
        active = active.len(),
        successful = successful.len(),
        failed = failed.len(),
        "job count"
    );

    let suspended = cron_job.spec.suspend == Some(true);
    let conditions = &mut cron_job.status.conditions;
    if suspended {
        set_status_condition(
            conditions,
            condition(
                TYPE_AVAILABLE,
                "False",
                "Suspended",
                "CronJob is suspended".into(),
            ),
        );
    } else if !failed.is_empty() {
        let message = format!("{} job(s) have failed", failed.len());
        set_status_condition(
            conditions,
            condition(TYPE_DEGRADED, "True", "JobsFailed", message.clone()),
        );
        set_status_condition(
            conditions,
            condition(TYPE_AVAILABLE, "False", "JobsFailed", message),
        );
    } else if !active.is_empty() {
        set_status_condition(
            conditions,
            condition(
                TYPE_PROGRESSING,
                "True",
                "JobsActive",
                format!("{} job(s) are currently active", active.len()),
            ),
        );
        set_status_condition(
            conditions,
            condition(
                TYPE_AVAILABLE,
                "True",
                "JobsActive",
                format!("CronJob is progressing with {} active job(s)", active.len()),
            ),
        );
    } else {
        set_status_condition(
            conditions,
            condition(
                TYPE_AVAILABLE,
                "True",
                "AllJobsCompleted",
                "All jobs have completed successfully".into(),
            ),
        );
        set_status_condition(
            conditions,
            condition(
                TYPE_PROGRESSING,
                "False",
                "NoJobsActive",
                "No jobs are currently active".into(),
            ),
        );
    }
    let cron_job = r
        .update_status(&cron_job)
        .await
        .map_err(fail("unable to update CronJob status"))?;

    // 3: Clean up old jobs according to the history limit (best effort).
    let jobs: Api<Job> = Api::namespaced(r.client.clone(), &ns);
    let background = DeleteParams {
        propagation_policy: Some(PropagationPolicy::Background),
        ..DeleteParams::default()
    };
    let by_start = |a: &Arc<Job>, b: &Arc<Job>| {
        let start = |j: &Job| {
            j.status
                .as_ref()
                .and_then(|s| s.start_time.as_ref())
                .map(|t| t.0)
        };
        // No start time sorts first, as Go's comparison puts nil first.
        start(a).cmp(&start(b))
    };
    for (finished_jobs, limit, what) in [
        (
            &mut failed,
            cron_job.spec.failed_jobs_history_limit,
            "failed",
        ),
        (
            &mut successful,
            cron_job.spec.successful_jobs_history_limit,
            "successful",
        ),
    ] {
        let Some(limit) = limit else { continue };
        finished_jobs.sort_by(by_start);
        let excess = finished_jobs.len().saturating_sub(limit.max(0) as usize);
        for job in &finished_jobs[..excess] {
            match jobs.delete(&job.name_any(), &background).await {
                Ok(_) => tracing::debug!(job = %job.name_any(), "deleted old {what} job"),
                Err(kube::Error::Api(s)) if s.code == 404 => {}
                Err(e) => {
                    tracing::error!(job = %job.name_any(), error = %e, "unable to delete old {what} job");
                }
            }
        }
    }

    // 4: Check if we're suspended.
    if suspended {
        tracing::debug!("cronjob suspended, skipping");
        return Ok(Action::Done);
    }

    // 5: Get the next scheduled run.
    let now = r.clock.now();
    let (missed_run, next_run) = match next_schedule(&cron_job, now, &r.time_zone) {
        Ok(runs) => runs,
        Err(e) => {
            tracing::error!(error = %e, "unable to figure out CronJob schedule");
            r.degraded(
                &ns,
                &name,
                condition(
                    TYPE_DEGRADED,
                    "True",
                    "InvalidSchedule",
                    format!("Failed to parse schedule: {e}"),
                ),
            )
            .await?;
            // Not requeued until an update fixes the schedule.
            return Ok(Action::Done);
        }
    };
    let until_next = next_run.duration_since(r.clock.now());
    let scheduled_result =
        Action::RequeueAfter(Duration::try_from(until_next).unwrap_or(Duration::ZERO));

    // 6: Run a new job if it's on schedule, not past the deadline, and not blocked by our
    // concurrency policy.
    let Some(missed_run) = missed_run else {
        tracing::debug!("no upcoming scheduled times, sleeping until next");
        return Ok(scheduled_result);
    };
    let too_late = cron_job
        .spec
        .starting_deadline_seconds
        .is_some_and(|d| missed_run.as_second() + d < r.clock.now().as_second());
    if too_late {
        tracing::debug!("missed starting deadline for last run, sleeping till next");
        r.degraded(
            &ns,
            &name,
            condition(
                TYPE_DEGRADED,
                "True",
                "MissedSchedule",
                format!("Missed starting deadline for run at {missed_run}"),
            ),
        )
        .await?;
        return Ok(scheduled_result);
    }
    let policy = cron_job.spec.concurrency_policy.as_deref();
    if policy == Some("Forbid") && !active.is_empty() {
        tracing::debug!(
            active = active.len(),
            "concurrency policy blocks concurrent runs, skipping"
        );
        return Ok(scheduled_result);
    }
    if policy == Some("Replace") {
        for job in &active {
            match jobs.delete(&job.name_any(), &background).await {
                Ok(_) => {}
                Err(kube::Error::Api(s)) if s.code == 404 => {}
                Err(e) => return Err(fail("unable to delete active job")(e)),
            }
        }
    }

    let job = match r.construct_job(&cron_job, missed_run) {
        Ok(job) => job,
        Err(e) => {
            tracing::error!(error = %e, "unable to construct job from template");
            return Ok(scheduled_result);
        }
    };
    if let Err(e) = jobs.create(&PostParams::default(), &job).await {
        tracing::error!(job = %job.name_any(), error = %e, "unable to create Job for CronJob");
        r.degraded(
            &ns,
            &name,
            condition(
                TYPE_DEGRADED,
                "True",
                "JobCreationFailed",
                format!("Failed to create job: {e}"),
            ),
        )
        .await?;
        return Err(fail("unable to create Job for CronJob")(e));
    }
    tracing::debug!(job = %job.name_any(), "created Job for CronJob run");
    let mut fresh = r
        .api(&ns)
        .get(&name)
        .await
        .map_err(fail("Failed to re-fetch CronJob"))?;
    set_status_condition(
        &mut fresh.status.conditions,
        condition(
            TYPE_PROGRESSING,
            "True",
            "JobCreated",
            format!("Created job {}", job.name_any()),
        ),
    );
    if let Err(e) = r.update_status(&fresh).await {
        tracing::error!(error = %e, "Failed to update CronJob status");
    }

    // 7: Requeue when we either see a running job or it's time for the next scheduled run.
    Ok(scheduled_result)
}
// ANCHOR_END: reconcile

#[cfg(test)]
mod tests {
    use super::*;

    fn cron_job(schedule: &str, created: &str) -> CronJob {
        let mut c = CronJob::new(
            "c",
            crate::apis::batch::v1::CronJobSpec {
                schedule: schedule.into(),
                ..Default::default()
            },
        );
        c.metadata.creation_timestamp = Some(Time(created.parse().unwrap()));
        c
    }

    #[test]
    fn the_latest_missed_run_and_the_next() {
        let c = cron_job("*/10 * * * *", "2026-11-28T07:00:30Z");
        let (missed, next) =
            next_schedule(&c, "2026-11-28T07:25:00Z".parse().unwrap(), &TimeZone::UTC).unwrap();
        assert_eq!(missed, Some("2026-11-28T07:20:00Z".parse().unwrap()));
        assert_eq!(next, "2026-11-28T07:30:00Z".parse().unwrap());
        let (missed, _) =
            next_schedule(&c, "2026-11-28T07:05:00Z".parse().unwrap(), &TimeZone::UTC).unwrap();
        assert_eq!(missed, None);
    }

    #[test]
    fn too_many_missed_runs_is_an_error() {
        let c = cron_job("* * * * *", "2026-11-27T00:00:00Z");
        let e =
            next_schedule(&c, "2026-11-28T00:00:00Z".parse().unwrap(), &TimeZone::UTC).unwrap_err();
        assert!(e.starts_with("Too many missed start times (> 100)"), "{e}");
    }

    #[test]
    fn scheduled_times_are_written_as_go_writes_rfc3339() {
        let t: Timestamp = "2026-11-28T13:01:00Z".parse().unwrap();
        assert_eq!(rfc3339(t, &TimeZone::UTC), "2026-11-28T13:01:00Z");
        let ny = TimeZone::get("America/New_York").unwrap();
        assert_eq!(rfc3339(t, &ny), "2026-11-28T08:01:00-05:00");
        assert_eq!(rfc3339(t, &ny).parse::<Timestamp>().unwrap(), t);
    }
}
