//! What the webhook server counts, in Prometheus text form, under controller-runtime's
//! webhook metric names: requests by path and the HTTP status sent (as promhttp counts
//! them), conversion reviews by outcome, admission reviews by path and outcome, and the
//! latency of a review by path, from its whole body read to its answer (time spent waiting
//! on the client's body is the client's, not the webhook's).

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::CONVERT_PATH;

/// Latency bucket bounds in seconds (controller-runtime's webhook latency buckets).
const BUCKETS: [f64; 11] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// How an admission review was answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AdmissionOutcome {
    /// Allowed (with or without a patch).
    Allowed,
    /// Refused by the defaulter or validator.
    Denied,
    /// Not judged: a malformed review, a kind the path does not serve, an object that does
    /// not decode into the Rust type, a body that could not be read.
    Errored,
}

impl AdmissionOutcome {
    fn label(self) -> &'static str {
        match self {
            AdmissionOutcome::Allowed => "allowed",
            AdmissionOutcome::Denied => "denied",
            AdmissionOutcome::Errored => "error",
        }
    }
}

/// One path's latency histogram.
#[derive(Debug, Default, Clone)]
struct Histogram {
    buckets: [u64; BUCKETS.len()],
    count: u64,
    /// Sum of latencies in microseconds.
    sum_micros: u64,
}

impl Histogram {
    fn observe(&mut self, latency: Duration) {
        let secs = latency.as_secs_f64();
        for (i, bound) in BUCKETS.iter().enumerate() {
            if secs <= *bound {
                self.buckets[i] += 1;
            }
        }
        self.count += 1;
        self.sum_micros = self
            .sum_micros
            .saturating_add(u64::try_from(latency.as_micros()).unwrap_or(u64::MAX));
    }
}

/// What the webhook counts.
#[derive(Debug, Default)]
pub struct Metrics {
    /// Responses by path, then by the HTTP status sent (a failed review is a `200`).
    responses: parking_lot::Mutex<BTreeMap<String, BTreeMap<u16, u64>>>,
    success: AtomicU64,
    failure: AtomicU64,
    objects: AtomicU64,
    /// Admission reviews by path and outcome.
    admission: parking_lot::Mutex<BTreeMap<String, BTreeMap<AdmissionOutcome, u64>>>,
    latency: parking_lot::Mutex<BTreeMap<String, Histogram>>,
}

impl Metrics {
    /// Metrics with every path the server serves present from the start (at zero), so a
    /// scrape before the first review shows them.
    pub(crate) fn serving(paths: impl IntoIterator<Item = String>) -> Self {
        let m = Metrics::default();
        {
            let mut responses = m.responses.lock();
            let mut latency = m.latency.lock();
            for p in paths {
                responses
                    .entry(p.clone())
                    .or_default()
                    .entry(200)
                    .or_default();
                latency.entry(p).or_default();
            }
        }
        m
    }

    /// Counts one response to a review path with the status it was sent with.
    pub(crate) fn responded(&self, path: &str, status: http::StatusCode) {
        *self
            .responses
            .lock()
            .entry(path.to_owned())
            .or_default()
            .entry(status.as_u16())
            .or_default() += 1;
    }

    fn observe(&self, path: &str, latency: Duration) {
        self.latency
            .lock()
            .entry(path.to_owned())
            .or_default()
            .observe(latency);
    }

    /// Counts one conversion review of `objects` objects, and, when its body was read
    /// whole, the time from then to its answer.
    pub(crate) fn reviewed(&self, latency: Option<Duration>, succeeded: bool, objects: usize) {
        if succeeded {
            self.success.fetch_add(1, Ordering::Relaxed);
        } else {
            self.failure.fetch_add(1, Ordering::Relaxed);
        }
        self.objects.fetch_add(objects as u64, Ordering::Relaxed);
        if let Some(latency) = latency {
            self.observe(CONVERT_PATH, latency);
        }
    }

    /// Counts one admission review at `path`, and, when its body was read whole, the time
    /// from then to its answer.
    #[cfg_attr(not(feature = "admission"), allow(dead_code))]
    pub(crate) fn admitted(
        &self,
        path: &str,
        latency: Option<Duration>,
        outcome: AdmissionOutcome,
    ) {
        *self
            .admission
            .lock()
            .entry(path.to_owned())
            .or_default()
            .entry(outcome)
            .or_default() += 1;
        if let Some(latency) = latency {
            self.observe(path, latency);
        }
    }

    /// Conversion reviews answered, by outcome (a failed review is still an HTTP `200`).
    #[must_use]
    pub fn requests(&self, succeeded: bool) -> u64 {
        if succeeded {
            self.success.load(Ordering::Relaxed)
        } else {
            self.failure.load(Ordering::Relaxed)
        }
    }

    /// Responses to `/convert` sent with HTTP status `status`.
    #[must_use]
    pub fn responses(&self, status: u16) -> u64 {
        self.responses_at(CONVERT_PATH, status)
    }

    /// Responses to requests for `path` sent with HTTP status `status`.
    #[must_use]
    pub fn responses_at(&self, path: &str, status: u16) -> u64 {
        self.responses
            .lock()
            .get(path)
            .and_then(|m| m.get(&status))
            .copied()
            .unwrap_or(0)
    }

    /// Admission reviews answered at `path` with `outcome`.
    #[must_use]
    pub fn admission_reviews(&self, path: &str, outcome: AdmissionOutcome) -> u64 {
        self.admission
            .lock()
            .get(path)
            .and_then(|m| m.get(&outcome))
            .copied()
            .unwrap_or(0)
    }

    /// The Prometheus text exposition.
    #[must_use]
    pub fn render_prometheus(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "# HELP controller_runtime_webhook_requests_total Total number of requests to the webhooks, by path and the HTTP status sent.\n# TYPE controller_runtime_webhook_requests_total counter"
        );
        for (path, codes) in self.responses.lock().iter() {
            for (code, n) in codes {
                let _ = writeln!(
                    out,
                    "controller_runtime_webhook_requests_total{{code=\"{code}\",path=\"{path}\"}} {n}"
                );
            }
        }
        let _ = writeln!(
            out,
            "# HELP kube_codegen_conversion_reviews_total Conversion reviews answered, by outcome.\n# TYPE kube_codegen_conversion_reviews_total counter"
        );
        for (result, n) in [("success", &self.success), ("failure", &self.failure)] {
            let _ = writeln!(
                out,
                "kube_codegen_conversion_reviews_total{{result=\"{result}\"}} {}",
                n.load(Ordering::Relaxed)
            );
        }
        let _ = writeln!(
            out,
            "# HELP kube_codegen_conversion_objects_total Objects converted.\n# TYPE kube_codegen_conversion_objects_total counter\nkube_codegen_conversion_objects_total {}",
            self.objects.load(Ordering::Relaxed)
        );
        let admission = self.admission.lock().clone();
        if !admission.is_empty() {
            let _ = writeln!(
                out,
                "# HELP kube_codegen_admission_reviews_total Admission reviews answered, by path and outcome.\n# TYPE kube_codegen_admission_reviews_total counter"
            );
            for (path, outcomes) in admission {
                for (outcome, n) in outcomes {
                    let _ = writeln!(
                        out,
                        "kube_codegen_admission_reviews_total{{path=\"{path}\",result=\"{}\"}} {n}",
                        outcome.label()
                    );
                }
            }
        }
        let _ = writeln!(
            out,
            "# HELP controller_runtime_webhook_latency_seconds Histogram of the latency of processing reviews, from the whole body read to the answer.\n# TYPE controller_runtime_webhook_latency_seconds histogram"
        );
        for (path, h) in self.latency.lock().iter() {
            let path = format!("path=\"{path}\"");
            for (i, bound) in BUCKETS.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "controller_runtime_webhook_latency_seconds_bucket{{{path},le=\"{bound}\"}} {}",
                    h.buckets[i]
                );
            }
            let _ = writeln!(
                out,
                "controller_runtime_webhook_latency_seconds_bucket{{{path},le=\"+Inf\"}} {count}\ncontroller_runtime_webhook_latency_seconds_sum{{{path}}} {}\ncontroller_runtime_webhook_latency_seconds_count{{{path}}} {count}",
                h.sum_micros as f64 / 1e6,
                count = h.count,
            );
        }
        out
    }
}
