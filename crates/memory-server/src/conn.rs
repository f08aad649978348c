//! The accept loop: HTTP/1.1 connections with a header-read timeout, an idle timeout, a bound on
//! open connections, and a shutdown that ends within a deadline whatever the clients do.

use std::future::Future;
use std::io;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tokio::task::JoinSet;
use tokio::time::{Instant, Sleep};

/// Descriptors kept free for everything but client connections (the listener, the database
/// and its journal files, standard streams, the runtime's own).
pub const DESCRIPTOR_HEADROOM: u64 = 64;

/// The largest default connection bound, however high the descriptor limit is.
pub const MAX_DEFAULT_CONNECTIONS: usize = 16_384;

/// The default bound on open connections: the soft `RLIMIT_NOFILE` less
/// [`DESCRIPTOR_HEADROOM`] (at least 1, at most [`MAX_DEFAULT_CONNECTIONS`]), so accepting never
/// runs the process out of descriptors.
pub fn default_max_connections() -> usize {
    #[cfg(unix)]
    let soft = rustix::process::getrlimit(rustix::process::Resource::Nofile).current;
    #[cfg(not(unix))]
    let soft: Option<u64> = Some(1024);
    match soft {
        None => MAX_DEFAULT_CONNECTIONS,
        Some(n) => usize::try_from(n.saturating_sub(DESCRIPTOR_HEADROOM))
            .unwrap_or(MAX_DEFAULT_CONNECTIONS)
            .clamp(1, MAX_DEFAULT_CONNECTIONS),
    }
}

/// What each connection needs to know.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub(crate) header_read_timeout: Duration,
    pub(crate) idle_timeout: Duration,
    pub(crate) max_connections: usize,
    pub(crate) shutdown_timeout: Duration,
}

/// Serves `app` on `listener` until `shutdown` completes; then stops accepting, lets the
/// requests in flight finish (idle connections are closed at once) and, at the latest when
/// `shutdown_timeout` has passed, closes every connection and returns.
pub(crate) async fn run(
    listener: TcpListener,
    app: Router,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut connections = JoinSet::new();
    let mut shutdown = pin!(shutdown);
    loop {
        // A free slot first: at the bound, new connections wait in the listen backlog
        // instead of taking descriptors.
        let permit = tokio::select! {
            () = &mut shutdown => break,
            permit = Arc::clone(&permits).acquire_owned() => match permit {
                Ok(p) => p,
                Err(_) => break,
            },
        };
        let stream = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of descriptors, a connection reset before it was accepted...: none
                    // of them stops the server. Pause so a persistent one does not spin.
                    tracing::warn!(error = %e, "accept failed");
                    drop(permit);
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        while connections.try_join_next().is_some() {}
        let (stream, peer) = stream;
        connections.spawn(connection(
            stream,
            peer,
            app.clone(),
            limits,
            stop_rx.clone(),
            permit,
        ));
    }
    drop(listener);
    let _ = stop_tx.send(true);
    let drained = tokio::time::timeout(limits.shutdown_timeout, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::warn!(
            open = connections.len(),
            "shutdown deadline passed; closing the connections still open"
        );
        connections.shutdown().await;
    }
    Ok(())
}

async fn connection(
    stream: TcpStream,
    peer: std::net::SocketAddr,
    app: Router,
    limits: Limits,
    mut stop: watch::Receiver<bool>,
    _permit: OwnedSemaphorePermit,
) {
    let _ = stream.set_nodelay(true);
    let io = TokioIo::new(IdleTimeout::new(stream, limits.idle_timeout));
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .keep_alive(true);
    // Each request knows its client's address (`ConnectInfo`: the console's sign-in limit).
    let service = TowerToHyperService::new(app);
    let service = hyper::service::service_fn(move |mut request: hyper::Request<_>| {
        request
            .extensions_mut()
            .insert(axum::extract::ConnectInfo(peer));
        hyper::service::Service::call(&service, request)
    });
    let conn = builder.serve_connection(io, service);
    let mut conn = pin!(conn);
    let stopping = async move {
        let _ = stop.wait_for(|stopping| *stopping).await;
    };
    let result = tokio::select! {
        result = conn.as_mut() => result,
        () = stopping => {
            conn.as_mut().graceful_shutdown();
            conn.await
        }
    };
    if let Err(e) = result {
        tracing::debug!(error = %e, "connection closed");
    }
}

/// A stream that fails with `TimedOut` once no byte has been read or written for `timeout`
/// while the connection waits on the client (a stalled body, a client that stops reading).
#[derive(Debug)]
struct IdleTimeout<S> {
    inner: S,
    timeout: Duration,
    deadline: Pin<Box<Sleep>>,
}

impl<S> IdleTimeout<S> {
    fn new(inner: S, timeout: Duration) -> Self {
        IdleTimeout {
            inner,
            timeout,
            deadline: Box::pin(tokio::time::sleep(timeout)),
        }
    }

    fn touch(&mut self) {
        let next = Instant::now() + self.timeout;
        self.deadline.as_mut().reset(next);
    }

    fn pending<T>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<T>> {
        match self.deadline.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the connection was idle too long",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for IdleTimeout<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(result) => {
                if result.is_ok() && buf.filled().len() > before {
                    this.touch();
                }
                Poll::Ready(result)
            }
            Poll::Pending => this.pending(cx),
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for IdleTimeout<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_write(cx, buf) {
            Poll::Ready(Ok(n)) => {
                if n > 0 {
                    this.touch();
                }
                Poll::Ready(Ok(n))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => this.pending(cx),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_flush(cx) {
            Poll::Pending => this.pending(cx),
            ready => ready,
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_shutdown(cx) {
            Poll::Pending => this.pending(cx),
            ready => ready,
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_write_vectored(cx, bufs) {
            Poll::Ready(Ok(n)) => {
                if n > 0 {
                    this.touch();
                }
                Poll::Ready(Ok(n))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => this.pending(cx),
        }
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_bound_stays_below_the_descriptor_limit() {
        let n = default_max_connections();
        assert!((1..=MAX_DEFAULT_CONNECTIONS).contains(&n));
        #[cfg(unix)]
        if let Some(soft) = rustix::process::getrlimit(rustix::process::Resource::Nofile).current {
            assert!((n as u64) < soft.max(DESCRIPTOR_HEADROOM + 2));
        }
    }
}
