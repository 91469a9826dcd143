//! The `/api/v1/conversations` routes: a run's follow-ups (streamed as runs are), the
//! conversations a caller may read (their own; every one for an admin), a transcript (with
//! the values data-loss prevention hid put back for its owner only), and share links that show
//! a read-only snapshot to the members who may see the tool. A conversation the caller may not
//! read is answered exactly as a missing one (404).

use std::convert::Infallible;

use axum::Json;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::sse::{Event, Sse};
use axum::routing::{get, post};
use futures_util::Stream;
use llmtool_format::output::{OutputFormat, OutputKind, OutputSpec};
use llmtool_log::Record;
use llmtool_registry::{
    ConversationInfo, KeptConversation, PicturesOf, Reference, Role, Selector, owner_of,
};
use llmtool_runtime::{Choice, Conversation, Subject, revealer};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::auth::{Caller, random_hex, token_hash};
use crate::run_api::{origin_of, stream};
use crate::runs::Ask;
use crate::{Problem, ServerState};

pub(crate) fn routes() -> Router<ServerState> {
    Router::new()
        .route("/conversations", get(crate::sidebar_api::list_conversations))
        .route(
            "/conversations/{id}",
            get(show)
                .patch(crate::sidebar_api::edit_conversation)
                .delete(crate::sidebar_api::delete_conversation),
        )
        .route("/conversations/{id}/messages", post(message))
        .route("/conversations/{id}/share", post(share).delete(unshare))
        .route("/shared/{token}", get(shared))
        .route("/conversations/{id}/pictures/{run}/{position}", get(crate::pictures_api::picture))
        .route(
            "/shared/{token}/pictures/{run}/{position}",
            get(crate::pictures_api::shared_picture),
        )
}

type Answer<T> = Result<T, Problem>;

/// `POST /conversations/{id}/messages`: the follow-up.
#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct MessageBody {
    /// What to ask after the answer (free text: the tool's expected output binds its own
    /// answer only).
    text: String,
    /// The model to ask it of (`provider/model`, or a name the server's providers know), if
    /// not the conversation's own: any a run of the tool could pick (`GET /models`).
    model: Option<String>,
    provider: Option<String>,
}

/// One turn of a transcript: what was asked (the tool's rendered prompt first) and the
/// answer, with the run's facts.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub(crate) struct TurnBody {
    turn: u32,
    /// The run's number (as `/tools/{slug}/runs` lists it).
    pub(crate) id: Option<i64>,
    started_at: String,
    asked: Option<String>,
    answer: Option<String>,
    /// `ok`, `rejected`, `failed` or `cancelled`.
    outcome: String,
    error: Option<String>,
    input_tokens: Option<u64>,
    cached_input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cost_usd: Option<f64>,
    latency_ms: Option<u64>,
    /// An image tool's pictures, as kept with the run (for its owner and admins).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) pictures: Vec<crate::pictures_api::PictureLink>,
    /// The model that answered this turn.
    provider: String,
    model: String,
    /// The name of the member who asked it (`null` for a token of no member, a member since
    /// removed, or a share link's or snapshot's reader).
    pub(crate) asked_by: Option<String>,
    /// The functions the model called on the way to this turn's answer, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) calls: Vec<llmtool_log::Call>,
}

impl TurnBody {
    /// The turn as a public snapshot freezes it: what was asked and answered, on which model,
    /// how it ended; not who asked, nor the server's facts (an error's text may name its
    /// provider's address or its folders; tokens, cost and latency are the workspace's own),
    /// and each picture's address made when the snapshot is read.
    pub(crate) fn for_the_public(self) -> TurnBody {
        let mut pictures = self.pictures;
        for picture in &mut pictures {
            picture.url.clear();
        }
        TurnBody {
            error: None,
            input_tokens: None,
            cached_input_tokens: None,
            output_tokens: None,
            cost_usd: None,
            latency_ms: None,
            asked_by: None,
            pictures,
            ..self
        }
    }
}

/// `text` as `shown` shows the turn's texts (the owner's with the hidden values back).
fn reveal_or_keep(shown: &dyn Fn(Option<String>) -> Option<String>, text: String) -> String {
    shown(Some(text)).unwrap_or_default()
}

/// A conversation and its turns.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ConversationBody {
    #[serde(flatten)]
    pub(crate) info: ConversationInfo,
    /// Whether the values data-loss prevention hid from the model are shown (to the owner
    /// only; anyone else sees their placeholders).
    values_shown: bool,
    /// How the tool's own answer (the first turn's) reads: `markdown` (text), or `as-is`
    /// (code, JSON, XML, CSV: shown as it is). Follow-ups are text.
    pub(crate) first_answer: &'static str,
    pub(crate) messages: Vec<TurnBody>,
    /// What the caller is to it: `owner`, `collaborator` or `reader` (an admin, or a share
    /// link's reader).
    role: &'static str,
    /// Whether it is open to collaborators (told its owner only).
    #[serde(skip_serializing_if = "Option::is_none")]
    collaboration: Option<bool>,
    /// The members who joined it (told its owner and collaborators).
    collaborators: Vec<llmtool_registry::Collaborator>,
}

/// A share link.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ShareBody {
    /// The studio's read-only page of the snapshot (`/share/TOKEN`); the token is shown once.
    url: String,
    /// The API's address of the snapshot.
    api: String,
    /// The turns the snapshot shows: those the conversation had when shared.
    turns: u32,
}

/// What a caller is to a conversation they may read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Standing {
    /// Started it: reads the hidden values, goes on with it, changes, shares and opens it.
    Owner,
    /// Joined it by its collaboration link, and still sees its tool: reads it (the hidden
    /// values as placeholders) and adds turns.
    Collaborator,
    /// An admin who is neither: reads it (placeholders), and nothing more.
    Admin,
}

impl Standing {
    /// Who may add turns: its owner and collaborators; an admin is told there is no such
    /// conversation to ask in, as anyone else is.
    pub(crate) fn may_ask(self, id: &str) -> Answer<()> {
        match self {
            Standing::Owner | Standing::Collaborator => Ok(()),
            Standing::Admin => Err(missing(id)),
        }
    }

    /// Who may change, share or open it: its owner; whoever else reads it is refused (403).
    pub(crate) fn owner_only(self) -> Answer<()> {
        match self {
            Standing::Owner => Ok(()),
            Standing::Collaborator | Standing::Admin => Err(Problem::new(
                StatusCode::FORBIDDEN,
                "Forbidden",
                "only its owner changes, shares or opens a conversation",
            )),
        }
    }

    /// How a transcript names the caller's place: `owner`, `collaborator` or `reader`.
    pub(crate) const fn as_str(self) -> &'static str {
        match self {
            Standing::Owner => "owner",
            Standing::Collaborator => "collaborator",
            Standing::Admin => "reader",
        }
    }
}

/// The problem of a conversation the caller may not know of: the same as a missing one's.
pub(crate) fn missing(id: &str) -> Problem {
    Problem::from(llmtool_registry::StoreError::NoSuchConversation(id.into()))
}

/// What the caller is to conversation `id`, from its one row (its turns unread): its owner; a
/// member who joined it by its collaboration link, while they may see its tool (the one
/// visibility rule); an admin. Anyone else is told it does not exist. The one rule every route
/// of a conversation asks.
pub(crate) async fn standing(
    state: &ServerState,
    caller: &Caller,
    id: &str,
) -> Answer<(ConversationInfo, Standing)> {
    caller.require_token(Role::Viewer)?;
    let info = state.store.conversation_info(id).await?.ok_or_else(|| missing(id))?;
    if may_read(caller, &info.owner, false) {
        return Ok((info, Standing::Owner));
    }
    if !caller.member_id.is_empty() && state.store.is_collaborator(id, &caller.member_id).await? {
        let pinned = Selector::Version(info.version);
        let seen = crate::api::seen_version(state, caller, &info.slug, &pinned).await;
        return if seen.is_ok() { Ok((info, Standing::Collaborator)) } else { Err(missing(id)) };
    }
    if caller.role.is_some_and(|role| role >= Role::Admin) {
        return Ok((info, Standing::Admin));
    }
    Err(missing(id))
}

/// [`standing`], with the conversation whole (its turns read), for the routes that show or go
/// on with it.
pub(crate) async fn access(
    state: &ServerState,
    caller: &Caller,
    id: &str,
) -> Answer<(KeptConversation, Standing)> {
    let (_, standing) = standing(state, caller, id).await?;
    let kept = state.store.conversation(id).await?.ok_or_else(|| missing(id))?;
    Ok((kept, standing))
}

/// Whether `caller` may read what a conversation owned by `owner` holds (its turns, its
/// pictures): its owner may, and with `admin_reads` an admin. The one rule every route of a
/// conversation's contents asks, the run history's pictures too.
pub(crate) fn may_read(caller: &Caller, owner: &str, admin_reads: bool) -> bool {
    let own = caller.name.is_some() && owner_of(&caller.member_id, caller.name.as_deref()) == owner;
    own || (admin_reads && caller.role.is_some_and(|role| role >= Role::Admin))
}

/// A conversation's transcript: its owner sees the values data-loss prevention hid from the
/// model; an admin sees their placeholders.
#[utoipa::path(get, path = "/conversations/{id}", params(("id" = String, Path, description = "The conversation's id")), security(("bearer" = [])),
    responses((status = 200, body = ConversationBody),
        (status = 404, description = "No such conversation, or not the caller's", body = Problem),
        (status = 401, description = "No token, or one the library does not know", body = Problem)))]
pub(crate) async fn show(
    State(state): State<ServerState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Answer<Json<ConversationBody>> {
    let (kept, standing) = access(&state, &caller, &id).await?;
    let pinned = Selector::Version(kept.info.version);
    let version = state.store.version(&kept.info.slug, &pinned).await?;
    let pictures = state.store.pictures_of(PicturesOf::Conversation(&id)).await?;
    let pictures = crate::pictures_api::links(pictures);
    let mut body = transcript(kept, standing == Standing::Owner, &version.text, &pictures);
    body.role = standing.as_str();
    if standing != Standing::Admin {
        body.collaborators = state.store.collaborators(&id).await?;
    }
    if standing == Standing::Owner {
        body.collaboration = Some(state.store.collaboration_open(&id).await?);
    }
    Ok(Json(body))
}

/// Ask a follow-up in one of the caller's conversations: sent with the whole conversation to
/// its model, on the tool's version it started with, streamed as `POST /tools/{slug}/run`
/// streams (`start`, `text`, `done`; `start.notices` says which old turns were left out to fit
/// the model's context window).
#[utoipa::path(post, path = "/conversations/{id}/messages", params(("id" = String, Path, description = "The conversation's id")), security(("bearer" = [])),
    request_body = MessageBody,
    responses((status = 200, description = "The run, as Server-Sent Events", content_type = "text/event-stream", body = crate::run_events::RunEvent),
        (status = 404, description = "No such conversation, not the caller's, or its tool is no longer theirs to see", body = Problem),
        (status = 422, description = "The follow-up is empty or too long, or its model may no longer run", body = Problem),
        (status = 402, description = "A hard budget would be passed: nothing was sent", body = Problem),
        (status = 409, description = "A follow-up of this conversation is under way: ask again once it has ended", body = Problem),
        (status = 503, description = "Too many runs are running and waiting; try again after `Retry-After`", body = Problem),
        (status = 401, description = "No token, or one the library does not know", body = Problem)))]
pub(crate) async fn message(
    State(state): State<ServerState>,
    caller: Caller,
    Path(id): Path<String>,
    Json(body): Json<MessageBody>,
) -> Answer<Sse<impl Stream<Item = Result<Event, Infallible>>>> {
    // Told there is no such conversation before anything else (its follow-up under way too).
    standing(&state, &caller, &id).await?.1.may_ask(&id)?;
    let Some(runs) = state.runs().cloned() else {
        return Err(Problem::new(StatusCode::NOT_FOUND, "Not Found", "this server runs no tools"));
    };
    if body.text.trim().is_empty() {
        let detail = "the follow-up is empty";
        return Err(Problem::unprocessable(detail));
    }
    // One follow-up at a time: two at once would take the same turn and placeholders. Read
    // again once it is held: a delete, a removal or collaboration turned off meanwhile (each
    // waits for it too) is seen, and the turns are the latest.
    let following = runs.follow(&id).await?;
    let (kept, standing) = access(&state, &caller, &id).await?;
    standing.may_ask(&id)?;
    let info = &kept.info;
    let pinned = Selector::Version(info.version);
    let version = crate::api::seen_version(&state, &caller, &info.slug, &pinned).await?;
    let conversation = conversation_of(&kept, version.text, standing)
        .map_err(|error| Problem::unprocessable(error.to_string()))?;
    let turn = runs.turn_or_busy().await?;
    let who = caller.run_for();
    let switch = (body.model.is_some() || body.provider.is_some())
        .then_some(Choice { model: body.model, provider: body.provider });
    let ask =
        Ask::FollowUp { conversation: &conversation, text: body.text, choice: switch.as_ref() };
    let prepared = runs.prepare(&state, &who, (&info.slug, &version.tags), ask).await?;
    let path = Reference::pinned(&info.slug, info.version).path();
    let subject = Subject {
        by: caller.name.clone(),
        account: Some(prepared.account.clone()),
        ..conversation.subject(origin_of(&caller), Some(path))
    };
    Ok(stream(&state, prepared, subject, (turn, Some(following)), &info.slug, info.version))
}

/// Share a conversation (the caller's own): a link to a read-only snapshot of the turns it
/// has now, for the members who may see its tool. A new link voids the one before.
#[utoipa::path(post, path = "/conversations/{id}/share", params(("id" = String, Path, description = "The conversation's id")), security(("bearer" = [])),
    responses((status = 200, body = ShareBody),
        (status = 404, description = "No such conversation, or not the caller's", body = Problem),
        (status = 401, description = "No token, or one the library does not know", body = Problem)))]
pub(crate) async fn share(
    State(state): State<ServerState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Answer<Json<ShareBody>> {
    standing(&state, &caller, &id).await?.1.owner_only()?;
    let token = random_hex();
    let turns = caller.acting(&state).share_conversation(&id, &token_hash(&token)).await?;
    Ok(Json(ShareBody {
        url: format!("/share/{token}"),
        api: format!("/api/v1/shared/{token}"),
        turns,
    }))
}

/// Stop sharing a conversation (the caller's own): its link shows nothing any more.
#[utoipa::path(delete, path = "/conversations/{id}/share", params(("id" = String, Path, description = "The conversation's id")), security(("bearer" = [])),
    responses((status = 204, description = "Not shared any more"),
        (status = 404, description = "No such conversation, or not the caller's", body = Problem),
        (status = 401, description = "No token, or one the library does not know", body = Problem)))]
pub(crate) async fn unshare(
    State(state): State<ServerState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Answer<StatusCode> {
    standing(&state, &caller, &id).await?.1.owner_only()?;
    caller.acting(&state).unshare_conversation(&id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// A shared conversation's snapshot, for a member who may see its tool: the turns it had when
/// shared (with their pictures), the hidden values as their placeholders.
#[utoipa::path(get, path = "/shared/{token}", params(("token" = String, Path, description = "The share link's token")), security(("bearer" = [])),
    responses((status = 200, body = ConversationBody),
        (status = 404, description = "No such link, or its tool is not the caller's to see", body = Problem),
        (status = 401, description = "No token, or one the library does not know", body = Problem)))]
pub(crate) async fn shared(
    State(state): State<ServerState>,
    caller: Caller,
    Path(token): Path<String>,
) -> Answer<Json<ConversationBody>> {
    let (kept, version) = snapshot(&state, &caller, &token).await?;
    let pictures = state.store.pictures_of(PicturesOf::Conversation(&kept.info.summary.id)).await?;
    let pictures = crate::pictures_api::shared_links(&token, &kept, pictures);
    let mut body = transcript(kept, false, &version.text, &pictures);
    // A share link's readers are told what was asked, not who asked it.
    for message in &mut body.messages {
        message.asked_by = None;
    }
    Ok(Json(body))
}

/// The snapshot the share link `token` shows, with its tool's version, for a caller who may
/// see the tool (the tools' one rule); anyone else is told there is no such link.
pub(crate) async fn snapshot(
    state: &ServerState,
    caller: &Caller,
    token: &str,
) -> Answer<(KeptConversation, llmtool_registry::ToolVersion)> {
    caller.require_token(Role::Viewer)?;
    let missing =
        || Problem::new(StatusCode::NOT_FOUND, "Not Found", "no such shared conversation");
    let kept = state.store.shared_conversation(&token_hash(token)).await?.ok_or_else(missing)?;
    let pinned = Selector::Version(kept.info.version);
    // The one rule: a tool the caller does not see is not there, and neither is its snapshot.
    let version = crate::api::seen_version(state, caller, &kept.info.slug, &pinned)
        .await
        .map_err(|_| missing())?;
    Ok((kept, version))
}

/// The transcript of `kept` (a conversation of the tool `tool`, its version's text), with the
/// hidden values put back when `owner` reads it, and each turn's `pictures` (of those given).
pub(crate) fn transcript(
    kept: KeptConversation,
    owner: bool,
    tool: &str,
    pictures: &[crate::pictures_api::PictureLink],
) -> ConversationBody {
    let reveal = revealer(&kept.conversation.thread.placeholders);
    let shown = |text: Option<String>| match text {
        Some(text) if owner => Some(reveal(&text)),
        other => other,
    };
    let asked_by = kept.asked_by.into_iter().chain(std::iter::repeat(None));
    let messages = kept
        .conversation
        .turns
        .into_iter()
        .zip(asked_by)
        .map(|(turn, asked_by): (Record, Option<String>)| TurnBody {
            turn: turn.turn.unwrap_or(1),
            id: turn.id,
            started_at: turn.started_at,
            asked: shown(turn.prompt),
            answer: shown(turn.answer),
            outcome: turn.outcome.as_str().to_owned(),
            error: shown(turn.error),
            input_tokens: turn.input_tokens,
            cached_input_tokens: turn.cached_input_tokens,
            output_tokens: turn.output_tokens,
            cost_usd: turn.cost_usd,
            latency_ms: turn.latency_ms,
            pictures: pictures.iter().filter(|p| Some(p.run) == turn.id).cloned().collect(),
            provider: turn.provider,
            model: turn.model,
            asked_by,
            calls: turn
                .calls
                .into_iter()
                .map(|call| llmtool_log::Call {
                    arguments: reveal_or_keep(&shown, call.arguments),
                    result: reveal_or_keep(&shown, call.result),
                    ..call
                })
                .collect(),
        })
        .collect();
    let spec =
        llmtool_format::Document::from_text(tool.to_owned()).tool.as_ref().map(OutputSpec::of);
    let markdown = spec.is_none_or(|spec| {
        spec.kind == OutputKind::Text
            && !matches!(
                spec.format,
                Some(OutputFormat::Json | OutputFormat::Xml | OutputFormat::Csv)
            )
    });
    let first_answer = if markdown { "markdown" } else { "as-is" };
    ConversationBody {
        info: kept.info,
        values_shown: owner,
        first_answer,
        messages,
        role: "reader",
        collaboration: None,
        collaborators: Vec::new(),
    }
}

/// `kept`, on the tool `text` (its version's), as the runtime goes on with it for a caller of
/// `standing`. Only its owner's turns restore the values data-loss prevention hid: anyone
/// else's goes on with each placeholder standing for itself, so that no answer they are shown
/// holds the owner's values (and the values kept stay the owner's: a placeholder keeps the
/// value it was kept with first).
pub(crate) fn conversation_of(
    kept: &KeptConversation,
    text: String,
    standing: Standing,
) -> Result<Conversation, llmtool_runtime::ConversationError> {
    let mut as_kept = kept.conversation.clone();
    as_kept.thread.tool = Some(text);
    if standing != Standing::Owner {
        let placeholders = std::mem::take(&mut as_kept.thread.placeholders);
        as_kept.thread.placeholders = placeholders.into_keys().map(|p| (p.clone(), p)).collect();
    }
    Conversation::from_log(&as_kept)
}
