//! The routes behind a member's list of conversations: `GET /conversations` (their own and
//! those they joined, or an admin's view of everyone's; archived or not; searched by title and by the words of the
//! turns; paged newest first with `X-Next-Cursor`), and the owner's `PATCH` (rename, archive)
//! and `DELETE` of one. A conversation the caller may not read is answered as a missing one.

use std::collections::HashMap;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use llmtool_log::After;
use llmtool_registry::{
    ConversationEdit, ConversationInfo, ConversationQuery, Role, Selector, TitleChange, owner_of,
};
use serde::{Deserialize, Deserializer, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::auth::Caller;
use crate::conversation_api::standing;
use crate::{Problem, ServerState};

type Answer<T> = Result<T, Problem>;

/// The header that carries the cursor of the next page.
pub(crate) const NEXT_CURSOR: HeaderName = HeaderName::from_static("x-next-cursor");

/// The longest page of conversations, and the longest search text.
const MOST_LISTED: u32 = 200;
const LONGEST_SEARCH: usize = 200;
const MOST_WORDS: usize = 16;

/// `GET /conversations`: whose, which, and where the page starts.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct ListParams {
    /// Only the caller's own (an admin sees everyone's by default).
    #[serde(default)]
    mine: bool,
    /// The archived ones instead of the others.
    #[serde(default)]
    archived: bool,
    /// Text the title holds, or words the turns hold (each a prefix), at most 200 characters
    /// and 16 words.
    q: Option<String>,
    /// Where the page starts: the `X-Next-Cursor` of the page before.
    cursor: Option<String>,
    /// At most this many (1 to 200; 200 by default).
    limit: Option<u32>,
}

/// The conversations the caller may read, newest last turn first: their own and those they
/// joined as a collaborator (while they may see its tool), or (for an admin) everyone's. A full page says where the next one starts in `X-Next-Cursor`.
#[utoipa::path(get, path = "/conversations", params(ListParams), security(("bearer" = [])),
    responses((status = 200, body = Vec<ListedConversation>,
            headers(("x-next-cursor" = String, description = "Where the next page starts, when there may be one"))),
        (status = 400, description = "A cursor no page gave, a search of over 200 characters or 16 words, or a limit out of 1 to 200", body = Problem),
        (status = 401, description = "No token, or one the library does not know", body = Problem)))]
pub(crate) async fn list_conversations(
    State(state): State<ServerState>,
    caller: Caller,
    Query(params): Query<ListParams>,
) -> Answer<(HeaderMap, Json<Vec<ListedConversation>>)> {
    caller.require_token(Role::Viewer)?;
    let limit = params.limit.unwrap_or(MOST_LISTED);
    if !(1..=MOST_LISTED).contains(&limit) {
        return Err(Problem::bad_request("a page lists 1 to 200 conversations"));
    }
    let long = |q: &String| {
        q.chars().count() > LONGEST_SEARCH || q.split_whitespace().count() > MOST_WORDS
    };
    if params.q.as_ref().is_some_and(long) {
        return Err(Problem::bad_request("a search is at most 200 characters and 16 words"));
    }
    let after = match params.cursor.as_deref() {
        Some(cursor) => Some(
            After::from_cursor(cursor)
                .ok_or_else(|| Problem::from(llmtool_registry::StoreError::BadCursor))?,
        ),
        None => None,
    };
    let admin = caller.role.is_some_and(|role| role >= Role::Admin);
    let own = owner_of(&caller.member_id, caller.name.as_deref());
    let everyone = admin && !params.mine;
    let query = ConversationQuery {
        owner: (!everyone).then_some(own.as_str()),
        // Theirs, and those they joined.
        collaborator: (!caller.member_id.is_empty()).then_some(caller.member_id.as_str()),
        archived: Some(params.archived),
        text: params.q.as_deref(),
        after: after.as_ref(),
        limit,
    };
    let page = state.store.conversations(&query).await?;
    let mut headers = HeaderMap::new();
    if page.len() == limit as usize {
        let next = page.last().map(|last| last.summary.after().cursor());
        if let Some(value) = next.and_then(|next| HeaderValue::from_str(&next).ok()) {
            headers.insert(NEXT_CURSOR, value);
        }
    }
    // One they joined is listed while they may see its tool (the one visibility rule).
    let mut seen: HashMap<(String, u32), bool> = HashMap::new();
    let mut shown = Vec::with_capacity(page.len());
    for info in page {
        // Someone else's in a list of the caller's own is one they joined; in everyone's list
        // (an admin's), it is asked.
        let joined =
            info.owner != own && (!everyone || collaborating(&state, &caller, &info).await?);
        if !everyone && info.owner != own {
            let key = (info.slug.clone(), info.version);
            let visible = match seen.get(&key) {
                Some(visible) => *visible,
                None => {
                    let pinned = Selector::Version(info.version);
                    let found = crate::api::seen_version(&state, &caller, &info.slug, &pinned);
                    *seen.entry(key).or_insert(found.await.is_ok())
                }
            };
            if !visible {
                continue;
            }
        }
        shown.push(ListedConversation { info, joined });
    }
    Ok((headers, Json(shown)))
}

/// A conversation as a list shows it to the caller.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ListedConversation {
    #[serde(flatten)]
    info: ConversationInfo,
    /// Whether the caller joined it as a collaborator (it is someone else's): they read it and
    /// add turns; its owner renames, archives and deletes it.
    joined: bool,
}

/// Whether the caller collaborates on `info` (not theirs).
async fn collaborating(
    state: &ServerState,
    caller: &Caller,
    info: &ConversationInfo,
) -> Answer<bool> {
    if caller.member_id.is_empty() {
        return Ok(false);
    }
    Ok(state.store.is_collaborator(&info.summary.id, &caller.member_id).await?)
}

/// `PATCH /conversations/{id}`: what changes (what is left out stays).
#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct EditBody {
    /// A new title (some text on one line, at most 200 characters), or `null` for the default
    /// again (the tool's name and its first value).
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>)]
    title: Option<serde_json::Value>,
    archived: Option<bool>,
}

/// A field that is there, `null` included: `Some` (one left out is `None`, its default).
fn present<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<serde_json::Value>, D::Error> {
    serde_json::Value::deserialize(deserializer).map(Some)
}

impl EditBody {
    /// The change asked for, or the problem of a title that is neither text nor `null`.
    fn change(self) -> Answer<ConversationEdit> {
        let title = match self.title {
            None => TitleChange::Keep,
            Some(serde_json::Value::Null) => TitleChange::Default,
            Some(serde_json::Value::String(title)) => TitleChange::Rename(title),
            Some(_) => {
                return Err(Problem::bad_request("a title is text, or null for the default"));
            }
        };
        Ok(ConversationEdit { title, archived: self.archived })
    }
}

/// Rename or archive a conversation (the caller's own).
#[utoipa::path(patch, path = "/conversations/{id}", params(("id" = String, Path, description = "The conversation's id")), security(("bearer" = [])),
    request_body = EditBody,
    responses((status = 200, body = ConversationInfo),
        (status = 400, description = "A title that is empty, too long or on more than one line", body = Problem),
        (status = 403, description = "An admin's, not the caller's: only its owner changes it", body = Problem),
        (status = 404, description = "No such conversation, or not the caller's", body = Problem),
        (status = 401, description = "No token, or one the library does not know", body = Problem)))]
pub(crate) async fn edit_conversation(
    State(state): State<ServerState>,
    caller: Caller,
    Path(id): Path<String>,
    Json(body): Json<EditBody>,
) -> Answer<Json<ConversationInfo>> {
    owned(&state, &caller, &id).await?;
    Ok(Json(state.store.edit_conversation(&id, &body.change()?).await?))
}

/// Delete a conversation (the caller's own): its turns' text and pictures and its share link
/// go; its runs stay in the usage and spend, with their cost and tokens and no text.
#[utoipa::path(delete, path = "/conversations/{id}", params(("id" = String, Path, description = "The conversation's id")), security(("bearer" = [])),
    responses((status = 204, description = "Deleted"),
        (status = 403, description = "An admin's, not the caller's: only its owner deletes it", body = Problem),
        (status = 404, description = "No such conversation, or not the caller's", body = Problem),
        (status = 409, description = "A follow-up of this conversation is under way: delete it once it has ended", body = Problem),
        (status = 401, description = "No token, or one the library does not know", body = Problem)))]
pub(crate) async fn delete_conversation(
    State(state): State<ServerState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Answer<StatusCode> {
    owned(&state, &caller, &id).await?;
    // Held through the delete: no follow-up adds a turn to what is being taken away.
    let following = match state.runs() {
        Some(runs) => Some(runs.follow(&id).await?),
        None => None,
    };
    caller.acting(&state).delete_conversation(&id).await?;
    if let Some(following) = following {
        following.end().await;
    }
    Ok(StatusCode::NO_CONTENT)
}

/// Refuses anyone but the owner of conversation `id`: 404 for whoever may not read it, 403 for
/// a collaborator or an admin, who may read it and not change it.
async fn owned(state: &ServerState, caller: &Caller, id: &str) -> Answer<()> {
    standing(state, caller, id).await?.1.owner_only()
}
