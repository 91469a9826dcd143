//! `POST /slack/events`: Slack's URL check answered with its challenge; each event
//! acknowledged at once and handled once, whichever server of the library gets it and however
//! often Slack sends it again (`X-Slack-Retry-Num`).

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse as _, Response};
use llmtool_slack::payloads::{Event, EventRequest};

use super::received;
use crate::ServerState;

/// `POST /slack/events`.
pub(super) async fn events(
    State(state): State<ServerState>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let read = |body: &[u8]| serde_json::from_slice(body).map_err(|e| format!("not an event: {e}"));
    let request: EventRequest = match received(&state, &headers, &body, read) {
        Ok((_, request)) => request,
        Err(status) => return status.into_response(),
    };
    match request {
        EventRequest::UrlVerification { challenge } => {
            Json(serde_json::json!({"challenge": challenge})).into_response()
        }
        EventRequest::EventCallback { event_id, event, .. } => {
            match state.store.first_slack_event(&event_id).await {
                Ok(true) => handle(&event),
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

/// What an event does. Mentions in a conversation's thread are not answered yet (docs/slack.md
/// says what is built); a revoked token is said in the server's log.
fn handle(event: &Event) {
    match event {
        Event::TokensRevoked | Event::AppUninstalled => {
            tracing::warn!("Slack revoked the app's token: add the app to Slack again");
        }
        Event::AppMention(_) | Event::Other => {}
    }
}
