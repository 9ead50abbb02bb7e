//! client-go's event recorder (`k8s.io/client-go/tools/record`) for kube-rs: writes
//! **core/v1 Events** (what `kubectl describe` and `kubectl get events` show) about an
//! object, with client-go's `EventCorrelator` in front so a controller that reports the
//! same thing in a hot loop does not flood the apiserver.
//!
//! ```no_run
//! # async fn example(client: kube::Client, pod: k8s_openapi::api::core::v1::Pod) -> kube_codegen_runtime::Result<()> {
//! use kube_codegen_runtime::events::{EventType, Recorder, Reporter, object_ref};
//!
//! let recorder = Recorder::new(client, Reporter::new("foo-controller"));
//! let reference = object_ref(&pod);
//! // Wait for the write (or the decision not to write) and see errors:
//! recorder.event(&reference, EventType::Normal, "Synced", "Pod synced successfully").await?;
//! // Or fire and forget (queued, written by a background task):
//! recorder.record(&reference, EventType::Warning, "FailedSync", "could not reach the backend");
//! # Ok(()) }
//! ```
//!
//! # What the correlator does (as client-go's, with its defaults)
//!
//! Every event passes three stages before anything is written:
//!
//! 1. **Similar-event aggregation.** Events that differ only in their message (same
//!    source, involved object, type and reason) are counted per 10-minute window; from the
//!    10th distinct message on, they are replaced by one event whose message is
//!    `"(combined from similar events): <latest message>"`, which is then itself counted
//!    like an identical event.
//! 2. **Identical-event counting.** An event identical to one written before (same
//!    involved object uid/kind/name/namespace/apiVersion/fieldPath, type, reason, message,
//!    source) is not created again: the existing Event gets `count` incremented,
//!    `lastTimestamp` (and `message`) updated through a JSON merge PATCH. If that Event is
//!    gone (events expire, by default after an hour), it is created again under the same
//!    name, keeping its count and `firstTimestamp`.
//! 3. **Spam filter.** A token bucket per source and involved object (burst 25, one token
//!    back every 5 minutes): an event finding the bucket empty is dropped (a debug log, and
//!    [`Recorded::Dropped`]). A dropped identical event is still counted, so the next
//!    write of that Event carries the true count.
//!
//! So recording the same event 100 times in a tight loop costs 25 writes (one create and 24
//! patches, leaving one Event with `count: 25`), and then one write per 5 minutes, each
//! bringing the count up to date. The caches are LRUs of 4096 entries each;
//! [`CorrelatorOptions`] changes every limit.
//!
//! Writes of one recorder are serialized (as client-go's single sink goroutine does), so
//! concurrent identical events from several tasks still end up as one Event.
//!
//! Time for the aggregation window and the spam filter is [`tokio::time::Instant`], so tests
//! can run them on a paused clock; timestamps written to Events are wall-clock time.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use k8s_openapi::api::core::v1::{Event, EventSource, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::{Client, Resource};
use serde_json::json;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use crate::error::{Error, Result};
use crate::ratelimit::TokenBucket;

/// The prefix client-go puts on the message of an event that stands for many similar ones.
pub const COMBINED_MESSAGE_PREFIX: &str = "(combined from similar events): ";

/// How many events [`Recorder::record`] queues before dropping new ones (client-go's
/// `maxQueuedEvents`).
pub const MAX_QUEUED_EVENTS: usize = 1000;

/// Event names are object names, so they must stay within a DNS subdomain's 253 characters.
const MAX_NAME_LEN: usize = 253;

/// The `type` of an Event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventType {
    /// Everything is fine; something happened that is worth knowing.
    Normal,
    /// Something may be wrong.
    Warning,
}

impl EventType {
    /// `Normal` or `Warning`, as the Event's `type` field has it.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Normal => "Normal",
            EventType::Warning => "Warning",
        }
    }
}

impl fmt::Display for EventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who reports the events: `source.component` / `reportingComponent` (the controller's
/// name, e.g. `foo-controller`) and optionally `source.host` / `reportingInstance` (which
/// replica, e.g. the pod or host name).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Reporter {
    /// The controller's name.
    pub component: String,
    /// Which replica of it, if set.
    pub instance: Option<String>,
}

impl Reporter {
    /// `component`, no instance.
    #[must_use]
    pub fn new(component: impl Into<String>) -> Self {
        Reporter {
            component: component.into(),
            instance: None,
        }
    }

    /// Also name the replica.
    #[must_use]
    pub fn with_instance(mut self, instance: impl Into<String>) -> Self {
        self.instance = Some(instance.into());
        self
    }
}

impl From<&str> for Reporter {
    fn from(component: &str) -> Self {
        Reporter::new(component)
    }
}

impl From<String> for Reporter {
    fn from(component: String) -> Self {
        Reporter::new(component)
    }
}

/// The limits of the correlator; the [`Default`] is client-go's.
#[derive(Clone, Debug)]
pub struct CorrelatorOptions {
    /// Entries in each of the correlator's LRU caches (similar events, identical events,
    /// spam buckets). Default 4096.
    pub cache_size: usize,
    /// Distinct messages for one (object, type, reason) within `similar_window` from which
    /// on events are combined. Default 10; `usize::MAX` turns similar-event aggregation off.
    pub max_similar_events: usize,
    /// The window of similar-event aggregation: it restarts when no similar event was seen
    /// for this long. Default 10 minutes.
    pub similar_window: Duration,
    /// Events per source and involved object that pass the spam filter in a burst.
    /// Default 25.
    pub spam_burst: u32,
    /// How long the spam filter takes to give one token back. Default 5 minutes.
    /// `Duration::ZERO` turns the spam filter off.
    pub spam_refill_interval: Duration,
}

impl Default for CorrelatorOptions {
    fn default() -> Self {
        CorrelatorOptions {
            cache_size: 4096,
            max_similar_events: 10,
            similar_window: Duration::from_secs(600),
            spam_burst: 25,
            spam_refill_interval: Duration::from_secs(300),
        }
    }
}

/// What [`Recorder::event`] did.
#[derive(Clone, Debug)]
pub enum Recorded {
    /// A new Event object was created (the first occurrence, or an expired one again).
    Created(Box<Event>),
    /// An existing Event's `count` and `lastTimestamp` were patched.
    Updated(Box<Event>),
    /// The spam filter dropped the event: nothing was written.
    Dropped,
}

impl Recorded {
    /// The Event as the apiserver returned it, unless the event was dropped.
    #[must_use]
    pub fn event(&self) -> Option<&Event> {
        match self {
            Recorded::Created(e) | Recorded::Updated(e) => Some(e),
            Recorded::Dropped => None,
        }
    }
}

/// A reference to `obj` for [`Recorder::event`]: apiVersion, kind, namespace, name, uid and
/// resourceVersion (as client-go's `reference.GetReference`).
#[must_use]
pub fn object_ref<K>(obj: &K) -> ObjectReference
where
    K: Resource,
    K::DynamicType: Default,
{
    let mut reference = obj.object_ref(&K::DynamicType::default());
    reference.resource_version = obj.meta().resource_version.clone();
    reference
}

/// Records core/v1 Events; cheap to clone (clones share the correlator and the queue). See
/// the [module docs](self).
#[derive(Clone)]
pub struct Recorder {
    inner: Arc<Inner>,
}

struct Inner {
    shared: Arc<Shared>,
    /// The queue of [`Recorder::record`], and with it the worker task, start on first use.
    queue: OnceLock<mpsc::Sender<Queued>>,
}

struct Shared {
    client: Client,
    reporter: Reporter,
    /// Held across the write, so the correlator's view and the apiserver's state move in
    /// step (client-go writes from one goroutine per sink).
    correlator: tokio::sync::Mutex<Correlator>,
}

enum Queued {
    Event(Box<Event>),
    Flush(oneshot::Sender<()>),
}

impl fmt::Debug for Recorder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Recorder")
            .field("reporter", &self.inner.shared.reporter)
            .finish_non_exhaustive()
    }
}

impl Recorder {
    /// A recorder with client-go's correlator limits.
    #[must_use]
    pub fn new(client: Client, reporter: impl Into<Reporter>) -> Self {
        Self::with_options(client, reporter, CorrelatorOptions::default())
    }

    /// A recorder with other correlator limits.
    #[must_use]
    pub fn with_options(
        client: Client,
        reporter: impl Into<Reporter>,
        options: CorrelatorOptions,
    ) -> Self {
        Recorder {
            inner: Arc::new(Inner {
                shared: Arc::new(Shared {
                    client,
                    reporter: reporter.into(),
                    correlator: tokio::sync::Mutex::new(Correlator::new(options)),
                }),
                queue: OnceLock::new(),
            }),
        }
    }

    /// Who the events are reported by.
    #[must_use]
    pub fn reporter(&self) -> &Reporter {
        &self.inner.shared.reporter
    }

    /// Records an event about the object `reference` points to and waits until it is
    /// written (created or patched) or dropped by the spam filter.
    ///
    /// # Errors
    /// [`Error`] if the apiserver refused the write or could not be reached (a patch of
    /// an Event that expired meanwhile is retried as a create, not an error).
    pub async fn event(
        &self,
        reference: &ObjectReference,
        type_: EventType,
        reason: impl Into<String>,
        message: impl Into<String>,
    ) -> Result<Recorded> {
        let event = self
            .inner
            .shared
            .make_event(reference, type_, reason.into(), message.into());
        self.inner.shared.write(event).await
    }

    /// Records an event without waiting: it is queued and written, in order, by a
    /// background task (started on first use, ending when the last clone of the recorder is
    /// dropped). Errors are logged, not retried. When [`MAX_QUEUED_EVENTS`] are already
    /// waiting, or when called outside a tokio runtime, the event is dropped with a log.
    pub fn record(
        &self,
        reference: &ObjectReference,
        type_: EventType,
        reason: impl Into<String>,
        message: impl Into<String>,
    ) {
        let event = self
            .inner
            .shared
            .make_event(reference, type_, reason.into(), message.into());
        let Some(queue) = self.queue() else {
            tracing::warn!(reason = ?event.reason, "event recorder: no tokio runtime, dropping event");
            return;
        };
        if let Err(e) = queue.try_send(Queued::Event(Box::new(event))) {
            let (why, event) = match e {
                mpsc::error::TrySendError::Full(Queued::Event(ev)) => ("queue full", ev),
                mpsc::error::TrySendError::Closed(Queued::Event(ev)) => {
                    ("worker gone (its runtime shut down?)", ev)
                }
                _ => return,
            };
            tracing::warn!(
                object = ?event.involved_object.name,
                reason = ?event.reason,
                "event recorder: {why}, dropping event"
            );
        }
    }

    /// Waits until every event [`record`](Self::record)ed before this call was written (or
    /// failed, or was dropped).
    pub async fn flush(&self) {
        let Some(queue) = self.inner.queue.get() else {
            return;
        };
        let (tx, rx) = oneshot::channel();
        if queue.send(Queued::Flush(tx)).await.is_ok() {
            let _ = rx.await;
        }
    }

    fn queue(&self) -> Option<&mpsc::Sender<Queued>> {
        if let Some(q) = self.inner.queue.get() {
            return Some(q);
        }
        let handle = tokio::runtime::Handle::try_current().ok()?;
        let mut started = false;
        let queue = self.inner.queue.get_or_init(|| {
            started = true;
            let (tx, rx) = mpsc::channel(MAX_QUEUED_EVENTS);
            handle.spawn(worker(self.inner.shared.clone(), rx));
            tx
        });
        if started {
            tracing::trace!("event recorder: worker started");
        }
        Some(queue)
    }
}

async fn worker(shared: Arc<Shared>, mut rx: mpsc::Receiver<Queued>) {
    while let Some(item) = rx.recv().await {
        match item {
            Queued::Event(event) => {
                let (name, reason) = (event.involved_object.name.clone(), event.reason.clone());
                if let Err(e) = shared.write(*event).await {
                    tracing::warn!(object = ?name, reason = ?reason, error = %e, "event recorder: could not write event");
                }
            }
            Queued::Flush(done) => {
                let _ = done.send(());
            }
        }
    }
}

impl Shared {
    /// client-go's `makeEvent`: a fresh Event with count 1, named after the involved object,
    /// in its namespace (`default` for cluster-scoped objects).
    fn make_event(
        &self,
        reference: &ObjectReference,
        type_: EventType,
        reason: String,
        message: String,
    ) -> Event {
        let now = Time(Timestamp::now());
        let namespace = reference
            .namespace
            .clone()
            .filter(|ns| !ns.is_empty())
            .unwrap_or_else(|| "default".to_owned());
        Event {
            metadata: ObjectMeta {
                name: Some(unique_name(reference.name.as_deref().unwrap_or_default())),
                namespace: Some(namespace),
                ..ObjectMeta::default()
            },
            involved_object: reference.clone(),
            reason: Some(reason),
            message: Some(message),
            type_: Some(type_.as_str().to_owned()),
            first_timestamp: Some(now.clone()),
            last_timestamp: Some(now),
            count: Some(1),
            source: Some(EventSource {
                component: Some(self.reporter.component.clone()),
                host: self.reporter.instance.clone(),
            }),
            reporting_component: Some(self.reporter.component.clone()),
            reporting_instance: self.reporter.instance.clone(),
            ..Event::default()
        }
    }

    async fn write(&self, event: Event) -> Result<Recorded> {
        let mut correlator = self.correlator.lock().await;
        let action = correlator.correlate(event, Instant::now());
        let namespace = match &action {
            Action::Skip => return Ok(Recorded::Dropped),
            Action::Create { event, .. } | Action::Patch { event, .. } => {
                event.metadata.namespace.clone().unwrap_or_default()
            }
        };
        let api: Api<Event> = Api::namespaced(self.client.clone(), &namespace);
        let (key, written) = match action {
            Action::Skip => unreachable!(),
            Action::Create { key, event } => (
                key,
                create(&api, event)
                    .await
                    .map(|e| Recorded::Created(Box::new(e))),
            ),
            Action::Patch { key, event, patch } => {
                let name = event.metadata.name.clone().unwrap_or_default();
                match api
                    .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await
                    .map_err(Error::from)
                {
                    Ok(e) => (key, Ok(Recorded::Updated(Box::new(e)))),
                    // The Event expired (or was deleted): create it again.
                    Err(Error::NotFound(_)) => {
                        tracing::debug!(event = %name, "event recorder: event to update is gone, creating it again");
                        (
                            key,
                            create(&api, event)
                                .await
                                .map(|e| Recorded::Created(Box::new(e))),
                        )
                    }
                    Err(e) => (key, Err(e)),
                }
            }
        };
        if let Ok(Recorded::Created(e) | Recorded::Updated(e)) = &written {
            correlator.update_state(&key, e);
        }
        written
    }
}

async fn create(api: &Api<Event>, mut event: Event) -> Result<Event> {
    event.metadata.resource_version = None;
    Ok(api.create(&PostParams::default(), &event).await?)
}

/// `<name>.<hex nanoseconds>` as client-go names events, made unique within the process
/// even when the clock does not move between two events.
fn unique_name(object_name: &str) -> String {
    static LAST: AtomicU64 = AtomicU64::new(0);
    let now = u64::try_from(Timestamp::now().as_nanosecond()).unwrap_or_default();
    let mut prev = LAST.load(Ordering::Relaxed);
    let suffix = loop {
        let next = now.max(prev + 1);
        match LAST.compare_exchange_weak(prev, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => break next,
            Err(actual) => prev = actual,
        }
    };
    let suffix = format!("{suffix:x}");
    let mut base = object_name;
    let max_base = MAX_NAME_LEN - 1 - suffix.len();
    if base.len() > max_base {
        let mut cut = max_base;
        while !base.is_char_boundary(cut) {
            cut -= 1;
        }
        base = base[..cut].trim_end_matches(['.', '-']);
    }
    format!("{base}.{suffix}")
}

// ---------------------------------------------------------------------------------------
// The correlator (client-go's EventAggregator + eventLogger + EventSourceObjectSpamFilter).
// ---------------------------------------------------------------------------------------

enum Action {
    Create {
        key: String,
        event: Event,
    },
    Patch {
        key: String,
        event: Event,
        patch: serde_json::Value,
    },
    Skip,
}

/// The similar-event aggregator's record of one (source, object, type, reason).
struct AggregateRecord {
    /// The distinct messages seen (bounded by `max_similar_events`).
    messages: HashSet<String>,
    last_seen: Instant,
}

/// What the identical-event logger remembers of a written (or about to be written) Event.
#[derive(Clone)]
struct EventLog {
    count: i32,
    first_timestamp: Option<Time>,
    name: String,
    resource_version: Option<String>,
}

struct Correlator {
    options: CorrelatorOptions,
    similar: Lru<AggregateRecord>,
    logs: Lru<EventLog>,
    spam: Lru<TokenBucket>,
}

impl Correlator {
    fn new(options: CorrelatorOptions) -> Self {
        let size = options.cache_size.max(1);
        Correlator {
            options,
            similar: Lru::new(size),
            logs: Lru::new(size),
            spam: Lru::new(size),
        }
    }

    /// client-go's `EventCorrelate`: aggregate, observe, filter.
    fn correlate(&mut self, event: Event, now: Instant) -> Action {
        let (event, key) = self.aggregate(event, now);
        let (event, patch) = self.observe(event, &key);
        if self.spam_filtered(&event, now) {
            tracing::debug!(
                object = ?event.involved_object.name,
                namespace = ?event.involved_object.namespace,
                reason = ?event.reason,
                "event recorder: spam filter dropped event"
            );
            return Action::Skip;
        }
        match patch {
            Some(patch) => Action::Patch { key, event, patch },
            None => Action::Create { key, event },
        }
    }

    /// client-go's `EventAggregate`: returns the event to write (the event itself, or the
    /// combined event once there were too many similar ones) and the identical-event key.
    fn aggregate(&mut self, event: Event, now: Instant) -> (Event, String) {
        let event_key = event_key(&event);
        let aggregate_key = aggregate_key(&event);
        let message = event.message.clone().unwrap_or_default();
        let window = self.options.similar_window;
        let max = self.options.max_similar_events;
        let record = self
            .similar
            .get_or_insert_with(&aggregate_key, || AggregateRecord {
                messages: HashSet::new(),
                last_seen: now,
            });
        if now.saturating_duration_since(record.last_seen) > window {
            record.messages.clear();
        }
        record.messages.insert(message.clone());
        record.last_seen = now;
        if record.messages.len() < max {
            return (event, event_key);
        }
        // Do not grow the set any further: forget one message, as client-go's PopAny.
        if let Some(any) = record.messages.iter().find(|m| **m != message).cloned() {
            record.messages.remove(&any);
        }
        let now_wall = Time(Timestamp::now());
        let combined = Event {
            metadata: ObjectMeta {
                name: Some(unique_name(
                    event.involved_object.name.as_deref().unwrap_or_default(),
                )),
                namespace: event.metadata.namespace.clone(),
                ..ObjectMeta::default()
            },
            count: Some(1),
            first_timestamp: Some(now_wall.clone()),
            last_timestamp: Some(now_wall),
            message: Some(format!("{COMBINED_MESSAGE_PREFIX}{message}")),
            ..event
        };
        (combined, aggregate_key)
    }

    /// client-go's `eventObserve`: when the event was seen before, turns it into the update
    /// of the existing Event (same name, first timestamp, count + 1) and returns the patch.
    fn observe(&mut self, mut event: Event, key: &str) -> (Event, Option<serde_json::Value>) {
        let mut patch = None;
        if let Some(last) = self.logs.get(key).filter(|l| l.count > 0).cloned() {
            event.metadata.name = Some(last.name);
            event.metadata.resource_version = last.resource_version;
            event.first_timestamp = last.first_timestamp;
            event.count = Some(last.count.saturating_add(1));
            patch = Some(json!({
                "count": event.count,
                "lastTimestamp": event.last_timestamp,
                "message": event.message,
            }));
        }
        self.logs.insert(key, log_of(&event));
        (event, patch)
    }

    /// client-go's `EventSourceObjectSpamFilter`: true when the event must be dropped.
    fn spam_filtered(&mut self, event: &Event, now: Instant) -> bool {
        let refill = self.options.spam_refill_interval;
        if refill.is_zero() {
            return false;
        }
        let burst = self.options.spam_burst;
        if burst == 0 {
            // A bucket that never holds a token (the token bucket refuses to build one).
            return true;
        }
        // client-go's passive token bucket: one token per `refill`, never in debt.
        let bucket = self.spam.get_or_insert_with(&spam_key(event), || {
            TokenBucket::new(1.0 / refill.as_secs_f64(), burst)
        });
        !bucket.allow_at(now)
    }

    /// After a successful write: remember the Event as the apiserver has it.
    fn update_state(&mut self, key: &str, written: &Event) {
        self.logs.insert(key, log_of(written));
    }
}

fn log_of(event: &Event) -> EventLog {
    EventLog {
        count: event.count.unwrap_or(1),
        first_timestamp: event.first_timestamp.clone(),
        name: event.metadata.name.clone().unwrap_or_default(),
        resource_version: event.metadata.resource_version.clone(),
    }
}

fn source_parts(event: &Event) -> [&str; 2] {
    let source = event.source.as_ref();
    [
        source
            .and_then(|s| s.component.as_deref())
            .unwrap_or_default(),
        source.and_then(|s| s.host.as_deref()).unwrap_or_default(),
    ]
}

fn join_key<'a>(parts: impl IntoIterator<Item = &'a str>) -> String {
    // Unlike client-go (which concatenates), separate the parts so that two different
    // events cannot produce the same key.
    parts.into_iter().collect::<Vec<_>>().join("\u{0}")
}

/// client-go's `getEventKey`: what makes two events identical.
fn event_key(event: &Event) -> String {
    let o = &event.involved_object;
    let [component, host] = source_parts(event);
    join_key([
        component,
        host,
        o.kind.as_deref().unwrap_or_default(),
        o.namespace.as_deref().unwrap_or_default(),
        o.name.as_deref().unwrap_or_default(),
        o.field_path.as_deref().unwrap_or_default(),
        o.uid.as_deref().unwrap_or_default(),
        o.api_version.as_deref().unwrap_or_default(),
        event.type_.as_deref().unwrap_or_default(),
        event.reason.as_deref().unwrap_or_default(),
        event.message.as_deref().unwrap_or_default(),
    ])
}

/// client-go's `EventAggregatorByReasonFunc`: what makes two events similar.
fn aggregate_key(event: &Event) -> String {
    let o = &event.involved_object;
    let [component, host] = source_parts(event);
    join_key([
        component,
        host,
        o.kind.as_deref().unwrap_or_default(),
        o.namespace.as_deref().unwrap_or_default(),
        o.name.as_deref().unwrap_or_default(),
        o.uid.as_deref().unwrap_or_default(),
        o.api_version.as_deref().unwrap_or_default(),
        event.type_.as_deref().unwrap_or_default(),
        event.reason.as_deref().unwrap_or_default(),
        event.reporting_component.as_deref().unwrap_or_default(),
        event.reporting_instance.as_deref().unwrap_or_default(),
    ])
}

/// client-go's `getSpamKey`: one token bucket per source and involved object.
fn spam_key(event: &Event) -> String {
    let o = &event.involved_object;
    let [component, host] = source_parts(event);
    join_key([
        component,
        host,
        o.kind.as_deref().unwrap_or_default(),
        o.namespace.as_deref().unwrap_or_default(),
        o.name.as_deref().unwrap_or_default(),
        o.uid.as_deref().unwrap_or_default(),
        o.api_version.as_deref().unwrap_or_default(),
    ])
}

/// A small LRU map from string keys (reads and writes both count as use).
struct Lru<V> {
    capacity: usize,
    tick: u64,
    /// Keys are long (every field of an event that makes it "the same"): the map and the
    /// recency order share one allocation of each.
    map: HashMap<Arc<str>, (u64, V)>,
    order: BTreeMap<u64, Arc<str>>,
}

impl<V> Lru<V> {
    fn new(capacity: usize) -> Self {
        Lru {
            capacity,
            tick: 0,
            map: HashMap::new(),
            order: BTreeMap::new(),
        }
    }

    fn touch(&mut self, key: &str) {
        if let Some((shared, (tick, _))) = self.map.get_key_value(key) {
            let (shared, old) = (shared.clone(), *tick);
            self.order.remove(&old);
            self.tick += 1;
            self.order.insert(self.tick, shared);
            if let Some((tick, _)) = self.map.get_mut(key) {
                *tick = self.tick;
            }
        }
    }

    fn get(&mut self, key: &str) -> Option<&V> {
        self.touch(key);
        self.map.get(key).map(|(_, v)| v)
    }

    fn insert(&mut self, key: &str, value: V) {
        if let Some(entry) = self.map.get_mut(key) {
            entry.1 = value;
            self.touch(key);
            return;
        }
        while self.map.len() >= self.capacity {
            let Some((_, oldest)) = self.order.pop_first() else {
                break;
            };
            self.map.remove(&oldest);
        }
        self.tick += 1;
        let shared: Arc<str> = Arc::from(key);
        self.map.insert(shared.clone(), (self.tick, value));
        self.order.insert(self.tick, shared);
    }

    fn get_or_insert_with(&mut self, key: &str, f: impl FnOnce() -> V) -> &mut V {
        if self.map.contains_key(key) {
            self.touch(key);
        } else {
            self.insert(key, f());
        }
        &mut self.map.get_mut(key).expect("just inserted").1
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.map.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(name: &str, reason: &str, message: &str) -> Event {
        Event {
            metadata: ObjectMeta {
                name: Some(unique_name(name)),
                namespace: Some("ns".into()),
                ..Default::default()
            },
            involved_object: ObjectReference {
                kind: Some("Pod".into()),
                name: Some(name.into()),
                namespace: Some("ns".into()),
                uid: Some("u1".into()),
                api_version: Some("v1".into()),
                ..Default::default()
            },
            reason: Some(reason.into()),
            message: Some(message.into()),
            type_: Some("Normal".into()),
            count: Some(1),
            source: Some(EventSource {
                component: Some("c".into()),
                host: None,
            }),
            ..Default::default()
        }
    }

    #[test]
    fn lru_evicts_least_recently_used() {
        let mut lru = Lru::new(2);
        lru.insert("a", 1);
        lru.insert("b", 2);
        assert_eq!(lru.get("a"), Some(&1));
        lru.insert("c", 3);
        assert_eq!(lru.len(), 2);
        assert_eq!(lru.get("b"), None);
        assert_eq!(lru.get("a"), Some(&1));
        assert_eq!(lru.get("c"), Some(&3));
        *lru.get_or_insert_with("d", || 4) += 1;
        assert_eq!(lru.get("d"), Some(&5));
        assert_eq!(lru.get("a"), None);
    }

    #[test]
    fn unique_names_are_unique_and_bounded() {
        let a = unique_name("foo");
        let b = unique_name("foo");
        assert_ne!(a, b);
        assert!(a.starts_with("foo."));
        let long = "x".repeat(300);
        assert!(unique_name(&long).len() <= MAX_NAME_LEN);
    }

    #[test]
    fn identical_events_become_patches_with_counts() {
        let mut c = Correlator::new(CorrelatorOptions::default());
        let now = Instant::now();
        let Action::Create { key, event: first } = c.correlate(event("p", "R", "m"), now) else {
            panic!("expected create")
        };
        c.update_state(&key, &first);
        match c.correlate(event("p", "R", "m"), now) {
            Action::Patch { event, patch, .. } => {
                assert_eq!(event.metadata.name, first.metadata.name);
                assert_eq!(event.count, Some(2));
                assert_eq!(patch["count"], 2);
                assert_eq!(patch["message"], "m");
            }
            _ => panic!("expected patch"),
        }
    }

    #[test]
    fn spam_filter_is_a_token_bucket() {
        let options = CorrelatorOptions {
            spam_burst: 3,
            spam_refill_interval: Duration::from_secs(10),
            ..Default::default()
        };
        let mut c = Correlator::new(options);
        let t0 = Instant::now();
        let results: Vec<bool> = (0..5)
            .map(|i| c.spam_filtered(&event("p", &format!("R{i}"), "m"), t0))
            .collect();
        assert_eq!(results, [false, false, false, true, true]);
        // Another object has its own bucket.
        assert!(!c.spam_filtered(&event("q", "R", "m"), t0));
        assert!(c.spam_filtered(&event("p", "R", "m"), t0 + Duration::from_secs(9)));
        // 0.9 token at +9s, 2 tokens at +20s.
        let t20 = t0 + Duration::from_secs(20);
        assert!(!c.spam_filtered(&event("p", "R", "m"), t20));
        assert!(!c.spam_filtered(&event("p", "R", "m"), t20));
        assert!(c.spam_filtered(&event("p", "R", "m"), t20));
    }

    #[test]
    fn similar_events_are_combined_from_the_tenth_message() {
        let mut c = Correlator::new(CorrelatorOptions {
            spam_burst: 100,
            ..Default::default()
        });
        let now = Instant::now();
        for i in 0..9 {
            match c.correlate(event("p", "R", &format!("m{i}")), now) {
                Action::Create { event, .. } => {
                    assert_eq!(event.message.as_deref(), Some(&*format!("m{i}")))
                }
                _ => panic!("expected create"),
            }
        }
        let Action::Create {
            key,
            event: combined,
        } = c.correlate(event("p", "R", "m9"), now)
        else {
            panic!("expected create")
        };
        assert_eq!(
            combined.message.as_deref(),
            Some("(combined from similar events): m9")
        );
        c.update_state(&key, &combined);
        match c.correlate(event("p", "R", "m10"), now) {
            Action::Patch { event, patch, .. } => {
                assert_eq!(event.metadata.name, combined.metadata.name);
                assert_eq!(patch["count"], 2);
                assert_eq!(patch["message"], "(combined from similar events): m10");
            }
            _ => panic!("expected patch"),
        }
        // After the window, the aggregation starts over.
        let later = now + Duration::from_secs(601);
        assert!(
            matches!(c.correlate(event("p", "R", "m11"), later), Action::Create { event, .. } if event.message.as_deref() == Some("m11"))
        );
    }
}
