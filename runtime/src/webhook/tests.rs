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
    // Unique per process and call; a plain number, not `SystemTime`'s Debug form (spaces
    // and braces in a path).
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let dir =
        std::env::temp_dir().join(format!("kcg-webhook-{name}-{}-{nanos}", std::process::id()));
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
        body_timeout: Duration::from_secs(2),
        shutdown_grace: Duration::from_secs(5),
    }
}

/// A server on a port of its own with a fresh CA and serving pair in a scratch directory.
async fn serve(name: &str, options: Options) -> (PathBuf, Server) {
    let dir = scratch(name);
    certs(&dir, "ca");
    let server = Server::bind_with(
        "127.0.0.1:0".parse().unwrap(),
        TlsFiles::in_dir(&dir),
        Converter::new(KINDS),
        options,
    )
    .await
    .unwrap();
    (dir, server)
}

#[tokio::test]
async fn serves_reviews_metrics_and_failures_and_shuts_down() {
    let (dir, server) = serve("serve", fast()).await;
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
    // Requests by the status actually sent: the failed reviews went out as 200s.
    for line in [
        "controller_runtime_webhook_requests_total{code=\"200\",path=\"/convert\"} 3",
        "controller_runtime_webhook_requests_total{code=\"405\",path=\"/convert\"} 1",
        "kube_codegen_conversion_reviews_total{result=\"success\"} 1",
        "kube_codegen_conversion_reviews_total{result=\"failure\"} 2",
        "controller_runtime_webhook_latency_seconds_count{path=\"/convert\"} 3",
    ] {
        assert!(metrics.contains(line), "{line} in {metrics}");
    }
    assert!(!metrics.contains("code=\"500\""), "{metrics}");

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
    let (dir, server) = serve("reload", fast()).await;
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

/// A TLS connection that has sent a review's headers and one byte of its body, and no more.
async fn stalled(addr: SocketAddr, ca: &Path) -> tokio_rustls::client::TlsStream<TcpStream> {
    let tcp = TcpStream::connect(addr).await.unwrap();
    let name = rustls_pki_types::ServerName::IpAddress(addr.ip().into());
    let mut tls = connector(ca).connect(name, tcp).await.unwrap();
    tls.write_all(
        b"POST /convert HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{",
    )
    .await
    .unwrap();
    tls.flush().await.unwrap();
    tls
}

/// What the server sends on a stalled connection until it closes it (`None`: still open
/// after `bound`, a hang guard far above the body deadline).
async fn until_closed(
    mut tls: tokio_rustls::client::TlsStream<TcpStream>,
    bound: Duration,
) -> Option<String> {
    let mut out = vec![];
    match tokio::time::timeout(bound, tls.read_to_end(&mut out)).await {
        // A reset after the answer is a close too.
        Ok(_) => Some(String::from_utf8_lossy(&out).into_owned()),
        Err(_) => None,
    }
}

/// Slowloris: 50 connections send their headers and one byte of body. Each is answered
/// `408` and closed at the body deadline, counted as a 408 and not as a review or in the
/// latency; 50 more stalled when shutdown begins hold it up no longer than that deadline
/// (the grace period is a minute). Before bodies had a deadline every connection stayed
/// open, and shutdown waited out the whole grace period.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_stops_arriving_is_answered_and_closed_at_its_deadline() {
    let options = Options {
        body_timeout: Duration::from_secs(1),
        shutdown_grace: Duration::from_secs(60),
        ..fast()
    };
    let (dir, server) = serve("slowloris", options).await;
    let addr = server.local_addr();
    let metrics = server.metrics();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(server.run(async {
        let _ = stopped.await;
    }));
    let ca = dir.join("ca.crt");

    let mut clients = vec![];
    for _ in 0..50 {
        clients.push(stalled(addr, &ca).await);
    }
    let answers = futures::future::join_all(
        clients
            .into_iter()
            .map(|c| until_closed(c, Duration::from_secs(30))),
    )
    .await;
    for answer in answers {
        let answer = answer.expect("a stalled body is closed at its deadline");
        assert!(
            answer.starts_with("HTTP/1.1 408") && answer.contains("did not arrive within 1s"),
            "{answer}"
        );
    }
    assert_eq!(metrics.responses(408), 50);
    assert_eq!(metrics.requests(false) + metrics.requests(true), 0);
    assert!(
        metrics
            .render_prometheus()
            .contains("controller_runtime_webhook_latency_seconds_count{path=\"/convert\"} 0")
    );

    // The server still answers, and a shutdown does not wait the grace period out on
    // clients stalled in their bodies.
    let (code, _, _) = call(addr, &ca, "GET", "/healthz", b"").await;
    assert_eq!(code, 200);
    let mut clients = vec![];
    for _ in 0..50 {
        clients.push(stalled(addr, &ca).await);
    }
    // Until the server has read their headers, they are not requests in flight.
    tokio::time::sleep(Duration::from_millis(300)).await;
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(30), running)
        .await
        .expect("shutdown is held up by a stalled body no longer than its deadline")
        .unwrap()
        .unwrap();
    for c in clients {
        assert!(until_closed(c, Duration::from_secs(5)).await.is_some());
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// Each accepted connection has TCP_NODELAY: a review is one small write each way, and
/// Nagle's algorithm held the last segment of an answer until the client's delayed ACK
/// (~40 ms on the first review of a TLS 1.3 connection). The server's socket is found
/// among this process's descriptors by its two addresses.
#[tokio::test]
async fn accepted_connections_do_not_wait_for_delayed_acks() {
    use std::os::fd::BorrowedFd;
    let (dir, server) = serve("nodelay", fast()).await;
    let addr = server.local_addr();
    let running = tokio::spawn(server.run(std::future::pending()));
    let tcp = TcpStream::connect(addr).await.unwrap();
    let client = tcp.local_addr().unwrap();
    let name = rustls_pki_types::ServerName::IpAddress(addr.ip().into());
    // The handshake done, the server has accepted and set up the connection.
    let _tls = connector(&dir.join("ca.crt"))
        .connect(name, tcp)
        .await
        .unwrap();
    let mut found = None;
    for entry in std::fs::read_dir("/proc/self/fd").unwrap() {
        let Ok(fd) = entry.unwrap().file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        // SAFETY: only borrowed for the calls below; a descriptor closed meanwhile by
        // another test makes them fail (or, reused, not match the addresses).
        let fd = unsafe { BorrowedFd::borrow_raw(fd) };
        let sock = socket2::SockRef::from(&fd);
        let addrs = (
            sock.local_addr().ok().and_then(|a| a.as_socket()),
            sock.peer_addr().ok().and_then(|a| a.as_socket()),
        );
        if addrs == (Some(addr), Some(client)) {
            found = Some(sock.tcp_nodelay().unwrap());
        }
    }
    assert_eq!(found, Some(true), "the server's end of the connection");
    running.abort();
    let _ = std::fs::remove_dir_all(dir);
}

/// Admission webhooks on the conversion webhook's listener: a defaulter and a validator
/// by path beside `/convert`, their answers, `405`s and metrics by path and outcome; and
/// 1,000 malformed reviews on one kept-alive connection leave the server serving.
#[cfg(feature = "admission")]
#[tokio::test]
async fn admission_paths_are_served_beside_conversion() {
    use crate::validation::FieldError;
    use admission::{AdmissionError, Defaulter, Request, Validator, Warnings};
    use k8s_openapi::api::core::v1::ConfigMap;

    struct Hook;
    impl Defaulter<ConfigMap> for Hook {
        async fn default(&self, cm: &mut ConfigMap, _: &Request) -> Result<(), AdmissionError> {
            cm.data
                .get_or_insert_default()
                .insert("mode".into(), "fast".into());
            Ok(())
        }
    }
    impl Validator<ConfigMap> for Hook {
        async fn validate_create(
            &self,
            cm: &ConfigMap,
            _: &Request,
        ) -> Result<Warnings, AdmissionError> {
            match cm.data.as_ref().and_then(|d| d.get("mode")) {
                Some(_) => Ok(vec![]),
                None => Err(FieldError::required("data.mode", "").into()),
            }
        }
        async fn validate_update(
            &self,
            _: &ConfigMap,
            new: &ConfigMap,
            r: &Request,
        ) -> Result<Warnings, AdmissionError> {
            self.validate_create(new, r).await
        }
    }

    let dir = scratch("admission");
    certs(&dir, "ca");
    let server = Server::builder()
        .convert(Converter::new(KINDS))
        .defaulter("/mutate--v1-configmap", Hook)
        .validator("/validate--v1-configmap", Hook)
        .options(fast())
        .bind("127.0.0.1:0".parse().unwrap(), TlsFiles::in_dir(&dir))
        .await
        .unwrap();
    let addr = server.local_addr();
    let metrics = server.metrics();
    let running = tokio::spawn(server.run(std::future::pending()));
    let ca = dir.join("ca.crt");

    let review = json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {"uid": "u1", "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
            "resource": {"group": "", "version": "v1", "resource": "configmaps"},
            "name": "cm", "namespace": "ns", "operation": "CREATE", "userInfo": {},
            "object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}},
            "oldObject": null}
    });
    let (code, body, _) = call(
        addr,
        &ca,
        "POST",
        "/mutate--v1-configmap",
        review.to_string().as_bytes(),
    )
    .await;
    assert_eq!(code, 200);
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(answer["response"]["uid"], "u1");
    assert_eq!(answer["response"]["allowed"], true, "{body}");
    assert_eq!(answer["response"]["patchType"], "JSONPatch", "{body}");
    let (_, body, _) = call(
        addr,
        &ca,
        "POST",
        "/validate--v1-configmap",
        review.to_string().as_bytes(),
    )
    .await;
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(answer["response"]["allowed"], false, "{body}");
    assert_eq!(answer["response"]["status"]["code"], 422, "{body}");
    assert_eq!(
        answer["response"]["status"]["details"]["causes"][0]["field"],
        "data.mode"
    );
    // The conversion webhook still answers on the same port.
    let conversion = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
        "request": {"uid": "c", "desiredAPIVersion": "example.com/v2", "objects": []},
    });
    let (_, body, _) = call(
        addr,
        &ca,
        "POST",
        "/convert",
        conversion.to_string().as_bytes(),
    )
    .await;
    assert!(
        serde_json::from_str::<ConversionReview>(&body)
            .unwrap()
            .succeeded()
    );
    let (code, _, _) = call(addr, &ca, "GET", "/validate--v1-configmap", b"").await;
    assert_eq!(code, 405);
    let (code, _, _) = call(addr, &ca, "POST", "/validate-other", b"{}").await;
    assert_eq!(code, 404);

    // 1,000 malformed reviews of every sort on one connection: each answered with a
    // refusal, and the server still serves.
    let tcp = TcpStream::connect(addr).await.unwrap();
    let name = rustls_pki_types::ServerName::IpAddress(addr.ip().into());
    let mut tls = connector(&ca).connect(name, tcp).await.unwrap();
    let garbage: [&[u8]; 5] = [
        b"\xff\xfe",
        b"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":7}",
        b"{\"kind\":\"AdmissionReview\"}",
        b"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"x\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"ConfigMap\"},\"resource\":{\"group\":\"\",\"version\":\"v1\",\"resource\":\"configmaps\"},\"operation\":\"CREATE\",\"userInfo\":{},\"object\":{\"data\":[1]}}}",
        b"",
    ];
    for i in 0..1000 {
        let body = garbage[i % garbage.len()];
        let head = format!(
            "POST /validate--v1-configmap HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        tls.write_all(head.as_bytes()).await.unwrap();
        tls.write_all(body).await.unwrap();
        let answer = read_response(&mut tls).await;
        assert!(
            answer.starts_with("HTTP/1.1 200")
                && answer.contains("\"allowed\":false")
                && answer.contains("\"code\":400"),
            "{answer}"
        );
    }
    let (code, _, _) = call(addr, &ca, "GET", "/healthz", b"").await;
    assert_eq!(code, 200);

    use AdmissionOutcome::*;
    assert_eq!(
        metrics.admission_reviews("/mutate--v1-configmap", Allowed),
        1
    );
    assert_eq!(
        metrics.admission_reviews("/validate--v1-configmap", Denied),
        1
    );
    assert_eq!(
        metrics.admission_reviews("/validate--v1-configmap", Errored),
        1000
    );
    assert_eq!(metrics.responses_at("/validate--v1-configmap", 405), 1);
    let (_, text, _) = call(addr, &ca, "GET", "/metrics", b"").await;
    for line in [
        "controller_runtime_webhook_requests_total{code=\"200\",path=\"/convert\"} 1",
        "controller_runtime_webhook_requests_total{code=\"200\",path=\"/validate--v1-configmap\"} 1001",
        "controller_runtime_webhook_requests_total{code=\"405\",path=\"/validate--v1-configmap\"} 1",
        "kube_codegen_admission_reviews_total{path=\"/mutate--v1-configmap\",result=\"allowed\"} 1",
        "kube_codegen_admission_reviews_total{path=\"/validate--v1-configmap\",result=\"denied\"} 1",
        "kube_codegen_admission_reviews_total{path=\"/validate--v1-configmap\",result=\"error\"} 1000",
        "controller_runtime_webhook_latency_seconds_count{path=\"/mutate--v1-configmap\"} 1",
        "controller_runtime_webhook_latency_seconds_count{path=\"/convert\"} 1",
    ] {
        assert!(text.contains(line), "{line} in {text}");
    }
    running.abort();
    let _ = std::fs::remove_dir_all(dir);
}

/// One HTTP/1.1 response (headers and a `Content-Length` body) from a kept-alive connection.
#[cfg(feature = "admission")]
async fn read_response(tls: &mut tokio_rustls::client::TlsStream<TcpStream>) -> String {
    let mut buf = vec![];
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        tls.read_exact(&mut byte).await.unwrap();
        buf.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&buf).to_ascii_lowercase();
    let len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length: "))
        .and_then(|n| n.trim().parse().ok())
        .expect("a content-length");
    let mut body = vec![0u8; len];
    tls.read_exact(&mut body).await.unwrap();
    buf.extend(body);
    String::from_utf8_lossy(&buf).into_owned()
}

/// Paths that cannot be served fail at bind, naming the path.
#[cfg(feature = "admission")]
#[tokio::test]
async fn bad_admission_paths_fail_at_bind() {
    let dir = scratch("paths");
    certs(&dir, "ca");
    let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
    type Cm = k8s_openapi::api::core::v1::ConfigMap;
    for (builder, want) in [
        (
            Server::builder().validator::<Cm>("validate", Nop),
            "webhook path \"validate\": must be an absolute path",
        ),
        (
            Server::builder().validator::<Cm>("/metrics", Nop),
            "webhook path \"/metrics\": is one of the server's own paths",
        ),
        (
            Server::builder()
                .validator::<Cm>("/v", Nop)
                .validator::<Cm>("/v", Nop),
            "webhook path \"/v\": is registered twice",
        ),
        (
            Server::builder().validator::<Cm>("/a b\"", Nop),
            "must be an absolute path",
        ),
    ] {
        match builder.bind(addr, TlsFiles::in_dir(&dir)).await {
            Err(e) => assert!(e.to_string().contains(want), "{want:?} in {e}"),
            Ok(_) => panic!("{want}: bound"),
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// A validator allowing everything.
#[cfg(feature = "admission")]
struct Nop;

#[cfg(feature = "admission")]
impl admission::Validator<k8s_openapi::api::core::v1::ConfigMap> for Nop {
    async fn validate_create(
        &self,
        _: &k8s_openapi::api::core::v1::ConfigMap,
        _: &admission::Request,
    ) -> Result<admission::Warnings, admission::AdmissionError> {
        Ok(vec![])
    }
    async fn validate_update(
        &self,
        _: &k8s_openapi::api::core::v1::ConfigMap,
        _: &k8s_openapi::api::core::v1::ConfigMap,
        _: &admission::Request,
    ) -> Result<admission::Warnings, admission::AdmissionError> {
        Ok(vec![])
    }
}

/// Panics on the fuzzed server's threads (a panic in a connection's task is caught by tokio
/// and only printed).
static PANICS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A raw HTTP request, right or wrong in every part: methods, paths, versions, headers
/// (lengths that lie, chunked bodies, duplicate and huge headers), bodies (reviews right
/// and wrong, garbage), or bytes.
fn request() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
    use proptest::prelude::*;
    let review = prop_oneof![
        Just(json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "request": {"uid": "u", "desiredAPIVersion": "example.com/v2", "objects": [
                {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "a"}}]}}).to_string()),
        Just(json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "request": {"uid": "u", "desiredAPIVersion": "example.com/v9", "objects": [1, null, "x"]}}).to_string()),
        Just(r#"{"request":{"objects":[{"apiVersion":"example.com/v1","kind":"Gadget"}]}}"#.to_owned()),
        Just("[".repeat(10_000)),
        any::<String>(),
    ];
    let head = (
        prop::sample::select(vec!["POST", "GET", "PUT", "DELETE", "OPTIONS", "BREW", "", "POST POST"]),
        prop::sample::select(vec!["/convert", "/metrics", "/healthz", "/", "/convert?x=1", "*", "//convert", "/%00"]),
        prop::sample::select(vec!["HTTP/1.1", "HTTP/1.0", "HTTP/2", "HTTP/9.9", ""]),
        prop::sample::select(vec![
            "Content-Type: application/json\r\n",
            "Transfer-Encoding: chunked\r\n",
            "Content-Length: 5\r\nContent-Length: 6\r\n",
            "Content-Length: -1\r\n",
            "Content-Length: 99999999999999999999\r\n",
            "Expect: 100-continue\r\n",
            "Connection: keep-alive\r\n",
            "X-Big: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n",
            "",
        ]),
        any::<bool>(),
        review,
    )
        .prop_map(|(method, path, version, extra, length, body)| {
            let mut r = format!("{method} {path} {version}\r\nHost: localhost\r\n{extra}");
            if length {
                r.push_str(&format!("Content-Length: {}\r\n", body.len()));
            }
            r.push_str("Connection: close\r\n\r\n");
            let mut bytes = r.into_bytes();
            bytes.extend(body.into_bytes());
            bytes
        });
    prop_oneof![4 => head, 1 => prop::collection::vec(any::<u8>(), 0..300)]
}

/// Fuzz target: requests of every shape over TLS to a running server. Each is answered or
/// its connection closed within a bound (the body deadline is 1 s here), nothing panics,
/// and the server answers a health check afterwards. `KUBE_CODEGEN_FUZZ_SECONDS=N` runs it
/// for N seconds (CI: 60), else for a few dozen requests; failures are kept in
/// `tests/fuzz/webhook.txt` and replayed first.
#[test]
fn any_request_is_answered_or_closed_and_nothing_panics() {
    use proptest::test_runner::{Config, FileFailurePersistence, TestCaseError, TestRunner};
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current().name() == Some("webhook-fuzz") {
            PANICS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        previous(info);
    }));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("webhook-fuzz")
        .enable_all()
        .build()
        .unwrap();
    let options = Options {
        body_timeout: Duration::from_secs(1),
        ..fast()
    };
    let (dir, server) = rt.block_on(serve("fuzz", options));
    let addr = server.local_addr();
    let running = rt.spawn(server.run(std::future::pending()));
    let ca = dir.join("ca.crt");
    let seconds: Option<u64> = std::env::var("KUBE_CODEGEN_FUZZ_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok());
    let start = std::time::Instant::now();
    let mut cases = 0u64;
    loop {
        let batch = if seconds.is_some() { 50 } else { 48 };
        let mut runner = TestRunner::new(Config {
            cases: batch,
            failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
                "tests/fuzz/webhook.txt",
            ))),
            ..Config::default()
        });
        let result = runner.run(&request(), |bytes| {
            rt.block_on(async {
                let tcp = TcpStream::connect(addr).await.unwrap();
                let name = rustls_pki_types::ServerName::IpAddress(addr.ip().into());
                let mut tls = connector(&ca).connect(name, tcp).await.unwrap();
                let _ = tls.write_all(&bytes).await;
                let _ = tls.flush().await;
                let mut out = vec![];
                match tokio::time::timeout(Duration::from_secs(10), tls.read_to_end(&mut out)).await
                {
                    Ok(_) => Ok(()),
                    Err(_) => Err(TestCaseError::fail(
                        "neither answered nor closed within 10 s",
                    )),
                }
            })?;
            let panics = PANICS.load(std::sync::atomic::Ordering::Relaxed);
            if panics > 0 {
                return Err(TestCaseError::fail(format!("{panics} panic(s)")));
            }
            Ok(())
        });
        if let Err(e) = result {
            panic!("webhook: {e}");
        }
        cases += u64::from(batch);
        match seconds {
            Some(s) if start.elapsed() < Duration::from_secs(s) => continue,
            _ => break,
        }
    }
    let (code, _, _) = rt.block_on(call(addr, &ca, "GET", "/healthz", b""));
    assert_eq!(code, 200);
    eprintln!(
        "webhook: {cases} requests, {:.1} s",
        start.elapsed().as_secs_f64()
    );
    running.abort();
    let _ = std::fs::remove_dir_all(dir);
}
