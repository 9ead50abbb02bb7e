//! The webhook server: `ConversionReview` (apiextensions.k8s.io/v1) over HTTPS, one
//! handler for every kind of a [`Converter`] (the generated `conversion::KINDS` of one or
//! more API crates), as controller-runtime's webhook server serves `/convert`; and, with
//! feature `admission`, typed defaulting and validating admission webhooks on paths of
//! their own (`admission`, `Builder::defaulter`, `Builder::validator`), on the same port
//! with the same TLS, deadlines, limits, metrics and shutdown.
//!
//! - TLS from PEM files ([`TlsFiles`]), re-read when they change; a missing or mismatched
//!   certificate or key fails [`Server::bind`] with a message naming the file.
//! - `POST /convert`: the review. Whatever the body, the answer is a `ConversionReview`:
//!   a malformed review, an unknown kind or version fail with a message (never a panic, never
//!   a hang: TLS handshakes, request headers and request bodies have deadlines, bodies a
//!   size limit; a body that stops arriving is answered `408` and its connection closed).
//! - Each admission path (`POST`): an `AdmissionReview` answered by its defaulter or
//!   validator, with the same guarantees.
//! - `GET /metrics`: responses by path and HTTP status, reviews by outcome, and review
//!   latency by path ([`Metrics`]); `GET /healthz`.
//! - [`Server::run`] stops accepting when its shutdown future completes and waits (up to
//!   a grace period) for the reviews in flight; a stalled body holds it up no longer than
//!   the body deadline.
//!
//! ```no_run
//! # async fn f() -> Result<(), kube_codegen_runtime::webhook::WebhookError> {
//! use kube_codegen_runtime::conversion::{Converter, KindConversions};
//! use kube_codegen_runtime::webhook::{Server, TlsFiles};
//! # static KINDS: &[KindConversions] = &[];
//! let server = Server::bind(
//!     "0.0.0.0:9443".parse().unwrap(),
//!     TlsFiles::in_dir("/tmp/k8s-webhook-server/serving-certs"),
//!     Converter::new(KINDS), // e.g. my_api::generated::conversion::KINDS
//! )
//! .await?;
//! server.run(async { tokio::signal::ctrl_c().await.ok(); }).await
//! # }
//! ```

#[cfg(feature = "admission")]
pub mod admission;
mod metrics;
mod tls;

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls;

use crate::conversion::{ConversionReview, Converter};

pub use metrics::{AdmissionOutcome, Metrics};
pub use tls::TlsFiles;

/// The path the API server is pointed at (controller-runtime's).
pub const CONVERT_PATH: &str = "/convert";

/// The largest review body read: the API server sends at most a list's worth of objects.
const MAX_BODY: usize = 64 << 20;

/// Why the webhook cannot start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    /// The certificate or key cannot be used.
    #[error("webhook TLS: {0}")]
    Tls(String),
    /// A path cannot be served: registered twice, one of the server's own (`/convert`,
    /// `/metrics`, `/healthz`, `/readyz`), or not a plain absolute path.
    #[error("webhook path {path:?}: {reason}")]
    Path {
        /// The path.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The address cannot be listened on.
    #[error("webhook cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The OS error.
        source: std::io::Error,
    },
}

/// Timings of a [`Server`].
#[derive(Debug, Clone)]
pub struct Options {
    /// How often the certificate files are checked for changes.
    pub reload_interval: Duration,
    /// How long a client may take over its TLS handshake and request headers.
    pub handshake_timeout: Duration,
    /// How long a client may take to send a request's body once its headers are in. The
    /// API server sends a review in one go; a body that stops arriving (a slowloris
    /// client, a dead peer) is answered `408 Request Timeout` and its connection closed,
    /// so it holds neither a connection nor [`Server::run`]'s shutdown past this.
    pub body_timeout: Duration,
    /// How long [`Server::run`] waits for reviews in flight after shutdown begins.
    pub shutdown_grace: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            reload_interval: Duration::from_secs(10),
            handshake_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(10),
            shutdown_grace: Duration::from_secs(30),
        }
    }
}

/// A bound webhook server, ready to [`run`](Server::run).
pub struct Server {
    listener: TcpListener,
    acceptor: TlsAcceptor,
    cert: Arc<tls::ReloadingCert>,
    routes: Arc<Routes>,
    metrics: Arc<Metrics>,
    options: Options,
}

/// What the server answers reviews with, by path.
#[derive(Default)]
struct Routes {
    converter: Option<Converter>,
    #[cfg(feature = "admission")]
    admission: std::collections::BTreeMap<String, Box<dyn admission::Route>>,
}

impl Routes {
    /// The review paths served.
    fn paths(&self) -> Vec<String> {
        let mut paths = vec![];
        if self.converter.is_some() {
            paths.push(CONVERT_PATH.to_owned());
        }
        #[cfg(feature = "admission")]
        paths.extend(self.admission.keys().cloned());
        paths
    }

    fn serves(&self, path: &str) -> bool {
        #[cfg(feature = "admission")]
        if self.admission.contains_key(path) {
            return true;
        }
        path == CONVERT_PATH && self.converter.is_some()
    }
}

/// What a [`Server`] serves, put together before it binds: the conversion webhook and,
/// with feature `admission`, defaulters and validators by path. controller-runtime's
/// `ctrl.NewWebhookManagedBy(mgr, &T{}).WithDefaulter(...).WithValidator(...)`, with the
/// paths the `+kubebuilder:webhook` markers give.
#[must_use = "a builder serves nothing until bound"]
#[derive(Default)]
pub struct Builder {
    routes: Routes,
    /// Paths registered wrongly, reported by [`Builder::bind`].
    bad_paths: Vec<WebhookError>,
    options: Options,
}

impl Builder {
    /// Serves `POST /convert` with `converter`.
    pub fn convert(mut self, converter: Converter) -> Self {
        self.routes.converter = Some(converter);
        self
    }

    /// Other timings than the default [`Options`].
    pub fn options(mut self, options: Options) -> Self {
        self.options = options;
        self
    }

    /// Serves `POST path` as a mutating admission webhook for `T` with `defaulter` (the
    /// path of the kind's `+kubebuilder:webhook:mutating=true,path=...` marker).
    #[cfg(feature = "admission")]
    pub fn defaulter<T: admission::Kind>(
        self,
        path: impl Into<String>,
        defaulter: impl admission::Defaulter<T>,
    ) -> Self {
        let route = admission::Typed::<T, _>::new(admission::Defaulting(defaulter));
        self.route(path.into(), Box::new(route))
    }

    /// Serves `POST path` as a validating admission webhook for `T` with `validator` (the
    /// path of the kind's `+kubebuilder:webhook:mutating=false,path=...` marker).
    #[cfg(feature = "admission")]
    pub fn validator<T: admission::Kind>(
        self,
        path: impl Into<String>,
        validator: impl admission::Validator<T>,
    ) -> Self {
        let route = admission::Typed::<T, _>::new(admission::Validating(validator));
        self.route(path.into(), Box::new(route))
    }

    /// Registers `route` at `path`, or remembers why it cannot be (reported by `bind`, so
    /// the chain of registrations stays infallible).
    #[cfg(feature = "admission")]
    fn route(mut self, path: String, route: Box<dyn admission::Route>) -> Self {
        // Plain paths only: they go into metric labels unescaped, and the API server's
        // `service.path`/`url` cannot carry more.
        let reason = if !path.starts_with('/')
            || !path
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"/-_.~".contains(&b))
        {
            Some("must be an absolute path of letters, digits and `/-_.~`")
        } else if [CONVERT_PATH, "/metrics", "/healthz", "/readyz"].contains(&path.as_str()) {
            Some("is one of the server's own paths")
        } else if self.routes.admission.contains_key(&path) {
            Some("is registered twice")
        } else {
            None
        };
        match reason {
            Some(reason) => self.bad_paths.push(WebhookError::Path {
                path,
                reason: reason.to_owned(),
            }),
            None => {
                self.routes.admission.insert(path, route);
            }
        }
        self
    }

    /// Reads the certificate and key and listens on `addr`.
    ///
    /// # Errors
    ///
    /// [`WebhookError::Path`] for the first path registered wrongly,
    /// [`WebhookError::Tls`] naming the file at fault (missing, not PEM, a key that is not
    /// the certificate's), [`WebhookError::Bind`] when the address is taken.
    pub async fn bind(self, addr: SocketAddr, tls: TlsFiles) -> Result<Server, WebhookError> {
        let Builder {
            routes,
            bad_paths,
            options,
        } = self;
        if let Some(e) = bad_paths.into_iter().next() {
            return Err(e);
        }
        let cert = Arc::new(tls::ReloadingCert::new(tls)?);
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| WebhookError::Tls(e.to_string()))?
            .with_no_client_auth()
            .with_cert_resolver(cert.clone());
        // HTTP/1.1 only: the API server's webhook client speaks it, and it is all we serve.
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| WebhookError::Bind { addr, source })?;
        Ok(Server {
            listener,
            acceptor: TlsAcceptor::from(Arc::new(config)),
            cert,
            metrics: Arc::new(Metrics::serving(routes.paths())),
            routes: Arc::new(routes),
            options,
        })
    }
}

impl Server {
    /// A server to put together: conversion, admission webhooks, options.
    pub fn builder() -> Builder {
        Builder::default()
    }

    /// Reads the certificate and key and listens on `addr`, serving conversion only, with
    /// default [`Options`].
    ///
    /// # Errors
    ///
    /// [`WebhookError::Tls`] naming the file at fault (missing, not PEM, a key that is not
    /// the certificate's), [`WebhookError::Bind`] when the address is taken.
    pub async fn bind(
        addr: SocketAddr,
        tls: TlsFiles,
        converter: Converter,
    ) -> Result<Self, WebhookError> {
        Self::builder().convert(converter).bind(addr, tls).await
    }

    /// [`Server::bind`] with other timings.
    ///
    /// # Errors
    ///
    /// As [`Server::bind`].
    pub async fn bind_with(
        addr: SocketAddr,
        tls: TlsFiles,
        converter: Converter,
        options: Options,
    ) -> Result<Self, WebhookError> {
        Self::builder()
            .convert(converter)
            .options(options)
            .bind(addr, tls)
            .await
    }

    /// The address listened on (with the port the OS chose for port 0).
    ///
    /// # Panics
    ///
    /// Never for a bound listener.
    #[must_use]
    pub fn local_addr(&self) -> SocketAddr {
        self.listener
            .local_addr()
            .expect("a bound listener has an address")
    }

    /// The webhook's metrics, shared with the running server.
    #[must_use]
    pub fn metrics(&self) -> Arc<Metrics> {
        self.metrics.clone()
    }

    /// Serves until `shutdown` completes, then stops accepting and waits for the reviews
    /// in flight (at most [`Options::shutdown_grace`]).
    ///
    /// # Errors
    ///
    /// None today; the result leaves room for fatal listener errors.
    pub async fn run(self, shutdown: impl Future<Output = ()>) -> Result<(), WebhookError> {
        let Server {
            listener,
            acceptor,
            cert,
            routes,
            metrics,
            options,
        } = self;
        let graceful = GracefulShutdown::new();
        let mut reload = tokio::time::interval(options.reload_interval);
        reload.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tokio::pin!(shutdown);
        loop {
            tokio::select! {
                accepted = listener.accept() => {
                    let tcp = match accepted {
                        Ok((tcp, _)) => tcp,
                        Err(e) => {
                            // Out of file descriptors and the like: wait, do not spin.
                            tracing::warn!(error = %e, "webhook: accept failed");
                            tokio::time::sleep(Duration::from_millis(100)).await;
                            continue;
                        }
                    };
                    let acceptor = acceptor.clone();
                    let routes = routes.clone();
                    let metrics = metrics.clone();
                    let watcher = graceful.watcher();
                    let timeout = options.handshake_timeout;
                    let body_timeout = options.body_timeout;
                    // A review is one small write each way: Nagle's algorithm holding the
                    // last segment of a response until the client's delayed ACK costs
                    // ~40 ms a review (the TLS 1.3 session tickets make the first one wait).
                    if let Err(e) = tcp.set_nodelay(true) {
                        tracing::debug!(error = %e, "webhook: cannot set TCP_NODELAY");
                    }
                    // The handshake runs in the connection's own task, so a slow or silent
                    // client holds up nobody else.
                    tokio::spawn(async move {
                        let stream = match tokio::time::timeout(timeout, acceptor.accept(tcp)).await {
                            Ok(Ok(s)) => s,
                            Ok(Err(e)) => {
                                tracing::debug!(error = %e, "webhook: TLS handshake failed");
                                return;
                            }
                            Err(_) => return,
                        };
                        let service = service_fn(move |req| {
                            let routes = routes.clone();
                            let metrics = metrics.clone();
                            async move {
                                Ok::<_, Infallible>(handle(req, &routes, &metrics, body_timeout).await)
                            }
                        });
                        let conn = http1::Builder::new()
                            .timer(TokioTimer::new())
                            .header_read_timeout(timeout)
                            .serve_connection(TokioIo::new(stream), service);
                        let _ = watcher.watch(conn).await;
                    });
                }
                _ = reload.tick() => match cert.reload_if_changed() {
                    Ok(true) => tracing::info!("webhook: serving certificate reloaded"),
                    Ok(false) => {}
                    Err(e) => tracing::error!(error = %e, "webhook: keeping the old certificate"),
                },
                () = &mut shutdown => break,
            }
        }
        drop(listener);
        if tokio::time::timeout(options.shutdown_grace, graceful.shutdown())
            .await
            .is_err()
        {
            tracing::warn!("webhook: reviews still in flight after the grace period");
        }
        Ok(())
    }
}

fn respond(
    status: StatusCode,
    content_type: &str,
    body: impl Into<Bytes>,
) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_str(content_type).expect("static content type"),
    );
    r
}

fn review_response(review: &ConversionReview) -> Response<Full<Bytes>> {
    // Our own types always serialize; should that ever fail, the client still gets JSON.
    let body = serde_json::to_vec(review).unwrap_or_else(|e| {
        format!(r#"{{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","response":{{"uid":"","result":{{"status":"Failure","message":"cannot encode the response: {e}"}}}}}}"#).into_bytes()
    });
    respond(StatusCode::OK, "application/json", body)
}

async fn handle(
    req: Request<Incoming>,
    routes: &Routes,
    metrics: &Metrics,
    body_timeout: Duration,
) -> Response<Full<Bytes>> {
    let path = req.uri().path().to_owned();
    match (req.method(), path.as_str()) {
        (&Method::POST, CONVERT_PATH) if routes.converter.is_some() => {
            let converter = routes.converter.as_ref().expect("checked by the guard");
            let response = convert(req, converter, metrics, body_timeout).await;
            metrics.responded(CONVERT_PATH, response.status());
            response
        }
        #[cfg(feature = "admission")]
        (&Method::POST, p) if routes.admission.contains_key(p) => {
            let route = &routes.admission[p];
            let response = admit(req, p, route.as_ref(), metrics, body_timeout).await;
            metrics.responded(p, response.status());
            response
        }
        (&Method::GET, "/metrics") => respond(
            StatusCode::OK,
            "text/plain; version=0.0.4",
            metrics.render_prometheus(),
        ),
        (&Method::GET, "/healthz" | "/readyz") => respond(StatusCode::OK, "text/plain", "ok"),
        (_, p) if routes.serves(p) => {
            let response = respond(
                StatusCode::METHOD_NOT_ALLOWED,
                "text/plain",
                "POST a review",
            );
            metrics.responded(p, response.status());
            response
        }
        _ => respond(StatusCode::NOT_FOUND, "text/plain", "not found"),
    }
}

/// A review's body, read within `body_timeout` and [`MAX_BODY`]: `Err(Ok(message))` when
/// it cannot be read (too large, a broken connection), for the review's failure answer;
/// `Err(Err(response))` when it did not arrive in time, the `408` to send.
async fn read_body(
    req: Request<Incoming>,
    body_timeout: Duration,
) -> Result<Bytes, Result<String, Response<Full<Bytes>>>> {
    let read = Limited::new(req.into_body(), MAX_BODY).collect();
    match tokio::time::timeout(body_timeout, read).await {
        Ok(Ok(b)) => Ok(b.to_bytes()),
        Ok(Err(e)) => Err(Ok(e.to_string())),
        Err(_) => {
            // The rest of the body is not coming: answer and close, rather than wait on
            // the client (the connection cannot be reused with half a body unread).
            let mut r = respond(
                StatusCode::REQUEST_TIMEOUT,
                "text/plain",
                format!(
                    "the request body did not arrive within {}s",
                    body_timeout.as_secs_f64()
                ),
            );
            r.headers_mut().insert(
                header::CONNECTION,
                header::HeaderValue::from_static("close"),
            );
            Err(Err(r))
        }
    }
}

/// `POST /convert`: the body read within `body_timeout`, then the review.
async fn convert(
    req: Request<Incoming>,
    converter: &Converter,
    metrics: &Metrics,
    body_timeout: Duration,
) -> Response<Full<Bytes>> {
    let body = match read_body(req, body_timeout).await {
        Ok(body) => body,
        Err(Ok(e)) => {
            let review = ConversionReview::failed(
                String::new(),
                format!("cannot read the ConversionReview: {e}"),
            );
            metrics.reviewed(None, false, 0);
            return review_response(&review);
        }
        Err(Err(timed_out)) => return timed_out,
    };
    // Latency is the review's own: from the whole body in hand to the answer, so a slow
    // or stalled client does not show up as slow conversion.
    let start = Instant::now();
    let review = converter.review(&body);
    let objects = review
        .response
        .as_ref()
        .map_or(0, |r| r.converted_objects.len());
    metrics.reviewed(Some(start.elapsed()), review.succeeded(), objects);
    review_response(&review)
}

/// `POST` to an admission path: the body read as [`convert`] reads it, then the review.
#[cfg(feature = "admission")]
async fn admit(
    req: Request<Incoming>,
    path: &str,
    route: &dyn admission::Route,
    metrics: &Metrics,
    body_timeout: Duration,
) -> Response<Full<Bytes>> {
    let body = match read_body(req, body_timeout).await {
        Ok(body) => {
            let start = Instant::now();
            let (answer, outcome) = admission::review(route, &body).await;
            metrics.admitted(path, Some(start.elapsed()), outcome);
            answer
        }
        Err(Ok(e)) => {
            metrics.admitted(path, None, AdmissionOutcome::Errored);
            admission::refused(
                String::new(),
                format!("cannot read the AdmissionReview: {e}"),
            )
        }
        Err(Err(timed_out)) => return timed_out,
    };
    respond(StatusCode::OK, "application/json", body)
}

#[cfg(test)]
mod tests;
