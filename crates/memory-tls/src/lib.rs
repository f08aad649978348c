#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![warn(missing_debug_implementations, unreachable_pub)]
#![forbid(unsafe_code)]

use std::sync::Arc;

use rustls::ClientConfig;
use rustls::crypto::CryptoProvider;
use rustls_platform_verifier::BuilderVerifierExt as _;

/// Why the TLS client could not be set up (the platform's trust store could not be read, or
/// the provider refused the protocol versions).
#[derive(Debug, thiserror::Error)]
#[error("TLS setup failed: {0}")]
pub struct TlsError(#[from] rustls::Error);

/// The crypto provider every client uses: rustls' ring provider.
pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Installs [`provider`] as the process-wide default, unless one is installed already, for
/// libraries that build their rustls clients from the default (object_store's S3 client).
/// Calling it again, or from several threads, is harmless.
pub fn install_default_provider() {
    if CryptoProvider::get_default().is_none() {
        // Losing a race to another thread's install leaves that provider, which is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

/// A rustls client configuration: the ring provider, TLS 1.2 and 1.3, the platform's
/// certificate verifier, no client certificate, no ALPN.
///
/// # Errors
/// [`TlsError`] when the verifier cannot be set up.
pub fn client_config() -> Result<ClientConfig, TlsError> {
    Ok(ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()?
        .with_platform_verifier()?
        .with_no_client_auth())
}

/// A rustls client configuration trusting only `roots` (a private CA, e.g. PostgreSQL's
/// `sslrootcert`) instead of the platform's store: the ring provider, TLS 1.2 and 1.3, no
/// client certificate, no ALPN.
///
/// # Errors
/// [`TlsError`] when the provider refuses the protocol versions.
pub fn client_config_with_roots(roots: rustls::RootCertStore) -> Result<ClientConfig, TlsError> {
    Ok(ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth())
}

/// [`client_config`] for an HTTP/1.1 client: ALPN offers `http/1.1`.
///
/// # Errors
/// As [`client_config`].
pub fn http_client_config() -> Result<ClientConfig, TlsError> {
    let mut config = client_config()?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// A reqwest client builder using [`http_client_config`] (feature `reqwest`); set timeouts
/// and the user agent on it, then build.
///
/// # Errors
/// As [`client_config`].
#[cfg(feature = "reqwest")]
pub fn reqwest_builder() -> Result<reqwest::ClientBuilder, TlsError> {
    Ok(reqwest::Client::builder().tls_backend_preconfigured(http_client_config()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_provider_is_ring_and_installs_once() {
        install_default_provider();
        install_default_provider();
        assert!(CryptoProvider::get_default().is_some());
        let config = client_config().unwrap();
        assert!(config.alpn_protocols.is_empty());
        let private = client_config_with_roots(rustls::RootCertStore::empty()).unwrap();
        assert!(private.alpn_protocols.is_empty());
    }

    #[cfg(feature = "reqwest")]
    #[test]
    fn a_reqwest_client_builds() {
        reqwest_builder().unwrap().build().unwrap();
    }
}
