//! The two ways the server is reached: standard input and output, and Streamable HTTP at
//! `/mcp` (an axum router that `llmtool serve` can mount too).

use std::sync::Arc;

use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use crate::Server;

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

/// Serves the Streamable HTTP endpoint on `listener` until `shutdown` completes.
pub async fn serve_http(
    server: &Server,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), std::io::Error> {
    use axum::serve::ListenerExt as _;
    // Small JSON-RPC messages: without TCP_NODELAY each response waits on a delayed ACK.
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, router(server, None)).with_graceful_shutdown(shutdown).await
}

/// The Streamable HTTP endpoint as an axum router with the server at [`MCP_PATH`].
/// `allowed_hosts` lists the `Host` values accepted (loopback ones by default).
pub fn router(server: &Server, allowed_hosts: Option<Vec<String>>) -> axum::Router {
    let mut config = StreamableHttpServerConfig::default();
    if let Some(hosts) = allowed_hosts {
        config.allowed_hosts = hosts;
    }
    let server = server.clone();
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    axum::Router::new().route_service(MCP_PATH, service)
}
