//! Client-side QPS/burst limiting and request counting, as client-go's rest client has
//! (`--kube-api-qps`, `--kube-api-burst`) and kube-rs lacks: a tower layer on the client.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::time::Instant;
use tower::{Layer, Service};

/// A token bucket with the semantics of `golang.org/x/time/rate.Limiter` (which both of
/// client-go's token buckets wrap: the rest client's QPS/burst limiter and the work queue's
/// `BucketRateLimiter`): it holds up to `burst` tokens, starts full and refills at `qps`
/// tokens per second. [`reserve`](Self::reserve) takes one token, going into debt when the
/// bucket is empty, and returns how long until that token will have been refilled (Go's
/// `Reserve().Delay()`), so callers that wait that long go first come, first served and
/// never spin.
///
/// Time is [`tokio::time::Instant`], so a paused tokio clock drives it in tests (or pass
/// the time: [`reserve_at`](Self::reserve_at), [`allow_at`](Self::allow_at)). This one
/// type serves [`ClientRateLimitLayer`] (client QPS), the work queue's
/// [`BucketRateLimiter`](crate::workqueue::BucketRateLimiter) and the event recorder's spam
/// filter ([`allow`](Self::allow): client-go's passive token bucket, Go's `Allow`).
///
/// ```
/// use std::time::Duration;
/// use kube_codegen_runtime::ratelimit::TokenBucket;
///
/// let bucket = TokenBucket::new(10.0, 2);
/// assert_eq!(bucket.reserve(), Duration::ZERO);
/// assert_eq!(bucket.reserve(), Duration::ZERO);
/// // Empty: the next token is 100 ms away, the one after 200 ms.
/// assert!(bucket.reserve() > Duration::from_millis(90));
/// ```
#[derive(Debug)]
pub struct TokenBucket {
    qps: f64,
    burst: u32,
    state: Mutex<BucketState>,
}

#[derive(Debug)]
struct BucketState {
    /// Tokens at `last`; negative while reservations are outstanding.
    tokens: f64,
    /// The last reservation; `None`: none yet (the bucket is full).
    last: Option<Instant>,
}

impl TokenBucket {
    /// `qps` tokens per second (`f64::INFINITY`: no limit), at most `burst` at once.
    ///
    /// # Panics
    /// If `qps` is not greater than zero (or is NaN), or `burst` is 0: such a bucket would
    /// never hand out a token again (Go's limiter refuses every reservation then).
    #[must_use]
    pub fn new(qps: f64, burst: u32) -> Self {
        assert!(qps > 0.0, "token bucket: qps must be > 0, got {qps}");
        assert!(burst > 0, "token bucket: burst must be > 0");
        TokenBucket {
            qps,
            burst,
            state: Mutex::new(BucketState {
                tokens: f64::from(burst),
                last: None,
            }),
        }
    }

    /// Tokens per second.
    #[must_use]
    pub fn qps(&self) -> f64 {
        self.qps
    }

    /// The most tokens the bucket holds.
    #[must_use]
    pub fn burst(&self) -> u32 {
        self.burst
    }

    /// Take one token and return how long until it is available ([`Duration::ZERO`]: now).
    /// The token is taken either way: a caller that does not wait that long jumps the
    /// queue.
    #[must_use = "the token is taken: wait for the returned delay before acting"]
    pub fn reserve(&self) -> Duration {
        self.reserve_at(Instant::now())
    }

    /// [`reserve`](Self::reserve) at time `now` (Go's `ReserveN(now, 1).DelayFrom(now)`).
    #[must_use = "the token is taken: wait for the returned delay before acting"]
    pub fn reserve_at(&self, now: Instant) -> Duration {
        if self.qps.is_infinite() {
            return Duration::ZERO;
        }
        let mut bucket = self.state.lock();
        let tokens = self.advance(&bucket, now) - 1.0;
        bucket.tokens = tokens;
        bucket.last = Some(now);
        if tokens >= 0.0 {
            return Duration::ZERO;
        }
        // As Go's `rate.Limit.durationFromTokens`: seconds, then nanoseconds, truncated.
        let nanos = -tokens / self.qps * 1e9;
        if nanos >= u64::MAX as f64 {
            Duration::MAX
        } else {
            Duration::from_nanos(nanos as u64)
        }
    }

    /// Take a token if one is available now; never goes into debt (Go's `Allow`, client-go's
    /// passive `TryAccept`). Returns whether a token was taken.
    #[must_use = "false means the caller must not act (drop or defer the work)"]
    pub fn allow(&self) -> bool {
        self.allow_at(Instant::now())
    }

    /// [`allow`](Self::allow) at time `now` (Go's `AllowN(now, 1)`).
    #[must_use = "false means the caller must not act (drop or defer the work)"]
    pub fn allow_at(&self, now: Instant) -> bool {
        if self.qps.is_infinite() {
            return true;
        }
        let mut bucket = self.state.lock();
        let tokens = self.advance(&bucket, now);
        // Time moves on either way, as in Go: the refill is counted from `now`.
        bucket.last = Some(now);
        if tokens >= 1.0 {
            bucket.tokens = tokens - 1.0;
            true
        } else {
            bucket.tokens = tokens;
            false
        }
    }

    /// The tokens at `now`: those at the last reservation plus the refill since, at most
    /// `burst` (Go's `advance`).
    fn advance(&self, bucket: &BucketState, now: Instant) -> f64 {
        let burst = f64::from(self.burst);
        match bucket.last {
            None => burst,
            Some(last) => {
                let elapsed = now.saturating_duration_since(last).as_secs_f64();
                (bucket.tokens + elapsed * self.qps).min(burst)
            }
        }
    }
}

/// Which requests share a token bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LimitScope {
    /// One bucket per API group/version (`/api/v1`, `/apis/apps/v1`, ...): what client-go
    /// does when the rest.Config leaves QPS unset, because every typed group/version client
    /// builds its own REST client with its own default limiter (how kubernetes/sample-controller
    /// runs: its Deployment, Event and Foo requests each get their own 5 QPS).
    #[default]
    GroupVersion,
    /// One bucket for every request of the client: client-go when QPS is set explicitly on
    /// the config a clientset is built from (one limiter shared by all its groups).
    Client,
}

impl std::str::FromStr for LimitScope {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "group-version" => Ok(LimitScope::GroupVersion),
            "client" => Ok(LimitScope::Client),
            other => Err(format!(
                "unknown limit scope {other:?}: expected \"group-version\" or \"client\""
            )),
        }
    }
}

/// Client-side limits and identity of a client: see [`client_with_options`].
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// Requests per second; `<= 0` disables limiting (counting stays on).
    pub qps: f32,
    /// Tokens saved up above the QPS rate.
    pub burst: u32,
    /// Which requests share a bucket.
    pub scope: LimitScope,
    /// `User-Agent` header sent with every request that has none (kube-rs sends none).
    pub user_agent: Option<String>,
}

impl ClientOptions {
    /// `qps`/`burst` per API group/version, no user agent.
    #[must_use]
    pub fn new(qps: f32, burst: u32) -> Self {
        ClientOptions {
            qps,
            burst,
            scope: LimitScope::default(),
            user_agent: None,
        }
    }

    /// Which requests share a bucket (default: [`LimitScope::GroupVersion`]).
    #[must_use]
    pub fn scope(mut self, scope: LimitScope) -> Self {
        self.scope = scope;
        self
    }

    /// Send `User-Agent: user_agent` (e.g. [`default_user_agent`]).
    #[must_use]
    pub fn user_agent(mut self, user_agent: impl Into<String>) -> Self {
        self.user_agent = Some(user_agent.into());
        self
    }
}

/// client-go's default user agent shape: `<program>/<version> (<os>/<arch>) kube-codegen`.
#[must_use]
pub fn default_user_agent(program: &str, version: &str) -> String {
    format!(
        "{program}/v{version} ({}/{}) kube-codegen",
        std::env::consts::OS,
        std::env::consts::ARCH
    )
}

/// Requests sent, by HTTP method and by response code, for `/metrics`.
#[derive(Debug, Default)]
pub struct RequestMetrics {
    counts: Mutex<BTreeMap<(String, String), u64>>,
    throttled: Mutex<Duration>,
}

impl RequestMetrics {
    fn record(&self, method: &str, code: &str) {
        *self
            .counts
            .lock()
            .entry((method.to_owned(), code.to_owned()))
            .or_default() += 1;
    }

    /// Total requests sent.
    pub fn total(&self) -> u64 {
        self.counts.lock().values().sum()
    }

    /// (method, code) -> count.
    pub fn counts(&self) -> BTreeMap<(String, String), u64> {
        self.counts.lock().clone()
    }

    /// Time requests spent waiting for the client-side rate limiter (summed over requests).
    pub fn throttled(&self) -> Duration {
        *self.throttled.lock()
    }

    /// Prometheus text, named like client-go's `rest_client_requests_total`.
    pub fn render_prometheus(&self) -> String {
        let mut out = String::from(
            "# HELP rest_client_requests_total Requests sent to the API server, by method and code.\n# TYPE rest_client_requests_total counter\n",
        );
        for ((method, code), n) in self.counts() {
            out +=
                &format!("rest_client_requests_total{{method=\"{method}\",code=\"{code}\"}} {n}\n");
        }
        out += "# HELP rest_client_rate_limiter_wait_seconds_total Time spent waiting for the client-side rate limiter.\n# TYPE rest_client_rate_limiter_wait_seconds_total counter\n";
        out += &format!(
            "rest_client_rate_limiter_wait_seconds_total {}\n",
            self.throttled().as_secs_f64()
        );
        out
    }
}

/// The buckets of one client, created on first use of each scope key.
#[derive(Debug)]
struct Buckets {
    qps: f64,
    burst: u32,
    scope: LimitScope,
    by_key: Mutex<HashMap<String, Arc<TokenBucket>>>,
}

impl Buckets {
    fn for_path(&self, path: &str) -> Arc<TokenBucket> {
        let key = match self.scope {
            LimitScope::Client => "",
            LimitScope::GroupVersion => group_version_of(path),
        };
        let mut by_key = self.by_key.lock();
        if let Some(bucket) = by_key.get(key) {
            return bucket.clone();
        }
        let bucket = Arc::new(TokenBucket::new(self.qps, self.burst));
        by_key.insert(key.to_owned(), bucket.clone());
        bucket
    }
}

/// The group/version part of an API path: `/api/v1/...` -> `/api/v1`,
/// `/apis/apps/v1/...` -> `/apis/apps/v1`; anything else (`/version`, `/openapi/v2`) -> `""`.
fn group_version_of(path: &str) -> &str {
    let segments = match path.strip_prefix("/api/") {
        Some(_) => 2,
        None if path.starts_with("/apis/") => 3,
        None => return "",
    };
    let end = path
        .match_indices('/')
        .nth(segments)
        .map_or(path.len(), |(i, _)| i);
    &path[..end]
}

/// The layer: rate limiting per [`ClientOptions`], request counting, `User-Agent`.
#[derive(Clone)]
pub struct ClientRateLimitLayer {
    buckets: Option<Arc<Buckets>>,
    user_agent: Option<http::HeaderValue>,
    metrics: Arc<RequestMetrics>,
}

impl ClientRateLimitLayer {
    /// The layer for `options`.
    ///
    /// # Errors
    /// Only if the user agent is not a valid header value.
    pub fn from_options(options: &ClientOptions) -> Result<Self, http::header::InvalidHeaderValue> {
        let buckets = (options.qps > 0.0).then(|| {
            Arc::new(Buckets {
                qps: f64::from(options.qps),
                burst: options.burst.max(1),
                scope: options.scope,
                by_key: Mutex::default(),
            })
        });
        let user_agent = options
            .user_agent
            .as_deref()
            .map(http::HeaderValue::from_str)
            .transpose()?;
        Ok(ClientRateLimitLayer {
            buckets,
            user_agent,
            metrics: Arc::default(),
        })
    }

    /// The request counters, shared with every service the layer makes.
    #[must_use]
    pub fn metrics(&self) -> Arc<RequestMetrics> {
        self.metrics.clone()
    }
}

impl<S> Layer<S> for ClientRateLimitLayer {
    type Service = RateLimited<S>;
    fn layer(&self, inner: S) -> Self::Service {
        RateLimited {
            inner: Arc::new(tokio::sync::Mutex::new(inner)),
            buckets: self.buckets.clone(),
            user_agent: self.user_agent.clone(),
            metrics: self.metrics.clone(),
        }
    }
}

/// The service the layer produces.
pub struct RateLimited<S> {
    /// Shared with the request futures: the bucket depends on the request's path, so the
    /// wait happens after `call`, and only then is the inner service readied and called
    /// (kube's inner stack is a `BoxService`, which can't be cloned).
    inner: Arc<tokio::sync::Mutex<S>>,
    buckets: Option<Arc<Buckets>>,
    user_agent: Option<http::HeaderValue>,
    metrics: Arc<RequestMetrics>,
}

impl<S> Clone for RateLimited<S> {
    fn clone(&self) -> Self {
        RateLimited {
            inner: self.inner.clone(),
            buckets: self.buckets.clone(),
            user_agent: self.user_agent.clone(),
            metrics: self.metrics.clone(),
        }
    }
}

impl<S, B, RB> Service<http::Request<B>> for RateLimited<S>
where
    S: Service<http::Request<B>, Response = http::Response<RB>> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Send,
    B: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        // Readiness of the inner service is awaited per request, after the token.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut req: http::Request<B>) -> Self::Future {
        let inner = self.inner.clone();
        if let Some(ua) = &self.user_agent {
            req.headers_mut()
                .entry(http::header::USER_AGENT)
                .or_insert_with(|| ua.clone());
        }
        let bucket = self.buckets.as_ref().map(|b| b.for_path(req.uri().path()));
        let method = req.method().as_str().to_owned();
        let metrics = self.metrics.clone();
        Box::pin(async move {
            if let Some(bucket) = bucket {
                let wait = bucket.reserve();
                if !wait.is_zero() {
                    tokio::time::sleep(wait).await;
                    *metrics.throttled.lock() += wait;
                }
            }
            let sent = {
                let mut inner = inner.lock().await;
                match std::future::poll_fn(|cx| inner.poll_ready(cx)).await {
                    Ok(()) => Ok(inner.call(req)),
                    Err(e) => Err(e),
                }
            };
            let result = match sent {
                Ok(response) => response.await,
                Err(e) => Err(e),
            };
            let code = match &result {
                Ok(resp) => resp.status().as_u16().to_string(),
                Err(_) => "<error>".to_owned(),
            };
            metrics.record(&method, &code);
            result
        })
    }
}

/// A client with QPS/burst limits per [`ClientOptions::scope`], request counting and an
/// optional `User-Agent`.
///
/// # Errors
/// [`kube::Error`] if the user agent is not a valid header value or the client cannot be
/// built from `config` (e.g. its TLS settings).
pub fn client_with_options(
    config: kube::Config,
    options: &ClientOptions,
) -> Result<(kube::Client, Arc<RequestMetrics>), kube::Error> {
    let layer = ClientRateLimitLayer::from_options(options)
        .map_err(|e| kube::Error::HttpError(http::Error::from(e)))?;
    let metrics = layer.metrics();
    let client = kube::client::ClientBuilder::try_from(config)?
        .with_layer(&layer)
        .build();
    Ok((client, metrics))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn bucket_allows_burst_then_qps() {
        let b = TokenBucket::new(5.0, 10);
        for _ in 0..10 {
            assert!(b.reserve().is_zero());
        }
        let wait = b.reserve();
        assert!((wait.as_secs_f64() - 0.2).abs() < 1e-6, "{wait:?}");
        // The next caller queues behind the first reservation.
        let wait = b.reserve();
        assert!((wait.as_secs_f64() - 0.4).abs() < 1e-6, "{wait:?}");
        // 400 ms later both reservations are due and spent: the next caller waits 200 ms,
        // and after a quiet second the bucket refills to its burst, no further.
        tokio::time::advance(Duration::from_millis(400)).await;
        let wait = b.reserve();
        assert!((wait.as_secs_f64() - 0.2).abs() < 1e-6, "{wait:?}");
        tokio::time::advance(Duration::from_secs(10)).await;
        for _ in 0..10 {
            assert!(b.reserve().is_zero());
        }
        assert!(!b.reserve().is_zero());
    }

    #[tokio::test(start_paused = true)]
    async fn layer_limits_per_group_version_and_sets_user_agent() {
        use tower::ServiceExt;
        let seen = Arc::new(Mutex::new(Vec::new()));
        let inner = {
            let seen = seen.clone();
            tower::service_fn(move |req: http::Request<()>| {
                let seen = seen.clone();
                async move {
                    let ua = req.headers()[http::header::USER_AGENT]
                        .to_str()
                        .unwrap()
                        .to_owned();
                    seen.lock()
                        .push((req.uri().path().to_owned(), ua, Instant::now()));
                    Ok::<_, std::convert::Infallible>(http::Response::new(()))
                }
            })
        };
        let layer = ClientRateLimitLayer::from_options(
            &ClientOptions::new(5.0, 1).user_agent("test/v1 (x/y) kube-codegen"),
        )
        .unwrap();
        let metrics = layer.metrics();
        let svc = layer.layer(inner);
        let start = Instant::now();
        let send = |path: &'static str| {
            let svc = svc.clone();
            async move {
                svc.oneshot(http::Request::get(path).body(()).unwrap())
                    .await
                    .unwrap()
            }
        };
        // Two apps/v1 requests (burst 1: the second waits 200 ms) and one core/v1 request,
        // which has its own bucket and goes at once.
        futures::join!(
            send("/apis/apps/v1/namespaces/a/deployments"),
            send("/apis/apps/v1/namespaces/a/deployments"),
            send("/api/v1/namespaces/a/events"),
        );
        let seen = seen.lock().clone();
        assert_eq!(seen.len(), 3);
        assert!(
            seen.iter()
                .all(|(_, ua, _)| ua == "test/v1 (x/y) kube-codegen")
        );
        let waited = |path: &str| -> Vec<Duration> {
            seen.iter()
                .filter(|(p, _, _)| p.starts_with(path))
                .map(|(_, _, t)| t.duration_since(start))
                .collect()
        };
        assert_eq!(waited("/api/v1"), vec![Duration::ZERO]);
        let apps = waited("/apis/apps/v1");
        assert_eq!(apps[0], Duration::ZERO);
        assert!(apps[1] >= Duration::from_millis(200), "{apps:?}");
        assert_eq!(metrics.total(), 3);
        assert!(metrics.throttled() >= Duration::from_millis(200));
    }

    #[test]
    fn group_version_of_paths() {
        assert_eq!(group_version_of("/api/v1/namespaces/a/events"), "/api/v1");
        assert_eq!(group_version_of("/api/v1"), "/api/v1");
        assert_eq!(
            group_version_of("/apis/apps/v1/namespaces/a/deployments/x"),
            "/apis/apps/v1"
        );
        assert_eq!(
            group_version_of("/apis/samplecontroller.k8s.io/v1alpha1/foos"),
            "/apis/samplecontroller.k8s.io/v1alpha1"
        );
        assert_eq!(group_version_of("/version"), "");
    }

    #[test]
    fn scopes_share_or_split_buckets() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let _guard = rt.enter();
        let buckets = |scope| Buckets {
            qps: 5.0,
            burst: 10,
            scope,
            by_key: Mutex::default(),
        };
        let per_gv = buckets(LimitScope::GroupVersion);
        let a = per_gv.for_path("/apis/apps/v1/namespaces/x/deployments");
        let b = per_gv.for_path("/api/v1/namespaces/x/events");
        let a2 = per_gv.for_path("/apis/apps/v1/deployments");
        assert!(!Arc::ptr_eq(&a, &b));
        assert!(Arc::ptr_eq(&a, &a2));
        let shared = buckets(LimitScope::Client);
        let a = shared.for_path("/apis/apps/v1/namespaces/x/deployments");
        let b = shared.for_path("/api/v1/namespaces/x/events");
        assert!(Arc::ptr_eq(&a, &b));
    }
}
