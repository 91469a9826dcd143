//! The `Host` check of every route (DNS rebinding): a page on another site whose name is made
//! to resolve to this server's address must not read the library or drive the studio. The rule
//! is the MCP endpoint's ([`llmtool_mcp::transport::host_allowed`]): a loopback name from this
//! machine, the address the connection arrived at, or a name given with `--allowed-host`.

use axum::extract::{ConnectInfo, Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse as _, Response};
use llmtool_mcp::transport::{Connection, host_allowed};

use crate::{Problem, ServerState};

pub(crate) async fn check(
    State(state): State<ServerState>,
    request: Request,
    next: Next,
) -> Response {
    let host =
        request.headers().get(header::HOST).and_then(|v| v.to_str().ok()).unwrap_or_default();
    let connection = request.extensions().get::<ConnectInfo<Connection>>().map(|c| c.0);
    if host_allowed(&state.allowed_hosts, host, connection) {
        return next.run(request).await;
    }
    tracing::debug!("refused Host `{host}` from {connection:?}");
    Problem::forbidden_because(
        "this server does not answer to that name: a name other than localhost or its address \
         must be given with --allowed-host (this guards against DNS rebinding)",
    )
    .into_response()
}
