//! Client-side QPS/burst limiting and request counting, as client-go's rest client has
//! (`--kube-api-qps`, `--kube-api-burst`) and kube-rs lacks: a tower layer on the client.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::time::{Instant, Sleep};
use tower::{Layer, Service};

/// A token bucket: `qps` tokens a second, at most `burst` saved up.
#[derive(Debug)]
struct Bucket {
    qps: f64,
    burst: f64,
    tokens: f64,
    last: Instant,
}

impl Bucket {
    /// Take a token now, or say how long until one is available.
    fn take(&mut self) -> Result<(), Duration> {
        let now = Instant::now();
        self.tokens =
            (self.tokens + now.duration_since(self.last).as_secs_f64() * self.qps).min(self.burst);
        self.last = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - self.tokens) / self.qps))
        }
    }
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

    /// Time requests spent waiting for the client-side rate limiter.
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

/// The layer: `qps <= 0` disables limiting (counting stays on).
#[derive(Clone)]
pub struct ClientRateLimitLayer {
    bucket: Option<Arc<Mutex<Bucket>>>,
    metrics: Arc<RequestMetrics>,
}

impl ClientRateLimitLayer {
    pub fn new(qps: f32, burst: u32) -> Self {
        let bucket = (qps > 0.0).then(|| {
            let burst = f64::from(burst.max(1));
            Arc::new(Mutex::new(Bucket {
                qps: f64::from(qps),
                burst,
                tokens: burst,
                last: Instant::now(),
            }))
        });
        ClientRateLimitLayer {
            bucket,
            metrics: Arc::default(),
        }
    }

    pub fn metrics(&self) -> Arc<RequestMetrics> {
        self.metrics.clone()
    }
}

impl<S> Layer<S> for ClientRateLimitLayer {
    type Service = RateLimited<S>;
    fn layer(&self, inner: S) -> Self::Service {
        RateLimited {
            inner,
            bucket: self.bucket.clone(),
            metrics: self.metrics.clone(),
            sleep: None,
            waiting_since: None,
        }
    }
}

/// The service the layer produces.
pub struct RateLimited<S> {
    inner: S,
    bucket: Option<Arc<Mutex<Bucket>>>,
    metrics: Arc<RequestMetrics>,
    sleep: Option<Pin<Box<Sleep>>>,
    waiting_since: Option<Instant>,
}

impl<S, B, RB> Service<http::Request<B>> for RateLimited<S>
where
    S: Service<http::Request<B>, Response = http::Response<RB>>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        // Wait for a token before saying we are ready: that is where requests queue up.
        if let Some(bucket) = &self.bucket {
            loop {
                if let Some(sleep) = &mut self.sleep {
                    ready!(sleep.as_mut().poll(cx));
                    self.sleep = None;
                }
                match bucket.lock().take() {
                    Ok(()) => break,
                    Err(wait) => {
                        self.waiting_since.get_or_insert_with(Instant::now);
                        self.sleep = Some(Box::pin(tokio::time::sleep(wait)));
                    }
                }
            }
            if let Some(since) = self.waiting_since.take() {
                *self.metrics.throttled.lock() += since.elapsed();
            }
        }
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        let method = req.method().as_str().to_owned();
        let metrics = self.metrics.clone();
        let fut = self.inner.call(req);
        Box::pin(async move {
            let result = fut.await;
            let code = match &result {
                Ok(resp) => resp.status().as_u16().to_string(),
                Err(_) => "<error>".to_owned(),
            };
            metrics.record(&method, &code);
            result
        })
    }
}

/// A client with client-go-style QPS/burst limits and request counting.
pub fn client_with_limits(
    config: kube::Config,
    qps: f32,
    burst: u32,
) -> Result<(kube::Client, Arc<RequestMetrics>), kube::Error> {
    let layer = ClientRateLimitLayer::new(qps, burst);
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
        let mut b = Bucket {
            qps: 5.0,
            burst: 10.0,
            tokens: 10.0,
            last: Instant::now(),
        };
        for _ in 0..10 {
            assert!(b.take().is_ok());
        }
        let wait = b.take().unwrap_err();
        assert!((wait.as_secs_f64() - 0.2).abs() < 1e-6, "{wait:?}");
        tokio::time::advance(Duration::from_millis(200)).await;
        assert!(b.take().is_ok());
        assert!(b.take().is_err());
    }
}
