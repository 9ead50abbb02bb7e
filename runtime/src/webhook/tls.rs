//! The serving certificate, read from PEM files and re-read when they change (a
//! cert-manager renewal, a rotated Secret volume), without dropping the listener.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use parking_lot::RwLock;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls;
use tokio_rustls::rustls::server::{ClientHello, ResolvesServerCert};
use tokio_rustls::rustls::sign::CertifiedKey;

use super::WebhookError;

/// Where the serving certificate and its key are.
#[derive(Debug, Clone)]
pub struct TlsFiles {
    /// PEM certificate chain, leaf first (`tls.crt` of a Secret).
    pub cert: PathBuf,
    /// PEM private key (PKCS#8, PKCS#1 or SEC1; `tls.key`).
    pub key: PathBuf,
}

impl TlsFiles {
    /// `tls.crt` and `tls.key` in `dir`, as a `kubernetes.io/tls` Secret mounts them.
    pub fn in_dir(dir: impl AsRef<Path>) -> Self {
        TlsFiles {
            cert: dir.as_ref().join("tls.crt"),
            key: dir.as_ref().join("tls.key"),
        }
    }

    fn mtimes(&self) -> Stamp {
        let m = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
        (m(&self.cert), m(&self.key))
    }

    /// Reads and checks both files: a certificate, a key, and a key that is the
    /// certificate's.
    pub(super) fn load(&self) -> Result<Arc<CertifiedKey>, WebhookError> {
        let tls = |message: String| WebhookError::Tls(message);
        let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&self.cert)
            .map_err(|e| {
                tls(format!(
                    "cannot read certificate {}: {e}",
                    self.cert.display()
                ))
            })?
            .collect::<Result<_, _>>()
            .map_err(|e| {
                tls(format!(
                    "bad certificate PEM in {}: {e}",
                    self.cert.display()
                ))
            })?;
        if certs.is_empty() {
            return Err(tls(format!(
                "no certificate in {} (expected a PEM `BEGIN CERTIFICATE` block)",
                self.cert.display()
            )));
        }
        let key = PrivateKeyDer::from_pem_file(&self.key).map_err(|e| {
            tls(format!(
                "cannot read a private key from {}: {e}",
                self.key.display()
            ))
        })?;
        let signer = rustls::crypto::ring::sign::any_supported_type(&key).map_err(|e| {
            tls(format!(
                "unsupported private key in {}: {e}",
                self.key.display()
            ))
        })?;
        let certified = CertifiedKey::new(certs, signer);
        certified.keys_match().map_err(|e| {
            tls(format!(
                "the key in {} does not belong to the certificate in {}: {e}",
                self.key.display(),
                self.cert.display()
            ))
        })?;
        Ok(Arc::new(certified))
    }
}

/// When the certificate and key files were last modified.
type Stamp = (Option<SystemTime>, Option<SystemTime>);

/// The certificate rustls serves, swapped when the files change.
#[derive(Debug)]
pub(super) struct ReloadingCert {
    files: TlsFiles,
    current: RwLock<(Arc<CertifiedKey>, Stamp)>,
}

impl ReloadingCert {
    pub(super) fn new(files: TlsFiles) -> Result<Self, WebhookError> {
        let stamp = files.mtimes();
        let key = files.load()?;
        Ok(ReloadingCert {
            files,
            current: RwLock::new((key, stamp)),
        })
    }

    /// Re-reads the files if either changed since the last read. A bad new pair is
    /// reported and the old certificate kept, so a half-written renewal does not take the
    /// webhook down. Returns whether a new certificate is served.
    pub(super) fn reload_if_changed(&self) -> Result<bool, WebhookError> {
        let stamp = self.files.mtimes();
        if self.current.read().1 == stamp {
            return Ok(false);
        }
        let key = self.files.load();
        let mut current = self.current.write();
        // Remember the stamp either way: a bad pair is reported once, not every tick.
        current.1 = stamp;
        current.0 = key?;
        Ok(true)
    }
}

impl ResolvesServerCert for ReloadingCert {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.current.read().0.clone())
    }
}
