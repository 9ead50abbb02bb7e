//! The Go project's v1 webhook suite (go-project/internal/webhook/v1/cronjob_webhook_test.go,
//! its 8 `It`s), ported: the same objects, steps and assertions, but each call of the
//! defaulter or validator is a request to the real API server, which calls the port's
//! webhooks over TLS (registered from the generated config/webhook/manifests.yaml, see
//! `support`). The Go suite calls `Default`/`ValidateCreate`/`ValidateUpdate` in-process
//! (its envtest starts the webhook server, but its `It`s never go through it).
//!
//! And v2's, which the Go project leaves as a commented-out scaffold: the cases it names,
//! from v2's webhook code (defaults, a refused schedule, a v2 object read as v1).

mod support;

use std::time::Duration;

use cronjob::apis::batch::{v1, v2};
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use kube::api::{Api, PostParams};
use serde_json::json;
use support::*;
use tokio::sync::OnceCell;

const VALID_CRON_JOB_NAME: &str = "valid-cronjob-name";
const SCHEDULE: &str = "*/5 * * * *";
const TOO_LONG: &str =
    "this-name-is-way-too-long-and-should-fail-validation-because-it-is-way-too-long";
/// Objects labelled so are not validated on create (the suite's `objectSelector`): the
/// way to have an object whose update the validator then judges with an invalid name, as
/// Go's `ValidateUpdate` is called with one (a name cannot change through the API server).
const SKIP_VALIDATION: &str = "cronjob-test/skip-validation";

/// The suite's namespace, with the webhook configurations registered for it and in force.
async fn suite_namespace() -> &'static str {
    static NS: OnceCell<String> = OnceCell::const_new();
    NS.get_or_init(|| async {
        let client = client();
        let ns = namespace(&client, "webhook-v1").await;
        let pp = PostParams::default();
        for mut config in admission_configurations(&ns) {
            // Each version's webhooks judge requests of that version only (`Exact`; the
            // API server's default, `Equivalent`, also sends a v1 request, converted, to
            // v2's), so each of these tests is about one version's webhook, as the Go
            // suites are (one per version, calling the webhook's methods).
            for w in config["webhooks"].as_array_mut().unwrap() {
                w["matchPolicy"] = json!("Exact");
            }
            if config["kind"] == "MutatingWebhookConfiguration" {
                Api::<MutatingWebhookConfiguration>::all(client.clone())
                    .create(&pp, &serde_json::from_value(config).unwrap())
                    .await
                    .expect("mutating configuration");
            } else {
                for w in config["webhooks"].as_array_mut().unwrap() {
                    w["objectSelector"] = json!({"matchExpressions": [
                        {"key": SKIP_VALIDATION, "operator": "DoesNotExist"}]});
                }
                Api::<ValidatingWebhookConfiguration>::all(client.clone())
                    .create(&pp, &serde_json::from_value(config).unwrap())
                    .await
                    .expect("validating configuration");
            }
        }
        // The API server takes new configurations up within a second or so: until both
        // answer (a default set, a bad schedule refused), dry runs.
        let api: Api<v1::CronJob> = Api::namespaced(client.clone(), &ns);
        let dry = PostParams {
            dry_run: true,
            ..PostParams::default()
        };
        eventually(
            "the webhooks to be in force",
            Duration::from_secs(30),
            || {
                let (api, dry) = (api.clone(), dry.clone());
                async move {
                    let mut probe = cron_job("probe");
                    probe.spec.suspend = None;
                    let defaulted = api.create(&dry, &probe).await.ok()?.spec.suspend.is_some();
                    probe.spec.schedule = "bad".into();
                    let refused = api.create(&dry, &probe).await.is_err();
                    (defaulted && refused).then_some(())
                }
            },
        )
        .await;
        ns
    })
    .await
}

/// Go's `BeforeEach` object.
fn cron_job(name: &str) -> v1::CronJob {
    v1::CronJob::new(
        name,
        v1::CronJobSpec {
            schedule: SCHEDULE.into(),
            concurrency_policy: Some("Allow".into()),
            successful_jobs_history_limit: Some(3),
            failed_jobs_history_limit: Some(1),
            ..Default::default()
        },
    )
}

async fn api() -> Api<v1::CronJob> {
    let ns = suite_namespace().await;
    Api::namespaced(client(), ns)
}

fn refusal(e: kube::Error) -> kube::core::Status {
    match e {
        kube::Error::Api(s) => *s,
        other => panic!("expected the API server's refusal, got {other}"),
    }
}

// Context("When creating CronJob under Defaulting Webhook")

#[tokio::test]
async fn should_apply_defaults_when_a_required_field_is_empty() {
    let api = api().await;
    let mut obj = cron_job("defaults");
    obj.spec.concurrency_policy = Some(String::new()); // This should default to AllowConcurrent
    obj.spec.suspend = None; // This should default to false
    obj.spec.successful_jobs_history_limit = None; // This should default to 3
    obj.spec.failed_jobs_history_limit = None; // This should default to 1
    let obj = api.create(&PostParams::default(), &obj).await.unwrap();
    assert_eq!(obj.spec.concurrency_policy.as_deref(), Some("Allow"));
    assert_eq!(obj.spec.suspend, Some(false));
    assert_eq!(obj.spec.successful_jobs_history_limit, Some(3));
    assert_eq!(obj.spec.failed_jobs_history_limit, Some(1));
}

#[tokio::test]
async fn should_not_overwrite_fields_that_are_already_set() {
    let api = api().await;
    let mut obj = cron_job("already-set");
    obj.spec.concurrency_policy = Some("Forbid".into());
    obj.spec.suspend = Some(true);
    obj.spec.successful_jobs_history_limit = Some(5);
    obj.spec.failed_jobs_history_limit = Some(2);
    let obj = api.create(&PostParams::default(), &obj).await.unwrap();
    assert_eq!(obj.spec.concurrency_policy.as_deref(), Some("Forbid"));
    assert_eq!(obj.spec.suspend, Some(true));
    assert_eq!(obj.spec.successful_jobs_history_limit, Some(5));
    assert_eq!(obj.spec.failed_jobs_history_limit, Some(2));
}

// Context("When creating or updating CronJob under Validating Webhook")

#[tokio::test]
async fn should_deny_creation_if_the_name_is_too_long() {
    let api = api().await;
    let s = refusal(
        api.create(&PostParams::default(), &cron_job(TOO_LONG))
            .await
            .unwrap_err(),
    );
    assert_eq!(s.code, 422, "{s:?}");
    assert!(
        s.message.contains("must be no more than 52 characters"),
        "{}",
        s.message
    );
    assert_eq!(
        s.message,
        format!(
            "admission webhook \"vcronjob-v1.kb.io\" denied the request: CronJob.batch.tutorial.kubebuilder.io \"{TOO_LONG}\" is invalid: metadata.name: Invalid value: \"{TOO_LONG}\": must be no more than 52 characters"
        )
    );
}

#[tokio::test]
async fn should_admit_creation_if_the_name_is_valid() {
    let api = api().await;
    api.create(&PostParams::default(), &cron_job(VALID_CRON_JOB_NAME))
        .await
        .expect("admitted");
}

#[tokio::test]
async fn should_deny_creation_if_the_schedule_is_invalid() {
    let api = api().await;
    let mut obj = cron_job("invalid-schedule");
    obj.spec.schedule = "invalid-cron-schedule".into();
    let s = refusal(api.create(&PostParams::default(), &obj).await.unwrap_err());
    assert_eq!(s.code, 422, "{s:?}");
    assert!(
        s.message
            .contains("Expected exactly 5 fields, found 1: invalid-cron-schedule"),
        "{}",
        s.message
    );
    let causes = s.details.expect("details").causes;
    assert_eq!(causes.len(), 1);
    assert_eq!(causes[0].field, "spec.schedule");
}

#[tokio::test]
async fn should_admit_creation_if_the_schedule_is_valid() {
    let api = api().await;
    let mut obj = cron_job("valid-schedule");
    obj.spec.schedule = SCHEDULE.into();
    api.create(&PostParams::default(), &obj)
        .await
        .expect("admitted");
}

#[tokio::test]
async fn should_deny_update_if_both_name_and_spec_are_invalid() {
    let api = api().await;
    let pp = PostParams::default();
    // The old object: created past the validator (see SKIP_VALIDATION), its schedule valid.
    let mut old = cron_job(TOO_LONG);
    old.metadata.labels = Some([(SKIP_VALIDATION.to_owned(), "true".to_owned())].into());
    old.spec.schedule = SCHEDULE.into();
    let mut obj = api.create(&pp, &old).await.expect("created unvalidated");
    // "simulating an update": the new object is validated (it has no label), and both its
    // name and its schedule are invalid.
    obj.metadata.labels = None;
    obj.spec.schedule = "invalid-cron-schedule".into();
    let s = refusal(api.replace(TOO_LONG, &pp, &obj).await.unwrap_err());
    assert_eq!(s.code, 422, "{s:?}");
    let mut fields: Vec<String> = s
        .details
        .expect("details")
        .causes
        .into_iter()
        .map(|c| c.field)
        .collect();
    fields.sort();
    assert_eq!(fields, ["metadata.name", "spec.schedule"], "{}", s.message);
}

#[tokio::test]
async fn should_admit_update_if_both_name_and_spec_are_valid() {
    let api = api().await;
    let pp = PostParams::default();
    let name = "valid-cronjob-name-updated";
    let mut obj = api.create(&pp, &cron_job(name)).await.unwrap();
    obj.spec.schedule = "0 0 * * *".into();
    let updated = api.replace(name, &pp, &obj).await.expect("admitted");
    assert_eq!(updated.spec.schedule, "0 0 * * *");
}

// v2: the cases its scaffold names (defaulting, validation, conversion), from its webhook
// code; the API server converts between v1 (stored) and v2 through the port's /convert.

fn v2_cron_job(name: &str, minute: Option<&str>) -> v2::CronJob {
    v2::CronJob::new(
        name,
        v2::CronJobSpec {
            schedule: v2::CronSchedule {
                minute: minute.map(str::to_owned),
                hour: Some("1".into()),
                ..Default::default()
            },
            ..Default::default()
        },
    )
}

#[tokio::test]
async fn v2_defaults_apply_and_the_object_reads_back_as_v1() {
    let ns = suite_namespace().await;
    let client = client();
    let api: Api<v2::CronJob> = Api::namespaced(client.clone(), ns);
    let created = api
        .create(
            &PostParams::default(),
            &v2_cron_job("v2-defaults", Some("*/10")),
        )
        .await
        .unwrap();
    assert_eq!(created.spec.concurrency_policy.as_deref(), Some("Allow"));
    assert_eq!(created.spec.suspend, Some(false));
    assert_eq!(created.spec.successful_jobs_history_limit, Some(3));
    assert_eq!(created.spec.failed_jobs_history_limit, Some(1));
    assert_eq!(created.spec.schedule.minute.as_deref(), Some("*/10"));
    let as_v1 = Api::<v1::CronJob>::namespaced(client, ns)
        .get("v2-defaults")
        .await
        .unwrap();
    assert_eq!(as_v1.spec.schedule, "*/10 1 * * *");
}

#[tokio::test]
async fn v2_refuses_an_invalid_schedule_with_its_message() {
    let ns = suite_namespace().await;
    let api: Api<v2::CronJob> = Api::namespaced(client(), ns);
    let s = refusal(
        api.create(
            &PostParams::default(),
            &v2_cron_job("v2-invalid", Some("61")),
        )
        .await
        .unwrap_err(),
    );
    assert_eq!(s.code, 422, "{s:?}");
    assert!(
        s.message.ends_with(
            "spec.schedule: Invalid value: \"61 1 * * *\": invalid cron schedule format: End of range (61) above maximum (59): 61"
        ),
        "{}",
        s.message
    );
}
