//! HTTP/1.1 connections served within limits, as a server open to a network needs: a deadline
//! for each request's header (also how long an idle keep-alive connection is kept), a deadline
//! on a connection whose request moves no byte either way, and caps on the connections open at
//! once, from one address and in all, the latter below the process's file-descriptor limit.
//!
//! axum's own `serve` has none of these (its hyper connections have no timer), so one client
//! holding thousands of idle or trickling connections ran the server out of descriptors. This
//! accept loop is axum's, with hyper's header timer, an activity watch and the caps added.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::extract::ConnectInfo;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::Instant;
use tower::ServiceExt as _;

use crate::guard::Connection;

/// Descriptors kept for everything but connections (the database, files, the model, outgoing
/// requests) when [`ConnectionLimits::for_open_files`] sizes the total cap: a quarter of the
/// limit, and never fewer than this.
const RESERVED_DESCRIPTORS: u64 = 64;

/// The most connections [`ConnectionLimits::for_open_files`] allows at once, however high
/// the descriptor limit (each costs buffers and a task).
const MOST_CONNECTIONS: u64 = 10_000;

/// The limits a listener's connections live within.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// How long a request's header may take to arrive in full, counted from when the
    /// connection starts waiting for it: a client trickling a header is cut off, and so is a
    /// keep-alive connection that sends no next request.
    pub header_timeout: Duration,
    /// How long a connection may go with no byte read or written (a request body that stops
    /// coming, an answer nobody reads). Streams send a keep-alive every 15 seconds.
    pub idle_timeout: Duration,
    /// Connections open at once from one address; past it, a new one is closed at once.
    pub per_address: usize,
    /// Connections open at once in all; past it, a new one is closed at once.
    pub total: usize,
    /// Addresses the per-address cap does not apply to: reverse proxies, each of which carries
    /// many clients' connections.
    pub proxies: Vec<IpAddr>,
}

impl Default for ConnectionLimits {
    /// 20 seconds for a header, 60 without a byte, 128 connections an address, 1,024 in all.
    fn default() -> Self {
        Self {
            header_timeout: Duration::from_secs(20),
            idle_timeout: Duration::from_mins(1),
            per_address: 128,
            total: 1024,
            proxies: Vec::new(),
        }
    }
}

impl ConnectionLimits {
    /// The defaults, with the total cap below `open_files`, the process's limit on open files
    /// (which a server raises to its hard limit first, as nginx's `worker_rlimit_nofile` does;
    /// `None`, unknown or unlimited, keeps the default).
    pub fn for_open_files(open_files: Option<u64>) -> Self {
        let total = open_files.map_or(Self::default().total, connections_for);
        Self { total, ..Self::default() }
    }
}

/// How many connections a process allowed `descriptors` open files may hold at once.
fn connections_for(descriptors: u64) -> usize {
    let reserved = (descriptors / 4).max(RESERVED_DESCRIPTORS);
    let total = descriptors.saturating_sub(reserved).clamp(1, MOST_CONNECTIONS);
    usize::try_from(total).unwrap_or(usize::MAX)
}

/// Serves `app` on `listener` within `limits` until `shutdown` completes, telling each request
/// its [`Connection`] as `ConnectInfo<Connection>`; then accepts no more connections, lets
/// each one finish the request it is answering, and returns once all are closed.
pub async fn serve(
    app: axum::Router,
    listener: TcpListener,
    limits: &ConnectionLimits,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), std::io::Error> {
    let open = Arc::new(Open::new(limits));
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = accept(&listener) => accepted,
            () = &mut shutdown => break,
        };
        // Closed at once rather than left in the backlog, where it would hold up others.
        let Some(slot) = open.admit(peer.ip()) else {
            tracing::debug!("connection from {peer} refused: too many open");
            continue;
        };
        let connection = Connection { peer, local: stream.local_addr().unwrap_or(peer) };
        let service = app.clone().map_request(move |mut request: axum::extract::Request| {
            request.extensions_mut().insert(ConnectInfo(connection));
            request
        });
        let service = TowerToHyperService::new(service.map_request(
            |request: hyper::Request<hyper::body::Incoming>| request.map(axum::body::Body::new),
        ));
        let (io, activity) = Watched::new(stream);
        let served = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(limits.header_timeout)
            .serve_connection(TokioIo::new(io), service);
        let served = graceful.watch(served);
        let idle = limits.idle_timeout;
        tokio::spawn(async move {
            let _slot = slot;
            tokio::select! {
                result = served => {
                    if let Err(error) = result {
                        tracing::trace!("connection from {peer}: {error}");
                    }
                }
                () = activity.stalled(idle) => {
                    tracing::debug!("connection from {peer} closed: no byte moved for {idle:?}");
                }
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}

/// The next connection, with its peer; on an error (out of descriptors, say), waits a little
/// and tries again rather than spinning.
async fn accept(listener: &TcpListener) -> (TcpStream, SocketAddr) {
    loop {
        match listener.accept().await {
            Ok((stream, peer)) => {
                // Small JSON-RPC messages: without TCP_NODELAY each answer waits on a delayed
                // ACK.
                let _ = stream.set_nodelay(true);
                return (stream, peer);
            }
            Err(error) => {
                tracing::warn!("accepting a connection failed: {error}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

/// The connections open now, in all and by address.
struct Open {
    per_address: usize,
    total: usize,
    proxies: Vec<IpAddr>,
    /// Connections by address, an address counted only while it has one (so the map never
    /// holds more entries than `total`), and their sum.
    counts: Mutex<(HashMap<IpAddr, usize>, usize)>,
}

impl Open {
    fn new(limits: &ConnectionLimits) -> Self {
        Self {
            per_address: limits.per_address.max(1),
            total: limits.total.max(1),
            proxies: limits.proxies.clone(),
            counts: Mutex::new((HashMap::new(), 0)),
        }
    }

    /// A slot for a connection from `address`, held as long as the connection is open, or
    /// `None` past a cap.
    fn admit(self: &Arc<Self>, address: IpAddr) -> Option<Slot> {
        let mut counts = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        let (by_address, all) = &mut *counts;
        if *all >= self.total {
            return None;
        }
        let from_here = by_address.entry(address).or_insert(0);
        if *from_here >= self.per_address && !self.proxies.contains(&address) {
            return None;
        }
        *from_here += 1;
        *all += 1;
        Some(Slot { open: Arc::clone(self), address })
    }
}

/// One open connection's place in [`Open`]'s counts, given back when it closes.
struct Slot {
    open: Arc<Open>,
    address: IpAddr,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut counts = self.open.counts.lock().unwrap_or_else(PoisonError::into_inner);
        let (by_address, all) = &mut *counts;
        *all = all.saturating_sub(1);
        if let Some(count) = by_address.get_mut(&self.address) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                by_address.remove(&self.address);
            }
        }
    }
}

/// A connection's stream that notes when a byte last moved on it.
struct Watched {
    stream: TcpStream,
    activity: Activity,
}

/// When a byte last moved on a [`Watched`] stream, in milliseconds after `start`.
#[derive(Clone)]
struct Activity {
    start: Instant,
    last: Arc<AtomicU64>,
}

impl Watched {
    fn new(stream: TcpStream) -> (Self, Activity) {
        let activity = Activity { start: Instant::now(), last: Arc::new(AtomicU64::new(0)) };
        (Self { stream, activity: activity.clone() }, activity)
    }
}

impl Activity {
    fn moved(&self) {
        let now = u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last.store(now, Ordering::Relaxed);
    }

    /// Completes once no byte has moved for `idle`.
    async fn stalled(&self, idle: Duration) {
        loop {
            let last = self.start + Duration::from_millis(self.last.load(Ordering::Relaxed));
            if last.elapsed() >= idle {
                return;
            }
            tokio::time::sleep_until(last + idle).await;
        }
    }
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.stream).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.activity.moved();
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.stream).poll_write(cx, buf);
        if matches!(polled, Poll::Ready(Ok(written)) if written > 0) {
            self.activity.moved();
        }
        polled
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.stream).poll_write_vectored(cx, bufs);
        if matches!(polled, Poll::Ready(Ok(written)) if written > 0) {
            self.activity.moved();
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(per_address: usize, total: usize) -> ConnectionLimits {
        ConnectionLimits { per_address, total, ..ConnectionLimits::default() }
    }

    #[test]
    fn an_address_past_its_cap_is_refused_until_one_of_its_connections_closes() {
        let open = Arc::new(Open::new(&limits(2, 10)));
        let (a, b): (IpAddr, IpAddr) = ("127.0.0.2".parse().unwrap(), "127.0.0.3".parse().unwrap());
        let first = open.admit(a).unwrap();
        let _second = open.admit(a).unwrap();
        assert!(open.admit(a).is_none(), "a third from one address");
        assert!(open.admit(b).is_some(), "another address is not held up");
        drop(first);
        assert!(open.admit(a).is_some(), "a closed connection gives its place back");
    }

    #[test]
    fn the_total_cap_holds_for_every_address_and_a_proxy_is_not_capped_alone() {
        let proxy: IpAddr = "10.0.0.1".parse().unwrap();
        let open = Arc::new(Open::new(&ConnectionLimits { proxies: vec![proxy], ..limits(1, 3) }));
        let held: Vec<Slot> = (0..3).map(|_| open.admit(proxy).unwrap()).collect();
        assert!(open.admit("10.0.0.2".parse().unwrap()).is_none(), "the total is reached");
        drop(held);
        let counts = open.counts.lock().unwrap();
        assert_eq!((counts.0.len(), counts.1), (0, 0), "nothing is kept for closed addresses");
    }

    #[test]
    fn the_total_stays_below_the_descriptor_limit() {
        assert_eq!(connections_for(256), 192);
        assert_eq!(connections_for(1024), 768);
        assert_eq!(connections_for(100), 36);
        assert_eq!(connections_for(10), 1);
        assert_eq!(connections_for(1 << 20), 10_000);
    }
}
