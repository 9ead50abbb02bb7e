//! What the conversion webhook counts, in Prometheus text form, under controller-runtime's
//! webhook metric names: requests by the HTTP status sent (as promhttp counts them),
//! reviews by outcome, and the latency of a review from its whole body read to its answer
//! (time spent waiting on the client's body is the client's, not the webhook's).

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Latency bucket bounds in seconds (controller-runtime's webhook latency buckets).
const BUCKETS: [f64; 11] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// What the webhook counts.
#[derive(Debug, Default)]
pub struct Metrics {
    /// Responses to `/convert`, by the HTTP status sent (a failed review is a `200`).
    responses: parking_lot::Mutex<BTreeMap<u16, u64>>,
    success: AtomicU64,
    failure: AtomicU64,
    objects: AtomicU64,
    buckets: [AtomicU64; BUCKETS.len()],
    count: AtomicU64,
    /// Sum of latencies in microseconds.
    sum_micros: AtomicU64,
}

impl Metrics {
    /// Counts one response to `/convert` with the status it was sent with.
    pub(crate) fn responded(&self, status: http::StatusCode) {
        *self.responses.lock().entry(status.as_u16()).or_default() += 1;
    }

    /// Counts one review of `objects` objects, and, when its body was read whole, the time
    /// from then to its answer.
    pub(crate) fn reviewed(&self, latency: Option<Duration>, succeeded: bool, objects: usize) {
        if succeeded {
            self.success.fetch_add(1, Ordering::Relaxed);
        } else {
            self.failure.fetch_add(1, Ordering::Relaxed);
        }
        self.objects.fetch_add(objects as u64, Ordering::Relaxed);
        let Some(latency) = latency else {
            return;
        };
        let secs = latency.as_secs_f64();
        for (i, bound) in BUCKETS.iter().enumerate() {
            if secs <= *bound {
                self.buckets[i].fetch_add(1, Ordering::Relaxed);
            }
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        self.sum_micros.fetch_add(
            u64::try_from(latency.as_micros()).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
    }

    /// Reviews answered, by outcome (a failed review is still an HTTP `200`).
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
        self.responses.lock().get(&status).copied().unwrap_or(0)
    }

    /// The Prometheus text exposition.
    #[must_use]
    pub fn render_prometheus(&self) -> String {
        let mut out = String::new();
        let path = "path=\"/convert\"";
        let _ = writeln!(
            out,
            "# HELP controller_runtime_webhook_requests_total Total number of requests to the conversion webhook, by the HTTP status sent.\n# TYPE controller_runtime_webhook_requests_total counter"
        );
        let mut responses = self.responses.lock().clone();
        responses.entry(200).or_default();
        for (code, n) in responses {
            let _ = writeln!(
                out,
                "controller_runtime_webhook_requests_total{{code=\"{code}\",{path}}} {n}"
            );
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
        let _ = writeln!(
            out,
            "# HELP controller_runtime_webhook_latency_seconds Histogram of the latency of processing conversion reviews, from the whole body read to the answer.\n# TYPE controller_runtime_webhook_latency_seconds histogram"
        );
        for (i, bound) in BUCKETS.iter().enumerate() {
            let _ = writeln!(
                out,
                "controller_runtime_webhook_latency_seconds_bucket{{{path},le=\"{bound}\"}} {}",
                self.buckets[i].load(Ordering::Relaxed)
            );
        }
        let count = self.count.load(Ordering::Relaxed);
        let _ = writeln!(
            out,
            "controller_runtime_webhook_latency_seconds_bucket{{{path},le=\"+Inf\"}} {count}\ncontroller_runtime_webhook_latency_seconds_sum{{{path}}} {}\ncontroller_runtime_webhook_latency_seconds_count{{{path}}} {count}",
            self.sum_micros.load(Ordering::Relaxed) as f64 / 1e6
        );
        out
    }
}
