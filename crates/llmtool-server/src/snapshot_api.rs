//! Public snapshots: a conversation's owner publishes its turns as they are now, and anyone with
//! the address (`/s/TOKEN`, 256 random bits, kept as their SHA-256) reads them without signing
//! in, until the owner or an admin revokes it. Off unless an admin turns `public_snapshots` on
//! for the workspace; while it is off, no snapshot is published or served (turned on again,
//! the ones kept are back). A snapshot is frozen when published: it names no member (not who
//! asked, not who owns it), the values data-loss prevention hid stay their placeholders, and
//! every answer tells search engines not to index it and browsers not to pass its address on.

use axum::Json;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderName, StatusCode, header};
use axum::response::{IntoResponse as _, Response};
use axum::routing::{delete, get, post};
use llmtool_registry::{
    NewSnapshot, PicturesOf, Role, Selector, SnapshotInfo, SnapshotOf, owner_of,
};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::auth::{Caller, random_hex, token_hash};
use crate::conversation_api::{Standing, TurnBody, access, standing, transcript};
use crate::{Problem, ServerState};

type Answer<T> = Result<T, Problem>;

pub(crate) fn routes() -> Router<ServerState> {
    Router::new()
        .route("/conversations/{id}/snapshots", post(publish_snapshot).get(list_snapshots))
        .route("/conversations/{id}/snapshots/{snapshot}", delete(revoke_snapshot_by_id))
        .route("/snapshots/{token}", get(public_snapshot).delete(revoke_snapshot))
        .route("/snapshots/{token}/pictures/{run}/{position}", get(snapshot_picture))
}

/// What every answer about a public snapshot carries: not to be indexed, kept or passed on in a
/// `Referer` (its address is its key).
pub(crate) const UNLISTED: [(HeaderName, &str); 3] = [
    (HeaderName::from_static("x-robots-tag"), "noindex, nofollow"),
    (header::CACHE_CONTROL, "no-store"),
    (header::REFERRER_POLICY, "no-referrer"),
];

/// A snapshot just published; its token is shown once.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct PublishedSnapshot {
    /// The address's token (256 random bits; only its SHA-256 is kept).
    token: String,
    /// The studio's public page of it: `/s/TOKEN`.
    url: String,
    #[serde(flatten)]
    info: SnapshotInfo,
}

/// A public snapshot as anyone reads it: the turns its conversation had when it was
/// published, with no member named, the hidden values as their placeholders, and none of the
/// server's own facts (no error text, no tokens, no cost).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub(crate) struct SnapshotBody {
    /// The conversation's title when it was published.
    title: String,
    /// The tool it ran: its name, and its slug and version in the library.
    tool: String,
    slug: String,
    version: u32,
    /// When it was published (as the library keeps it, not in the frozen body).
    #[serde(default)]
    published_at: String,
    /// How the tool's own answer (the first turn's) reads: `markdown`, or `as-is`.
    first_answer: String,
    messages: Vec<TurnBody>,
}

/// Publish a public snapshot of a conversation (the caller's own): its turns as they are now,
/// for anyone with the address to read without signing in. Needs the workspace's
/// `public_snapshots` setting on.
#[utoipa::path(post, path = "/conversations/{id}/snapshots", params(("id" = String, Path, description = "The conversation's id")), security(("bearer" = [])),
    responses((status = 201, body = PublishedSnapshot),
        (status = 403, description = "Public snapshots are off in this workspace, or the conversation is a collaborator's or an admin's, not the caller's own", body = Problem),
        (status = 404, description = "No such conversation, or not the caller's", body = Problem),
        (status = 422, description = "The conversation has the most snapshots it may have (20), or the snapshot would be over 8 MiB", body = Problem),
        (status = 401, description = "No token, or one the library does not know", body = Problem)))]
pub(crate) async fn publish_snapshot(
    State(state): State<ServerState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Answer<(StatusCode, Json<PublishedSnapshot>)> {
    let (kept, standing) = access(&state, &caller, &id).await?;
    standing.owner_only()?;
    if !crate::auth::workspace(&state).await?.public_snapshots {
        return Err(Problem::forbidden_because(
            "public snapshots are off in this workspace: an admin turns them on in Teams",
        ));
    }
    // The one visibility rule: a tool its owner may no longer see is not theirs to publish.
    let pinned = Selector::Version(kept.info.version);
    let version = crate::api::seen_version(&state, &caller, &kept.info.slug, &pinned).await?;
    let pictures = state.store.pictures_of(PicturesOf::Conversation(&id)).await?;
    let pictures = crate::pictures_api::links(pictures);
    let turns = u32::try_from(kept.conversation.turns.len()).unwrap_or(u32::MAX);
    let transcript = transcript(kept, false, &version.text, &pictures);
    let document = llmtool_format::Document::from_text(version.text);
    let name = document.tool.as_ref().and_then(|tool| tool.name()).unwrap_or(&version.slug);
    let body = SnapshotBody {
        title: transcript.info.summary.title.clone(),
        tool: name.to_owned(),
        slug: transcript.info.slug.clone(),
        version: transcript.info.version,
        published_at: String::new(),
        first_answer: transcript.first_answer.to_owned(),
        messages: transcript.messages.into_iter().map(TurnBody::for_the_public).collect(),
    };
    let text = serde_json::to_string(&body).map_err(|e| Problem::internal(e.to_string()))?;
    let token = random_hex();
    let snapshot_id = random_hex()[..32].to_owned();
    let created_by = owner_of(&caller.member_id, caller.name.as_deref());
    let new = NewSnapshot {
        id: &snapshot_id,
        token_hash: &token_hash(&token),
        conversation: &id,
        created_by: &created_by,
        turns,
        body: &text,
    };
    let info = caller.acting(&state).publish_snapshot(&new).await?;
    let published = PublishedSnapshot { url: format!("/s/{token}"), token, info };
    Ok((StatusCode::CREATED, Json(published)))
}

/// A conversation's public snapshots (the caller's own), oldest first; never their tokens.
#[utoipa::path(get, path = "/conversations/{id}/snapshots", params(("id" = String, Path, description = "The conversation's id")), security(("bearer" = [])),
    responses((status = 200, body = Vec<SnapshotInfo>),
        (status = 403, description = "A collaborator's or an admin's, not the caller's own", body = Problem),
        (status = 404, description = "No such conversation, or not the caller's", body = Problem),
        (status = 401, description = "No token, or one the library does not know", body = Problem)))]
pub(crate) async fn list_snapshots(
    State(state): State<ServerState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Answer<Json<Vec<SnapshotInfo>>> {
    standing(&state, &caller, &id).await?.1.owner_only()?;
    Ok(Json(state.store.snapshots(&id).await?))
}

/// A public snapshot, for anyone with its address: no sign-in.
#[utoipa::path(get, path = "/snapshots/{token}", params(("token" = String, Path, description = "The snapshot address's token")),
    responses((status = 200, body = SnapshotBody),
        (status = 404, description = "No such snapshot: unknown, revoked, or public snapshots are off in this workspace", body = Problem)))]
pub(crate) async fn public_snapshot(
    State(state): State<ServerState>,
    _rate_limited: Caller,
    Path(token): Path<String>,
) -> Result<Response, Problem> {
    let mut body = published(&state, &token).await?.1;
    for turn in &mut body.messages {
        let run = turn.id.unwrap_or_default();
        for picture in &mut turn.pictures {
            let position = picture.position;
            picture.url = format!("/api/v1/snapshots/{token}/pictures/{run}/{position}");
        }
    }
    Ok((UNLISTED, Json(body)).into_response())
}

/// A picture of a public snapshot, for anyone with its address: only one of a turn it shows,
/// while the library keeps it.
#[utoipa::path(get, path = "/snapshots/{token}/pictures/{run}/{position}",
    params(("token" = String, Path, description = "The snapshot address's token"), ("run" = i64, Path, description = "The run's number"), ("position" = u32, Path, description = "1 for the run's first picture")),
    responses((status = 200, description = "The picture", content_type = "image/*", body = Vec<u8>), (status = 304, description = "The picture is the one the client has"),
        (status = 404, description = "No such snapshot or picture, or no longer kept", body = Problem)))]
pub(crate) async fn snapshot_picture(
    State(state): State<ServerState>,
    _rate_limited: Caller,
    Path((token, run, position)): Path<(String, i64, u32)>,
    headers: HeaderMap,
) -> Result<Response, Problem> {
    let (conversation, body) = published(&state, &token).await?;
    let shown = body.messages.iter().any(|turn| {
        turn.id == Some(run) && turn.pictures.iter().any(|picture| picture.position == position)
    });
    if !shown {
        return Err(no_snapshot());
    }
    let picture =
        crate::pictures_api::served(&state, &conversation, run, position, &headers).await?;
    Ok((UNLISTED, picture).into_response())
}

/// Revoke a public snapshot by its address: its conversation's owner, or an admin. Its address
/// shows nothing any more.
#[utoipa::path(delete, path = "/snapshots/{token}", params(("token" = String, Path, description = "The snapshot address's token")), security(("bearer" = [])),
    responses((status = 204, description = "Revoked"),
        (status = 403, description = "A collaborator's: only the owner or an admin revokes", body = Problem),
        (status = 404, description = "No such snapshot, or not the caller's to revoke", body = Problem),
        (status = 401, description = "No token, or one the library does not know", body = Problem)))]
pub(crate) async fn revoke_snapshot(
    State(state): State<ServerState>,
    caller: Caller,
    Path(token): Path<String>,
) -> Answer<StatusCode> {
    caller.require_token(Role::Viewer)?;
    let hash = token_hash(&token);
    let which = SnapshotOf::TokenHash(&hash);
    let kept = state.store.snapshot(which).await?.ok_or_else(no_snapshot)?;
    revoke(&state, &caller, &kept.conversation, which).await
}

/// Revoke one of a conversation's public snapshots by its id: the conversation's owner, or an
/// admin.
#[utoipa::path(delete, path = "/conversations/{id}/snapshots/{snapshot}", params(("id" = String, Path, description = "The conversation's id"), ("snapshot" = String, Path, description = "The snapshot's id")), security(("bearer" = [])),
    responses((status = 204, description = "Revoked"),
        (status = 403, description = "A collaborator's: only the owner or an admin revokes", body = Problem),
        (status = 404, description = "No such conversation or snapshot, or not the caller's", body = Problem),
        (status = 401, description = "No token, or one the library does not know", body = Problem)))]
pub(crate) async fn revoke_snapshot_by_id(
    State(state): State<ServerState>,
    caller: Caller,
    Path((id, snapshot)): Path<(String, String)>,
) -> Answer<StatusCode> {
    revoke(&state, &caller, &id, SnapshotOf::Id { conversation: &id, id: &snapshot }).await
}

/// Revokes the snapshot `which` of `conversation`, for its owner or an admin; anyone else who
/// may not read the conversation is told there is no such snapshot.
async fn revoke(
    state: &ServerState,
    caller: &Caller,
    conversation: &str,
    which: SnapshotOf<'_>,
) -> Answer<StatusCode> {
    // An admin revokes any (a collaborator's standing aside); anyone else reads it first.
    if caller.role.is_none_or(|role| role < Role::Admin) {
        let (_, standing) = crate::conversation_api::standing(state, caller, conversation)
            .await
            .map_err(|problem| if problem.status == 404 { no_snapshot() } else { problem })?;
        if standing == Standing::Collaborator {
            standing.owner_only()?;
        }
    }
    if caller.acting(state).revoke_snapshot(which).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(no_snapshot())
    }
}

/// The snapshot behind `token` (its conversation, and its body), while the workspace serves
/// public snapshots.
async fn published(state: &ServerState, token: &str) -> Answer<(String, SnapshotBody)> {
    if !crate::auth::workspace(state).await?.public_snapshots {
        return Err(no_snapshot());
    }
    let hash = token_hash(token);
    let kept = state.store.snapshot(SnapshotOf::TokenHash(&hash)).await?.ok_or_else(no_snapshot)?;
    let mut body: SnapshotBody = serde_json::from_str(&kept.body)
        .map_err(|error| Problem::internal(format!("a kept snapshot does not read: {error}")))?;
    body.published_at = kept.info.created_at;
    Ok((kept.conversation, body))
}

/// Whether the snapshot behind `token` is served (for its page's status).
pub(crate) async fn is_served(state: &ServerState, token: &str) -> Answer<bool> {
    if !crate::auth::workspace(state).await?.public_snapshots {
        return Ok(false);
    }
    Ok(state.store.snapshot_exists(&token_hash(token)).await?)
}

/// The problem of a snapshot that is not there (or not the caller's to know of).
fn no_snapshot() -> Problem {
    Problem::new(StatusCode::NOT_FOUND, "Not Found", "no such snapshot")
}
