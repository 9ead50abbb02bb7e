//! The throwaway PKI of one environment: a CA, the apiserver's serving certificate for
//! 127.0.0.1 and localhost, and the ServiceAccount token signing key.
//!
//! Generated in-process with `rcgen` (ECDSA P-256, pure Rust on `ring`, which kube's
//! rustls already builds) rather than with the `openssl` command: users' test machines
//! need no openssl, and a P-256 key takes microseconds where an RSA 2048 one takes tens
//! of milliseconds per environment.

use std::fs;
use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};

use crate::error::Error;

/// The files the processes and the kubeconfig refer to.
pub(crate) struct Pki {
    pub(crate) ca_crt: PathBuf,
    pub(crate) ca_key: PathBuf,
    pub(crate) apiserver_crt: PathBuf,
    pub(crate) apiserver_key: PathBuf,
    pub(crate) sa_key: PathBuf,
    pub(crate) sa_pub: PathBuf,
}

fn cert_err(e: rcgen::Error) -> Error {
    Error::Certificates(e.to_string())
}

/// Writes a file only its owner can read (keys, the token, the kubeconfig).
pub(crate) fn write_private(path: &Path, contents: &str) -> Result<(), Error> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(Error::io(format!("writing {}", path.display())))?;
    f.write_all(contents.as_bytes())
        .map_err(Error::io(format!("writing {}", path.display())))
}

/// Where [`write`] puts the files in `dir`: known before they exist, so the processes'
/// command lines can be made (and compared with a running control plane's) first.
pub(crate) fn paths(dir: &Path) -> Pki {
    Pki {
        ca_crt: dir.join("ca.crt"),
        ca_key: dir.join("ca.key"),
        apiserver_crt: dir.join("apiserver.crt"),
        apiserver_key: dir.join("apiserver.key"),
        sa_key: dir.join("sa.key"),
        sa_pub: dir.join("sa.pub"),
    }
}

pub(crate) fn write(dir: &Path) -> Result<Pki, Error> {
    let ca_key = KeyPair::generate().map_err(cert_err)?;
    let mut ca = CertificateParams::new(Vec::<String>::new()).map_err(cert_err)?;
    ca.distinguished_name
        .push(DnType::CommonName, "kube-codegen-envtest-ca");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_cert = ca.self_signed(&ca_key).map_err(cert_err)?;

    let server_key = KeyPair::generate().map_err(cert_err)?;
    let mut server = CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
        .map_err(cert_err)?;
    server
        .distinguished_name
        .push(DnType::CommonName, "kube-apiserver");
    server.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    server.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    let issuer = Issuer::from_params(&ca, &ca_key);
    let server_cert = server.signed_by(&server_key, &issuer).map_err(cert_err)?;

    let sa_key = KeyPair::generate().map_err(cert_err)?;

    let pki = paths(dir);
    write_private(&pki.ca_crt, &ca_cert.pem())?;
    write_private(&pki.ca_key, &ca_key.serialize_pem())?;
    write_private(&pki.apiserver_crt, &server_cert.pem())?;
    write_private(&pki.apiserver_key, &server_key.serialize_pem())?;
    write_private(&pki.sa_key, &sa_key.serialize_pem())?;
    write_private(&pki.sa_pub, &sa_key.public_key_pem())?;
    Ok(pki)
}
