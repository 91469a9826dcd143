//! Slack from the studio: a conversation's owner connects it to a channel the app is in (its
//! turns are posted there once, then every new one, by [`super::poster`]), sees how far the
//! posting has got, and disconnects it; and the channels the app is in, to pick one.

use axum::Json;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::get;
use llmtool_registry::SlackSync;
use llmtool_slack::web_api::Channel;
use serde::Deserialize;
use utoipa::ToSchema;

use crate::auth::Caller;
use crate::conversation_api::standing;
use crate::{Problem, ServerState};

type Answer<T> = Result<T, Problem>;

pub(crate) fn routes() -> Router<ServerState> {
    Router::new()
        .route("/conversations/{id}/slack", get(status).put(connect).delete(disconnect))
        .route("/slack/channels", get(channels))
}

/// `PUT /conversations/{id}/slack`: the channel to post the conversation in.
#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct ConnectBody {
    /// The channel's id (`C0123ABCD`), as `GET /slack/channels` lists them.
    channel: String,
}

/// A channel's id as Slack writes them: capital letters and digits, a few to a few dozen.
fn a_channel_id(text: &str) -> bool {
    (2..=40).contains(&text.len())
        && text.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
}

fn no_slack() -> Problem {
    Problem::new(
        StatusCode::CONFLICT,
        "Conflict",
        "Slack is not set up on this server: an admin adds it in the Control Center",
    )
}

/// Connect a conversation (the caller's own) to a Slack channel the app is in: its turns so
/// far are posted in a thread there, then each new one; a mention of the app in that thread is
/// a turn of the conversation. Connecting it again starts over in the new channel.
#[utoipa::path(put, path = "/conversations/{id}/slack", params(("id" = String, Path, description = "The conversation's id")), request_body = ConnectBody, security(("bearer" = [])),
    responses((status = 200, body = SlackSync),
        (status = 400, description = "Not a channel id", body = Problem),
        (status = 404, description = "No such conversation, or not the caller's", body = Problem),
        (status = 409, description = "Slack is not set up, or the app is not in that channel", body = Problem)))]
pub(crate) async fn connect(
    State(state): State<ServerState>,
    caller: Caller,
    Path(id): Path<String>,
    Json(body): Json<ConnectBody>,
) -> Answer<Json<SlackSync>> {
    standing(&state, &caller, &id).await?.1.owner_only()?;
    let channel = body.channel.trim();
    if !a_channel_id(channel) {
        return Err(Problem::bad_request("`channel` is a channel's id, such as C0123ABCD"));
    }
    let slack = state.slack().ok_or_else(no_slack)?;
    // Refused now if Slack says the app is not there; when Slack cannot say (down), the
    // posting waits and tells on this conversation's status instead.
    match slack.api.bot_channels().await {
        Ok(channels) if !channels.iter().any(|c| c.id == channel) => {
            return Err(Problem::new(
                StatusCode::CONFLICT,
                "Conflict",
                "the app is not in that channel: invite it there first (`/invite @llmtool`)",
            ));
        }
        Err(llmtool_slack::WebApiError::Revoked(reason)) => {
            super::app::revoked(&state, &slack, &reason).await;
            return Err(no_slack());
        }
        _ => {}
    }
    let sync = SlackSync {
        conversation: id.clone(),
        channel: channel.to_owned(),
        thread_ts: None,
        posted: 0,
        part: 0,
        connected_by: caller.member.clone(),
        connected_at: jiff::Timestamp::now().to_string(),
        failures: 0,
        last_error: None,
    };
    state.store.connect_slack(&sync).await?;
    state.wake_slack();
    Ok(Json(sync))
}

/// How a conversation (the caller's own) is connected to Slack: its channel and thread, how
/// many turns are posted, and what the last attempt met if it failed.
#[utoipa::path(get, path = "/conversations/{id}/slack", params(("id" = String, Path, description = "The conversation's id")), security(("bearer" = [])),
    responses((status = 200, body = SlackSync),
        (status = 404, description = "Not connected, no such conversation, or not the caller's", body = Problem)))]
pub(crate) async fn status(
    State(state): State<ServerState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Answer<Json<SlackSync>> {
    standing(&state, &caller, &id).await?.1.owner_only()?;
    let sync = state.store.slack_sync(&id).await?.ok_or_else(|| {
        Problem::new(
            StatusCode::NOT_FOUND,
            "Not Found",
            "this conversation is not connected to Slack",
        )
    })?;
    Ok(Json(sync))
}

/// Disconnect a conversation (the caller's own) from Slack: nothing more is posted, and a
/// mention in its thread is no turn of it.
#[utoipa::path(delete, path = "/conversations/{id}/slack", params(("id" = String, Path, description = "The conversation's id")), security(("bearer" = [])),
    responses((status = 204, description = "Disconnected (or was not connected)"),
        (status = 404, description = "No such conversation, or not the caller's", body = Problem)))]
pub(crate) async fn disconnect(
    State(state): State<ServerState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Answer<StatusCode> {
    standing(&state, &caller, &id).await?.1.owner_only()?;
    state.store.disconnect_slack(&id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The Slack channels the app is in, by name: where a conversation can be connected.
#[utoipa::path(get, path = "/slack/channels", security(("bearer" = [])),
    responses((status = 200, body = Vec<SlackChannel>),
        (status = 409, description = "Slack is not set up", body = Problem),
        (status = 503, description = "Slack could not be reached", body = Problem)))]
pub(crate) async fn channels(
    State(state): State<ServerState>,
    caller: Caller,
) -> Answer<Json<Vec<Channel>>> {
    caller.require_token(llmtool_registry::Role::Viewer)?;
    let slack = state.slack().ok_or_else(no_slack)?;
    match slack.api.bot_channels().await {
        Ok(channels) => Ok(Json(channels)),
        Err(llmtool_slack::WebApiError::Revoked(reason)) => {
            super::app::revoked(&state, &slack, &reason).await;
            Err(no_slack())
        }
        Err(error) => Err(Problem::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "Service Unavailable",
            error.to_string(),
        )),
    }
}

/// A channel the app is in, as `GET /slack/channels` lists it.
#[derive(ToSchema)]
#[allow(dead_code, reason = "the schema of `Channel`, which the Slack crate serializes")]
pub(crate) struct SlackChannel {
    id: String,
    name: String,
}
