//! The manager's plain-HTTP endpoints, as controller-runtime's manager serves them on
//! listeners of their own: `/metrics` on `--metrics-bind-address` and `/healthz`, `/readyz`
//! on `--health-probe-bind-address`. Two fixed routes answered with text do not need a web
//! framework: [`serve`] reads a request line and answers it, one request a connection.
//!
//! ```no_run
//! # async fn f() -> std::io::Result<()> {
//! use std::sync::Arc;
//! use kube_codegen_runtime::endpoints::{self, Routes};
//! let health: Routes = Arc::new(|path: &str| match path {
//!     "/healthz" | "/readyz" => Some((200, "ok\n".into())),
//!     _ => None,
//! });
//! if let Some(addr) = endpoints::parse_bind_address(":8081").unwrap() {
//!     endpoints::serve(addr, health, std::future::pending()).await?;
//! }
//! # Ok(())
//! # }
//! ```

use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// Answers a path with (status code, body), or `None` for `404`.
pub type Routes = Arc<dyn Fn(&str) -> Option<(u16, String)> + Send + Sync>;

/// A bind address as controller-runtime's flags take it: `"0"` turns the listener off
/// (`None`), `":8081"` is every interface, otherwise `host:port` (`127.0.0.1:8080`,
/// `[::1]:8080`).
///
/// # Errors
///
/// The text is none of these, with what was expected.
pub fn parse_bind_address(text: &str) -> Result<Option<SocketAddr>, String> {
    if text == "0" {
        return Ok(None);
    }
    if let Some(port) = text.strip_prefix(':') {
        return port
            .parse::<u16>()
            .map(|p| Some(SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), p)))
            .map_err(|e| format!("{text:?}: the port after ':' {e}"));
    }
    text.parse::<SocketAddr>().map(Some).map_err(|e| {
        format!("{text:?}: {e} (expected host:port, :port for every interface, or 0 for off)")
    })
}

/// Binds `addr` and serves `routes` until `shutdown` resolves.
///
/// # Errors
///
/// The address cannot be bound, or accepting fails.
pub async fn serve(
    addr: SocketAddr,
    routes: Routes,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let listener = TcpListener::bind(addr).await?;
    serve_on(listener, routes, shutdown).await
}

/// [`serve`] on a listener already bound (so a caller can report a port the OS chose).
///
/// # Errors
///
/// Accepting fails.
pub async fn serve_on(
    listener: TcpListener,
    routes: Routes,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    tracing::info!(addr = ?listener.local_addr().ok(), "serving http");
    tokio::pin!(shutdown);
    loop {
        let (mut stream, _) = tokio::select! {
            accepted = listener.accept() => accepted?,
            () = &mut shutdown => return Ok(()),
        };
        let routes = routes.clone();
        tokio::spawn(async move {
            let mut buf = vec![0u8; 4096];
            let mut len = 0;
            while len < buf.len() {
                match stream.read(&mut buf[len..]).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => len += n,
                }
                if buf[..len].windows(4).any(|w| w == b"\r\n\r\n") {
                    break;
                }
            }
            let request = String::from_utf8_lossy(&buf[..len]);
            let path = request.split_whitespace().nth(1).unwrap_or("/");
            let (code, body) = routes(path).unwrap_or((404, "not found\n".into()));
            let reason = match code {
                200 => "OK",
                404 => "Not Found",
                _ => "Service Unavailable",
            };
            let response = format!(
                "HTTP/1.1 {code} {reason}\r\ncontent-type: text/plain; version=0.0.4\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(response.as_bytes()).await;
            let _ = stream.shutdown().await;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bind_addresses_as_controller_runtime_takes_them() {
        assert_eq!(parse_bind_address("0"), Ok(None));
        assert_eq!(
            parse_bind_address(":8081"),
            Ok(Some("0.0.0.0:8081".parse().unwrap()))
        );
        assert_eq!(
            parse_bind_address("127.0.0.1:8080"),
            Ok(Some("127.0.0.1:8080".parse().unwrap()))
        );
        assert_eq!(
            parse_bind_address("[::1]:0"),
            Ok(Some("[::1]:0".parse().unwrap()))
        );
        for bad in ["", ":", ":http", "localhost", "1.2.3.4", ":70000"] {
            assert!(parse_bind_address(bad).is_err(), "{bad:?}");
        }
    }

    #[tokio::test]
    async fn answers_routes_and_404() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let routes: Routes = Arc::new(|p: &str| (p == "/healthz").then(|| (200, "ok\n".into())));
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(serve_on(listener, routes, async move {
            let _ = rx.await;
        }));
        let get = |path: &'static str| async move {
            let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
            s.write_all(format!("GET {path} HTTP/1.1\r\nhost: x\r\n\r\n").as_bytes())
                .await
                .unwrap();
            let mut out = String::new();
            s.read_to_string(&mut out).await.unwrap();
            out
        };
        let ok = get("/healthz").await;
        assert!(
            ok.starts_with("HTTP/1.1 200 OK\r\n") && ok.ends_with("\r\n\r\nok\n"),
            "{ok}"
        );
        assert!(get("/nope").await.starts_with("HTTP/1.1 404 "));
        tx.send(()).unwrap();
        server.await.unwrap().unwrap();
    }
}
