//! The Go project's controller suite (go-project/internal/controller/cronjob_controller_test.go,
//! its 6 `It`s), ported: the same objects, steps and assertions, against the port's
//! controller (`cronjob::controller`) running on this test binary's control plane as the Go
//! suite runs its manager, on informers (the cache, with the Job index) and the real clock.
//! No kube-controller-manager runs, as in the Go suite's envtest: Jobs are made and marked
//! active, failed or complete by the tests.

mod support;

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use cronjob::apis::batch::v1;
use cronjob::controller::{CronJobReconciler, RealClock, reconcile, setup};
use jiff::tz::TimeZone;
use k8s_openapi::api::batch::v1::{Job, JobCondition, JobSpec, JobStatus};
use k8s_openapi::api::core::v1::{Container, Namespace, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::Client;
use kube::api::{Api, DeleteParams, ObjectMeta, PostParams};
use kube_codegen_runtime::controller::controller_reference;
use kube_codegen_runtime::informer::SharedInformerFactory;
use support::*;

const NAMESPACE_NAME: &str = "test-cronjob";
const TEST_SCHEDULE: &str = "1 * * * *";
const TEST_CONTAINER_NAME: &str = "test-container";
const TEST_CONTAINER_IMAGE: &str = "test-image";
/// Gomega's `SetDefaultEventuallyTimeout(2 * time.Minute)`.
const EVENTUALLY: Duration = Duration::from_secs(120);

/// Go's BeforeSuite: the manager with the CronJob reconciler, started once for the binary,
/// on a thread of its own (it outlives each test's runtime).
fn start_controller() {
    static STARTED: OnceLock<()> = OnceLock::new();
    STARTED.get_or_init(|| {
        let env = ENV.get().expect("control plane");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("controller runtime");
            rt.block_on(async move {
                let client = env.new_client().expect("client");
                let factory = SharedInformerFactory::new(client.clone());
                let jobs = factory.informer_for::<Job>();
                let controller =
                    setup(factory.informer_for::<v1::CronJob>(), &jobs).expect("controller");
                factory.start();
                factory
                    .wait_for_cache_sync(Duration::from_secs(60))
                    .await
                    .expect("caches");
                let reconciler = Arc::new(CronJobReconciler {
                    client,
                    jobs,
                    clock: Arc::new(RealClock),
                    time_zone: TimeZone::system(),
                });
                tx.send(()).unwrap();
                controller
                    .run(reconciler, reconcile, std::future::pending())
                    .await;
            });
        });
        rx.recv().expect("controller started");
    });
}

/// Go's BeforeEach: the suite's namespace, created if it is not there.
async fn setup_test() -> Client {
    start_controller();
    let client = client();
    let namespaces: Api<Namespace> = Api::all(client.clone());
    if namespaces.get_opt(NAMESPACE_NAME).await.unwrap().is_none() {
        let ns = Namespace {
            metadata: ObjectMeta {
                name: Some(NAMESPACE_NAME.into()),
                ..Default::default()
            },
            ..Default::default()
        };
        match namespaces.create(&PostParams::default(), &ns).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 409 => {} // another test made it
            Err(e) => panic!("namespace: {e}"),
        }
    }
    client
}

fn pod_template() -> PodTemplateSpec {
    PodTemplateSpec {
        metadata: None,
        spec: Some(PodSpec {
            containers: vec![Container {
                name: TEST_CONTAINER_NAME.into(),
                image: Some(TEST_CONTAINER_IMAGE.into()),
                ..Default::default()
            }],
            restart_policy: Some("OnFailure".into()),
            ..Default::default()
        }),
    }
}

/// The `It`s' CronJob. Go names them all `test-cronjob-<seed>` and runs them one after the
/// other; these run at once, so each has its own name.
fn cron_job(name: &str) -> v1::CronJob {
    let mut c = v1::CronJob::new(
        name,
        v1::CronJobSpec {
            schedule: TEST_SCHEDULE.into(),
            job_template: k8s_openapi::api::batch::v1::JobTemplateSpec {
                metadata: None,
                spec: Some(JobSpec {
                    template: pod_template(),
                    ..Default::default()
                }),
            },
            ..Default::default()
        },
    );
    c.metadata.namespace = Some(NAMESPACE_NAME.into());
    c
}

/// A Job controlled by `owner`.
fn owned_job(name: &str, owner: &v1::CronJob) -> Job {
    Job {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(NAMESPACE_NAME.into()),
            owner_references: Some(vec![controller_reference(owner).expect("owner read back")]),
            ..Default::default()
        },
        spec: Some(JobSpec {
            template: pod_template(),
            ..Default::default()
        }),
        status: None,
    }
}

fn apis(client: &Client) -> (Api<v1::CronJob>, Api<Job>) {
    (
        Api::namespaced(client.clone(), NAMESPACE_NAME),
        Api::namespaced(client.clone(), NAMESPACE_NAME),
    )
}

fn find<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

fn job_condition(type_: &str) -> JobCondition {
    JobCondition {
        type_: type_.into(),
        status: "True".into(),
        ..Default::default()
    }
}

/// The CronJob once the controller has seen it (Go's `Eventually(Get).Should(Succeed())`,
/// which reads from the API server: the UID the owner references need).
async fn read_back(cron_jobs: &Api<v1::CronJob>, name: &str) -> v1::CronJob {
    eventually("the CronJob", EVENTUALLY, || async {
        cron_jobs.get(name).await.ok()
    })
    .await
}

#[tokio::test]
async fn should_initialize_status_conditions_on_first_reconciliation() {
    let client = setup_test().await;
    let (cron_jobs, _) = apis(&client);
    let name = "test-cronjob-initialize";
    cron_jobs
        .create(&PostParams::default(), &cron_job(name))
        .await
        .unwrap();

    // By("Checking that status conditions are initialized")
    eventually("status conditions", EVENTUALLY, || async {
        let c = cron_jobs.get(name).await.ok()?;
        (!c.status.conditions.is_empty()).then_some(())
    })
    .await;

    // By("Cleaning up the CronJob")
    cron_jobs
        .delete(name, &DeleteParams::default())
        .await
        .unwrap();
}

#[tokio::test]
async fn should_set_all_jobs_completed_condition_when_no_active_jobs_exist() {
    let client = setup_test().await;
    let (cron_jobs, _) = apis(&client);
    let name = "test-cronjob-completed";
    cron_jobs
        .create(&PostParams::default(), &cron_job(name))
        .await
        .unwrap();

    // By("Checking that the CronJob has zero active Jobs"): Consistently, 5 s every 250 ms.
    let until = tokio::time::Instant::now() + Duration::from_secs(5);
    while tokio::time::Instant::now() < until {
        let c = cron_jobs.get(name).await.unwrap();
        assert!(c.status.active.is_empty(), "{:?}", c.status.active);
        tokio::time::sleep(Duration::from_millis(250)).await;
    }

    // By("Checking AllJobsCompleted condition")
    let c = cron_jobs.get(name).await.unwrap();
    let available = find(&c.status.conditions, "Available").expect("Available");
    assert_eq!(
        (available.status.as_str(), available.reason.as_str()),
        ("True", "AllJobsCompleted")
    );
    let progressing = find(&c.status.conditions, "Progressing").expect("Progressing");
    assert_eq!(
        (progressing.status.as_str(), progressing.reason.as_str()),
        ("False", "NoJobsActive")
    );

    // By("Cleaning up the CronJob")
    cron_jobs
        .delete(name, &DeleteParams::default())
        .await
        .unwrap();
}

#[tokio::test]
async fn should_track_active_jobs_and_set_jobs_active_condition() {
    let client = setup_test().await;
    let (cron_jobs, jobs) = apis(&client);
    let name = "test-cronjob-active";
    let pp = PostParams::default();
    cron_jobs.create(&pp, &cron_job(name)).await.unwrap();

    // By("Creating an active Job owned by the CronJob")
    let owner = read_back(&cron_jobs, name).await;
    let job_name = "test-job-active";
    let mut test_job = jobs
        .create(&pp, &owned_job(job_name, &owner))
        .await
        .unwrap();
    test_job.status = Some(JobStatus {
        active: Some(2),
        ..Default::default()
    });
    jobs.replace_status(job_name, &pp, &test_job).await.unwrap();

    // By("Checking that the CronJob has one active Job in status")
    eventually("one active Job", EVENTUALLY, || async {
        let c = cron_jobs.get(name).await.ok()?;
        (c.status.active.len() == 1 && c.status.active[0].name.as_deref() == Some(job_name))
            .then_some(())
    })
    .await;

    // By("Checking JobsActive conditions")
    let c = cron_jobs.get(name).await.unwrap();
    let available: Vec<_> = c
        .status
        .conditions
        .iter()
        .filter(|c| c.type_ == "Available")
        .collect();
    assert_eq!(available.len(), 1);
    assert_eq!(
        (available[0].status.as_str(), available[0].reason.as_str()),
        ("True", "JobsActive")
    );
    let progressing: Vec<_> = c
        .status
        .conditions
        .iter()
        .filter(|c| c.type_ == "Progressing")
        .collect();
    assert_eq!(progressing.len(), 1);
    assert_eq!(
        (
            progressing[0].status.as_str(),
            progressing[0].reason.as_str()
        ),
        ("True", "JobsActive")
    );

    // By("Cleaning up")
    jobs.delete(job_name, &DeleteParams::default())
        .await
        .unwrap();
    cron_jobs
        .delete(name, &DeleteParams::default())
        .await
        .unwrap();
}

#[tokio::test]
async fn should_set_degraded_condition_when_jobs_fail() {
    let client = setup_test().await;
    let (cron_jobs, jobs) = apis(&client);
    let name = "test-cronjob-degraded";
    let pp = PostParams::default();
    cron_jobs.create(&pp, &cron_job(name)).await.unwrap();

    // By("Creating a failed Job owned by the CronJob")
    let owner = read_back(&cron_jobs, name).await;
    let job_name = "test-job-failed";
    let mut failed_job = jobs
        .create(&pp, &owned_job(job_name, &owner))
        .await
        .unwrap();
    failed_job.status = Some(JobStatus {
        start_time: Some(Time(jiff::Timestamp::now())),
        conditions: Some(vec![
            job_condition("FailureTarget"),
            job_condition("Failed"),
        ]),
        ..Default::default()
    });
    jobs.replace_status(job_name, &pp, &failed_job)
        .await
        .unwrap();

    // By("Checking that Degraded=True when jobs fail")
    eventually("Degraded=True JobsFailed", EVENTUALLY, || async {
        let c = cron_jobs.get(name).await.ok()?;
        let d = find(&c.status.conditions, "Degraded")?;
        (d.status == "True" && d.reason == "JobsFailed").then_some(())
    })
    .await;

    // By("Checking that Available=False when jobs fail")
    let c = cron_jobs.get(name).await.unwrap();
    let available = find(&c.status.conditions, "Available").expect("Available");
    assert_eq!(
        (available.status.as_str(), available.reason.as_str()),
        ("False", "JobsFailed")
    );

    // By("Cleaning up")
    jobs.delete(job_name, &DeleteParams::default())
        .await
        .unwrap();
    cron_jobs
        .delete(name, &DeleteParams::default())
        .await
        .unwrap();
}

#[tokio::test]
async fn should_prune_old_finished_jobs_by_history_limits() {
    let client = setup_test().await;
    let (cron_jobs, jobs) = apis(&client);
    let name = "test-cronjob-prune";
    let pp = PostParams::default();
    let mut c = cron_job(name);
    c.spec.failed_jobs_history_limit = Some(1);
    c.spec.successful_jobs_history_limit = Some(1);
    cron_jobs.create(&pp, &c).await.unwrap();
    let owner = read_back(&cron_jobs, name).await;

    let create_finished_job =
        |job_name: String, condition: &'static str, start: jiff::Timestamp| {
            let (jobs, owner, pp) = (jobs.clone(), owner.clone(), pp.clone());
            async move {
                let mut finished = jobs
                    .create(&pp, &owned_job(&job_name, &owner))
                    .await
                    .unwrap();
                let mut conditions = vec![job_condition(condition)];
                let mut completion_time = None;
                if condition == "Failed" {
                    conditions.insert(0, job_condition("FailureTarget"));
                }
                if condition == "Complete" {
                    completion_time = Some(Time(start));
                    conditions.insert(0, job_condition("SuccessCriteriaMet"));
                }
                finished.status = Some(JobStatus {
                    start_time: Some(Time(start)),
                    completion_time,
                    conditions: Some(conditions),
                    ..Default::default()
                });
                jobs.replace_status(&job_name, &pp, &finished)
                    .await
                    .unwrap();
                job_name
            }
        };

    let base = jiff::Timestamp::now();
    let old = base - jiff::SignedDuration::from_secs(60);
    let new = base + jiff::SignedDuration::from_secs(1);
    let failed_old = create_finished_job(format!("{name}-failed-old"), "Failed", old).await;
    let failed_new = create_finished_job(format!("{name}-failed-new"), "Failed", new).await;
    let successful_old =
        create_finished_job(format!("{name}-successful-old"), "Complete", old).await;
    let successful_new =
        create_finished_job(format!("{name}-successful-new"), "Complete", new).await;

    // By("Checking that old finished Jobs are pruned")
    eventually("the old finished Jobs pruned", EVENTUALLY, || async {
        let deleted = |n: &str| {
            let jobs = jobs.clone();
            let n = n.to_owned();
            async move { jobs.get_opt(&n).await.unwrap().is_none() }
        };
        (deleted(&failed_old).await
            && deleted(&successful_old).await
            && !deleted(&failed_new).await
            && !deleted(&successful_new).await)
            .then_some(())
    })
    .await;

    // By("Cleaning up")
    jobs.delete(&failed_new, &DeleteParams::default())
        .await
        .unwrap();
    jobs.delete(&successful_new, &DeleteParams::default())
        .await
        .unwrap();
    cron_jobs
        .delete(name, &DeleteParams::default())
        .await
        .unwrap();
}

#[tokio::test]
async fn should_set_available_false_when_cron_job_is_suspended() {
    let client = setup_test().await;
    let (cron_jobs, _) = apis(&client);
    let name = "test-cronjob-suspended";
    let pp = PostParams::default();
    cron_jobs.create(&pp, &cron_job(name)).await.unwrap();

    // By("Updating the CronJob to suspend it"): get and update until no conflict.
    eventually("the CronJob suspended", EVENTUALLY, || async {
        let mut c = cron_jobs.get(name).await.ok()?;
        c.spec.suspend = Some(true);
        cron_jobs.replace(name, &pp, &c).await.ok().map(|_| ())
    })
    .await;

    // By("Checking that Available=False when suspended")
    eventually("Available=False Suspended", EVENTUALLY, || async {
        let c = cron_jobs.get(name).await.ok()?;
        let a = find(&c.status.conditions, "Available")?;
        (a.status == "False" && a.reason == "Suspended").then_some(())
    })
    .await;

    // By("Cleaning up the CronJob")
    cron_jobs
        .delete(name, &DeleteParams::default())
        .await
        .unwrap();
}

/// Bad input (not one of the Go `It`s): a Job whose scheduled-time annotation does not parse
/// is logged and skipped for the last schedule time, as the Go controller does, and the
/// controller goes on: the other Job's time is the CronJob's last schedule time, and both
/// Jobs are active.
#[tokio::test]
async fn a_job_with_an_unparseable_scheduled_time_is_skipped() {
    let client = setup_test().await;
    let (cron_jobs, jobs) = apis(&client);
    let name = "test-cronjob-bad-annotation";
    let pp = PostParams::default();
    cron_jobs.create(&pp, &cron_job(name)).await.unwrap();
    let owner = read_back(&cron_jobs, name).await;
    for (job_name, at) in [
        ("bad-annotation-job", "yesterday"),
        ("good-annotation-job", "2026-01-01T00:01:00Z"),
    ] {
        let mut job = owned_job(job_name, &owner);
        job.metadata.annotations = Some(
            [(
                cronjob::controller::SCHEDULED_TIME_ANNOTATION.to_owned(),
                at.to_owned(),
            )]
            .into(),
        );
        jobs.create(&pp, &job).await.unwrap();
    }
    let c = eventually("both Jobs active", EVENTUALLY, || async {
        let c = cron_jobs.get(name).await.ok()?;
        (c.status.active.len() == 2).then_some(c)
    })
    .await;
    assert_eq!(
        c.status.last_schedule_time.map(|t| t.0),
        Some("2026-01-01T00:01:00Z".parse().unwrap())
    );
    for job_name in ["bad-annotation-job", "good-annotation-job"] {
        jobs.delete(job_name, &DeleteParams::default())
            .await
            .unwrap();
    }
    cron_jobs
        .delete(name, &DeleteParams::default())
        .await
        .unwrap();
}
