//! The two ways the server is reached: standard input and output, and Streamable HTTP at
//! `/mcp` (an axum router that `llmtool serve` can mount too).

use std::sync::Arc;

use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use crate::Server;
pub use crate::connections::ConnectionLimits;
use crate::guard::{self, Guard};
pub use crate::guard::{Connection, bearer_token, host_allowed};
use crate::quick::{self, Quick};
use crate::sessions::{BoundedSessions, close_idle};

/// The path the HTTP transport answers on.
pub const MCP_PATH: &str = "/mcp";

/// Serves one client on standard input and output until it disconnects.
pub async fn serve_stdio(server: Server) -> Result<(), std::io::Error> {
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    running.waiting().await.map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(())
}

/// Serves one client on `reader` and `writer` (a pipe, a socket, an in-memory duplex).
pub async fn serve_io<R, W>(server: Server, reader: R, writer: W) -> Result<(), std::io::Error>
where
    R: tokio::io::AsyncRead + Send + Unpin + 'static,
    W: tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    let running =
        server.serve((reader, writer)).await.map_err(|e| std::io::Error::other(e.to_string()))?;
    running.waiting().await.map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(())
}

/// The limits and access rules of the HTTP endpoint.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// `Host` values accepted besides loopback names from this machine and the address the
    /// server was reached at (`name` or `name:port`).
    pub allowed_hosts: Vec<String>,
    /// Browser `Origin`s accepted besides loopback ones (`scheme://host[:port]`).
    pub allowed_origins: Vec<String>,
    /// The bearer token every request must carry (`Authorization: Bearer TOKEN`).
    pub token: Option<String>,
    /// Sessions alive at once; past it, the least recently used one is closed.
    pub max_sessions: usize,
    /// A session with no request for this long is closed.
    pub session_idle: Duration,
    pub max_body_bytes: usize,
    /// Cancelled when the server stops: every session's streams then end.
    pub shutdown: tokio_util::sync::CancellationToken,
    /// The limits of the listener's connections ([`serve_http`]'s).
    pub connections: ConnectionLimits,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            token: None,
            max_sessions: 256,
            session_idle: Duration::from_mins(2),
            max_body_bytes: 4 << 20,
            shutdown: tokio_util::sync::CancellationToken::new(),
            connections: ConnectionLimits::default(),
        }
    }
}

/// Serves the Streamable HTTP endpoint on `listener` until `shutdown` completes.
pub async fn serve_http(
    server: &Server,
    listener: tokio::net::TcpListener,
    options: &HttpOptions,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), std::io::Error> {
    serve_app(router(server, options), listener, &options.connections, shutdown).await
}

/// Serves `app` (one that mounts [`router`], say) on `listener` within `limits` until
/// `shutdown` completes, telling each request its [`Connection`] as `ConnectInfo<Connection>`
/// ([`crate::connections::serve`]).
pub async fn serve_app(
    app: axum::Router,
    listener: tokio::net::TcpListener,
    limits: &ConnectionLimits,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), std::io::Error> {
    crate::connections::serve(app, listener, limits, shutdown).await
}

/// The Streamable HTTP endpoint as an axum router with the server at [`MCP_PATH`], behind the
/// checks of `options`. Mounted elsewhere, the router sees the client's address only if the
/// outer server provides `ConnectInfo<Connection>`; without it, only allowed hosts pass.
/// Called within a tokio runtime, as [`endpoint`] is.
pub fn router(server: &Server, options: &HttpOptions) -> axum::Router {
    endpoint(server, options).0
}

/// [`router`], and what tells how many sessions it has open. Called within a tokio runtime:
/// it starts the task that closes idle sessions.
pub fn endpoint(server: &Server, options: &HttpOptions) -> (axum::Router, OpenSessions) {
    // The guard checks Host and Origin itself, knowing where each connection came from.
    let config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .disable_allowed_origins()
        .with_max_request_body_bytes(options.max_body_bytes)
        .with_cancellation_token(options.shutdown.clone());
    let sessions = Arc::new(BoundedSessions::new(options.max_sessions, options.session_idle));
    tokio::spawn(close_idle(Arc::downgrade(&sessions), options.shutdown.clone()));
    let open = OpenSessions(Arc::clone(&sessions));
    let quick = Arc::new(Quick {
        server: server.clone(),
        sessions: Arc::clone(&sessions),
        max_body_bytes: options.max_body_bytes,
    });
    let server = server.clone();
    let service = StreamableHttpService::new(move || Ok(server.clone()), sessions, config);
    let guard = Arc::new(Guard {
        allowed_hosts: options.allowed_hosts.clone(),
        allowed_origins: options.allowed_origins.clone(),
        token: options.token.clone(),
        max_body_bytes: options.max_body_bytes,
    });
    let router = axum::Router::new()
        .route_service(MCP_PATH, service)
        .layer(axum::middleware::from_fn_with_state(quick, quick::answer))
        .layer(axum::middleware::from_fn_with_state(guard, guard::check));
    (router, open)
}

/// How many sessions an endpoint has open (for the server's metrics).
#[derive(Debug, Clone)]
pub struct OpenSessions(Arc<BoundedSessions>);

impl OpenSessions {
    /// The sessions open now.
    pub fn count(&self) -> usize {
        self.0.open()
    }
}
