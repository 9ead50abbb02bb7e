//! client-go workqueue semantics: dedup, no concurrent processing, re-add during processing,
//! delayed adds, rate limiters, shutdown, metrics; plus property tests of the invariants.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use kube_codegen_runtime::workqueue::{
    BucketRateLimiter, DURATION_BUCKETS, ItemExponentialFailureRateLimiter,
    ItemFastSlowRateLimiter, MaxOfRateLimiter, QueueMetrics, RateLimiter, WithMaxWaitRateLimiter,
    WorkQueue, default_controller_rate_limiter, render_prometheus,
};
use parking_lot::Mutex;
use proptest::prelude::*;
use tokio::time::{Instant, advance, timeout};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn queue() -> WorkQueue<String> {
    WorkQueue::new("test")
}

fn s(v: &str) -> String {
    v.to_owned()
}

/// `get`, failing the test instead of hanging when no item comes (on a paused clock the
/// timeout costs no real time).
async fn next<T>(q: &WorkQueue<T>) -> Option<T>
where
    T: Clone + Eq + std::hash::Hash + Send + Sync + 'static,
{
    timeout(Duration::from_secs(30), q.get())
        .await
        .expect("get returns within 30 s")
}

/// Awaits a spawned task, failing the test instead of hanging.
async fn join<R>(task: tokio::task::JoinHandle<R>) -> R {
    timeout(Duration::from_secs(30), task)
        .await
        .expect("task finishes within 30 s")
        .unwrap()
}

/// Lets spawned tasks run as far as they can.
async fn settle() {
    for _ in 0..50 {
        tokio::task::yield_now().await;
    }
}

/// `get` does not return an item within `wait` (on a paused clock this costs no real time).
async fn assert_no_item(q: &WorkQueue<String>, wait: Duration) {
    if let Ok(got) = timeout(wait, q.get()).await {
        panic!("expected no item, got {got:?}");
    }
}

// ===== basic queue semantics =====

#[test]
fn handle_is_send_sync_clone_and_futures_are_send() {
    fn assert_send_sync<X: Send + Sync + Clone>() {}
    fn assert_send<X: Send>(_: &X) {}
    assert_send_sync::<WorkQueue<String>>();
    let q = queue();
    assert_send(&q.get());
    assert_send(&q.shutdown_with_drain());
}

#[test]
fn usable_without_a_runtime() {
    let q = queue();
    q.add(s("a"));
    q.add_after(s("b"), Duration::ZERO);
    assert_eq!(q.len(), 2);
    assert_eq!(q.try_get(), Some(s("a")));
    q.done(&s("a"));
    assert_eq!(q.try_get(), Some(s("b")));
    assert_eq!(q.try_get(), None);
}

#[tokio::test]
async fn fifo_order() {
    let q = queue();
    for k in ["a", "b", "c"] {
        q.add(s(k));
    }
    assert_eq!(q.len(), 3);
    assert_eq!(next(&q).await, Some(s("a")));
    assert_eq!(next(&q).await, Some(s("b")));
    assert_eq!(next(&q).await, Some(s("c")));
    assert!(q.is_empty());
}

#[tokio::test]
async fn add_while_queued_is_deduplicated() {
    let q = queue();
    q.add(s("a"));
    q.add(s("b"));
    q.add(s("a"));
    assert_eq!(q.len(), 2);
    assert_eq!(next(&q).await, Some(s("a")));
    assert_eq!(next(&q).await, Some(s("b")));
    assert_eq!(q.try_get(), None);
    assert_eq!(q.metrics().adds, 2);
}

#[tokio::test(start_paused = true)]
async fn item_being_processed_is_not_handed_out_again() {
    let q = queue();
    q.add(s("a"));
    assert_eq!(next(&q).await, Some(s("a")));
    q.add(s("a"));
    q.add(s("a"));
    // Dirty but being processed: not in the queue, so no other worker gets it.
    assert_eq!(q.len(), 0);
    assert_eq!(q.metrics().depth, 1);
    assert_no_item(&q, ms(100)).await;
    q.done(&s("a"));
    assert_eq!(q.len(), 1);
    assert_eq!(next(&q).await, Some(s("a")));
    q.done(&s("a"));
    assert_eq!(q.try_get(), None);
}

#[tokio::test]
async fn readd_during_processing_is_queued_after_done_behind_others() {
    let q = queue();
    q.add(s("a"));
    assert_eq!(next(&q).await, Some(s("a")));
    q.add(s("a"));
    q.add(s("b"));
    // "a" is still processing: "b" comes first.
    assert_eq!(next(&q).await, Some(s("b")));
    q.add(s("c"));
    q.done(&s("a"));
    // "a" joins the queue at done time, after "c".
    assert_eq!(next(&q).await, Some(s("c")));
    assert_eq!(next(&q).await, Some(s("a")));
}

#[tokio::test]
async fn done_without_readd_does_not_requeue() {
    let q = queue();
    q.add(s("a"));
    let a = next(&q).await.unwrap();
    q.done(&a);
    assert_eq!(q.len(), 0);
    assert_eq!(q.try_get(), None);
}

#[tokio::test]
async fn done_of_an_item_not_processing_does_nothing() {
    let q = queue();
    q.add(s("a"));
    // client-go would queue "a" a second time here; we ignore a stray done.
    q.done(&s("a"));
    q.done(&s("zzz"));
    assert_eq!(q.len(), 1);
    assert_eq!(next(&q).await, Some(s("a")));
    assert_eq!(q.try_get(), None);
    assert_eq!(q.metrics().work_duration.count, 0);
}

#[tokio::test(start_paused = true)]
async fn get_blocks_until_an_item_is_added() {
    let q = queue();
    let getter = tokio::spawn({
        let q = q.clone();
        async move { q.get().await }
    });
    settle().await;
    assert!(!getter.is_finished());
    q.add(s("a"));
    assert_eq!(join(getter).await, Some(s("a")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_blocked_getter_gets_one_item() {
    let q = queue();
    let getters: Vec<_> = (0..8)
        .map(|_| {
            let q = q.clone();
            tokio::spawn(async move { q.get().await })
        })
        .collect();
    tokio::time::sleep(ms(10)).await;
    for i in 0..8 {
        q.add(format!("k{i}"));
    }
    let mut got = HashSet::new();
    for g in getters {
        let item = timeout(Duration::from_secs(10), g).await.unwrap().unwrap();
        assert!(got.insert(item.unwrap()));
    }
    assert_eq!(got.len(), 8);
}

#[tokio::test(start_paused = true)]
async fn get_is_cancel_safe() {
    let q = queue();
    assert_no_item(&q, ms(10)).await;
    q.add(s("a"));
    assert_eq!(next(&q).await, Some(s("a")));
}

#[tokio::test]
async fn clones_share_the_queue() {
    let q = queue();
    let q2 = q.clone();
    q.add(s("a"));
    assert_eq!(q2.len(), 1);
    assert_eq!(next(&q2).await, Some(s("a")));
    assert_eq!(q.metrics().processing, 1);
    assert_eq!(q.name(), "test");
}

// ===== shutdown =====

#[tokio::test(start_paused = true)]
async fn shutdown_wakes_every_blocked_get() {
    let q = queue();
    let getters: Vec<_> = (0..4)
        .map(|_| {
            let q = q.clone();
            tokio::spawn(async move { q.get().await })
        })
        .collect();
    settle().await;
    assert!(getters.iter().all(|g| !g.is_finished()));
    assert!(!q.is_shutting_down());
    q.shutdown();
    assert!(q.is_shutting_down());
    for g in getters {
        assert_eq!(join(g).await, None);
    }
    assert_eq!(next(&q).await, None);
}

#[tokio::test]
async fn shutdown_ignores_adds_but_hands_out_what_was_queued() {
    let q = queue();
    q.add(s("a"));
    q.add(s("b"));
    q.shutdown();
    q.add(s("c"));
    q.add_after(s("d"), Duration::ZERO);
    q.add_rate_limited(s("e"));
    assert_eq!(q.len(), 2);
    assert_eq!(next(&q).await, Some(s("a")));
    assert_eq!(next(&q).await, Some(s("b")));
    assert_eq!(next(&q).await, None);
}

#[tokio::test]
async fn dirty_item_comes_back_after_done_even_when_shutting_down() {
    let q = queue();
    q.add(s("a"));
    let a = next(&q).await.unwrap();
    q.add(s("a"));
    q.shutdown();
    q.done(&a);
    assert_eq!(next(&q).await, Some(s("a")));
    q.done(&a);
    assert_eq!(next(&q).await, None);
}

#[tokio::test(start_paused = true)]
async fn shutdown_drops_delayed_items() {
    let q = queue();
    q.add_after(s("a"), ms(10));
    q.shutdown();
    advance(ms(20)).await;
    assert_eq!(q.len(), 0);
    assert_eq!(next(&q).await, None);
    assert_eq!(q.metrics().waiting, 0);
}

#[tokio::test(start_paused = true)]
async fn shutdown_with_drain_waits_for_items_in_flight() {
    let q = queue();
    q.add(s("a"));
    q.add(s("b"));
    let a = next(&q).await.unwrap();
    let b = next(&q).await.unwrap();
    let drain = tokio::spawn({
        let q = q.clone();
        async move { q.shutdown_with_drain().await }
    });
    settle().await;
    assert!(q.is_shutting_down());
    q.add(s("c"));
    assert_eq!(q.len(), 0);
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert!(!drain.is_finished());
    q.done(&a);
    settle().await;
    assert!(!drain.is_finished());
    q.done(&b);
    timeout(Duration::from_secs(1), drain)
        .await
        .expect("drain finishes once everything is done")
        .unwrap();
    assert_eq!(next(&q).await, None);
}

#[tokio::test]
async fn shutdown_with_drain_returns_at_once_when_idle() {
    let q = queue();
    q.add(s("a"));
    // Queued but not processing: not waited for.
    timeout(Duration::from_secs(5), q.shutdown_with_drain())
        .await
        .unwrap();
    assert_eq!(next(&q).await, Some(s("a")));
    assert_eq!(next(&q).await, None);
}

#[tokio::test(start_paused = true)]
async fn shutdown_releases_a_waiting_drain() {
    let q = queue();
    q.add(s("a"));
    let _a = next(&q).await.unwrap();
    let drain = tokio::spawn({
        let q = q.clone();
        async move { q.shutdown_with_drain().await }
    });
    settle().await;
    assert!(!drain.is_finished());
    q.shutdown();
    timeout(Duration::from_secs(1), drain)
        .await
        .unwrap()
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_finish_everything_before_drain_returns() {
    let q = queue();
    let processed = Arc::new(AtomicUsize::new(0));
    for i in 0..200 {
        q.add(format!("k{i}"));
    }
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let q = q.clone();
            let processed = processed.clone();
            tokio::spawn(async move {
                while let Some(k) = q.get().await {
                    tokio::task::yield_now().await;
                    processed.fetch_add(1, Ordering::SeqCst);
                    q.done(&k);
                }
            })
        })
        .collect();
    timeout(Duration::from_secs(10), async {
        q.shutdown_with_drain().await;
        for w in workers {
            w.await.unwrap();
        }
    })
    .await
    .unwrap();
    assert_eq!(processed.load(Ordering::SeqCst), 200);
}

// ===== delaying queue =====

#[tokio::test(start_paused = true)]
async fn add_after_hands_out_items_in_ready_order() {
    let q = queue();
    let start = Instant::now();
    q.add_after(s("a"), ms(30));
    q.add_after(s("b"), ms(10));
    q.add_after(s("c"), ms(20));
    assert_eq!(q.len(), 0);
    assert_eq!(q.metrics().waiting, 3);
    for (key, at) in [("b", 10), ("c", 20), ("a", 30)] {
        assert_eq!(next(&q).await, Some(s(key)));
        assert_eq!(Instant::now() - start, ms(at), "{key}");
    }
}

#[tokio::test(start_paused = true)]
async fn add_after_zero_adds_at_once() {
    let q = queue();
    q.add_after(s("a"), Duration::ZERO);
    assert_eq!(q.len(), 1);
    assert_eq!(q.try_get(), Some(s("a")));
}

#[tokio::test(start_paused = true)]
async fn delayed_item_wakes_a_blocked_get_without_another_add() {
    let q = queue();
    let start = Instant::now();
    let getter = tokio::spawn({
        let q = q.clone();
        async move { (q.get().await, Instant::now()) }
    });
    settle().await;
    // The getter is already asleep with no deadline when the delayed item arrives.
    q.add_after(s("a"), ms(50));
    let (item, at) = join(getter).await;
    assert_eq!(item, Some(s("a")));
    assert_eq!(at - start, ms(50));
}

#[tokio::test(start_paused = true)]
async fn earlier_delayed_item_shortens_a_blocked_get() {
    let q = queue();
    let start = Instant::now();
    q.add_after(s("late"), Duration::from_secs(60));
    let getter = tokio::spawn({
        let q = q.clone();
        async move { (q.get().await, Instant::now()) }
    });
    settle().await;
    q.add_after(s("early"), ms(5));
    let (item, at) = join(getter).await;
    assert_eq!(item, Some(s("early")));
    assert_eq!(at - start, ms(5));
}

#[tokio::test(start_paused = true)]
async fn duplicate_delayed_item_keeps_the_earliest_time() {
    let q = queue();
    let start = Instant::now();
    q.add_after(s("a"), ms(50));
    q.add_after(s("a"), ms(10));
    q.add_after(s("a"), ms(100));
    assert_eq!(q.metrics().waiting, 1);
    assert_eq!(next(&q).await, Some(s("a")));
    assert_eq!(Instant::now() - start, ms(10));
    q.done(&s("a"));
    // The later entries were merged away: nothing comes at 50 or 100 ms.
    assert_no_item(&q, Duration::from_secs(1)).await;
}

#[tokio::test(start_paused = true)]
async fn delayed_item_already_queued_is_deduplicated() {
    let q = queue();
    q.add(s("a"));
    q.add_after(s("a"), ms(10));
    advance(ms(20)).await;
    assert_eq!(q.len(), 1);
    assert_eq!(next(&q).await, Some(s("a")));
    assert_eq!(q.try_get(), None);
    assert_eq!(q.metrics().adds, 1);
}

#[tokio::test(start_paused = true)]
async fn delayed_item_keeps_fifo_with_later_direct_adds() {
    let q = queue();
    q.add_after(s("delayed"), ms(10));
    advance(ms(15)).await;
    // "delayed" was due before "direct" was added, so it comes first.
    q.add(s("direct"));
    assert_eq!(q.try_get(), Some(s("delayed")));
    assert_eq!(q.try_get(), Some(s("direct")));
}

#[tokio::test(start_paused = true)]
async fn huge_delay_does_not_panic() {
    let q = queue();
    q.add_after(s("a"), Duration::MAX);
    assert_no_item(&q, Duration::from_secs(3 * 24 * 3600)).await;
    q.shutdown();
    assert_eq!(next(&q).await, None);
}

// ===== rate limiters =====

#[test]
fn exponential_backoff_doubles_up_to_max_and_forget_resets() {
    let rl = ItemExponentialFailureRateLimiter::new(ms(5), Duration::from_secs(1));
    let a = s("a");
    let expected = [5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000];
    for (i, want) in expected.into_iter().enumerate() {
        assert_eq!(rl.num_requeues(&a), i as u32);
        assert_eq!(rl.when(&a), ms(want), "failure {i}");
    }
    assert_eq!(rl.num_requeues(&a), 10);
    // Per item: another item starts at the base delay.
    assert_eq!(rl.when(&s("b")), ms(5));
    rl.forget(&a);
    assert_eq!(rl.num_requeues(&a), 0);
    assert_eq!(rl.when(&a), ms(5));
    assert_eq!(rl.when(&a), ms(10));
}

#[test]
fn exponential_backoff_saturates_without_overflow() {
    let rl = ItemExponentialFailureRateLimiter::new(ms(5), Duration::from_secs(1000));
    let a = 1u32;
    let mut last = Duration::ZERO;
    for _ in 0..2000 {
        let d = rl.when(&a);
        assert!(d >= last);
        last = d;
    }
    assert_eq!(last, Duration::from_secs(1000));
    assert_eq!(rl.num_requeues(&a), 2000);
}

#[test]
fn fast_slow_limiter() {
    let rl = ItemFastSlowRateLimiter::new(ms(5), Duration::from_secs(10), 3);
    let a = s("a");
    for _ in 0..3 {
        assert_eq!(rl.when(&a), ms(5));
    }
    assert_eq!(rl.when(&a), Duration::from_secs(10));
    assert_eq!(rl.when(&a), Duration::from_secs(10));
    assert_eq!(rl.num_requeues(&a), 5);
    rl.forget(&a);
    assert_eq!(rl.num_requeues(&a), 0);
    assert_eq!(rl.when(&a), ms(5));
}

#[tokio::test(start_paused = true)]
async fn bucket_limiter_allows_burst_then_qps() {
    let rl = BucketRateLimiter::new(10.0, 100);
    let a = s("a");
    for i in 0..100 {
        assert_eq!(
            RateLimiter::<String>::when(&rl, &a),
            Duration::ZERO,
            "token {i}"
        );
    }
    // The bucket is empty: each further reservation waits 100 ms longer.
    assert_eq!(RateLimiter::<String>::when(&rl, &a), ms(100));
    assert_eq!(RateLimiter::<String>::when(&rl, &a), ms(200));
    assert_eq!(RateLimiter::<String>::num_requeues(&rl, &a), 0);
    // 1 s refills 10 tokens; 2 were borrowed.
    advance(Duration::from_secs(1)).await;
    for _ in 0..8 {
        assert_eq!(RateLimiter::<String>::when(&rl, &a), Duration::ZERO);
    }
    assert_eq!(RateLimiter::<String>::when(&rl, &a), ms(100));
    // The bucket never holds more than `burst`.
    advance(Duration::from_secs(3600)).await;
    for _ in 0..100 {
        assert_eq!(RateLimiter::<String>::when(&rl, &a), Duration::ZERO);
    }
    assert_eq!(RateLimiter::<String>::when(&rl, &a), ms(100));
}

#[test]
fn bucket_limiter_infinite_qps_never_waits() {
    let rl = BucketRateLimiter::new(f64::INFINITY, 1);
    for _ in 0..1000 {
        assert_eq!(rl.reserve(), Duration::ZERO);
    }
}

#[test]
#[should_panic(expected = "qps must be > 0")]
fn bucket_limiter_rejects_zero_qps() {
    let _ = BucketRateLimiter::new(0.0, 10);
}

#[test]
fn max_of_limiter_takes_the_longest_and_forgets_everywhere() {
    let rl: MaxOfRateLimiter<String> = MaxOfRateLimiter::new(vec![
        Box::new(ItemFastSlowRateLimiter::new(
            ms(1),
            Duration::from_secs(3),
            2,
        )),
        Box::new(ItemExponentialFailureRateLimiter::new(
            ms(100),
            Duration::from_secs(60),
        )),
    ]);
    let a = s("a");
    assert_eq!(rl.when(&a), ms(100));
    assert_eq!(rl.when(&a), ms(200));
    assert_eq!(rl.when(&a), Duration::from_secs(3)); // slow (3 s) beats 400 ms
    assert_eq!(rl.when(&a), Duration::from_secs(3)); // slow beats 800 ms
    assert_eq!(rl.when(&a), Duration::from_secs(3)); // 1.6 s
    assert_eq!(rl.when(&a), ms(3200)); // exponential takes over
    assert_eq!(rl.num_requeues(&a), 6);
    rl.forget(&a);
    assert_eq!(rl.num_requeues(&a), 0);
    assert_eq!(rl.when(&a), ms(100));
}

#[tokio::test(start_paused = true)]
async fn default_controller_rate_limiter_is_exponential_and_bucket() {
    let rl = default_controller_rate_limiter::<String>();
    let a = s("a");
    assert_eq!(rl.when(&a), ms(5));
    assert_eq!(rl.when(&a), ms(10));
    assert_eq!(rl.when(&a), ms(20));
    // 3 tokens used; 97 distinct items take the rest of the burst at the base delay.
    for i in 0..97 {
        assert_eq!(rl.when(&format!("k{i}")), ms(5));
    }
    // Bucket empty: 10 qps, 100 ms per token, beats the 5 ms first-failure backoff.
    assert_eq!(rl.when(&s("new")), ms(100));
    assert_eq!(rl.when(&s("new2")), ms(200));
    // Exponential cap: 5 ms * 2^n stops at 1000 s.
    let b = s("b");
    let mut last = Duration::ZERO;
    for _ in 0..40 {
        last = rl.when(&b);
    }
    assert_eq!(last, Duration::from_secs(1000));
    assert_eq!(rl.num_requeues(&b), 40);
}

#[test]
fn with_max_wait_caps_delay() {
    let rl = WithMaxWaitRateLimiter::new(
        ItemExponentialFailureRateLimiter::new(ms(100), Duration::from_secs(1000)),
        ms(250),
    );
    let a = 7u64;
    assert_eq!(rl.when(&a), ms(100));
    assert_eq!(rl.when(&a), ms(200));
    assert_eq!(rl.when(&a), ms(250));
    assert_eq!(rl.num_requeues(&a), 3);
    rl.forget(&a);
    assert_eq!(rl.num_requeues(&a), 0);
}

#[tokio::test(start_paused = true)]
async fn add_rate_limited_backs_off_per_item() {
    let limiter = Arc::new(ItemExponentialFailureRateLimiter::new(
        ms(5),
        Duration::from_secs(1000),
    ));
    let q: WorkQueue<String> = WorkQueue::with_rate_limiter("rl", limiter.clone());
    let a = s("a");
    let start = Instant::now();
    let mut expected_at = Duration::ZERO;
    for (i, delay) in [5, 10, 20, 40].into_iter().enumerate() {
        assert_eq!(q.num_requeues(&a), i as u32);
        q.add_rate_limited(a.clone());
        expected_at += ms(delay);
        assert_eq!(next(&q).await, Some(a.clone()));
        assert_eq!(Instant::now() - start, expected_at);
        q.done(&a);
    }
    assert_eq!(q.num_requeues(&a), 4);
    assert_eq!(limiter.num_requeues(&a), 4);
    q.forget(&a);
    assert_eq!(q.num_requeues(&a), 0);
    q.add_rate_limited(a.clone());
    let before = Instant::now();
    assert_eq!(next(&q).await, Some(a.clone()));
    assert_eq!(Instant::now() - before, ms(5));
    assert_eq!(q.metrics().retries, 5);
}

// ===== metrics =====

#[tokio::test(start_paused = true)]
async fn metrics_count_adds_depth_latency_and_work() {
    let q = queue();
    q.add(s("a"));
    q.add(s("a"));
    q.add(s("b"));
    let m = q.metrics();
    assert_eq!(
        (m.name.as_str(), m.depth, m.adds, m.retries),
        ("test", 2, 2, 0)
    );
    assert_eq!(m.queue_latency.count, 0);

    advance(Duration::from_secs(2)).await;
    let a = next(&q).await.unwrap();
    advance(Duration::from_secs(1)).await;
    let b = next(&q).await.unwrap();
    let m = q.metrics();
    assert_eq!(m.depth, 0);
    assert_eq!(m.processing, 2);
    assert_eq!(m.queue_latency.count, 2);
    assert!(
        (m.queue_latency.sum - 5.0).abs() < 1e-9,
        "{}",
        m.queue_latency.sum
    );
    // 2 s and 3 s are both in the (1, 10] bucket.
    assert_eq!(m.queue_latency.buckets.len(), DURATION_BUCKETS.len());
    assert_eq!(m.queue_latency.buckets[8], (1.0, 0));
    assert_eq!(m.queue_latency.buckets[9], (10.0, 2));

    advance(Duration::from_secs(4)).await;
    let m = q.metrics();
    // a: 5 s, b: 4 s in flight.
    assert!((m.unfinished_work_seconds - 9.0).abs() < 1e-9);
    assert!((m.longest_running_processor_seconds - 5.0).abs() < 1e-9);

    q.done(&a);
    q.add(s("b")); // re-added while processing: counts in depth, not len
    q.done(&b);
    let m = q.metrics();
    assert_eq!(m.work_duration.count, 2);
    assert!((m.work_duration.sum - 9.0).abs() < 1e-9);
    assert_eq!(m.unfinished_work_seconds, 0.0);
    assert_eq!(m.longest_running_processor_seconds, 0.0);
    assert_eq!((m.depth, m.adds), (1, 3));
    assert_eq!(m.queue_latency.mean(), 2.5);
}

#[tokio::test(start_paused = true)]
async fn retries_count_add_after_and_delayed_latency_starts_when_due() {
    let q = queue();
    q.add_after(s("a"), ms(100));
    q.add_rate_limited(s("b"));
    q.add_after(s("c"), Duration::ZERO);
    let m = q.metrics();
    assert_eq!(m.retries, 3);
    assert_eq!(m.waiting, 2);
    assert_eq!((m.depth, m.adds), (1, 1));
    advance(ms(500)).await;
    let m = q.metrics();
    assert_eq!((m.depth, m.adds, m.waiting), (3, 3, 0));
    assert_eq!(next(&q).await, Some(s("c")));
    assert_eq!(next(&q).await, Some(s("b"))); // due at 5 ms
    assert_eq!(next(&q).await, Some(s("a"))); // due at 100 ms
    let m = q.metrics();
    // c waited 500 ms, b 495 ms, a 400 ms.
    assert!(
        (m.queue_latency.sum - 1.395).abs() < 1e-9,
        "{}",
        m.queue_latency.sum
    );
}

#[tokio::test(start_paused = true)]
async fn prometheus_text_has_client_go_series() {
    let q: WorkQueue<String> = WorkQueue::new("foos");
    q.add(s("a"));
    q.add(s("b"));
    advance(ms(3)).await;
    let a = next(&q).await.unwrap();
    q.done(&a);
    q.add_rate_limited(s("a"));
    let text = q.render_prometheus();
    for line in [
        "# TYPE workqueue_depth gauge",
        "workqueue_depth{name=\"foos\"} 1",
        "# TYPE workqueue_adds_total counter",
        "workqueue_adds_total{name=\"foos\"} 2",
        "# TYPE workqueue_queue_duration_seconds histogram",
        "workqueue_queue_duration_seconds_bucket{name=\"foos\",le=\"1e-08\"} 0",
        "workqueue_queue_duration_seconds_bucket{name=\"foos\",le=\"0.001\"} 0",
        "workqueue_queue_duration_seconds_bucket{name=\"foos\",le=\"0.01\"} 1",
        "workqueue_queue_duration_seconds_bucket{name=\"foos\",le=\"10\"} 1",
        "workqueue_queue_duration_seconds_bucket{name=\"foos\",le=\"+Inf\"} 1",
        "workqueue_queue_duration_seconds_sum{name=\"foos\"} 0.003",
        "workqueue_queue_duration_seconds_count{name=\"foos\"} 1",
        "# TYPE workqueue_work_duration_seconds histogram",
        "workqueue_work_duration_seconds_bucket{name=\"foos\",le=\"1e-08\"} 1",
        "workqueue_work_duration_seconds_sum{name=\"foos\"} 0",
        "workqueue_work_duration_seconds_count{name=\"foos\"} 1",
        "# TYPE workqueue_unfinished_work_seconds gauge",
        "workqueue_unfinished_work_seconds{name=\"foos\"} 0",
        "# TYPE workqueue_longest_running_processor_seconds gauge",
        "workqueue_longest_running_processor_seconds{name=\"foos\"} 0",
        "# TYPE workqueue_retries_total counter",
        "workqueue_retries_total{name=\"foos\"} 1",
        "# HELP workqueue_adds_total Total number of adds handled by workqueue",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing line {line:?} in:\n{text}"
        );
    }
    // Every non-comment line is `series value`, with a parseable value.
    for l in text.lines().filter(|l| !l.starts_with('#')) {
        let (series, value) = l.rsplit_once(' ').unwrap();
        assert!(series.starts_with("workqueue_"), "{l}");
        let value = value.replace("+Inf", "inf");
        value.parse::<f64>().unwrap_or_else(|e| panic!("{l}: {e}"));
    }
}

#[test]
fn prometheus_text_for_several_queues_writes_each_family_once() {
    let one = WorkQueue::<u32>::new("one");
    let two = WorkQueue::<u32>::new("t\"w\\o\n");
    one.add(1);
    two.add(1);
    two.add(2);
    let metrics: Vec<QueueMetrics> = vec![one.metrics(), two.metrics()];
    let text = render_prometheus(&metrics);
    assert_eq!(text.matches("# TYPE workqueue_depth gauge").count(), 1);
    assert_eq!(text.matches("# HELP ").count(), 7);
    assert!(text.contains("workqueue_depth{name=\"one\"} 1\n"));
    assert!(text.contains("workqueue_depth{name=\"t\\\"w\\\\o\\n\"} 2\n"));
    // The two queues' depth series are next to each other, as the format requires.
    let depth_lines: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.starts_with("workqueue_depth{"))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(depth_lines.len(), 2);
    assert_eq!(depth_lines[1], depth_lines[0] + 1);
}

#[test]
fn prometheus_floats_are_formatted_like_go() {
    let mut m = WorkQueue::<u32>::new("q").metrics();
    for (value, text) in [
        (0.0, "0"),
        (1.0, "1"),
        (0.5, "0.5"),
        (0.0001, "0.0001"),
        (0.00001234, "1.234e-05"),
        (123456.0, "123456"),
        (1234567.0, "1.234567e+06"),
    ] {
        m.unfinished_work_seconds = value;
        let rendered = m.render_prometheus();
        let line = format!("workqueue_unfinished_work_seconds{{name=\"q\"}} {text}\n");
        assert!(rendered.contains(&line), "{value}: {rendered}");
    }
}

// ===== property tests =====

/// A worker-visible operation on the queue, for the sequential model test.
#[derive(Debug, Clone)]
enum Op {
    Add(u8),
    AddAfter(u8, u64),
    /// Worker `w` (if idle) takes an item.
    Get(usize),
    /// Worker `w` (if busy) finishes its item.
    Done(usize),
    Advance(u64),
}

const WORKERS: usize = 3;

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u8..6).prop_map(Op::Add),
        2 => (0u8..6, 0u64..40).prop_map(|(k, d)| Op::AddAfter(k, d)),
        4 => (0..WORKERS).prop_map(Op::Get),
        3 => (0..WORKERS).prop_map(Op::Done),
        1 => (0u64..30).prop_map(Op::Advance),
    ]
}

/// client-go's queue and delaying queue written as plainly as possible.
#[derive(Default)]
struct Model {
    now: u64,
    queue: VecDeque<u8>,
    dirty: HashSet<u8>,
    processing: HashSet<u8>,
    /// (ready time, sequence, item); one entry per item.
    waiting: Vec<(u64, u64, u8)>,
    seq: u64,
}

impl Model {
    fn promote(&mut self) {
        let now = self.now;
        let mut due: Vec<_> = self
            .waiting
            .iter()
            .copied()
            .filter(|w| w.0 <= now)
            .collect();
        due.sort();
        self.waiting.retain(|w| w.0 > now);
        for (_, _, k) in due {
            self.add(k);
        }
    }
    fn add(&mut self, k: u8) {
        if self.dirty.insert(k) && !self.processing.contains(&k) {
            self.queue.push_back(k);
        }
    }
    fn add_after(&mut self, k: u8, d: u64) {
        self.promote();
        if d == 0 {
            return self.add(k);
        }
        let ready = self.now + d;
        match self.waiting.iter_mut().find(|w| w.2 == k) {
            Some(w) if w.0 <= ready => {}
            Some(w) => *w = (ready, self.seq, k),
            None => self.waiting.push((ready, self.seq, k)),
        }
        self.seq += 1;
    }
    fn get(&mut self) -> Option<u8> {
        self.promote();
        let k = self.queue.pop_front()?;
        self.dirty.remove(&k);
        self.processing.insert(k);
        Some(k)
    }
    fn done(&mut self, k: u8) {
        self.promote();
        self.processing.remove(&k);
        if self.dirty.contains(&k) {
            self.queue.push_back(k);
        }
    }
    fn len(&mut self) -> usize {
        self.promote();
        self.queue.len()
    }
}

/// Per-item history to check the invariants the model does not spell out.
#[derive(Default)]
struct History {
    step: usize,
    last_add: HashMap<u8, usize>,
    adds: HashMap<u8, usize>,
    gets: HashMap<u8, Vec<usize>>,
}

impl History {
    fn add(&mut self, k: u8) {
        self.step += 1;
        self.last_add.insert(k, self.step);
        *self.adds.entry(k).or_default() += 1;
    }
    fn get(&mut self, k: u8) {
        self.step += 1;
        self.gets.entry(k).or_default().push(self.step);
    }
    fn check(&self) -> Result<(), TestCaseError> {
        for (k, &last_add) in &self.last_add {
            let gets = self.gets.get(k).map(Vec::as_slice).unwrap_or_default();
            // Dedup: never processed more often than added.
            prop_assert!(
                gets.len() <= self.adds[k],
                "{k} processed {} times, added {}",
                gets.len(),
                self.adds[k]
            );
            // Nothing lost: processed at least once after its last add.
            prop_assert!(
                gets.last().is_some_and(|&g| g > last_add),
                "{k} last added at step {last_add}, processed at {gets:?}"
            );
        }
        prop_assert!(self.gets.keys().all(|k| self.adds.contains_key(k)));
        Ok(())
    }
}

fn run_sequential(ops: Vec<Op>) -> Result<(), TestCaseError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    rt.block_on(async move {
        let q: WorkQueue<u8> = WorkQueue::new("prop");
        let mut model = Model::default();
        let mut history = History::default();
        let mut workers: [Option<u8>; WORKERS] = [None; WORKERS];
        for op in ops {
            match op {
                Op::Add(k) => {
                    q.add(k);
                    model.promote();
                    model.add(k);
                    history.add(k);
                }
                Op::AddAfter(k, d) => {
                    q.add_after(k, ms(d));
                    model.add_after(k, d);
                    history.add(k);
                }
                Op::Get(w) if workers[w].is_none() => {
                    let got = q.try_get();
                    prop_assert_eq!(got, model.get());
                    if let Some(k) = got {
                        prop_assert!(!workers.contains(&Some(k)), "{} handed out twice", k);
                        workers[w] = Some(k);
                        history.get(k);
                    }
                }
                Op::Done(w) => {
                    if let Some(k) = workers[w].take() {
                        q.done(&k);
                        model.done(k);
                    }
                }
                Op::Get(_) => {}
                Op::Advance(d) => {
                    advance(ms(d)).await;
                    model.now += d;
                }
            }
            prop_assert_eq!(q.len(), model.len());
            prop_assert_eq!(q.metrics().depth, model.dirty.len());
        }
        // Finish: workers complete, then one worker drains everything, delayed items too.
        for w in workers.iter_mut() {
            if let Some(k) = w.take() {
                q.done(&k);
                model.done(k);
            }
        }
        advance(ms(100)).await;
        model.now += 100;
        loop {
            let got = q.try_get();
            prop_assert_eq!(got, model.get());
            let Some(k) = got else { break };
            history.get(k);
            q.done(&k);
            model.done(k);
        }
        let m = q.metrics();
        prop_assert_eq!((m.depth, m.processing, m.waiting), (0, 0, 0));
        history.check()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Sequential runs against a plain model of client-go's queue: the same items in the
    /// same order, and the dedup / no-double-processing / nothing-lost invariants.
    #[test]
    fn prop_sequential_matches_model(ops in proptest::collection::vec(op(), 1..80)) {
        run_sequential(ops)?;
    }
}

/// One producer's script: (key, delay in ms or 0 for `add`, yields before the next add).
type Script = Vec<(u8, u8, u8)>;

fn run_concurrent(
    workers: usize,
    scripts: Vec<Script>,
    work_yields: u8,
) -> Result<(), TestCaseError> {
    const KEYS: usize = 8;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(3)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let q: WorkQueue<u8> = WorkQueue::new("concurrent");
        // Version of each key, bumped before every add: what a controller would read.
        let versions: Arc<Vec<AtomicU64>> =
            Arc::new((0..KEYS).map(|_| AtomicU64::new(0)).collect());
        let adds: Arc<Vec<AtomicU64>> = Arc::new((0..KEYS).map(|_| AtomicU64::new(0)).collect());
        let in_flight = Arc::new(Mutex::new(HashSet::new()));
        // (times processed, highest version seen when processing started)
        let seen = Arc::new(Mutex::new(vec![(0u64, 0u64); KEYS]));
        let violations = Arc::new(AtomicUsize::new(0));

        // More gets than adds is already a failure; stopping there keeps a queue that hands
        // items out forever from hanging the test.
        let max_gets = scripts.iter().map(Vec::len).sum::<usize>() as u64;
        let gets = Arc::new(AtomicU64::new(0));
        let worker_tasks: Vec<_> = (0..workers)
            .map(|w| {
                let (q, versions, in_flight, seen, violations) = (
                    q.clone(),
                    versions.clone(),
                    in_flight.clone(),
                    seen.clone(),
                    violations.clone(),
                );
                let gets = gets.clone();
                tokio::spawn(async move {
                    let mut n = w;
                    while let Some(k) = q.get().await {
                        if gets.fetch_add(1, Ordering::SeqCst) >= max_gets {
                            violations.fetch_add(1, Ordering::SeqCst);
                            q.done(&k);
                            break;
                        }
                        if !in_flight.lock().insert(k) {
                            violations.fetch_add(1, Ordering::SeqCst);
                        }
                        let v = versions[k as usize].load(Ordering::SeqCst);
                        {
                            let mut seen = seen.lock();
                            seen[k as usize].0 += 1;
                            seen[k as usize].1 = seen[k as usize].1.max(v);
                        }
                        n = n.wrapping_mul(31).wrapping_add(k as usize);
                        for _ in 0..(n % (work_yields as usize + 1)) {
                            tokio::task::yield_now().await;
                        }
                        in_flight.lock().remove(&k);
                        q.done(&k);
                    }
                })
            })
            .collect();

        let producers: Vec<_> = scripts
            .into_iter()
            .map(|script| {
                let (q, versions, adds) = (q.clone(), versions.clone(), adds.clone());
                tokio::spawn(async move {
                    for (k, delay, yields) in script {
                        let k = k % KEYS as u8;
                        versions[k as usize].fetch_add(1, Ordering::SeqCst);
                        adds[k as usize].fetch_add(1, Ordering::SeqCst);
                        if delay == 0 {
                            q.add(k);
                        } else {
                            q.add_after(k, ms(u64::from(delay)));
                        }
                        for _ in 0..yields {
                            tokio::task::yield_now().await;
                        }
                    }
                })
            })
            .collect();
        for p in producers {
            timeout(Duration::from_secs(10), p)
                .await
                .expect("producer finishes")
                .unwrap();
        }
        // Let delayed items come due (blocked workers promote them) before shutting down,
        // which would drop them.
        timeout(Duration::from_secs(10), async {
            while q.metrics().waiting > 0 {
                tokio::time::sleep(ms(1)).await;
            }
        })
        .await
        .expect("delayed items come due");
        timeout(Duration::from_secs(10), q.shutdown_with_drain())
            .await
            .expect("drain");
        for w in worker_tasks {
            timeout(Duration::from_secs(10), w)
                .await
                .expect("worker exits")
                .unwrap();
        }

        prop_assert_eq!(
            violations.load(Ordering::SeqCst),
            0,
            "an item was processed twice at once, or more often than it was added"
        );
        let seen = seen.lock();
        for k in 0..KEYS {
            let added = adds[k].load(Ordering::SeqCst);
            let (processed, max_version) = seen[k];
            prop_assert!(
                processed <= added,
                "key {} processed {} times, added {}",
                k,
                processed,
                added
            );
            if added > 0 {
                prop_assert!(processed >= 1, "key {} added but never processed", k);
                prop_assert_eq!(
                    max_version,
                    versions[k].load(Ordering::SeqCst),
                    "key {} was not processed after its last add",
                    k
                );
            }
        }
        let m = q.metrics();
        prop_assert_eq!((m.depth, m.processing, m.waiting), (0, 0, 0));
        Ok(())
    })
}

fn script() -> impl Strategy<Value = Script> {
    proptest::collection::vec(
        (
            any::<u8>(),
            prop_oneof![4 => Just(0u8), 1 => 1u8..3],
            0u8..4,
        ),
        1..40,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, max_shrink_iters: 64, ..ProptestConfig::default() })]

    /// Several producers and workers on a multi-threaded runtime: no item is processed by two
    /// workers at once, every added item is processed after its last add, and no item is
    /// processed more often than it was added.
    #[test]
    fn prop_concurrent_workers_keep_invariants(
        workers in 1usize..6,
        scripts in proptest::collection::vec(script(), 1..4),
        work_yields in 0u8..4,
    ) {
        run_concurrent(workers, scripts, work_yields)?;
    }
}

#[tokio::test]
async fn get_unless_shutting_down_stops_at_the_shutdown_and_keeps_nothing_processing() {
    let q = queue();
    q.add(s("a"));
    q.add(s("b"));
    assert_eq!(q.get_unless_shutting_down().await, Some(s("a")));
    q.shutdown();
    // `get` would still hand out "b" (client-go semantics); this one stops.
    assert_eq!(q.get_unless_shutting_down().await, None);
    q.done(&s("a"));
    // "b" was handed back, so nothing is left in flight and a drain returns at once.
    tokio::time::timeout(Duration::from_secs(1), q.shutdown_with_drain())
        .await
        .expect("no item left in flight");
}
