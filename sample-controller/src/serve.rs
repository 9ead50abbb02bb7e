//! A minimal HTTP/1.1 server for /metrics, /healthz and /readyz: two fixed routes do not
//! need a web framework.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// Answers a path with (status code, body), or None for 404.
pub type Routes = Arc<dyn Fn(&str) -> Option<(u16, String)> + Send + Sync>;

/// Serve until `shutdown` resolves.
pub async fn serve(
    addr: SocketAddr,
    routes: Routes,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let listener = TcpListener::bind(addr).await?;
    tracing::info!(%addr, "serving http");
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
