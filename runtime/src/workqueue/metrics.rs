//! Work queue metrics, as client-go's workqueue metrics provider
//! (`k8s.io/component-base/metrics/prometheus/workqueue`), with a Prometheus text renderer.

use std::fmt::Write as _;

/// Upper bounds (seconds) of the `queue_duration` and `work_duration` histogram buckets:
/// client-go's `ExponentialBuckets(10e-9, 10, 10)`, i.e. 10 ns to 10 s.
pub const DURATION_BUCKETS: [f64; 10] = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0];

/// A histogram's state at one moment.
#[derive(Debug, Clone, PartialEq)]
pub struct HistogramSnapshot {
    /// `(upper bound in seconds, number of observations <= that bound)`, cumulative as in
    /// Prometheus, for each of [`DURATION_BUCKETS`]; the `+Inf` bucket is `count`.
    pub buckets: Vec<(f64, u64)>,
    /// Number of observations.
    pub count: u64,
    /// Sum of the observed values, in seconds.
    pub sum: f64,
}

impl HistogramSnapshot {
    /// Mean observed value in seconds (0 when nothing was observed).
    #[must_use]
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum / self.count as f64
        }
    }
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Histogram {
    /// Non-cumulative counts per bucket of [`DURATION_BUCKETS`]; larger values only count.
    counts: [u64; DURATION_BUCKETS.len()],
    count: u64,
    sum: f64,
}

impl Histogram {
    pub(crate) fn observe(&mut self, seconds: f64) {
        if let Some(i) = DURATION_BUCKETS.iter().position(|&b| seconds <= b) {
            self.counts[i] += 1;
        }
        self.count += 1;
        self.sum += seconds;
    }

    pub(crate) fn snapshot(&self) -> HistogramSnapshot {
        let mut cumulative = 0;
        let buckets = DURATION_BUCKETS
            .iter()
            .zip(self.counts)
            .map(|(&bound, n)| {
                cumulative += n;
                (bound, cumulative)
            })
            .collect();
        HistogramSnapshot {
            buckets,
            count: self.count,
            sum: self.sum,
        }
    }
}

/// A snapshot of one queue's metrics (see [`WorkQueue::metrics`](super::WorkQueue::metrics)).
#[derive(Debug, Clone, PartialEq)]
pub struct QueueMetrics {
    /// The queue's name: the `name` label.
    pub name: String,
    /// `workqueue_depth`: items added and not yet handed out by `get`. Like client-go this
    /// counts an item re-added while it is being processed (it is not in `len()` until
    /// `done`).
    pub depth: usize,
    /// `workqueue_adds_total`: adds that were not deduplicated away.
    pub adds: u64,
    /// `workqueue_retries_total`: calls to `add_after` (and so `add_rate_limited`) on a
    /// queue that was not shutting down, as client-go counts them.
    pub retries: u64,
    /// `workqueue_queue_duration_seconds`: how long items waited between add and `get`.
    /// A delayed item's wait starts when its delay ran out.
    pub queue_latency: HistogramSnapshot,
    /// `workqueue_work_duration_seconds`: how long items took between `get` and `done`.
    pub work_duration: HistogramSnapshot,
    /// `workqueue_unfinished_work_seconds`: summed time the items being processed right now
    /// have been processed so far.
    pub unfinished_work_seconds: f64,
    /// `workqueue_longest_running_processor_seconds`: how long the oldest item being
    /// processed right now has been processed.
    pub longest_running_processor_seconds: f64,
    /// Items handed out by `get` and not yet `done` (not rendered; client-go has no series).
    pub processing: usize,
    /// Items waiting for their `add_after` delay to run out (not rendered).
    pub waiting: usize,
}

impl QueueMetrics {
    /// This queue's series in the Prometheus text exposition format. To expose several
    /// queues on one endpoint use [`render_prometheus`], which writes each metric family
    /// (`# HELP`/`# TYPE`) once.
    #[must_use]
    pub fn render_prometheus(&self) -> String {
        render_prometheus(std::slice::from_ref(self))
    }
}

const DEPTH_HELP: &str = "Current depth of workqueue";
const ADDS_HELP: &str = "Total number of adds handled by workqueue";
const QUEUE_DURATION_HELP: &str =
    "How long in seconds an item stays in workqueue before being requested.";
const WORK_DURATION_HELP: &str = "How long in seconds processing an item from workqueue takes.";
const UNFINISHED_HELP: &str = "How many seconds of work has done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.";
const LONGEST_HELP: &str =
    "How many seconds has the longest running processor for workqueue been running.";
const RETRIES_HELP: &str = "Total number of retries handled by workqueue";

/// Several queues' metrics in the Prometheus text exposition format (version 0.0.4), with
/// client-go's metric names (`workqueue_depth`, `workqueue_adds_total`,
/// `workqueue_queue_duration_seconds`, `workqueue_work_duration_seconds`,
/// `workqueue_unfinished_work_seconds`, `workqueue_longest_running_processor_seconds`,
/// `workqueue_retries_total`) and a `name` label.
#[must_use]
pub fn render_prometheus(queues: &[QueueMetrics]) -> String {
    let mut out = String::new();
    scalar_family(
        &mut out,
        "workqueue_depth",
        DEPTH_HELP,
        "gauge",
        queues,
        |q| q.depth as f64,
    );
    scalar_family(
        &mut out,
        "workqueue_adds_total",
        ADDS_HELP,
        "counter",
        queues,
        |q| q.adds as f64,
    );
    histogram_family(
        &mut out,
        "workqueue_queue_duration_seconds",
        QUEUE_DURATION_HELP,
        queues,
        |q| &q.queue_latency,
    );
    histogram_family(
        &mut out,
        "workqueue_work_duration_seconds",
        WORK_DURATION_HELP,
        queues,
        |q| &q.work_duration,
    );
    scalar_family(
        &mut out,
        "workqueue_unfinished_work_seconds",
        UNFINISHED_HELP,
        "gauge",
        queues,
        |q| q.unfinished_work_seconds,
    );
    scalar_family(
        &mut out,
        "workqueue_longest_running_processor_seconds",
        LONGEST_HELP,
        "gauge",
        queues,
        |q| q.longest_running_processor_seconds,
    );
    scalar_family(
        &mut out,
        "workqueue_retries_total",
        RETRIES_HELP,
        "counter",
        queues,
        |q| q.retries as f64,
    );
    out
}

fn header(out: &mut String, name: &str, help: &str, kind: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

fn scalar_family(
    out: &mut String,
    name: &str,
    help: &str,
    kind: &str,
    queues: &[QueueMetrics],
    value: impl Fn(&QueueMetrics) -> f64,
) {
    header(out, name, help, kind);
    for q in queues {
        let _ = writeln!(
            out,
            "{name}{{name=\"{}\"}} {}",
            escape_label(&q.name),
            format_float(value(q))
        );
    }
}

fn histogram_family(
    out: &mut String,
    name: &str,
    help: &str,
    queues: &[QueueMetrics],
    hist: impl Fn(&QueueMetrics) -> &HistogramSnapshot,
) {
    header(out, name, help, "histogram");
    for q in queues {
        let label = escape_label(&q.name);
        let h = hist(q);
        for &(bound, n) in &h.buckets {
            let _ = writeln!(
                out,
                "{name}_bucket{{name=\"{label}\",le=\"{}\"}} {n}",
                format_float(bound)
            );
        }
        let _ = writeln!(
            out,
            "{name}_bucket{{name=\"{label}\",le=\"+Inf\"}} {}",
            h.count
        );
        let _ = writeln!(
            out,
            "{name}_sum{{name=\"{label}\"}} {}",
            format_float(h.sum)
        );
        let _ = writeln!(out, "{name}_count{{name=\"{label}\"}} {}", h.count);
    }
}

/// Label value escaping of the text format: backslash, double quote and line feed.
fn escape_label(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// Formats like Go's `strconv.FormatFloat(v, 'g', -1, 64)`, which the Prometheus Go client
/// uses: shortest round-trip digits, exponent form below 1e-4 and from 1e6 up
/// (`1e-08`, `0.001`, `10`, `123456`, `1.5e+06`).
pub(crate) fn format_float(v: f64) -> String {
    if v.is_nan() {
        return "NaN".to_owned();
    }
    if v.is_infinite() {
        return if v > 0.0 { "+Inf" } else { "-Inf" }.to_owned();
    }
    if v == 0.0 {
        return "0".to_owned();
    }
    let sci = format!("{v:e}");
    let (mantissa, exp) = sci.split_once('e').expect("{:e} has an exponent");
    let exp: i32 = exp.parse().expect("{:e} exponent is an integer");
    if (-4..6).contains(&exp) {
        format!("{v}")
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.unsigned_abs())
    }
}
