//! `POST /slack/events`: Slack's URL check answered with its challenge; each event
//! acknowledged at once and handled once, whichever server of the library gets it and however
//! often Slack sends it again (`X-Slack-Retry-Num`). A mention of the app is answered
//! afterwards ([`super::mention`]).

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse as _, Response};
use llmtool_slack::payloads::{Event, EventRequest};

use std::sync::Arc;

use super::{Slack, received};
use crate::ServerState;

/// `POST /slack/events`.
pub(super) async fn events(
    State(state): State<ServerState>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let read = |body: &[u8]| serde_json::from_slice(body).map_err(|e| format!("not an event: {e}"));
    let (slack, request): (_, EventRequest) = match received(&state, &headers, &body, read) {
        Ok(received) => received,
        Err(status) => return status.into_response(),
    };
    match request {
        EventRequest::UrlVerification { challenge } => {
            Json(serde_json::json!({"challenge": challenge})).into_response()
        }
        EventRequest::EventCallback { event_id, event, .. } => {
            match state.store.first_slack_event(&event_id).await {
                Ok(true) => handle(&state, &slack, event),
                Ok(false) => tracing::debug!("Slack's event {event_id} was handled already"),
                // Slack sends it again when it is not acknowledged: then it is handled.
                Err(error) => {
                    tracing::warn!("Slack's event {event_id} could not be recorded: {error}");
                    return StatusCode::SERVICE_UNAVAILABLE.into_response();
                }
            }
            StatusCode::OK.into_response()
        }
        EventRequest::Other => StatusCode::OK.into_response(),
    }
}

/// What an event does: a mention is answered after Slack has its acknowledgement; a revoked
/// token or an uninstalled app makes the server check its token (and turn Slack off if Slack
/// refuses it).
fn handle(state: &ServerState, slack: &Arc<Slack>, event: Event) {
    match event {
        Event::AppMention(said) => {
            let job = super::mention::mentioned(state.clone(), Arc::clone(slack), said);
            slack.spawn("a mention", job);
        }
        Event::TokensRevoked | Event::AppUninstalled => {
            let (state, checked) = (state.clone(), Arc::clone(slack));
            let job = async move { super::app::check_token(&state, &checked).await };
            slack.spawn("a token check", job);
        }
        Event::Other => {}
    }
}
