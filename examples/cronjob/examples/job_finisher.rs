//! The kubelet bench/cronjob.sh does not have: watches the Jobs of a namespace and marks
//! each one finished RUN_SECONDS after its creation, as a Job whose pod ran that long and
//! exited 0 (status `succeeded: 1`, conditions `SuccessCriteriaMet` and `Complete`, the
//! completion time; kube-apiserver 1.37 refuses `Complete` without `SuccessCriteriaMet`).
//! The CronJob controllers then see finished Jobs, record them in `lastScheduleTime`'s
//! history and prune them to `successfulJobsHistoryLimit`, as in a cluster.
//!
//!     job_finisher NAMESPACE [RUN_SECONDS]
//!
//! Runs until SIGTERM, then prints one JSON line: Jobs seen and finished, patch failures,
//! and each Job's lag (its creationTimestamp minus its `scheduled-at` annotation, in
//! seconds: the API server's timestamps have 1 s resolution) at p50 and p99. It sees every
//! Job, also those the controllers prune later.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::Context;
use futures::StreamExt;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::watcher;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let ns = args
        .next()
        .context("usage: job_finisher NAMESPACE [RUN_SECONDS]")?;
    let run: i64 = args.next().map_or(Ok(5), |s| s.parse())?;
    let client = kube::Client::try_default().await?;
    let jobs: Api<Job> = Api::namespaced(client, &ns);
    // Unfinished Jobs by name, with when each is due.
    let mut due: BTreeMap<String, Timestamp> = BTreeMap::new();
    let mut lags: BTreeMap<String, f64> = BTreeMap::new();
    let mut events = watcher(jobs.clone(), watcher::Config::default())
        .boxed()
        .fuse();
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let (mut finished, mut failed) = (0usize, 0usize);
    loop {
        tokio::select! {
            _ = term.recv() => break,
            ev = events.next() => match ev {
                Some(Ok(watcher::Event::Apply(j) | watcher::Event::InitApply(j))) => {
                    note(&mut due, &j, run);
                    if let (Some(name), Some(lag)) = (&j.metadata.name, lag(&j)) {
                        lags.entry(name.clone()).or_insert(lag);
                    }
                }
                Some(Ok(watcher::Event::Delete(j))) => {
                    due.remove(j.metadata.name.as_deref().unwrap_or_default());
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => eprintln!("job_finisher: watch: {e}"),
                None => break,
            },
            _ = tick.tick() => {
                let now = Timestamp::now();
                let ready: Vec<String> = due
                    .iter()
                    .filter(|(_, at)| **at <= now)
                    .map(|(n, _)| n.clone())
                    .collect();
                for name in ready {
                    due.remove(&name);
                    match finish(&jobs, &name).await {
                        Ok(()) => finished += 1,
                        Err(e) => {
                            failed += 1;
                            eprintln!("job_finisher: {name}: {e}");
                        }
                    }
                }
            }
        }
    }
    let mut sorted: Vec<f64> = lags.into_values().collect();
    sorted.sort_by(f64::total_cmp);
    // Nearest rank.
    let pct = |p: usize| {
        (!sorted.is_empty()).then(|| sorted[(sorted.len() * p).div_ceil(100).max(1) - 1])
    };
    println!(
        "{}",
        serde_json::json!({"jobs": sorted.len(), "finished": finished, "failed": failed, "lag_p50_s": pct(50), "lag_p99_s": pct(99)})
    );
    Ok(())
}

/// Remember an unfinished Job, due `run` seconds after its creation.
fn note(due: &mut BTreeMap<String, Timestamp>, job: &Job, run: i64) {
    let finished = job
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| (c.type_ == "Complete" || c.type_ == "Failed") && c.status == "True")
        });
    let (Some(name), Some(created)) = (&job.metadata.name, &job.metadata.creation_timestamp) else {
        return;
    };
    if finished {
        due.remove(name);
    } else if !due.contains_key(name) {
        let at = created
            .0
            .checked_add(jiff_seconds(run))
            .unwrap_or(created.0);
        due.insert(name.clone(), at);
    }
}

/// Seconds from the Job's scheduled time (the annotation both controllers write) to its
/// creation.
fn lag(job: &Job) -> Option<f64> {
    let at: Timestamp = job
        .metadata
        .annotations
        .as_ref()?
        .get("batch.tutorial.kubebuilder.io/scheduled-at")?
        .parse()
        .ok()?;
    let created = job.metadata.creation_timestamp.as_ref()?.0;
    Some(created.duration_since(at).as_secs_f64())
}

fn jiff_seconds(s: i64) -> k8s_openapi::jiff::SignedDuration {
    k8s_openapi::jiff::SignedDuration::from_secs(s)
}

async fn finish(jobs: &Api<Job>, name: &str) -> anyhow::Result<()> {
    let now = Timestamp::now().to_string();
    let condition = |t: &str| serde_json::json!({"type": t, "status": "True", "lastProbeTime": now, "lastTransitionTime": now});
    let status = serde_json::json!({"status": {
        "active": 0, "ready": 0, "terminating": 0, "succeeded": 1,
        "completionTime": now,
        "conditions": [condition("SuccessCriteriaMet"), condition("Complete")],
    }});
    jobs.patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
        .await?;
    Ok(())
}
