//! Benchmark of the conversion webhook (bench/conversion.sh): sample-api's Foo through the
//! runtime's webhook server over TLS on 127.0.0.1, as the API server calls it.
//!
//! Each scenario posts `requests` ConversionReviews of `batch` Foos over `connections`
//! keep-alive HTTPS connections and reports the latency of each review (p50, p99) and the
//! throughput in objects per second. The Foos are v1beta1 (hub) with what v1alpha1 cannot
//! hold, converted to v1alpha1 (a read by an old client: the conversion-data annotation is
//! written), and the same back (a write by an old client: it is read).
//!
//! `cargo run --release -p sample-controller --example conversion_bench [-- requests]`

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kube_codegen_runtime::conversion::{ConversionReview, Converter, Convertible};
use kube_codegen_runtime::webhook::{Server, TlsFiles};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, ServerName};
use sample_api::apis::samplecontroller::{v1alpha1, v1beta1};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio_rustls::{TlsConnector, rustls};

fn openssl(dir: &Path, args: &[&str]) {
    let ok = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl")
        .status
        .success();
    assert!(ok, "openssl {args:?}");
}

fn certs(dir: &Path) {
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    let mut a = vec!["req", "-x509"];
    a.extend(ec);
    a.extend([
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
        "-days",
        "1",
        "-subj",
        "/CN=bench-ca",
    ]);
    openssl(dir, &a);
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
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "tls.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
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

fn hub(i: usize) -> v1beta1::Foo {
    let mut f = v1beta1::Foo::new(
        &format!("foo-{i}"),
        v1beta1::FooSpec {
            deployment_name: format!("foo-{i}-deploy"),
            replicas: Some((i % 10) as i32 + 1),
            min_ready_seconds: Some(30),
        },
    );
    f.metadata.namespace = Some("default".into());
    f.metadata.uid = Some(format!("00000000-0000-0000-0000-{i:012}"));
    f.metadata.resource_version = Some(format!("{}", 1000 + i));
    f.metadata.labels = Some([("app".to_owned(), "bench".to_owned())].into());
    f.status = Some(v1beta1::FooStatus {
        available_replicas: 1,
    });
    f
}

fn review(objects: Vec<Value>, desired: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
        "request": {"uid": "bench", "desiredAPIVersion": desired, "objects": objects},
        "response": {"uid": "", "convertedObjects": null, "result": {"metadata": {}}},
    }))
    .unwrap()
}

/// One keep-alive HTTPS connection speaking just enough HTTP/1.1.
struct Conn {
    io: BufReader<tokio_rustls::client::TlsStream<TcpStream>>,
}

impl Conn {
    async fn open(addr: std::net::SocketAddr, connector: &TlsConnector) -> Conn {
        let tcp = TcpStream::connect(addr).await.unwrap();
        tcp.set_nodelay(true).unwrap();
        let tls = connector
            .connect(ServerName::IpAddress(addr.ip().into()), tcp)
            .await
            .unwrap();
        Conn {
            io: BufReader::new(tls),
        }
    }

    async fn post(&mut self, body: &[u8]) -> Vec<u8> {
        let head = format!(
            "POST /convert HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        let w = self.io.get_mut();
        w.write_all(head.as_bytes()).await.unwrap();
        w.write_all(body).await.unwrap();
        w.flush().await.unwrap();
        let mut len = 0;
        loop {
            let mut line = String::new();
            self.io.read_line(&mut line).await.unwrap();
            if line == "\r\n" {
                break;
            }
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                len = v.trim().parse().unwrap();
            }
        }
        let mut out = vec![0; len];
        self.io.read_exact(&mut out).await.unwrap();
        out
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let requests: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse().expect("requests"))
        .unwrap_or(2000);
    let dir = std::env::temp_dir().join(format!("conversion-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    certs(&dir);
    let server = Server::bind(
        "127.0.0.1:0".parse().unwrap(),
        TlsFiles::in_dir(&dir),
        Converter::new(sample_api::generated::conversion::KINDS),
    )
    .await
    .unwrap();
    let addr = server.local_addr();
    tokio::spawn(server.run(std::future::pending()));

    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_file_iter(dir.join("ca.crt")).unwrap() {
        roots.add(c.unwrap()).unwrap();
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let connector = TlsConnector::from(Arc::new(config));

    // The two directions, checked once for correctness before timing.
    let hubs: Vec<Value> = (0..1000)
        .map(|i| serde_json::to_value(hub(i)).unwrap())
        .collect();
    let spokes: Vec<Value> = (0..1000)
        .map(|i| serde_json::to_value(v1alpha1::Foo::from_hub(&hub(i))).unwrap())
        .collect();
    let back: v1beta1::Foo = serde_json::from_value::<v1alpha1::Foo>(spokes[7].clone())
        .unwrap()
        .to_hub();
    assert_eq!(back, hub(7));

    println!(
        "| direction | objects per review | connections | reviews | p50 | p99 | reviews/s | objects/s |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for (direction, objects, desired) in [
        (
            "v1beta1 -> v1alpha1",
            &hubs,
            "samplecontroller.k8s.io/v1alpha1",
        ),
        (
            "v1alpha1 -> v1beta1",
            &spokes,
            "samplecontroller.k8s.io/v1beta1",
        ),
    ] {
        for (batch, connections) in [(1, 1), (1, 4), (100, 1), (100, 4)] {
            let n = if batch == 1 { requests } else { requests / 10 };
            let body = Arc::new(review(objects[..batch].to_vec(), desired));
            // Warm up (and check) once per connection.
            let mut conns = vec![];
            for _ in 0..connections {
                let mut c = Conn::open(addr, &connector).await;
                let answer: ConversionReview =
                    serde_json::from_slice(&c.post(&body).await).unwrap();
                assert!(answer.succeeded(), "{answer:?}");
                assert_eq!(answer.response.unwrap().converted_objects.len(), batch);
                conns.push(c);
            }
            let start = Instant::now();
            let per_conn = n / connections;
            let tasks: Vec<_> = conns
                .into_iter()
                .map(|mut c| {
                    let body = body.clone();
                    tokio::spawn(async move {
                        let mut lat = Vec::with_capacity(per_conn);
                        for _ in 0..per_conn {
                            let t = Instant::now();
                            let out = c.post(&body).await;
                            lat.push(t.elapsed());
                            std::hint::black_box(out);
                        }
                        lat
                    })
                })
                .collect();
            let mut lat = vec![];
            for t in tasks {
                lat.extend(t.await.unwrap());
            }
            let wall = start.elapsed().as_secs_f64();
            lat.sort();
            let done = lat.len();
            println!(
                "| {direction} | {batch} | {connections} | {done} | {:.3} ms | {:.3} ms | {:.0} | {:.0} |",
                percentile(&lat, 0.50).as_secs_f64() * 1e3,
                percentile(&lat, 0.99).as_secs_f64() * 1e3,
                done as f64 / wall,
                (done * batch) as f64 / wall,
            );
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}
