//! The manager proves itself before anyone sends it a credential. On first
//! start it makes a self-signed certificate (ECDSA P-256, by `rcgen`) in
//! `STATE_DIR/tls/` (`cert.pem`, and `key.pem` mode 0600) and serves its API
//! only over TLS with it. Clients — agents, the CLI — pin that certificate:
//! its SHA-256 fingerprint (`sha256:HEX`, printed at start, given with the
//! join token), its file (`--ca FILE`, e.g. copied from the manager), or the
//! file read from the manager's state directory on the same machine. The
//! TLS handshake fails on any other certificate, before a request — and so
//! a token or node credential — is sent; without a pin, nothing is sent at
//! all. A certificate pinned by fingerprint is independent of the names the
//! manager is reached by (as SSH host keys, or kubeadm's CA hash).

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, SignatureScheme};
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The environment variable clients read the pin from (as `--ca`).
pub const ENV: &str = "PLIANT_CA";

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Where the manager keeps its certificate.
pub fn cert_file(state_dir: &Path) -> PathBuf {
    state_dir.join("tls").join("cert.pem")
}

fn key_file(state_dir: &Path) -> PathBuf {
    state_dir.join("tls").join("key.pem")
}

/// `sha256:HEX` of a certificate's DER bytes.
pub fn fingerprint(der: &[u8]) -> String {
    crate::token::digest(der)
}

/// The manager's side: its certificate and key, ready to serve.
#[derive(Clone)]
pub struct ServerTls {
    config: Arc<rustls::ServerConfig>,
    fingerprint: String,
}

impl std::fmt::Debug for ServerTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ServerTls({})", self.fingerprint)
    }
}

impl ServerTls {
    /// The manager's certificate in `state_dir` (an absolute, private
    /// directory), made on first start; `log` hears of a new one.
    pub fn for_manager(state_dir: &Path, log: &dyn Fn(&str)) -> Result<ServerTls, String> {
        let (cert, key) = (cert_file(state_dir), key_file(state_dir));
        if !cert.exists() {
            make(state_dir)?;
            log(&format!("TLS certificate generated in {}", cert.display()));
        }
        crate::strict::check_file(&key, "TLS key")?;
        let cert_der = CertificateDer::from_pem_file(&cert).map_err(|e| format!("{}: {e}", cert.display()))?;
        let key_der = PrivateKeyDer::from_pem_file(&key).map_err(|e| format!("{}: {e}", key.display()))?;
        let fingerprint = fingerprint(&cert_der);
        let config = rustls::ServerConfig::builder_with_provider(provider())
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(|e| format!("TLS: {e}"))?
            .with_no_client_auth()
            .with_single_cert(vec![cert_der], key_der)
            .map_err(|e| format!("TLS certificate {}: {e}", cert.display()))?;
        Ok(ServerTls { config: Arc::new(config), fingerprint })
    }

    /// The certificate's fingerprint, for clients to pin.
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    /// A TLS acceptor for connections.
    pub fn acceptor(&self) -> tokio_rustls::TlsAcceptor {
        tokio_rustls::TlsAcceptor::from(self.config.clone())
    }
}

/// Makes the certificate and key; the key is written 0600 under another
/// name, then renamed, so a manager killed meanwhile leaves no half key.
fn make(state_dir: &Path) -> Result<(), String> {
    let dir = state_dir.join("tls");
    let fail = |e: std::io::Error| format!("{}: {e}", dir.display());
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&dir).map_err(fail)?;
    let names = vec!["localhost".to_string(), "127.0.0.1".to_string(), "::1".to_string()];
    let made = rcgen::generate_simple_self_signed(names).map_err(|e| format!("cannot make a TLS certificate: {e}"))?;
    crate::strict::check_dir(&dir, "TLS directory")?;
    let write = |name: &str, text: &str, mode: u32| crate::strict::replace(&dir.join(name), mode, text.as_bytes());
    write("key.pem", &made.key_pair.serialize_pem(), 0o600).map_err(fail)?;
    write("cert.pem", &made.cert.pem(), 0o644).map_err(fail)
}

/// The manager certificate a client accepts: the SHA-256 of its DER bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin([u8; 32]);

impl Pin {
    /// A pin from `--ca`: `sha256:HEX` (64 hex digits), or a PEM certificate file.
    pub fn parse(text: &str) -> Result<Pin, String> {
        if let Some(hex) = text.strip_prefix("sha256:") {
            let clean: String = hex.chars().filter(|c| *c != ':').collect();
            let bytes: Option<Vec<u8>> = (0..clean.len())
                .step_by(2)
                .map(|i| clean.get(i..i + 2).and_then(|b| u8::from_str_radix(b, 16).ok()))
                .collect();
            return bytes
                .and_then(|b| <[u8; 32]>::try_from(b).ok())
                .map(Pin)
                .ok_or_else(|| format!("--ca {text}: a fingerprint is `sha256:` and 64 hex digits"));
        }
        if std::fs::metadata(text).is_ok_and(|m| m.len() == 0) {
            return Err(format!(
                "--ca {text}: the file is empty (copied before the manager had written its certificate? \
                 copy STATE_DIR/tls/cert.pem again once the manager is up)"
            ));
        }
        let der =
            CertificateDer::from_pem_file(text).map_err(|e| format!("--ca {text}: not a PEM certificate: {e}"))?;
        Ok(Pin::of(&der))
    }

    /// The pin of a certificate's DER bytes.
    pub fn of(der: &[u8]) -> Pin {
        let digest = ring::digest::digest(&ring::digest::SHA256, der);
        let mut bytes = [0u8; 32];
        bytes.copy_from_slice(digest.as_ref());
        Pin(bytes)
    }

    /// A client's pin: `--ca` when given, else `PLIANT_CA`, else the
    /// certificate in the manager's `state_dir` if this user can read it;
    /// `None` when none is found (then nothing is sent to the manager).
    pub fn for_client(ca: Option<&str>, state_dir: &Path) -> Result<Option<Pin>, String> {
        if let Some(text) = ca {
            return Pin::parse(text).map(Some);
        }
        if let Ok(text) = std::env::var(ENV) {
            return Pin::parse(&text).map(Some);
        }
        Ok(CertificateDer::from_pem_file(cert_file(state_dir)).ok().map(|der| Pin::of(&der)))
    }

    /// A TLS client configuration that accepts the certificate pinned by
    /// `pin` and no other (none at all without a pin).
    pub fn client_config(pin: Option<&Pin>) -> Arc<rustls::ClientConfig> {
        let verifier = Pinned { pin: pin.cloned(), provider: provider() };
        let config = rustls::ClientConfig::builder_with_provider(provider())
            .with_protocol_versions(&[&rustls::version::TLS13])
            .expect("the ring provider speaks TLS 1.3")
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(verifier))
            .with_no_client_auth();
        Arc::new(config)
    }
}

impl std::fmt::Display for Pin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "sha256:{}", self.0.iter().map(|b| format!("{b:02x}")).collect::<String>())
    }
}

/// Accepts exactly the pinned certificate (the handshake's signatures are
/// checked as usual, so the peer must hold its key).
#[derive(Debug)]
struct Pinned {
    pin: Option<Pin>,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Pinned {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match &self.pin {
            Some(pin) if *pin == Pin::of(end_entity) => Ok(ServerCertVerified::assertion()),
            Some(_) => Err(rustls::Error::InvalidCertificate(CertificateError::ApplicationVerificationFailure)),
            None => Err(rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer)),
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_certificate_is_made_once_and_pinned_by_file_or_fingerprint() {
        let scratch = crate::scratch::ScratchDir::new("pliant-tls").unwrap();
        let first = ServerTls::for_manager(scratch.path(), &|_| {}).unwrap();
        let again = ServerTls::for_manager(scratch.path(), &|_| {}).unwrap();
        assert_eq!(first.fingerprint(), again.fingerprint());
        let file = cert_file(scratch.path());
        let by_file = Pin::parse(file.to_str().unwrap()).unwrap();
        assert_eq!(by_file.to_string(), first.fingerprint());
        assert_eq!(Pin::parse(first.fingerprint()).unwrap(), by_file);
        assert_eq!(Pin::for_client(None, scratch.path()).unwrap(), Some(by_file));
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&key_file(scratch.path())), 0o600);
        assert!(Pin::parse("sha256:abcd").is_err());
        assert!(Pin::parse("/nonexistent/cert.pem").is_err());
    }

    /// A certificate copied before the manager wrote it (the README's tour
    /// pasted too fast) is named as such, not as a malformed certificate.
    #[test]
    fn an_empty_certificate_file_says_it_is_empty() {
        let scratch = crate::scratch::ScratchDir::new("pliant-tls-empty").unwrap();
        let empty = scratch.path().join("manager.pem");
        std::fs::write(&empty, "").unwrap();
        let err = Pin::parse(empty.to_str().unwrap()).unwrap_err();
        assert!(err.contains("the file is empty") && err.contains("STATE_DIR/tls/cert.pem"), "{err}");
    }
}
