//! TLS to the server with rustls (the TLS stack the workspace already uses for S3, with ring
//! as its crypto provider): tokio-postgres's `MakeTlsConnect` over `tokio-rustls`.
//!
//! The certificate is always verified, chain and host name, against the CA certificates of
//! `sslrootcert` (a PEM file) or the system's trust store (`sslrootcert=system`).

use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, RootCertStore};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_postgres::tls::{ChannelBinding, MakeTlsConnect, TlsConnect, TlsStream};

use crate::error::PostgresOpenError;

/// Where the trusted CA certificates come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Roots {
    /// The system's trust store.
    System,
    /// A PEM file.
    File(PathBuf),
}

impl Roots {
    pub(crate) fn parse(value: &str) -> Roots {
        if value == "system" {
            Roots::System
        } else {
            Roots::File(PathBuf::from(value))
        }
    }
}

/// A rustls client configuration trusting `roots`.
pub(crate) fn client_config(roots: &Roots) -> Result<Arc<ClientConfig>, PostgresOpenError> {
    let mut store = RootCertStore::empty();
    match roots {
        Roots::System => {
            let found = rustls_native_certs::load_native_certs();
            for cert in found.certs {
                // A system certificate rustls cannot use is skipped, as browsers do.
                let _ = store.add(cert);
            }
            if store.is_empty() {
                return Err(PostgresOpenError::TlsRoots {
                    roots: "system".to_owned(),
                    reason: "the system's trust store holds no usable CA certificate".to_owned(),
                });
            }
        }
        Roots::File(path) => {
            for cert in read_pem(path)? {
                store.add(cert).map_err(|e| PostgresOpenError::TlsRoots {
                    roots: path.display().to_string(),
                    reason: format!("a certificate cannot be used as a CA ({e})"),
                })?;
            }
        }
    }
    // The workspace's one TLS setup (memory-tls), trusting only these roots.
    let config =
        memory_tls::client_config_with_roots(store).map_err(|e| PostgresOpenError::TlsRoots {
            roots: "the TLS provider".to_owned(),
            reason: e.to_string(),
        })?;
    Ok(Arc::new(config))
}

fn read_pem(path: &Path) -> Result<Vec<CertificateDer<'static>>, PostgresOpenError> {
    let bad = |reason: String| PostgresOpenError::TlsRoots {
        roots: path.display().to_string(),
        reason,
    };
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| bad(format!("cannot read it ({e})")))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(format!("it is not a PEM file of certificates ({e})")))?;
    if certs.is_empty() {
        return Err(bad("it holds no certificate".to_owned()));
    }
    Ok(certs)
}

/// The connector handed to the pool: with `None`, connections are plain text (the URL's
/// `sslmode` keeps tokio-postgres from asking for TLS at all).
#[derive(Clone)]
pub(crate) struct MakeRustls {
    pub(crate) config: Option<Arc<ClientConfig>>,
}

/// A TLS handshake that failed: the server's certificate did not verify, or the server
/// offered no TLS. Kept as its own type so that opening can tell it from a network error.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub(crate) struct HandshakeError(pub(crate) io::Error);

impl<S> MakeTlsConnect<S> for MakeRustls
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = RustlsStream<S>;
    type TlsConnect = RustlsConnect;
    type Error = HandshakeError;

    fn make_tls_connect(&mut self, domain: &str) -> Result<RustlsConnect, HandshakeError> {
        // tokio-postgres asks for a connector for every connection, even when it will not use
        // it (sslmode=disable): only `connect` may fail.
        Ok(RustlsConnect {
            config: self.config.clone(),
            name: ServerName::try_from(domain.to_owned()).ok(),
        })
    }
}

/// One connection's connector.
pub(crate) struct RustlsConnect {
    config: Option<Arc<ClientConfig>>,
    name: Option<ServerName<'static>>,
}

impl<S> TlsConnect<S> for RustlsConnect
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = RustlsStream<S>;
    type Error = HandshakeError;
    type Future = Pin<Box<dyn Future<Output = Result<RustlsStream<S>, HandshakeError>> + Send>>;

    fn connect(self, stream: S) -> Self::Future {
        Box::pin(async move {
            let config = self.config.ok_or_else(|| {
                HandshakeError(io::Error::other(
                    "TLS was asked for without a configuration",
                ))
            })?;
            let name = self.name.ok_or_else(|| {
                HandshakeError(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "the host is not a name or address a certificate can be checked against",
                ))
            })?;
            let tls = tokio_rustls::TlsConnector::from(config)
                .connect(name, stream)
                .await
                .map_err(HandshakeError)?;
            Ok(RustlsStream(tls))
        })
    }
}

/// A TLS connection to the server.
pub(crate) struct RustlsStream<S>(tokio_rustls::client::TlsStream<S>);

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for RustlsStream<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for RustlsStream<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> TlsStream for RustlsStream<S> {
    /// No channel binding: SCRAM authenticates without it (`SCRAM-SHA-256`, not `-PLUS`);
    /// the verified certificate already ties the connection to the server.
    fn channel_binding(&self) -> ChannelBinding {
        ChannelBinding::none()
    }
}
