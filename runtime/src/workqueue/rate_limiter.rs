//! Rate limiters for [`WorkQueue::add_rate_limited`](super::WorkQueue::add_rate_limited),
//! as client-go's `k8s.io/client-go/util/workqueue/default_rate_limiters.go`.

use std::collections::HashMap;
use std::fmt;
use std::hash::Hash;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use super::ItemHasher;
use crate::ratelimit::TokenBucket;

/// Decides how long an item waits before it is retried.
///
/// Methods take `&self`: limiters keep their per-item state behind a lock, so one limiter
/// can be shared (e.g. in an `Arc`) like client-go's.
pub trait RateLimiter<T>: Send + Sync {
    /// How long `item` should wait before it is retried. Every call counts as one more
    /// failure (retry) of `item`.
    fn when(&self, item: &T) -> Duration;
    /// Stop tracking `item`: it succeeded (or was given up on), so its backoff starts over.
    fn forget(&self, item: &T);
    /// How many times `item` has been rate limited (failed) since it was last forgotten.
    fn num_requeues(&self, item: &T) -> u32;
}

impl<T, L: RateLimiter<T> + ?Sized> RateLimiter<T> for Box<L> {
    fn when(&self, item: &T) -> Duration {
        (**self).when(item)
    }
    fn forget(&self, item: &T) {
        (**self).forget(item)
    }
    fn num_requeues(&self, item: &T) -> u32 {
        (**self).num_requeues(item)
    }
}

impl<T, L: RateLimiter<T> + ?Sized> RateLimiter<T> for Arc<L> {
    fn when(&self, item: &T) -> Duration {
        (**self).when(item)
    }
    fn forget(&self, item: &T) {
        (**self).forget(item)
    }
    fn num_requeues(&self, item: &T) -> u32 {
        (**self).num_requeues(item)
    }
}

/// client-go's `DefaultControllerRateLimiter`: the larger of a per-item exponential backoff
/// (5 ms doubling up to 1000 s) and an overall token bucket (10 qps, burst 100).
#[must_use]
pub fn default_controller_rate_limiter<T>() -> MaxOfRateLimiter<T>
where
    T: Clone + Eq + Hash + Send + Sync + 'static,
{
    MaxOfRateLimiter::new(vec![
        Box::new(ItemExponentialFailureRateLimiter::new(
            Duration::from_millis(5),
            Duration::from_secs(1000),
        )),
        Box::new(BucketRateLimiter::new(10.0, 100)),
    ])
}

/// Per-item exponential backoff: `base * 2^failures`, capped at `max`
/// (client-go's `ItemExponentialFailureRateLimiter`).
pub struct ItemExponentialFailureRateLimiter<T> {
    base: Duration,
    max: Duration,
    failures: Mutex<HashMap<T, u32, ItemHasher>>,
}

impl<T> ItemExponentialFailureRateLimiter<T> {
    /// Wait `base` after the first failure, doubling per failure up to `max`.
    #[must_use]
    pub fn new(base: Duration, max: Duration) -> Self {
        Self {
            base,
            max,
            failures: Mutex::new(HashMap::default()),
        }
    }
}

impl<T> fmt::Debug for ItemExponentialFailureRateLimiter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ItemExponentialFailureRateLimiter")
            .field("base", &self.base)
            .field("max", &self.max)
            .field("tracked_items", &self.failures.lock().len())
            .finish()
    }
}

impl<T: Clone + Eq + Hash + Send + Sync> RateLimiter<T> for ItemExponentialFailureRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        let exp = {
            let mut failures = self.failures.lock();
            let n = failures.entry(item.clone()).or_insert(0);
            let exp = *n;
            *n = n.saturating_add(1);
            exp
        };
        if self.base.is_zero() {
            return Duration::ZERO;
        }
        // Computed in floating point so a large exponent saturates instead of overflowing.
        let backoff = self.base.as_nanos() as f64 * 2f64.powf(f64::from(exp));
        // Never NaN: base > 0 and 2^exp >= 1 (possibly infinite).
        if backoff >= self.max.as_nanos() as f64 {
            return self.max;
        }
        Duration::from_nanos(backoff as u64)
    }

    fn forget(&self, item: &T) {
        self.failures.lock().remove(item);
    }

    fn num_requeues(&self, item: &T) -> u32 {
        self.failures.lock().get(item).copied().unwrap_or(0)
    }
}

/// `fast` for the first `max_fast_attempts` failures of an item, `slow` after that
/// (client-go's `ItemFastSlowRateLimiter`).
pub struct ItemFastSlowRateLimiter<T> {
    fast: Duration,
    slow: Duration,
    max_fast_attempts: u32,
    attempts: Mutex<HashMap<T, u32, ItemHasher>>,
}

impl<T> ItemFastSlowRateLimiter<T> {
    /// Wait `fast` for the first `max_fast_attempts` failures of an item, `slow` after.
    #[must_use]
    pub fn new(fast: Duration, slow: Duration, max_fast_attempts: u32) -> Self {
        Self {
            fast,
            slow,
            max_fast_attempts,
            attempts: Mutex::new(HashMap::default()),
        }
    }
}

impl<T> fmt::Debug for ItemFastSlowRateLimiter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ItemFastSlowRateLimiter")
            .field("fast", &self.fast)
            .field("slow", &self.slow)
            .field("max_fast_attempts", &self.max_fast_attempts)
            .field("tracked_items", &self.attempts.lock().len())
            .finish()
    }
}

impl<T: Clone + Eq + Hash + Send + Sync> RateLimiter<T> for ItemFastSlowRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        let mut attempts = self.attempts.lock();
        let n = attempts.entry(item.clone()).or_insert(0);
        *n = n.saturating_add(1);
        if *n <= self.max_fast_attempts {
            self.fast
        } else {
            self.slow
        }
    }

    fn forget(&self, item: &T) {
        self.attempts.lock().remove(item);
    }

    fn num_requeues(&self, item: &T) -> u32 {
        self.attempts.lock().get(item).copied().unwrap_or(0)
    }
}

/// An overall token bucket (client-go's `BucketRateLimiter` around `rate.NewLimiter(qps,
/// burst)`): a [`TokenBucket`], the same type that limits the client's QPS. The bucket holds
/// up to `burst` tokens, starts full and refills at `qps` tokens per second; every
/// [`when`](RateLimiter::when) takes one token, going into debt when the bucket is empty,
/// and returns how long until that token will have been refilled.
/// It does not track items: `forget` does nothing and `num_requeues` is always 0.
///
/// Time is [`tokio::time::Instant`], so a paused tokio clock drives it in tests.
#[derive(Debug)]
pub struct BucketRateLimiter {
    bucket: TokenBucket,
}

impl BucketRateLimiter {
    /// `qps` tokens per second (`f64::INFINITY`: no limit), at most `burst` at once.
    ///
    /// # Panics
    /// If `qps` is not greater than zero (or is NaN), or `burst` is 0: such a bucket would
    /// never let an item through again.
    #[must_use]
    pub fn new(qps: f64, burst: u32) -> Self {
        Self {
            bucket: TokenBucket::new(qps, burst),
        }
    }

    /// Take one token and return how long until it is available.
    #[must_use = "the token is taken: wait for the returned delay before acting"]
    pub fn reserve(&self) -> Duration {
        self.bucket.reserve()
    }

    /// The token bucket.
    #[must_use]
    pub fn bucket(&self) -> &TokenBucket {
        &self.bucket
    }
}

impl<T> RateLimiter<T> for BucketRateLimiter {
    fn when(&self, _item: &T) -> Duration {
        self.reserve()
    }

    fn forget(&self, _item: &T) {}

    fn num_requeues(&self, _item: &T) -> u32 {
        0
    }
}

/// The worst (longest) of several limiters (client-go's `MaxOfRateLimiter`). Every
/// limiter's `when` is called each time, so all of them count the failure.
pub struct MaxOfRateLimiter<T> {
    limiters: Vec<Box<dyn RateLimiter<T>>>,
}

impl<T> MaxOfRateLimiter<T> {
    /// The longest delay of `limiters` (none: no delay).
    #[must_use]
    pub fn new(limiters: Vec<Box<dyn RateLimiter<T>>>) -> Self {
        Self { limiters }
    }
}

impl<T> fmt::Debug for MaxOfRateLimiter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MaxOfRateLimiter")
            .field("limiters", &self.limiters.len())
            .finish()
    }
}

impl<T> RateLimiter<T> for MaxOfRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        self.limiters
            .iter()
            .map(|l| l.when(item))
            .max()
            .unwrap_or(Duration::ZERO)
    }

    fn forget(&self, item: &T) {
        for l in &self.limiters {
            l.forget(item);
        }
    }

    fn num_requeues(&self, item: &T) -> u32 {
        self.limiters
            .iter()
            .map(|l| l.num_requeues(item))
            .max()
            .unwrap_or(0)
    }
}

/// Caps another limiter's delay at `max_delay` (client-go's `WithMaxWaitRateLimiter`).
#[derive(Debug)]
pub struct WithMaxWaitRateLimiter<L> {
    limiter: L,
    max_delay: Duration,
}

impl<L> WithMaxWaitRateLimiter<L> {
    /// `limiter`'s delays, never longer than `max_delay`.
    #[must_use]
    pub fn new(limiter: L, max_delay: Duration) -> Self {
        Self { limiter, max_delay }
    }
}

impl<T, L: RateLimiter<T>> RateLimiter<T> for WithMaxWaitRateLimiter<L> {
    fn when(&self, item: &T) -> Duration {
        self.limiter.when(item).min(self.max_delay)
    }

    fn forget(&self, item: &T) {
        self.limiter.forget(item)
    }

    fn num_requeues(&self, item: &T) -> u32 {
        self.limiter.num_requeues(item)
    }
}
