//! The routes operators' tools call, outside `/api/v1`: `/healthz` (the process answers),
//! `/readyz` (the database answers with the schema this program knows, and the server is not
//! stopping: a load balancer sends it requests) and `/metrics` (Prometheus' text format).
//!
//! The probes skip the `Host` check (a load balancer's probe names the backend however it
//! likes) and say nothing secret. `/metrics` counts the library's runs by tool and model, so it
//! passes the `Host` check as every other route does (else a page on another site, its name
//! rebound to this machine, could read it through the visitor's browser), and answers without
//! a token only to a client on this machine that no proxy forwarded (`X-Forwarded-For`,
//! `Forwarded` or `X-Real-IP`); anyone else needs an admin's token.

use axum::Router;
use axum::extract::{ConnectInfo, State};
use axum::http::{Extensions, HeaderMap, StatusCode, header};
use axum::response::{IntoResponse as _, Response};
use axum::routing::get;
use llmtool_mcp::transport::Connection;
use llmtool_registry::Role;

use crate::auth::Caller;
use crate::{Problem, ServerState};

pub(crate) fn routes(state: &ServerState) -> Router<ServerState> {
    let host_checked = axum::middleware::from_fn_with_state(state.clone(), crate::host::check);
    Router::new()
        .route("/healthz", get(alive))
        .route("/readyz", get(ready))
        .route("/metrics", get(metrics).route_layer(host_checked))
}

/// `GET /healthz`: the process answers.
async fn alive() -> Response {
    plain(StatusCode::OK, "ok\n")
}

/// `GET /readyz`: 200 when the database answers and its migrations are this program's, and
/// the server is not stopping; else 503 with the reason.
async fn ready(State(state): State<ServerState>) -> Response {
    if state.stopping() {
        return plain(StatusCode::SERVICE_UNAVAILABLE, "stopping\n");
    }
    match state.store.health().await {
        Ok(health) if health.current() => plain(StatusCode::OK, "ready\n"),
        Ok(health) => {
            let text = format!(
                "the database's migrations ({}) are not this program's ({})\n",
                versions(&health.applied),
                versions(&health.known)
            );
            plain(StatusCode::SERVICE_UNAVAILABLE, text)
        }
        Err(error) => {
            tracing::warn!("readiness: the database does not answer: {error}");
            plain(StatusCode::SERVICE_UNAVAILABLE, "the database does not answer\n")
        }
    }
}

/// `GET /metrics`: the server's metrics, to a client on this machine or an admin.
async fn metrics(
    State(state): State<ServerState>,
    extensions: Extensions,
    headers: HeaderMap,
    caller: Caller,
) -> Result<Response, Problem> {
    if !state.metrics().on {
        return Ok(plain(StatusCode::NOT_FOUND, "this server keeps no metrics (--no-metrics)\n"));
    }
    let connection = extensions.get::<ConnectInfo<Connection>>();
    let local = connection.is_some_and(|c| c.0.peer.ip().is_loopback()) && !forwarded(&headers);
    if !local {
        caller.require_token(Role::Admin)?;
    }
    let mut now = state.now();
    // A count in the database, asked at each scrape only (a failure leaves the gauge as it was).
    now.studio_sessions = state.store.open_sessions().await.ok();
    let text = state.metrics().render(&now);
    Ok(([(header::CONTENT_TYPE, crate::metrics::CONTENT_TYPE)], text).into_response())
}

/// Whether a proxy passed the request on (a loopback peer is then the proxy, not the client).
fn forwarded(headers: &HeaderMap) -> bool {
    ["x-forwarded-for", "forwarded", "x-real-ip"].iter().any(|name| headers.contains_key(*name))
}

fn versions(numbers: &[i64]) -> String {
    match (numbers.first(), numbers.last()) {
        (Some(lowest), Some(highest)) => format!("{lowest} to {highest}"),
        _ => "none".to_owned(),
    }
}

fn plain(status: StatusCode, text: impl Into<String>) -> Response {
    (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], text.into()).into_response()
}
