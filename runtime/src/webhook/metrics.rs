//! Request count and latency of the conversion webhook, in Prometheus text form, under
//! controller-runtime's webhook metric names.

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
    success: AtomicU64,
    failure: AtomicU64,
    objects: AtomicU64,
    buckets: [AtomicU64; BUCKETS.len()],
    count: AtomicU64,
    /// Sum of latencies in microseconds.
    sum_micros: AtomicU64,
}

impl Metrics {
    /// Counts one answered review of `objects` objects.
    pub fn observe(&self, latency: Duration, succeeded: bool, objects: usize) {
        if succeeded {
            self.success.fetch_add(1, Ordering::Relaxed);
        } else {
            self.failure.fetch_add(1, Ordering::Relaxed);
        }
        self.objects.fetch_add(objects as u64, Ordering::Relaxed);
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

    /// Reviews answered, by success.
    #[must_use]
    pub fn requests(&self, succeeded: bool) -> u64 {
        if succeeded {
            self.success.load(Ordering::Relaxed)
        } else {
            self.failure.load(Ordering::Relaxed)
        }
    }

    /// The Prometheus text exposition.
    #[must_use]
    pub fn render_prometheus(&self) -> String {
        let mut out = String::new();
        let path = "path=\"/convert\"";
        let _ = writeln!(
            out,
            "# HELP controller_runtime_webhook_requests_total Total number of conversion reviews answered, by outcome.\n# TYPE controller_runtime_webhook_requests_total counter"
        );
        for (code, n) in [("200", &self.success), ("500", &self.failure)] {
            let _ = writeln!(
                out,
                "controller_runtime_webhook_requests_total{{code=\"{code}\",{path}}} {}",
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
            "# HELP controller_runtime_webhook_latency_seconds Histogram of the latency of processing conversion reviews.\n# TYPE controller_runtime_webhook_latency_seconds histogram"
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
