//! Quick answers: `prompts/get`, `prompts/list` and `tools/list` in an open session are
//! answered here, as one JSON response, instead of through rmcp's session worker.
//!
//! rmcp hands each request in a session to a worker task, which hands it to the service's
//! task, which spawns a task for the handler; the answer comes back through channels as a
//! stream of server-sent events. That is what a tool call needs (progress, cancellation,
//! requests to the client while it runs), and it cost about 40 µs of CPU a request. These three
//! need none of it: their answer depends only on the library, the arguments and the caller,
//! so the same [`Server`] methods the handler calls answer them here (the protocol lets a
//! server answer a POST with `application/json` instead of an event stream).
//!
//! Only the plain case is taken; anything else goes on to rmcp unchanged, which then answers
//! it as before: another method, a notification or a batch, a `_meta` (a progress token, a
//! per-request protocol version), a missing or unknown `MCP-Protocol-Version`, the stateless
//! 2026-07-28 revision, a session that is unknown or not yet initialized, an `Accept` that
//! rmcp would refuse.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse as _, Response};
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, ErrorData, GetMeta as _, ProtocolVersion,
    ServerJsonRpcMessage, ServerResult,
};
use rmcp::transport::streamable_http_server::session::SessionId;

use crate::Server;
use crate::audience::Audience;
use crate::sessions::BoundedSessions;

/// What a quick answer needs: the server, and the sessions to check the request's against.
pub(crate) struct Quick {
    pub(crate) server: Server,
    pub(crate) sessions: Arc<BoundedSessions>,
    pub(crate) max_body_bytes: usize,
}

/// Answers the request if it is one of the quick ones, else passes it on to rmcp.
pub(crate) async fn answer(
    State(quick): State<Arc<Quick>>,
    request: Request,
    next: Next,
) -> Response {
    let Some(session) = quick_session(&request) else {
        return next.run(request).await;
    };
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, quick.max_body_bytes).await else {
        return (StatusCode::PAYLOAD_TOO_LARGE, "the request body is too large").into_response();
    };
    match quick.respond(&session, &parts.extensions, &bytes).await {
        Some(response) => response,
        None => next.run(Request::from_parts(parts, Body::from(bytes))).await,
    }
}

impl Quick {
    /// The answer to the JSON-RPC request in `bytes`, if it is a quick one in an open session.
    async fn respond(
        &self,
        session: &SessionId,
        extensions: &axum::http::Extensions,
        bytes: &Bytes,
    ) -> Option<Response> {
        // The method alone first (a parse that keeps nothing else): only the quick methods
        // are parsed into rmcp's messages here as well as by rmcp.
        let MethodOnly { method } = serde_json::from_slice(bytes).ok()?;
        if !matches!(method.as_str(), "prompts/get" | "prompts/list" | "tools/list") {
            return None;
        }
        let ClientJsonRpcMessage::Request(request) = serde_json::from_slice(bytes).ok()? else {
            return None;
        };
        if !request.request.get_meta().is_empty() || !self.sessions.open_for_requests(session).await
        {
            return None;
        }
        let audience = Audience::of_http(extensions);
        let result: Result<ServerResult, ErrorData> = match &request.request {
            ClientRequest::GetPromptRequest(get) => {
                self.server.prompt(&get.params, &audience).map(Into::into)
            }
            ClientRequest::ListPromptsRequest(_) => Ok(self.server.prompts_seen(&audience).into()),
            ClientRequest::ListToolsRequest(_) => Ok(self.server.tools_seen(&audience).into()),
            _ => return None,
        };
        let message = match result {
            // A session's revision is older than 2026-07-28, whose results alone say
            // `resultType`: rmcp's handler leaves it out for such a peer, and so does this.
            Ok(ServerResult::InputRequiredResult(_)) => return None,
            Ok(mut result) => {
                result.strip_result_type_for_legacy_peer();
                ServerJsonRpcMessage::response(result, request.id)
            }
            Err(error) => ServerJsonRpcMessage::error(error, Some(request.id)),
        };
        let body = serde_json::to_vec(&message).ok()?;
        Some(([(header::CONTENT_TYPE, "application/json")], body).into_response())
    }
}

/// The session of a request that may be a quick one: a POST of JSON in a session, naming a
/// protocol revision that has sessions, from a client that takes what rmcp would answer.
fn quick_session(request: &Request) -> Option<SessionId> {
    let headers = request.headers();
    if request.method() != axum::http::Method::POST
        || !is_json(headers)
        || !accepts_json_and_events(headers)
    {
        return None;
    }
    let version = text(headers, "mcp-protocol-version")?;
    let known = ProtocolVersion::KNOWN_VERSIONS.iter().find(|known| known.as_str() == version)?;
    if !known.has_initialize() {
        return None;
    }
    Some(text(headers, "mcp-session-id")?.to_owned().into())
}

fn text<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name)?.to_str().ok()
}

fn is_json(headers: &HeaderMap) -> bool {
    text(headers, header::CONTENT_TYPE.as_str()).is_some_and(|value| {
        value.split(';').next().unwrap_or_default().trim().eq_ignore_ascii_case("application/json")
    })
}

/// Whether `Accept` names both `application/json` and `text/event-stream`, as the transport
/// asks of every POST. Only a plain list of media types is judged here: one with parameters
/// or quotes (weights, say) goes on to rmcp, whose reading of them is the one that counts.
fn accepts_json_and_events(headers: &HeaderMap) -> bool {
    let (mut json, mut events) = (false, false);
    for value in headers.get_all(header::ACCEPT) {
        let Ok(value) = value.to_str() else { return false };
        if value.contains([';', '"']) {
            return false;
        }
        for range in value.split(',').map(str::trim) {
            json |= range.eq_ignore_ascii_case("application/json");
            events |= range.eq_ignore_ascii_case("text/event-stream");
        }
    }
    json && events
}

/// The one field read before deciding to parse a request whole.
#[derive(serde::Deserialize)]
struct MethodOnly {
    method: String,
}
