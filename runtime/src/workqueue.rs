//! client-go's work queue (`k8s.io/client-go/util/workqueue`) for tokio: a deduplicating
//! FIFO with delayed and rate-limited adds, and client-go's metrics.
//!
//! A controller puts the keys of objects that changed ([`ObjectKey`](crate::store::ObjectKey)s,
//! client-go's "namespace/name" strings, typed) into the queue and
//! runs a few workers that each loop on [`get`](WorkQueue::get) → reconcile →
//! [`done`](WorkQueue::done). The queue guarantees, as client-go's does:
//!
//! - **dedup**: adding an item that is already waiting in the queue does nothing, so a burst
//!   of events for one object costs one reconcile;
//! - **no concurrent processing**: an item handed out by `get` is not handed out again until
//!   it is `done`, so two workers never reconcile the same object at once;
//! - **no lost changes**: an item added while it is being processed is queued again when it
//!   is `done`, so the change that arrived mid-reconcile gets its own reconcile;
//! - **FIFO** otherwise.
//!
//! On top of that, as client-go's `DelayingInterface` and `RateLimitingInterface`:
//! [`add_after`](WorkQueue::add_after) adds an item once a delay has passed, and
//! [`add_rate_limited`](WorkQueue::add_rate_limited) adds it after the delay its
//! [`RateLimiter`] decides (per-item exponential backoff, overall token bucket, ...);
//! [`forget`](WorkQueue::forget) resets that backoff once the item succeeded.
//!
//! ```
//! # use kube_codegen_runtime::store::ObjectKey;
//! # async fn reconcile(_key: &ObjectKey) -> Result<(), ()> { Ok(()) }
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! use kube_codegen_runtime::store::ObjectKey;
//! use kube_codegen_runtime::workqueue::WorkQueue;
//!
//! let queue: WorkQueue<ObjectKey> = WorkQueue::new("foos");
//! queue.add(ObjectKey::namespaced("default", "foo"));
//!
//! let worker = {
//!     let queue = queue.clone();
//!     tokio::spawn(async move {
//!         while let Some(key) = queue.get().await {
//!             match reconcile(&key).await {
//!                 Ok(()) => queue.forget(&key),
//!                 Err(()) => queue.add_rate_limited(key.clone()),
//!             }
//!             queue.done(&key);
//!         }
//!     })
//! };
//! // ...
//! queue.shutdown_with_drain().await;
//! worker.await.unwrap();
//! assert_eq!(queue.metrics().adds, 1);
//! # }
//! ```
//!
//! Everything is driven by the callers: there is no background task, so a queue can be
//! created outside a runtime. Delayed items move into the queue when their time has come
//! and any method looks (a worker blocked in `get` sleeps until the earliest one is due).
//! Time is [`tokio::time::Instant`], so tests can run on a paused clock.
//!
//! Metrics: [`metrics`](WorkQueue::metrics) has client-go's series. Queue latency and work
//! duration cost a clock read per add, get and done; a queue built with
//! [`timing_metrics(false)`](WorkQueueBuilder::timing_metrics) skips them (as client-go's
//! default no-op metrics provider does) and reads the clock only while delayed items wait.
//!
//! The queue holds each item once (an item handed out by `get` is a clone of it, so keys
//! that are cheap to clone, such as `Arc<str>`, make `get` cheaper still).

mod metrics;
mod rate_limiter;

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fmt;
use std::hash::{BuildHasher, Hash};
use std::sync::Arc;
use std::time::Duration;

use hashbrown::HashTable;
use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio::time::Instant;

use metrics::Histogram;
pub use metrics::{DURATION_BUCKETS, HistogramSnapshot, QueueMetrics, render_prometheus};
pub use rate_limiter::{
    BucketRateLimiter, ItemExponentialFailureRateLimiter, ItemFastSlowRateLimiter,
    MaxOfRateLimiter, RateLimiter, WithMaxWaitRateLimiter, default_controller_rate_limiter,
};

/// The hasher of the queue's and the rate limiters' item maps: foldhash, seeded per process.
pub(crate) type ItemHasher = foldhash::fast::RandomState;

/// A blocked `get` re-checks at least this often, so a far-future delay never asks the
/// timer for a deadline it cannot represent.
const MAX_SLEEP: Duration = Duration::from_secs(24 * 60 * 60);
/// Stand-in ready time for a delay too large to add to `Instant` (about 30 years).
const FAR_FUTURE: Duration = Duration::from_secs(30 * 365 * 24 * 60 * 60);

/// A deduplicating, delaying, rate-limiting work queue; see the [module docs](self).
///
/// `WorkQueue` is a handle: clones share one queue.
pub struct WorkQueue<T> {
    inner: Arc<Inner<T>>,
}

struct Inner<T> {
    name: String,
    /// A copy of `State::timing`, readable without the lock.
    timing: bool,
    state: Mutex<State<T>>,
    /// Wakes workers blocked in `get`: `notify_one` per item pushed onto `queue`,
    /// `notify_waiters` on shutdown and when the earliest delayed item changes.
    item_ready: Notify,
    /// Wakes `shutdown_with_drain` when nothing is being processed any more, or on `shutdown`.
    drained: Notify,
    limiter: Box<dyn RateLimiter<T>>,
}

/// One item that is dirty, processing or both. The queue holds each item once, here; the
/// hash index and the FIFO refer to it by slot number.
struct Slot<T> {
    item: T,
    /// The item's hash, so the index never hashes an item twice.
    hash: u64,
    /// Added and not yet handed out (client-go's `dirty` set).
    dirty: bool,
    /// Handed out and not yet done (client-go's `processing` set).
    processing: bool,
}

/// Timing metrics of one slot.
#[derive(Clone, Copy, Default)]
struct Times {
    /// When the item was added (queue latency), while it is dirty.
    added: Option<Instant>,
    /// When it was handed out (work duration), while it is processing.
    started: Option<Instant>,
}

struct State<T> {
    /// Every item that is dirty or processing; `None` marks a free slot (listed in `free`).
    slots: Vec<Option<Slot<T>>>,
    /// The timing metrics of each slot of `slots`; empty without timing metrics.
    times: Vec<Times>,
    free: Vec<u32>,
    /// Slot numbers of `slots`, by item.
    index: HashTable<u32>,
    hasher: ItemHasher,
    /// Slots to hand out, in order. Always exactly the dirty slots that are not processing.
    queue: VecDeque<u32>,
    dirty: usize,
    processing: usize,
    /// Delayed items by (ready time, insertion sequence number).
    waiting: BTreeMap<(Instant, u64), T>,
    /// The key of each delayed item in `waiting`.
    waiting_keys: HashMap<T, (Instant, u64), ItemHasher>,
    next_seq: u64,
    shutting_down: bool,
    drain: bool,
    /// Whether queue latency and work duration are measured (a clock read per add, get and
    /// done). Without them the clock is only read while delayed items wait.
    timing: bool,
    adds: u64,
    retries: u64,
    queue_latency: Histogram,
    work_duration: Histogram,
}

/// The current time, read at most once and only if something needs it.
struct Now(Option<Instant>);

impl Now {
    fn lazy() -> Self {
        Now(None)
    }
    /// Read now if `eager` (before taking the lock, to keep the critical section short),
    /// else when first needed.
    fn eager_if(eager: bool) -> Self {
        Now(eager.then(Instant::now))
    }
    fn get(&mut self) -> Instant {
        *self.0.get_or_insert_with(Instant::now)
    }
}

impl<T: Clone + Eq + Hash> State<T> {
    fn new(timing: bool) -> Self {
        Self {
            slots: Vec::new(),
            times: Vec::new(),
            free: Vec::new(),
            index: HashTable::new(),
            hasher: ItemHasher::default(),
            queue: VecDeque::new(),
            dirty: 0,
            processing: 0,
            waiting: BTreeMap::new(),
            waiting_keys: HashMap::default(),
            next_seq: 0,
            shutting_down: false,
            drain: false,
            timing,
            adds: 0,
            retries: 0,
            queue_latency: Histogram::default(),
            work_duration: Histogram::default(),
        }
    }

    fn slot(&self, s: u32) -> &Slot<T> {
        self.slots[s as usize]
            .as_ref()
            .expect("indexed slot is live")
    }

    fn slot_mut(&mut self, s: u32) -> &mut Slot<T> {
        self.slots[s as usize]
            .as_mut()
            .expect("indexed slot is live")
    }

    /// The slot of `item`, if it is dirty or processing.
    fn find(&self, hash: u64, item: &T) -> Option<u32> {
        let slots = &self.slots;
        self.index
            .find(hash, |&s| {
                slots[s as usize]
                    .as_ref()
                    .is_some_and(|slot| slot.hash == hash && slot.item == *item)
            })
            .copied()
    }

    fn insert(&mut self, slot: Slot<T>, times: Times) -> u32 {
        let hash = slot.hash;
        let s = match self.free.pop() {
            Some(s) => {
                self.slots[s as usize] = Some(slot);
                if self.timing {
                    self.times[s as usize] = times;
                }
                s
            }
            None => {
                let s = u32::try_from(self.slots.len()).expect("fewer than 2^32 items");
                self.slots.push(Some(slot));
                if self.timing {
                    self.times.push(times);
                }
                s
            }
        };
        let slots = &self.slots;
        self.index.insert_unique(hash, s, |&s| {
            slots[s as usize].as_ref().map_or(0, |slot| slot.hash)
        });
        s
    }

    /// Frees slot `s`; returns its item, for the caller to drop after unlocking.
    fn release(&mut self, s: u32) -> T {
        let hash = self.slot(s).hash;
        if let Ok(entry) = self.index.find_entry(hash, |&i| i == s) {
            entry.remove();
        }
        self.free.push(s);
        self.slots[s as usize]
            .take()
            .expect("released slot is live")
            .item
    }

    /// client-go's `Add`; `now` is the add time. Returns whether the item was pushed onto
    /// `queue` (and so a worker should be woken), and the item if the queue did not keep it
    /// (a duplicate), for the caller to drop after unlocking.
    fn add(&mut self, item: T, now: &mut Now) -> (bool, Option<T>) {
        if self.shutting_down {
            return (false, Some(item));
        }
        let hash = self.hasher.hash_one(&item);
        let found = self.find(hash, &item);
        if found.is_some_and(|s| self.slot(s).dirty) {
            return (false, Some(item));
        }
        let added = if self.timing { Some(now.get()) } else { None };
        self.adds += 1;
        self.dirty += 1;
        if let Some(s) = found {
            // Being processed: queued again by `done`.
            self.slot_mut(s).dirty = true;
            if self.timing {
                self.times[s as usize].added = added;
            }
            return (false, Some(item));
        }
        let s = self.insert(
            Slot {
                item,
                hash,
                dirty: true,
                processing: false,
            },
            Times {
                added,
                started: None,
            },
        );
        self.queue.push_back(s);
        (true, None)
    }

    /// Moves the delayed items that are due into the queue, earliest first. Returns how many
    /// were pushed onto `queue`. Reads the clock only if an item is waiting.
    fn promote(&mut self, now: &mut Now) -> usize {
        if self.waiting.is_empty() {
            return 0;
        }
        let now = now.get();
        let mut pushed = 0;
        while let Some(entry) = self.waiting.first_entry() {
            let ready_at = entry.key().0;
            if ready_at > now {
                break;
            }
            let item = entry.remove();
            self.waiting_keys.remove(&item);
            // The item counts as added when its delay ran out, as if client-go's waiting
            // loop had added it right then.
            pushed += usize::from(self.add(item, &mut Now(Some(ready_at))).0);
        }
        pushed
    }

    /// Adds a delayed item; an item already waiting keeps the earlier ready time.
    fn add_waiting(&mut self, item: T, ready_at: Instant) {
        if let Some(&key) = self.waiting_keys.get(&item) {
            if key.0 <= ready_at {
                return;
            }
            self.waiting.remove(&key);
        }
        let key = (ready_at, self.next_seq);
        self.next_seq += 1;
        self.waiting_keys.insert(item.clone(), key);
        self.waiting.insert(key, item);
    }

    fn next_ready_at(&self) -> Option<Instant> {
        self.waiting.first_key_value().map(|(key, _)| key.0)
    }

    /// client-go's `Get` once the queue is non-empty.
    fn pop(&mut self, now: &mut Now) -> Option<T> {
        let s = self.queue.pop_front()?;
        let slot = self.slot_mut(s);
        slot.dirty = false;
        slot.processing = true;
        let item = slot.item.clone();
        self.dirty -= 1;
        self.processing += 1;
        if self.timing {
            let now = now.get();
            let times = &mut self.times[s as usize];
            times.started = Some(now);
            if let Some(added) = times.added.take() {
                self.queue_latency
                    .observe(now.saturating_duration_since(added).as_secs_f64());
            }
        }
        Some(item)
    }

    /// client-go's `Done`. Returns whether the item was pushed onto `queue` again (`None` if
    /// it was not being processed), and the queue's copy of it if it was released, for the
    /// caller to drop after unlocking.
    fn done(&mut self, item: &T, now: &mut Now) -> (Option<bool>, Option<T>) {
        let hash = self.hasher.hash_one(item);
        let Some(s) = self.find(hash, item) else {
            return (None, None);
        };
        let slot = self.slot_mut(s);
        if !slot.processing {
            return (None, None);
        }
        slot.processing = false;
        let dirty = slot.dirty;
        self.processing -= 1;
        if self.timing
            && let Some(started) = self.times[s as usize].started.take()
        {
            self.work_duration
                .observe(now.get().saturating_duration_since(started).as_secs_f64());
        }
        if dirty {
            self.queue.push_back(s);
            (Some(true), None)
        } else {
            (Some(false), Some(self.release(s)))
        }
    }

    fn stop(&mut self, drain: bool) {
        self.shutting_down = true;
        self.drain = drain;
        // Like client-go, delayed items are dropped: nothing can be added any more.
        self.waiting.clear();
        self.waiting_keys.clear();
    }
}

/// What `get` found in the queue.
enum Take<T> {
    Item(T),
    /// Shutting down and nothing left to hand out.
    ShutDown,
    /// Nothing to hand out yet; the earliest delayed item is due at this time, if any.
    Wait(Option<Instant>),
}

impl<T> Inner<T> {
    fn wake(&self, pushed: usize) {
        for _ in 0..pushed {
            self.item_ready.notify_one();
        }
    }
}

// Every lock is taken in a plain function, never in an `async fn`, so no guard can be held
// across an `.await` (and the futures stay `Send`).
impl<T: Clone + Eq + Hash> Inner<T> {
    fn take(&self) -> Take<T> {
        let mut now = Now::eager_if(self.timing);
        let mut state = self.state.lock();
        let pushed = state.promote(&mut now);
        let taken = match state.pop(&mut now) {
            Some(item) => Take::Item(item),
            None if state.shutting_down => Take::ShutDown,
            None => Take::Wait(state.next_ready_at()),
        };
        drop(state);
        self.wake(pushed);
        taken
    }

    fn drained_or_released(&self) -> bool {
        let state = self.state.lock();
        state.processing == 0 || !state.drain
    }
}

/// Options of a [`WorkQueue`]: [`WorkQueue::builder`].
pub struct WorkQueueBuilder<T> {
    name: String,
    limiter: Option<Box<dyn RateLimiter<T>>>,
    timing: bool,
}

impl<T> WorkQueueBuilder<T>
where
    T: Clone + Eq + Hash + Send + Sync + 'static,
{
    /// Rate limit with `limiter` (default: [`default_controller_rate_limiter`]).
    #[must_use]
    pub fn rate_limiter(mut self, limiter: impl RateLimiter<T> + 'static) -> Self {
        self.limiter = Some(Box::new(limiter));
        self
    }

    /// Whether to measure `queue_duration`, `work_duration`, `unfinished_work_seconds` and
    /// `longest_running_processor_seconds` (default: yes). They cost a clock read per add,
    /// get and done; without them those series stay at zero (client-go's default, no-op,
    /// metrics provider records nothing), while depth, adds and retries are still counted.
    #[must_use]
    pub fn timing_metrics(mut self, on: bool) -> Self {
        self.timing = on;
        self
    }

    /// The queue.
    #[must_use]
    pub fn build(self) -> WorkQueue<T> {
        let limiter = self
            .limiter
            .unwrap_or_else(|| Box::new(default_controller_rate_limiter()));
        WorkQueue {
            inner: Arc::new(Inner {
                name: self.name,
                timing: self.timing,
                state: Mutex::new(State::new(self.timing)),
                item_ready: Notify::new(),
                drained: Notify::new(),
                limiter,
            }),
        }
    }
}

impl<T> Clone for WorkQueue<T> {
    fn clone(&self) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<T> fmt::Debug for WorkQueue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.inner.state.lock();
        f.debug_struct("WorkQueue")
            .field("name", &self.inner.name)
            .field("len", &state.queue.len())
            .field("processing", &state.processing)
            .field("waiting", &state.waiting.len())
            .field("shutting_down", &state.shutting_down)
            .finish()
    }
}

impl<T> WorkQueue<T>
where
    T: Clone + Eq + Hash + Send + Sync + 'static,
{
    /// A queue named `name` (the `name` label of its metrics) that rate limits with
    /// [`default_controller_rate_limiter`] and records every metric.
    #[must_use]
    pub fn new(name: impl Into<String>) -> Self {
        Self::builder(name).build()
    }

    /// A queue named `name` that rate limits with `limiter` and records every metric.
    #[must_use]
    pub fn with_rate_limiter(
        name: impl Into<String>,
        limiter: impl RateLimiter<T> + 'static,
    ) -> Self {
        Self::builder(name).rate_limiter(limiter).build()
    }

    /// A queue named `name` with other options: rate limiter, timing metrics off.
    #[must_use]
    pub fn builder(name: impl Into<String>) -> WorkQueueBuilder<T> {
        WorkQueueBuilder {
            name: name.into(),
            limiter: None,
            timing: true,
        }
    }

    /// The queue's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// Marks `item` as needing processing. Does nothing if it is already queued, or if the
    /// queue is shutting down; if it is being processed it is queued when it is `done`.
    pub fn add(&self, item: T) {
        let mut now = Now::lazy();
        let mut state = self.inner.state.lock();
        let promoted = state.promote(&mut now);
        let (pushed, spare) = state.add(item, &mut now);
        drop(state);
        drop(spare);
        self.inner.wake(promoted + usize::from(pushed));
    }

    /// Adds `item` once `delay` has passed (right away if `delay` is zero). If `item` is
    /// already waiting, it keeps the earlier of the two ready times. Does nothing if the
    /// queue is shutting down; delayed items are dropped at shutdown.
    pub fn add_after(&self, item: T, delay: Duration) {
        let mut state = self.inner.state.lock();
        if state.shutting_down {
            return;
        }
        state.retries += 1;
        let mut now = Now::lazy();
        let mut pushed = state.promote(&mut now);
        let mut earlier_deadline = false;
        let mut spare = None;
        if delay.is_zero() {
            let added;
            (added, spare) = state.add(item, &mut now);
            pushed += usize::from(added);
        } else {
            let now = now.get();
            let ready_at = now
                .checked_add(delay)
                .or_else(|| now.checked_add(FAR_FUTURE))
                .unwrap_or(now);
            let before = state.next_ready_at();
            state.add_waiting(item, ready_at);
            earlier_deadline = state.next_ready_at() != before;
        }
        drop(state);
        drop(spare);
        self.inner.wake(pushed);
        if earlier_deadline {
            // Blocked workers sleep until the earliest ready time; let them look again.
            self.inner.item_ready.notify_waiters();
        }
    }

    /// Adds `item` after the delay the rate limiter decides for it (which counts one more
    /// failure of `item`).
    pub fn add_rate_limited(&self, item: T) {
        let delay = self.inner.limiter.when(&item);
        self.add_after(item, delay);
    }

    /// Tells the rate limiter that `item` is done being retried (it succeeded, or was given
    /// up on): its backoff starts over. It does not remove `item` from the queue.
    pub fn forget(&self, item: &T) {
        self.inner.limiter.forget(item);
    }

    /// How many times `item` was rate limited since it was last forgotten.
    #[must_use]
    pub fn num_requeues(&self, item: &T) -> u32 {
        self.inner.limiter.num_requeues(item)
    }

    /// Number of items ready to be handed out. Items being processed and delayed items that
    /// are not yet due are not counted.
    #[must_use]
    pub fn len(&self) -> usize {
        let mut state = self.inner.state.lock();
        let pushed = state.promote(&mut Now::lazy());
        let len = state.queue.len();
        drop(state);
        self.inner.wake(pushed);
        len
    }

    /// Whether [`len`](Self::len) is 0.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// [`get`](Self::get) for a worker that must stop promptly on shutdown: once the queue
    /// is shutting down it returns `None` instead of the items queued before (an item
    /// handed out meanwhile is given back with `done`). Working through the whole backlog
    /// could outlast a pod's grace period or a leader's, and get the work in flight cut
    /// off; nothing is lost, since whoever runs next lists every object again.
    pub async fn get_unless_shutting_down(&self) -> Option<T> {
        let item = self.get().await?;
        if self.is_shutting_down() {
            self.done(&item);
            return None;
        }
        Some(item)
    }

    /// Waits for an item to process, and marks it as being processed: call
    /// [`done`](Self::done) with it when finished. Returns `None` when the queue is shutting
    /// down and has no item left to hand out; like client-go, items that were queued before
    /// the shutdown are still handed out (and dirty items still come back after `done`).
    ///
    /// Cancel safe: an item is only taken from the queue when the future completes.
    pub async fn get(&self) -> Option<T> {
        // Like tokio's own channels: a worker that always finds an item still yields to the
        // scheduler once its cooperative budget is spent.
        tokio::task::consume_budget().await;
        // Fast path: an item is ready, no need to register for a wake-up.
        match self.inner.take() {
            Take::Item(item) => return Some(item),
            Take::ShutDown => return None,
            Take::Wait(_) => {}
        }
        loop {
            let notified = self.inner.item_ready.notified();
            let mut notified = std::pin::pin!(notified);
            // Register before looking at the state again, so a wake-up in between is not
            // missed.
            notified.as_mut().enable();
            let deadline = match self.inner.take() {
                Take::Item(item) => return Some(item),
                Take::ShutDown => return None,
                Take::Wait(deadline) => deadline,
            };
            match deadline {
                Some(deadline) => {
                    let deadline = deadline.min(Instant::now() + MAX_SLEEP);
                    tokio::select! {
                        _ = notified.as_mut() => {}
                        _ = tokio::time::sleep_until(deadline) => {}
                    }
                }
                None => notified.await,
            }
        }
    }

    /// [`get`](Self::get) without waiting: an item if one is ready now.
    #[must_use = "an item taken is being processed until `done`: dropping it stalls it"]
    pub fn try_get(&self) -> Option<T> {
        match self.inner.take() {
            Take::Item(item) => Some(item),
            Take::ShutDown | Take::Wait(_) => None,
        }
    }

    /// Marks `item` as done processing. If it was added again meanwhile, it is queued now.
    /// Does nothing if `item` is not being processed.
    pub fn done(&self, item: &T) {
        let mut now = Now::eager_if(self.inner.timing);
        let mut state = self.inner.state.lock();
        let mut pushed = state.promote(&mut now);
        let (requeued, released) = state.done(item, &mut now);
        pushed += usize::from(requeued == Some(true));
        // Only `shutdown_with_drain` waits for the queue to be idle, and it sets `drain`
        // under this lock before it looks.
        let drained = requeued.is_some() && state.processing == 0 && state.drain;
        drop(state);
        drop(released);
        self.inner.wake(pushed);
        if drained {
            self.inner.drained.notify_waiters();
        }
    }

    /// Stops the queue: adds are ignored from now on, delayed items are dropped, and `get`
    /// returns `None` once the items already queued have been handed out. Does not wait;
    /// it also releases a [`shutdown_with_drain`](Self::shutdown_with_drain) that is waiting.
    pub fn shutdown(&self) {
        self.inner.state.lock().stop(false);
        tracing::debug!(queue = %self.inner.name, "work queue shutting down");
        self.inner.item_ready.notify_waiters();
        self.inner.drained.notify_waiters();
    }

    /// [`shutdown`](Self::shutdown), then waits until no item is being processed (every
    /// item handed out by `get` is `done`). Items still queued are not waited for, but
    /// running workers keep getting them until the queue is empty. A concurrent
    /// `shutdown()` stops the wait.
    pub async fn shutdown_with_drain(&self) {
        self.inner.state.lock().stop(true);
        tracing::debug!(queue = %self.inner.name, "work queue shutting down, draining");
        self.inner.item_ready.notify_waiters();
        loop {
            let notified = self.inner.drained.notified();
            let mut notified = std::pin::pin!(notified);
            notified.as_mut().enable();
            if self.inner.drained_or_released() {
                return;
            }
            notified.await;
        }
    }

    /// Whether `shutdown` or `shutdown_with_drain` was called.
    #[must_use]
    pub fn is_shutting_down(&self) -> bool {
        self.inner.state.lock().shutting_down
    }

    /// A snapshot of the queue's metrics. Without [timing
    /// metrics](WorkQueueBuilder::timing_metrics) the latency, duration and in-flight time
    /// figures are zero.
    #[must_use]
    pub fn metrics(&self) -> QueueMetrics {
        let mut now = Now::lazy();
        let mut state = self.inner.state.lock();
        let pushed = state.promote(&mut now);
        let mut unfinished = 0.0;
        let mut longest: f64 = 0.0;
        if state.timing && state.processing > 0 {
            let now = now.get();
            for times in &state.times {
                if let Some(started) = times.started {
                    let secs = now.saturating_duration_since(started).as_secs_f64();
                    unfinished += secs;
                    longest = longest.max(secs);
                }
            }
        }
        let metrics = QueueMetrics {
            name: self.inner.name.clone(),
            depth: state.dirty,
            adds: state.adds,
            retries: state.retries,
            queue_latency: state.queue_latency.snapshot(),
            work_duration: state.work_duration.snapshot(),
            unfinished_work_seconds: unfinished,
            longest_running_processor_seconds: longest,
            processing: state.processing,
            waiting: state.waiting.len(),
        };
        drop(state);
        self.inner.wake(pushed);
        metrics
    }

    /// The queue's metrics in the Prometheus text exposition format, with client-go's
    /// series names (see [`render_prometheus`] to expose several queues together).
    pub fn render_prometheus(&self) -> String {
        self.metrics().render_prometheus()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn untimed() -> WorkQueue<String> {
        WorkQueue::builder("untimed").timing_metrics(false).build()
    }

    #[test]
    fn without_timing_metrics_the_semantics_are_the_same() {
        let q = untimed();
        q.add("a".into());
        q.add("b".into());
        q.add("a".into());
        assert_eq!(q.len(), 2);
        let a = q.try_get().unwrap();
        assert_eq!(a, "a");
        q.add("a".into()); // dirty while processing: back after done
        assert_eq!(q.try_get().as_deref(), Some("b"));
        assert_eq!(q.try_get(), None);
        q.done(&a);
        assert_eq!(q.try_get().as_deref(), Some("a"));
        q.done(&"b".to_owned());
        q.done(&"a".to_owned());
        q.done(&"a".to_owned()); // not processing: nothing
        let m = q.metrics();
        assert_eq!((m.depth, m.adds, m.processing), (0, 3, 0));
        assert_eq!((m.queue_latency.count, m.work_duration.count), (0, 0));
        assert_eq!(m.unfinished_work_seconds, 0.0);
    }

    #[tokio::test(start_paused = true)]
    async fn without_timing_metrics_delayed_items_still_come_due() {
        let q = untimed();
        q.add_after("late".into(), Duration::from_millis(50));
        q.add_after("soon".into(), Duration::from_millis(10));
        assert_eq!(q.try_get(), None);
        assert_eq!(q.get().await.as_deref(), Some("soon"));
        assert_eq!(q.get().await.as_deref(), Some("late"));
        assert_eq!(q.metrics().retries, 2);
    }

    #[test]
    fn slots_are_reused_and_every_item_is_stored_once() {
        let q = untimed();
        for round in 0..3 {
            for i in 0..100 {
                q.add(format!("k{i}"));
            }
            while let Some(k) = q.try_get() {
                q.done(&k);
            }
            let state = q.inner.state.lock();
            assert_eq!(state.slots.len(), 100, "round {round}");
            assert!(state.slots.iter().all(Option::is_none));
            assert_eq!((state.index.len(), state.free.len()), (0, 100));
            assert!(state.times.is_empty());
        }
    }
}
