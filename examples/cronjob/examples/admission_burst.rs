//! The load of bench/admission.sh: a burst of v1 CronJob creates from concurrent clients,
//! each create timed from request to response (client side: the API server's whole create,
//! admission webhooks included). Prints one JSON line: count, failures, wall time and the
//! latency percentiles in milliseconds. Before the burst it checks what both webhook servers
//! must do to pass: a create comes back defaulted (Go's CronJobDefaulter: concurrencyPolicy
//! Allow, suspend false, history limits 3 and 1) and an invalid schedule is refused by the
//! validator; a failed check exits non-zero.
//!
//!     admission_burst NAMESPACE COUNT CONCURRENCY [PREFIX]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use anyhow::{Context, bail, ensure};
use cronjob::apis::batch::v1::{CronJob, CronJobSpec};
use kube::api::{Api, PostParams};

fn cron_job(ns: &str, name: &str, schedule: &str) -> CronJob {
    // A Job the API server accepts (bench/cronjob.sh's controllers create them); no kubelet
    // runs it.
    let job_template = serde_json::from_value(serde_json::json!({"spec": {"template": {"spec": {
        "restartPolicy": "OnFailure",
        "containers": [{"name": "hello", "image": "busybox", "command": ["true"]}],
    }}}}))
    .expect("a JobTemplateSpec");
    let mut c = CronJob::new(
        name,
        CronJobSpec {
            schedule: schedule.into(),
            job_template,
            ..Default::default()
        },
    );
    c.metadata.namespace = Some(ns.into());
    c
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let [_, ns, count, concurrency, rest @ ..] = args.as_slice() else {
        bail!("usage: admission_burst NAMESPACE COUNT CONCURRENCY [PREFIX]");
    };
    let count: usize = count.parse().context("COUNT")?;
    let concurrency: usize = concurrency.parse().context("CONCURRENCY")?;
    let prefix = rest.first().cloned().unwrap_or_else(|| "burst".into());
    let client = kube::Client::try_default().await?;
    let api: Api<CronJob> = Api::namespaced(client, ns);

    // What both servers must do: default, and refuse a bad schedule (not with
    // ADMISSION_BURST_CHECK=0: the run without webhooks).
    if std::env::var("ADMISSION_BURST_CHECK").as_deref() != Ok("0") {
        check(&api, ns, &prefix).await?;
    }
    burst(&api, ns, &prefix, count, concurrency).await
}

async fn check(api: &Api<CronJob>, ns: &str, prefix: &str) -> anyhow::Result<()> {
    let pp = PostParams::default();
    let probe = api
        .create(
            &pp,
            &cron_job(ns, &format!("{prefix}-check"), "*/5 * * * *"),
        )
        .await
        .context("the check create")?;
    let s = &probe.spec;
    ensure!(
        s.concurrency_policy.as_deref() == Some("Allow")
            && s.suspend == Some(false)
            && s.successful_jobs_history_limit == Some(3)
            && s.failed_jobs_history_limit == Some(1),
        "the create was not defaulted: {s:?}"
    );
    // Five fields, so the conversion to v2 (for the v2 webhooks the API server also calls,
    // matchPolicy Equivalent) passes and the validators see it; minute 99 is out of range.
    match api
        .create(&pp, &cron_job(ns, &format!("{prefix}-bad"), "99 * * * *"))
        .await
    {
        Err(kube::Error::Api(e)) if e.code == 422 && e.message.contains("spec.schedule") => {}
        other => bail!("an invalid schedule was not refused by the validator: {other:?}"),
    }
    Ok(())
}

async fn burst(
    api: &Api<CronJob>,
    ns: &str,
    prefix: &str,
    count: usize,
    concurrency: usize,
) -> anyhow::Result<()> {
    let next = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let workers: Vec<_> = (0..concurrency)
        .map(|_| {
            let (api, next, ns, prefix) =
                (api.clone(), next.clone(), ns.to_owned(), prefix.to_owned());
            tokio::spawn(async move {
                let (mut times, mut failures) = (Vec::new(), 0usize);
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= count {
                        break (times, failures);
                    }
                    let c = cron_job(&ns, &format!("{prefix}-{i:05}"), "*/1 * * * *");
                    let t = Instant::now();
                    match api.create(&PostParams::default(), &c).await {
                        Ok(_) => times.push(t.elapsed().as_secs_f64() * 1e3),
                        Err(e) => {
                            failures += 1;
                            if failures <= 3 {
                                eprintln!("create {i}: {e}");
                            }
                        }
                    }
                }
            })
        })
        .collect();
    let (mut times, mut failures) = (Vec::with_capacity(count), 0);
    for w in workers {
        let (t, f) = w.await?;
        times.extend(t);
        failures += f;
    }
    let wall = start.elapsed().as_secs_f64();
    times.sort_by(f64::total_cmp);
    let pct = |p: f64| {
        times
            .get(((times.len() as f64 * p).ceil() as usize).saturating_sub(1))
            .copied()
            .unwrap_or(f64::NAN)
    };
    println!(
        r#"{{"creates":{},"failures":{failures},"wall_s":{wall:.3},"p50_ms":{:.2},"p90_ms":{:.2},"p99_ms":{:.2},"max_ms":{:.2}}}"#,
        times.len(),
        pct(0.50),
        pct(0.90),
        pct(0.99),
        pct(1.0)
    );
    ensure!(failures == 0, "{failures} creates failed");
    Ok(())
}
