//! The webhook over real TLS: certificates made by the `openssl` command (which the test
//! suite needs anyway), a rustls client speaking raw HTTP/1.1.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::rustls;

use super::*;
use crate::conversion::{ConversionError, KindConversions};

fn convert_widget(mut o: Value, to: &str) -> Result<Value, ConversionError> {
    o["apiVersion"] = json!(format!("example.com/{to}"));
    Ok(o)
}

static KINDS: &[KindConversions] = &[KindConversions {
    group: "example.com",
    kind: "Widget",
    hub: "v2",
    versions: &["v1", "v2"],
    convert: convert_widget,
}];

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "kcg-webhook-{name}-{}-{:?}",
        std::process::id(),
        std::time::SystemTime::now()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the openssl command");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A CA (`ca.crt`) and a serving pair for 127.0.0.1 signed by it (`tls.crt`, `tls.key`).
fn certs(dir: &Path, ca: &str) {
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    if !dir.join(format!("{ca}.crt")).exists() {
        let mut a = vec!["req", "-x509"];
        a.extend(ec);
        let (key, crt, subj) = (
            format!("{ca}.key"),
            format!("{ca}.crt"),
            format!("/CN={ca}"),
        );
        a.extend(["-keyout", &key, "-out", &crt, "-days", "1", "-subj", &subj]);
        openssl(dir, &a);
    }
    let mut a = vec!["req"];
    a.extend(ec);
    a.extend([
        "-keyout",
        "tls.key",
        "-out",
        "tls.csr",
        "-subj",
        "/CN=127.0.0.1",
    ]);
    openssl(dir, &a);
    std::fs::write(dir.join("ext.cnf"), "subjectAltName=IP:127.0.0.1\n").unwrap();
    let (crt, key) = (format!("{ca}.crt"), format!("{ca}.key"));
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "tls.csr",
            "-CA",
            &crt,
            "-CAkey",
            &key,
            "-CAcreateserial",
            "-out",
            "tls.crt",
            "-days",
            "1",
            "-extfile",
            "ext.cnf",
        ],
    );
}

fn connector(ca: &Path) -> TlsConnector {
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_file_iter(ca).unwrap() {
        roots.add(c.unwrap()).unwrap();
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    TlsConnector::from(Arc::new(config))
}

use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject;

/// One request; the status code, the body and the server's leaf certificate.
async fn call(
    addr: SocketAddr,
    ca: &Path,
    method: &str,
    path: &str,
    body: &[u8],
) -> (u16, String, Vec<u8>) {
    let tcp = TcpStream::connect(addr).await.unwrap();
    let name = rustls_pki_types::ServerName::IpAddress(addr.ip().into());
    let mut tls = connector(ca).connect(name, tcp).await.unwrap();
    let leaf = tls.get_ref().1.peer_certificates().unwrap()[0].to_vec();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    tls.write_all(head.as_bytes()).await.unwrap();
    tls.write_all(body).await.unwrap();
    let mut out = vec![];
    tls.read_to_end(&mut out).await.unwrap();
    let text = String::from_utf8_lossy(&out).into_owned();
    let code = text[9..12].parse().unwrap();
    let body = text.split_once("\r\n\r\n").unwrap().1.to_owned();
    (code, body, leaf)
}

fn fast() -> Options {
    Options {
        reload_interval: Duration::from_millis(50),
        handshake_timeout: Duration::from_secs(2),
        shutdown_grace: Duration::from_secs(5),
    }
}

#[tokio::test]
async fn serves_reviews_metrics_and_failures_and_shuts_down() {
    let dir = scratch("serve");
    certs(&dir, "ca");
    let server = Server::bind_with(
        "127.0.0.1:0".parse().unwrap(),
        TlsFiles::in_dir(&dir),
        Converter::new(KINDS),
        fast(),
    )
    .await
    .unwrap();
    let addr = server.local_addr();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(server.run(async {
        let _ = stopped.await;
    }));
    let ca = dir.join("ca.crt");

    let review = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
        "request": {"uid": "u", "desiredAPIVersion": "example.com/v2", "objects": [
            {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "a"}}
        ]},
    });
    let (code, body, _) = call(addr, &ca, "POST", "/convert", review.to_string().as_bytes()).await;
    assert_eq!(code, 200);
    let answer: ConversionReview = serde_json::from_str(&body).unwrap();
    assert!(answer.succeeded(), "{body}");
    assert_eq!(
        answer.response.unwrap().converted_objects[0]["apiVersion"],
        "example.com/v2"
    );

    // Garbage and an unknown version: a failed review with a message, not an HTTP error.
    let (code, body, _) = call(addr, &ca, "POST", "/convert", b"\x00\x01 not json").await;
    assert_eq!(code, 200);
    assert!(
        body.contains("\"status\":\"Failure\"") && body.contains("malformed ConversionReview"),
        "{body}"
    );
    let mut unknown = review.clone();
    unknown["request"]["desiredAPIVersion"] = json!("example.com/v7");
    let (_, body, _) = call(
        addr,
        &ca,
        "POST",
        "/convert",
        unknown.to_string().as_bytes(),
    )
    .await;
    assert!(
        body.contains("Widget.example.com has no version v7"),
        "{body}"
    );

    let (code, _, _) = call(addr, &ca, "GET", "/convert", b"").await;
    assert_eq!(code, 405);
    let (code, _, _) = call(addr, &ca, "GET", "/nope", b"").await;
    assert_eq!(code, 404);
    let (code, metrics, _) = call(addr, &ca, "GET", "/metrics", b"").await;
    assert_eq!(code, 200);
    assert!(
        metrics.contains(
            "controller_runtime_webhook_requests_total{code=\"200\",path=\"/convert\"} 1"
        ),
        "{metrics}"
    );
    assert!(
        metrics.contains(
            "controller_runtime_webhook_requests_total{code=\"500\",path=\"/convert\"} 2"
        ),
        "{metrics}"
    );
    assert!(
        metrics.contains("controller_runtime_webhook_latency_seconds_count{path=\"/convert\"} 3")
    );

    // A client that connects and says nothing is dropped after the handshake deadline,
    // and does not hold up shutdown beyond it.
    let _silent = TcpStream::connect(addr).await.unwrap();
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .expect("shutdown within the grace period")
        .unwrap()
        .unwrap();
    assert!(
        TcpStream::connect(addr).await.is_err(),
        "no longer listening"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn a_renewed_certificate_is_served_without_a_restart() {
    let dir = scratch("reload");
    certs(&dir, "ca");
    let server = Server::bind_with(
        "127.0.0.1:0".parse().unwrap(),
        TlsFiles::in_dir(&dir),
        Converter::new(KINDS),
        fast(),
    )
    .await
    .unwrap();
    let addr = server.local_addr();
    let running = tokio::spawn(server.run(std::future::pending()));
    let ca = dir.join("ca.crt");
    let (_, _, first) = call(addr, &ca, "GET", "/healthz", b"").await;
    // mtimes have a coarse grain on some filesystems.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    certs(&dir, "ca");
    let mut renewed = false;
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let (_, _, leaf) = call(addr, &ca, "GET", "/healthz", b"").await;
        if leaf != first {
            renewed = true;
            break;
        }
    }
    assert!(renewed, "the renewed certificate was not served");
    // A broken renewal keeps the last good certificate.
    std::fs::write(dir.join("tls.crt"), "garbage").unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (code, _, _) = call(addr, &ca, "GET", "/healthz", b"").await;
    assert_eq!(code, 200);
    running.abort();
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn tls_misconfiguration_fails_at_startup_naming_the_file() {
    let dir = scratch("bad");
    let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let err = |r: Result<Server, WebhookError>| match r {
        Err(e) => e.to_string(),
        Ok(_) => panic!("must not start"),
    };
    let missing = err(Server::bind(addr, TlsFiles::in_dir(&dir), Converter::new(KINDS)).await);
    assert!(
        missing.contains("cannot read certificate") && missing.contains("tls.crt"),
        "{missing}"
    );

    std::fs::write(dir.join("tls.crt"), "not pem").unwrap();
    std::fs::write(dir.join("tls.key"), "not pem").unwrap();
    let empty = err(Server::bind(addr, TlsFiles::in_dir(&dir), Converter::new(KINDS)).await);
    assert!(
        empty.contains("no certificate in") && empty.contains("tls.crt"),
        "{empty}"
    );

    certs(&dir, "ca");
    // The CA's key is not the serving certificate's.
    let files = TlsFiles {
        cert: dir.join("tls.crt"),
        key: dir.join("ca.key"),
    };
    let mismatch = err(Server::bind(addr, files, Converter::new(KINDS)).await);
    assert!(
        mismatch.contains("does not belong to the certificate"),
        "{mismatch}"
    );
    let _ = std::fs::remove_dir_all(dir);
}
