//! What every request leaves behind: a request id (the client's `X-Request-Id` when it is a
//! sane one, else a new ULID), returned in the same header and carried by whatever is logged
//! while the request is answered; one log line (the
//! `llmtool::http` target, at `info`) with the id, method, route, status, time and client;
//! and its count and latency in the metrics.
//!
//! The line names the route's template (`/api/v1/tools/{slug}`), not the path: paths can hold
//! a member's e-mail or a conversation's share secret, and query strings are never logged.
//!
//! When traces are exported, each request is also a server span, made with OpenTelemetry's
//! own tracer rather than through `tracing`: a server answering tens of thousands of reads a
//! second pays for one span a request, not for `tracing`'s registry and field visitors as
//! well (docs/benchmarks.md). The spans made while the request is answered (its queries, its
//! run and the run's model calls) find it as OpenTelemetry's current context.

use std::time::Instant;

use axum::extract::{ConnectInfo, MatchedPath, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use llmtool_mcp::transport::Connection;
use opentelemetry::context::FutureExt as _;
use opentelemetry::global::BoxedTracer;
use opentelemetry::trace::{SpanKind, Status, TraceContextExt as _, Tracer as _};
use opentelemetry::{Context, KeyValue};
use tracing::Instrument as _;

use crate::ServerState;

/// The header a request's id comes in and goes back out in.
pub const REQUEST_ID: &str = "x-request-id";

/// The longest id taken from a client.
const MAX_ID: usize = 128;

pub(crate) async fn request(
    State(state): State<ServerState>,
    request: Request,
    next: Next,
) -> Response {
    let started = Instant::now();
    let id: std::sync::Arc<str> = given_id(request.headers())
        .map_or_else(|| ulid::Ulid::new().to_string().into(), Into::into);
    let route = request.extensions().get::<MatchedPath>().cloned();
    let route = route.as_ref().map(MatchedPath::as_str);
    let method = request.method().clone();
    let peer = request.extensions().get::<ConnectInfo<Connection>>().map(|c| c.0.peer.ip());
    // The client's address is only for the log line: made only when that line is written.
    let logged = tracing::enabled!(target: "llmtool::http", tracing::Level::INFO);
    let client =
        if logged { crate::auth::client_address(&state, peer, request.headers()) } else { None };
    let shown_route = route.unwrap_or("unmatched");
    let traced = state
        .tracer()
        .map(|tracer| server_span(tracer, method.as_str(), shown_route, &id, request.headers()));
    // What is logged while the request is answered carries its id.
    let answered = next.run(request).instrument(tracing::info_span!("request", request_id = &*id));
    let mut response = match &traced {
        Some(context) => answered.with_context(context.clone()).await,
        None => answered.await,
    };
    let took = started.elapsed();
    if let Ok(value) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(REQUEST_ID, value);
    }
    let status = response.status();
    if let Some(context) = traced {
        let span = context.span();
        span.set_attribute(KeyValue::new("http.response.status_code", i64::from(status.as_u16())));
        if status.is_server_error() {
            span.set_status(Status::error(""));
        }
        span.end();
    }
    let metrics = state.metrics();
    metrics.request(route, method.as_str(), status.as_u16(), took);
    // Every 429 this server gives is its rate limit's.
    if status == StatusCode::TOO_MANY_REQUESTS {
        metrics.rate_limited();
    }
    tracing::info!(
        target: "llmtool::http",
        request_id = &*id,
        method = method.as_str(),
        route = route.unwrap_or("unmatched"),
        status = status.as_u16(),
        duration_ms = took.as_secs_f64() * 1000.0,
        client = client.as_deref().unwrap_or(""),
        "request"
    );
    response
}

/// A started server span for a request, in OpenTelemetry's HTTP conventions, under the
/// client's span when the request names one (W3C `traceparent`); as a context to answer in.
fn server_span(
    tracer: &BoxedTracer,
    method: &str,
    route: &str,
    id: &str,
    headers: &HeaderMap,
) -> Context {
    // Most requests carry no trace context: asking the propagator would only build an empty one.
    let parent = if headers.contains_key("traceparent") {
        opentelemetry::global::get_text_map_propagator(|propagator| {
            propagator.extract(&opentelemetry_http::HeaderExtractor(headers))
        })
    } else {
        Context::new()
    };
    let span = tracer
        .span_builder(format!("{method} {route}"))
        .with_kind(SpanKind::Server)
        .with_attributes([
            KeyValue::new("http.request.method", method.to_owned()),
            KeyValue::new("http.route", route.to_owned()),
            KeyValue::new("request_id", id.to_owned()),
        ])
        .start_with_context(tracer, &parent);
    parent.with_span(span)
}

/// The client's request id, if it is 1 to 128 characters of letters, digits, `-`, `_`, `.`
/// and `:` (what proxies and tracing systems make): anything else is replaced, so that a
/// log line cannot be forged through it.
fn given_id(headers: &HeaderMap) -> Option<&str> {
    let id = headers.get(REQUEST_ID)?.to_str().ok()?;
    let sane = (1..=MAX_ID).contains(&id.len())
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b));
    sane.then_some(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clients_request_id_is_kept_only_when_it_is_sane() {
        let with = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(REQUEST_ID, HeaderValue::from_str(value).unwrap());
            given_id(&headers).map(str::to_owned)
        };
        assert_eq!(
            with("7f3c9a1e2b4d4c0f9e8d7c6b5a493827").as_deref(),
            Some("7f3c9a1e2b4d4c0f9e8d7c6b5a493827")
        );
        assert_eq!(with("req-1.2:3_x").as_deref(), Some("req-1.2:3_x"));
        assert_eq!(with("two words"), None);
        assert_eq!(with("a\"b"), None);
        assert_eq!(with(&"x".repeat(129)), None);
        assert_eq!(with(""), None);
        assert_eq!(given_id(&HeaderMap::new()), None);
    }
}
