//! Collaboration on a conversation: its owner turns it on and hands out the link
//! (`/c/join#TOKEN`: the token rides in the fragment, so the page's address never holds it and
//! no `Referer` carries it; the join itself is a `POST`, whose path this server logs as its
//! route, never with the token); a signed-in member who may see its tool joins by it, reads and adds turns;
//! collaborators leave, the owner removes them, and turning it off takes it from all of them
//! (a new link differs). Each change is in the audit log, never the token.

use axum::Json;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{delete, post};
use llmtool_registry::{Role, Selector};
use serde::Serialize;
use utoipa::ToSchema;

use crate::auth::{Caller, random_hex, token_hash};
use crate::conversation_api::{missing, standing};
use crate::{Problem, ServerState};

type Answer<T> = Result<T, Problem>;

pub(crate) fn routes() -> Router<ServerState> {
    Router::new()
        .route(
            "/conversations/{id}/collaboration",
            post(open_collaboration).delete(close_collaboration),
        )
        .route("/collaborate/{token}", post(join_collaboration))
        .route("/conversations/{id}/collaborators/me", delete(leave_conversation))
        .route("/conversations/{id}/collaborators/{member}", delete(remove_collaborator))
}

/// A collaboration link, shown once.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct CollaborationLink {
    /// The link's token (256 random bits; only its SHA-256 is kept).
    token: String,
    /// The studio's page that joins by it: `/c/join#TOKEN`.
    url: String,
}

/// Where a member who joined goes.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Joined {
    conversation: String,
    /// The conversation's page: `/c/ID`.
    url: String,
}

/// Turn collaboration on (the caller's own conversation): a new link for members to join by;
/// any older link stops working, and those who joined by it stay.
#[utoipa::path(post, path = "/conversations/{id}/collaboration", params(("id" = String, Path, description = "The conversation's id")), security(("bearer" = [])),
    responses((status = 200, body = CollaborationLink),
        (status = 403, description = "A collaborator's or an admin's, not the caller's own", body = Problem),
        (status = 404, description = "No such conversation, or not the caller's", body = Problem),
        (status = 401, description = "No token, or one the library does not know", body = Problem)))]
pub(crate) async fn open_collaboration(
    State(state): State<ServerState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Answer<Json<CollaborationLink>> {
    standing(&state, &caller, &id).await?.1.owner_only()?;
    let token = random_hex();
    caller.acting(&state).open_collaboration(&id, &token_hash(&token)).await?;
    Ok(Json(CollaborationLink { url: format!("/c/join#{token}"), token }))
}

/// Turn collaboration off: the link stops working and every collaborator loses the
/// conversation.
#[utoipa::path(delete, path = "/conversations/{id}/collaboration", params(("id" = String, Path, description = "The conversation's id")), security(("bearer" = [])),
    responses((status = 204, description = "Off: no collaborator is left"),
        (status = 403, description = "A collaborator's or an admin's, not the caller's own", body = Problem),
        (status = 404, description = "No such conversation, or not the caller's", body = Problem),
        (status = 401, description = "No token, or one the library does not know", body = Problem)))]
pub(crate) async fn close_collaboration(
    State(state): State<ServerState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Answer<StatusCode> {
    standing(&state, &caller, &id).await?.1.owner_only()?;
    caller.acting(&state).close_collaboration(&id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Join a conversation by its collaboration link: for a signed-in member who may see its
/// tool. Its owner joining changes nothing.
#[utoipa::path(post, path = "/collaborate/{token}", params(("token" = String, Path, description = "The collaboration link's token")), security(("bearer" = [])),
    responses((status = 200, body = Joined),
        (status = 404, description = "No such link (or collaboration was turned off), its tool is not the caller's to see, or the caller is no member", body = Problem),
        (status = 422, description = "The conversation has the most collaborators it may have", body = Problem),
        (status = 401, description = "No token, or one the library does not know", body = Problem)))]
pub(crate) async fn join_collaboration(
    State(state): State<ServerState>,
    caller: Caller,
    Path(token): Path<String>,
) -> Answer<Json<Joined>> {
    caller.require_token(Role::Viewer)?;
    let no_link = || Problem::new(StatusCode::NOT_FOUND, "Not Found", "no such collaboration link");
    let hash = token_hash(&token);
    let id = state.store.collaboration_by_link(&hash).await?.ok_or_else(no_link)?;
    // A collaborator is a member: a token of no member has no one to join as.
    if caller.member_id.is_empty() {
        return Err(no_link());
    }
    let info = state.store.conversation_info(&id).await?.ok_or_else(no_link)?;
    let pinned = Selector::Version(info.version);
    crate::api::seen_version(&state, &caller, &info.slug, &pinned).await.map_err(|_| no_link())?;
    // Its owner joining changes nothing (the conversation read above says whose it is).
    if crate::conversation_api::may_read(&caller, &info.owner, false) {
        return Ok(Json(Joined { url: format!("/c/{id}"), conversation: id }));
    }
    // Joined in one transaction with reading the link again: turned off meanwhile, it joins
    // nobody.
    let joined = caller.acting(&state).join_conversation(&hash, &caller.member_id).await?;
    let id = joined.filter(|joined| *joined == id).ok_or_else(no_link)?;
    Ok(Json(Joined { url: format!("/c/{id}"), conversation: id }))
}

/// Leave a conversation the caller collaborates on.
#[utoipa::path(delete, path = "/conversations/{id}/collaborators/me", params(("id" = String, Path, description = "The conversation's id")), security(("bearer" = [])),
    responses((status = 204, description = "Left"),
        (status = 404, description = "No such conversation, or the caller does not collaborate on it", body = Problem),
        (status = 401, description = "No token, or one the library does not know", body = Problem)))]
pub(crate) async fn leave_conversation(
    State(state): State<ServerState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Answer<StatusCode> {
    caller.require_token(Role::Viewer)?;
    let left = !caller.member_id.is_empty()
        && caller
            .acting(&state)
            .drop_collaborator(&id, &caller.member_id, "conversation.leave")
            .await?;
    if left { Ok(StatusCode::NO_CONTENT) } else { Err(missing(&id)) }
}

/// Remove a collaborator (the caller's own conversation), by the member's id.
#[utoipa::path(delete, path = "/conversations/{id}/collaborators/{member}", params(("id" = String, Path, description = "The conversation's id"), ("member" = String, Path, description = "The collaborator's member id")), security(("bearer" = [])),
    responses((status = 204, description = "Removed"),
        (status = 403, description = "A collaborator's or an admin's, not the caller's own", body = Problem),
        (status = 404, description = "No such conversation or collaborator", body = Problem),
        (status = 401, description = "No token, or one the library does not know", body = Problem)))]
pub(crate) async fn remove_collaborator(
    State(state): State<ServerState>,
    caller: Caller,
    Path((id, member)): Path<(String, String)>,
) -> Answer<StatusCode> {
    standing(&state, &caller, &id).await?.1.owner_only()?;
    let acting = caller.acting(&state);
    if acting.drop_collaborator(&id, &member, "conversation.remove_collaborator").await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(Problem::new(StatusCode::NOT_FOUND, "Not Found", "no such collaborator"))
    }
}
