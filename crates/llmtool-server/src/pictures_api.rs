//! The pictures an image tool's runs made, kept with the runs (`llmtool serve
//! --picture-storage-mib`): `GET /conversations/{id}/pictures/{run}/{position}` serves one to
//! whoever may read the run's conversation (the conversations' one rule: its owner, or an
//! admin), and `GET /shared/{token}/pictures/{run}/{position}` to whoever may see a shared
//! snapshot of it (the tools' one rule), as exactly the image it is (its type read off its own first bytes when it was
//! kept, never sniffed by the browser, never a page that could run anything); and
//! [`PictureLink`]s say where each is, for the run's `done` event, a transcript's turn and the
//! run history.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderName, StatusCode, header};
use axum::response::{IntoResponse as _, Response};
use llmtool_registry::{KeptConversation, PictureInfo, PicturesOf};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::auth::Caller;
use crate::{Problem, ServerState};

/// How many bytes of pictures a library keeps unless its server says otherwise: 1 GiB.
pub const DEFAULT_PICTURE_STORAGE: u64 = 1 << 30;

/// A kept picture, and where to fetch it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub(crate) struct PictureLink {
    /// The API's address of the picture (`/api/v1/conversations/ID/pictures/RUN/POSITION`).
    pub(crate) url: String,
    /// The run that made it.
    pub(crate) run: i64,
    /// 1 for the run's first picture, then 2, 3, ...
    pub(crate) position: u32,
    /// `png`, `jpeg` or `webp`.
    format: String,
    width: u32,
    height: u32,
    bytes: u64,
    sha256: String,
}

/// Where each of `pictures` is, for whoever may read its conversation.
pub(crate) fn links(pictures: Vec<PictureInfo>) -> Vec<PictureLink> {
    pictures
        .into_iter()
        .map(|p| {
            let (conversation, run, position) = (&p.conversation, p.run, p.position);
            link(format!("/api/v1/conversations/{conversation}/pictures/{run}/{position}"), p)
        })
        .collect()
}

/// Where each of `pictures` of the snapshot `kept` is, behind its share link `token`: those
/// of the turns it shows, no later one's.
pub(crate) fn shared_links(
    token: &str,
    kept: &KeptConversation,
    pictures: Vec<PictureInfo>,
) -> Vec<PictureLink> {
    pictures
        .into_iter()
        .filter(|p| kept.conversation.turns.iter().any(|turn| turn.id == Some(p.run)))
        .map(|p| {
            let (run, position) = (p.run, p.position);
            link(format!("/api/v1/shared/{token}/pictures/{run}/{position}"), p)
        })
        .collect()
}

/// The link to `p`, at `url`.
fn link(url: String, p: PictureInfo) -> PictureLink {
    PictureLink {
        url,
        run: p.run,
        position: p.position,
        format: p.format,
        width: p.width,
        height: p.height,
        bytes: p.bytes,
        sha256: p.sha256,
    }
}

/// The kept pictures of the run `run` of the conversation `conversation`, with where each is.
pub(crate) async fn of_run(
    state: &ServerState,
    conversation: &str,
    run: i64,
) -> Result<Vec<PictureLink>, Problem> {
    let all = state.store.pictures_of(PicturesOf::Conversation(conversation)).await?;
    Ok(links(all.into_iter().filter(|p| p.run == run).collect()))
}

/// The media type a kept picture is served as; `None` for a format no run keeps.
fn media_type(format: &str) -> Option<&'static str> {
    match format {
        "png" => Some("image/png"),
        "jpeg" => Some("image/jpeg"),
        "webp" => Some("image/webp"),
        _ => None,
    }
}

/// A picture an image tool's run made, kept with the run: for whoever may read its
/// conversation (its owner, or an admin); anyone else is told there is none. Served as the
/// image it is, never to be sniffed or run as a page; `ETag` is its SHA-256 (`If-None-Match`
/// gets a 304).
#[utoipa::path(get, path = "/conversations/{id}/pictures/{run}/{position}",
    params(("id" = String, Path, description = "The conversation's id"), ("run" = i64, Path, description = "The run's number"), ("position" = u32, Path, description = "1 for the run's first picture")),
    security(("bearer" = [])),
    responses((status = 200, description = "The picture", content_type = "image/*", body = Vec<u8>), (status = 304, description = "The picture is the one the client has"),
        (status = 404, description = "No such conversation or picture, not the caller's, or no longer kept (the library keeps the newest pictures up to its limit)", body = Problem),
        (status = 401, description = "No token, or one the library does not know", body = Problem)))]
pub(crate) async fn picture(
    State(state): State<ServerState>,
    caller: Caller,
    Path((id, run, position)): Path<(String, i64, u32)>,
    headers: HeaderMap,
) -> Result<Response, Problem> {
    crate::conversation_api::standing(&state, &caller, &id).await?;
    served(&state, &id, run, position, &headers).await
}

/// A picture of a shared snapshot, for whoever may see the snapshot (a member who may see its
/// tool): only a picture of a turn it shows.
#[utoipa::path(get, path = "/shared/{token}/pictures/{run}/{position}",
    params(("token" = String, Path, description = "The share link's token"), ("run" = i64, Path, description = "The run's number"), ("position" = u32, Path, description = "1 for the run's first picture")),
    security(("bearer" = [])),
    responses((status = 200, description = "The picture", content_type = "image/*", body = Vec<u8>), (status = 304, description = "The picture is the one the client has"),
        (status = 404, description = "No such link, its tool is not the caller's to see, the picture is not of a turn it shows, or it is no longer kept", body = Problem),
        (status = 401, description = "No token, or one the library does not know", body = Problem)))]
pub(crate) async fn shared_picture(
    State(state): State<ServerState>,
    caller: Caller,
    Path((token, run, position)): Path<(String, i64, u32)>,
    headers: HeaderMap,
) -> Result<Response, Problem> {
    let (kept, _) = crate::conversation_api::snapshot(&state, &caller, &token).await?;
    if !kept.conversation.turns.iter().any(|turn| turn.id == Some(run)) {
        return Err(gone(run, position));
    }
    served(&state, &kept.info.summary.id, run, position, &headers).await
}

/// The problem of a picture that is not there.
fn gone(run: i64, position: u32) -> Problem {
    let detail = format!(
        "run {run} of this conversation has no picture {position}, or it is no longer kept"
    );
    Problem::new(StatusCode::NOT_FOUND, "Not Found", detail)
}

/// Serves the picture at `position` of the run `run` of the conversation `id`, to a caller
/// let through already.
pub(crate) async fn served(
    state: &ServerState,
    id: &str,
    run: i64,
    position: u32,
    headers: &HeaderMap,
) -> Result<Response, Problem> {
    let picture = state.store.picture(id, run, position).await?;
    let picture = picture.ok_or_else(|| gone(run, position))?;
    let media_type = media_type(&picture.info.format)
        .ok_or_else(|| Problem::internal("a kept picture is of no format the library serves"))?;
    let etag = format!("\"{}\"", picture.info.sha256);
    let private = [
        // A picture may show what its prompt held: kept by nobody but the caller's browser,
        // which asks again each time.
        (header::CACHE_CONTROL, "private, no-cache"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::CONTENT_SECURITY_POLICY, "default-src 'none'; sandbox"),
        (HeaderName::from_static("cross-origin-resource-policy"), "same-origin"),
    ];
    let unchanged = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.split(',').any(|tag| tag.trim() == etag));
    if unchanged {
        return Ok((StatusCode::NOT_MODIFIED, private, [(header::ETAG, etag)]).into_response());
    }
    let disposition = format!(
        "inline; filename=\"picture-{run}-{position}.{}\"",
        extension(&picture.info.format)
    );
    let described = [
        (header::CONTENT_TYPE, media_type.to_owned()),
        (header::ETAG, etag),
        (header::CONTENT_DISPOSITION, disposition),
    ];
    Ok((private, described, picture.data).into_response())
}

/// The file name extension of a kept picture's format.
fn extension(format: &str) -> &str {
    if format == "jpeg" { "jpg" } else { format }
}
