//! The `/api/v1` routes: search and read tools, publish versions, compare and render them,
//! tag, label and delete.

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse as _, Response};
use axum::routing::{get, post, put};
use llmtool_registry::wire::{LabelBody, VersionBody};
use llmtool_registry::{Page, Publication, Published, Role, Selector, ToolVersion};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, OpenApi, ToSchema};

use crate::auth::Caller;
use crate::cache::Cached;
use crate::{Problem, ServerState};

pub(crate) fn routes() -> Router<ServerState> {
    Router::new()
        .route("/tools", get(search).post(publish))
        .route("/tools/{slug}", get(tool).delete(delete))
        .route("/tools/{slug}/versions", get(versions))
        .route("/tools/{slug}/versions/{number}", get(version))
        .route("/tools/{slug}/diff", get(diff))
        .route("/tools/{slug}/render", post(render))
        .route("/tools/{slug}/run", post(crate::run_api::run))
        .route("/usage", get(crate::run_api::usage))
        .route("/audit", get(crate::audit_api::audit))
        .route("/tools/{slug}/runs", get(crate::studio_api::runs))
        .route("/tools/{slug}/avatar", get(crate::studio_api::avatar))
        .route("/tags", get(crate::studio_api::tags))
        .route("/models", get(crate::studio_api::models))
        .route("/check", post(crate::studio_api::check))
        .route("/format", post(crate::studio_api::format))
        .route(
            "/session",
            get(crate::session::who).post(crate::session::sign_in).delete(crate::session::sign_out),
        )
        .route("/session/invite", post(crate::session::sign_in_by_invite))
        .route("/session/methods", get(crate::session::methods))
        .route("/tools/{slug}/tags/{tag}", put(add_tag).delete(remove_tag))
        .route("/tools/{slug}/labels/{label}", put(set_label))
        .route("/openapi.json", get(openapi))
        .merge(crate::members::routes())
        .merge(crate::control_api::routes())
        .merge(crate::spend_api::routes())
        .merge(crate::conversation_api::routes())
        .merge(crate::collaboration_api::routes())
        .merge(crate::snapshot_api::routes())
        .merge(crate::documents_api::routes())
        .merge(crate::token_api::routes())
        .merge(crate::slack::install::routes())
        .merge(crate::slack::sync_api::routes())
}

type Answer<T> = Result<T, Problem>;

/// `GET /tools`: the search's parameters.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct SearchParams {
    /// Words that must all match, as prefixes, over name, description, usage notes and prompt;
    /// the tools found come best first (BM25).
    q: Option<String>,
    tag: Option<String>,
    variable_type: Option<String>,
    output_type: Option<String>,
    model: Option<String>,
    /// The `next` of the page before (a search with words and a list without have cursors of
    /// their own).
    cursor: Option<String>,
    limit: Option<u32>,
}

/// Search the library.
#[utoipa::path(get, path = "/tools", params(SearchParams), security((), ("bearer" = [])),
    responses((status = 200, description = "A page of tools: best first for words, else by slug", body = Page), (status = 401, description = "No token, or one the library does not know", body = Problem), (status = 403, description = "The token's role is too low", body = Problem), (status = 400, description = "A cursor the library did not give", body = Problem)))]
async fn search(
    State(state): State<ServerState>,
    caller: Caller,
    Query(params): Query<SearchParams>,
) -> Answer<Response> {
    caller.require(Role::Viewer, state.access)?;
    let query = llmtool_registry::Query {
        text: params.q,
        tag: params.tag,
        variable_type: params.variable_type,
        output_type: params.output_type,
        model: params.model,
        cursor: params.cursor,
        limit: params.limit.unwrap_or(50),
        visible: caller.visibility.clone(),
    };
    let read = async {
        let page = state.store.search(&query).await?;
        let page =
            serde_json::to_vec(&page).map_err(|error| Problem::internal(error.to_string()))?;
        Ok::<_, Problem>(Bytes::from(page))
    };
    let (page, kept) = state.cache().page(query.clone(), read).await?;
    state.metrics().cache(kept);
    Ok(json_bytes(page))
}

/// `POST /tools`: where to publish the tool file of the body, and why.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct PublishParams {
    /// The tool's slug (default: made from its `prompt_name`).
    slug: Option<String>,
    note: Option<String>,
    /// The version this file was edited from: refused with 409 if another is latest now.
    base: Option<u32>,
    /// The tags a new tool starts with, separated by commas (an existing tool keeps its own).
    /// Given a team's tag, the tool is that team's alone; `all` (every member) is added only
    /// when none of the tags is a team's, or when it is one of them.
    tags: Option<String>,
}

/// Publish the tool file of the body as the next version of its slug.
#[utoipa::path(post, path = "/tools", params(PublishParams), security(("bearer" = [])),
    request_body(content = String, description = "A tool file", content_type = "application/json"),
    responses((status = 201, description = "A new version", body = Published), (status = 200, description = "The content of the latest version: no new version", body = Published),
        (status = 422, description = "The tool file has errors; `diagnostics` are `llmtool check --format json`'s", body = Problem), (status = 409, description = "`base` is no longer the latest version", body = Problem), (status = 401, description = "No token, or one the library does not know", body = Problem), (status = 403, description = "The token's role is too low", body = Problem), (status = 413, description = "A body over 1 MiB")))]
async fn publish(
    State(state): State<ServerState>,
    caller: Caller,
    Query(params): Query<PublishParams>,
    body: String,
) -> Answer<(StatusCode, Json<Published>)> {
    caller.require(Role::Editor, state.access)?;
    let tags: Vec<String> = params
        .tags
        .iter()
        .flat_map(|tags| tags.split(','))
        .map(|tag| tag.trim().to_owned())
        .filter(|tag| !tag.is_empty())
        .collect();
    for tag in &tags {
        may_tag(&state, &caller, tag).await?;
    }
    let publication = Publication::from_text(&body, "tool.json")
        .map_err(llmtool_registry::StoreError::from)?
        .on_top_of(params.base)
        .tagged(tags);
    let slug = params.slug.unwrap_or_else(|| publication.default_slug());
    // A tool the caller does not see is not there for them to publish to, either; nor is a
    // deleted one, which a publish brings back with its tags.
    if let Some(tags) = state.store.tags_of(&slug).await? {
        caller.sees(&slug, &tags)?;
    }
    let by = caller.name.as_deref();
    let published =
        caller.acting(&state).publish(&slug, &publication, params.note.as_deref(), by).await?;
    state.tools_changed();
    let status = if published.created { StatusCode::CREATED } else { StatusCode::OK };
    Ok((status, Json(published)))
}

/// `GET /tools/{slug}`: the latest version, or the one a label points at.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct ToolParams {
    /// The version this label points at, instead of the latest.
    label: Option<String>,
}

/// A tool's latest version, or the one a label points at.
#[utoipa::path(get, path = "/tools/{slug}", params(("slug" = String, Path, description = "The tool's slug"), ToolParams), security((), ("bearer" = [])),
    responses((status = 200, body = VersionBody), (status = 404, description = "No such tool or label", body = Problem), (status = 401, description = "No token, or one the library does not know", body = Problem), (status = 403, description = "The token's role is too low", body = Problem)))]
async fn tool(
    State(state): State<ServerState>,
    caller: Caller,
    Path(slug): Path<String>,
    Query(params): Query<ToolParams>,
) -> Answer<Response> {
    caller.require(Role::Viewer, state.access)?;
    let selector = params.label.map_or(Selector::Latest, Selector::Label);
    version_body(&state, &caller, slug, selector).await
}

/// The JSON body of a version the caller sees: from the read cache, or read from the store
/// and kept.
async fn version_body(
    state: &ServerState,
    caller: &Caller,
    slug: String,
    selector: Selector,
) -> Answer<Response> {
    let cache = state.cache();
    let found = cache.get(&slug, &selector);
    state.metrics().cache(found.is_some());
    if let Some(cached) = found {
        caller.sees(&slug, &cached.tags)?;
        return Ok(json_bytes(cached.body));
    }
    let generation = cache.generation();
    let version = seen_version(state, caller, &slug, &selector).await?;
    let tags = Arc::from(version.tags.clone());
    let body = serde_json::to_vec(&VersionBody::from(version))
        .map_err(|error| Problem::internal(error.to_string()))?;
    let body = Bytes::from(body);
    cache.put(generation, slug, selector, Cached { tags, body: body.clone() });
    Ok(json_bytes(body))
}

/// The version of `slug` that `selector` picks, if the caller sees the tool; else, as for a
/// tool that does not exist, 404. Every route that reads or changes one tool comes here.
pub(crate) async fn seen_version(
    state: &ServerState,
    caller: &Caller,
    slug: &str,
    selector: &Selector,
) -> Answer<ToolVersion> {
    let version = state.store.version(slug, selector).await?;
    caller.sees(slug, &version.tags)?;
    Ok(version)
}

/// `body`, JSON already.
fn json_bytes(body: Bytes) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// Every version of a tool, newest first.
#[utoipa::path(get, path = "/tools/{slug}/versions", params(("slug" = String, Path, description = "The tool's slug")), security((), ("bearer" = [])),
    responses((status = 200, body = Vec<VersionBody>), (status = 404, body = Problem), (status = 401, description = "No token, or one the library does not know", body = Problem), (status = 403, description = "The token's role is too low", body = Problem)))]
async fn versions(
    State(state): State<ServerState>,
    caller: Caller,
    Path(slug): Path<String>,
) -> Answer<Json<Vec<VersionBody>>> {
    caller.require(Role::Viewer, state.access)?;
    seen_version(&state, &caller, &slug, &Selector::Latest).await?;
    let versions = state.store.versions(&slug).await?;
    Ok(Json(versions.into_iter().map(VersionBody::from).collect()))
}

/// One version of a tool.
#[utoipa::path(get, path = "/tools/{slug}/versions/{number}", params(("slug" = String, Path, description = "The tool's slug"), ("number" = u32, Path, description = "The version number")), security((), ("bearer" = [])),
    responses((status = 200, body = VersionBody), (status = 404, body = Problem), (status = 401, description = "No token, or one the library does not know", body = Problem), (status = 403, description = "The token's role is too low", body = Problem)))]
async fn version(
    State(state): State<ServerState>,
    caller: Caller,
    Path((slug, number)): Path<(String, u32)>,
) -> Answer<Response> {
    caller.require(Role::Viewer, state.access)?;
    version_body(&state, &caller, slug, Selector::Version(number)).await
}

/// Tag a tool.
#[utoipa::path(put, path = "/tools/{slug}/tags/{tag}", params(("slug" = String, Path, description = "The tool's slug"), ("tag" = String, Path, description = "Lowercase letters, digits, `-`, `_` and `.`")), security(("bearer" = [])),
    responses((status = 204, description = "Tagged"), (status = 400, body = Problem), (status = 404, body = Problem), (status = 422, description = "The tool has 64 tags already", body = Problem), (status = 401, description = "No token, or one the library does not know", body = Problem), (status = 403, description = "The token's role is too low", body = Problem)))]
async fn add_tag(
    State(state): State<ServerState>,
    caller: Caller,
    Path((slug, tag)): Path<(String, String)>,
) -> Answer<StatusCode> {
    caller.require(Role::Editor, state.access)?;
    seen_version(&state, &caller, &slug, &Selector::Latest).await?;
    may_tag(&state, &caller, &tag).await?;
    caller.acting(&state).add_tag(&slug, &tag).await?;
    state.tools_changed();
    Ok(StatusCode::NO_CONTENT)
}

/// Untag a tool.
#[utoipa::path(delete, path = "/tools/{slug}/tags/{tag}", params(("slug" = String, Path, description = "The tool's slug"), ("tag" = String, Path, description = "Lowercase letters, digits, `-`, `_` and `.`")), security(("bearer" = [])),
    responses((status = 204, description = "Untagged"), (status = 404, body = Problem), (status = 401, description = "No token, or one the library does not know", body = Problem), (status = 403, description = "The token's role is too low", body = Problem)))]
async fn remove_tag(
    State(state): State<ServerState>,
    caller: Caller,
    Path((slug, tag)): Path<(String, String)>,
) -> Answer<StatusCode> {
    caller.require(Role::Editor, state.access)?;
    seen_version(&state, &caller, &slug, &Selector::Latest).await?;
    may_tag(&state, &caller, &tag).await?;
    caller.acting(&state).remove_tag(&slug, &tag).await?;
    state.tools_changed();
    Ok(StatusCode::NO_CONTENT)
}

/// Point a label at a version.
#[utoipa::path(put, path = "/tools/{slug}/labels/{label}", params(("slug" = String, Path, description = "The tool's slug"), ("label" = String, Path, description = "`production`, `staging`, ...")), security(("bearer" = [])),
    request_body = LabelBody,
    responses((status = 204, description = "The label points at the version"), (status = 400, body = Problem), (status = 404, body = Problem), (status = 422, description = "The tool has 64 labels already, and this is a new one", body = Problem), (status = 401, description = "No token, or one the library does not know", body = Problem), (status = 403, description = "The token's role is too low", body = Problem)))]
async fn set_label(
    State(state): State<ServerState>,
    caller: Caller,
    Path((slug, label)): Path<(String, String)>,
    Json(body): Json<LabelBody>,
) -> Answer<StatusCode> {
    caller.require(Role::Editor, state.access)?;
    seen_version(&state, &caller, &slug, &Selector::Latest).await?;
    caller.acting(&state).set_label(&slug, &label, body.version).await?;
    state.tools_changed();
    Ok(StatusCode::NO_CONTENT)
}

/// Delete a tool (hidden, not erased; publishing brings it back).
#[utoipa::path(delete, path = "/tools/{slug}", params(("slug" = String, Path, description = "The tool's slug")), security(("bearer" = [])),
    responses((status = 204, description = "Deleted"), (status = 404, body = Problem), (status = 401, description = "No token, or one the library does not know", body = Problem), (status = 403, description = "The token's role is too low", body = Problem)))]
async fn delete(
    State(state): State<ServerState>,
    caller: Caller,
    Path(slug): Path<String>,
) -> Answer<StatusCode> {
    caller.require(Role::Admin, state.access)?;
    seen_version(&state, &caller, &slug, &Selector::Latest).await?;
    caller.acting(&state).delete(&slug).await?;
    state.tools_changed();
    Ok(StatusCode::NO_CONTENT)
}

/// Refuses (403) to let the caller put on or take off `tag`, when it is the tag of a team of
/// which the caller, an editor, is not a member (the rule: [`llmtool_registry::may_tag`]).
async fn may_tag(state: &ServerState, caller: &Caller, tag: &str) -> Answer<()> {
    let role = caller.role.unwrap_or(Role::Viewer);
    let is_team = role < Role::Admin && state.store.teams().await?.iter().any(|t| t.name == tag);
    if llmtool_registry::may_tag(role, &caller.teams, tag, is_team) {
        Ok(())
    } else {
        Err(Problem::forbidden_because(format!(
            "`{tag}` is the tag of a team you are not in: its members, owners and admins curate for it"
        )))
    }
}

/// Which version a request means: `?version=N`, else `?label=L`, else the latest.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct VersionParams {
    /// A version number.
    version: Option<u32>,
    /// A label, when no number is given (else the latest).
    label: Option<String>,
}

impl VersionParams {
    pub(crate) fn selector(self) -> Selector {
        match (self.version, self.label) {
            (Some(number), _) => Selector::Version(number),
            (None, Some(label)) => Selector::Label(label),
            (None, None) => Selector::Latest,
        }
    }
}

/// A rendered prompt, and the version it is the prompt of.
#[derive(Debug, Serialize, ToSchema)]
struct Rendered {
    slug: String,
    version: u32,
    prompt: String,
}

/// `POST /tools/{slug}/render`: the prompt with the values of the body (a JSON object, as
/// `llmtool render --vars` takes it) filled in.
/// Render a version's prompt with values (a JSON object, as `llmtool render --vars` takes it).
#[utoipa::path(post, path = "/tools/{slug}/render", params(("slug" = String, Path, description = "The tool's slug"), VersionParams), security((), ("bearer" = [])),
    request_body(content = Object, description = "The values, by variable name"),
    responses((status = 200, body = Rendered), (status = 422, description = "A value is missing or not allowed, or the tool is a smart tool (no prompt)", body = Problem), (status = 404, body = Problem), (status = 401, description = "No token, or one the library does not know", body = Problem), (status = 403, description = "The token's role is too low", body = Problem)))]
async fn render(
    State(state): State<ServerState>,
    caller: Caller,
    Path(slug): Path<String>,
    Query(params): Query<VersionParams>,
    Json(values): Json<serde_json::Value>,
) -> Answer<Json<Rendered>> {
    caller.require(Role::Viewer, state.access)?;
    let version = seen_version(&state, &caller, &slug, &params.selector()).await?;
    let document = llmtool_format::Document::from_text(version.text);
    let Some(tool) = document.tool.as_ref() else {
        return Err(Problem::internal("a stored version does not read as a tool"));
    };
    if tool.kind() == llmtool_format::model::ToolKind::Smart {
        let detail = "a smart tool has no prompt to render: its code runs instead (`POST /tools/{slug}/run`)";
        return Err(Problem::unprocessable(detail));
    }
    let template = llmtool_format::template::ToolTemplate::new(tool);
    let inputs = llmtool_format::template::Inputs::from_json(&values, template.variables())
        .map_err(|error| Problem::bad_request(error.to_string()))?;
    match template.render(&inputs) {
        Ok(prompt) => Ok(Json(Rendered { slug, version: version.version, prompt })),
        Err(problems) => {
            let detail = problems.iter().map(|p| p.message.clone()).collect::<Vec<_>>().join("; ");
            Err(Problem::unprocessable(detail))
        }
    }
}

/// `GET /tools/{slug}/diff?from=&to=`: the two versions' canonical texts.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct DiffParams {
    /// The older version.
    from: u32,
    /// The newer version (default: the latest).
    to: Option<u32>,
}

/// What changed from one version to another, as a unified diff of their canonical texts.
#[derive(Debug, Serialize, ToSchema)]
struct VersionDiff {
    slug: String,
    from: u32,
    to: u32,
    diff: String,
}

/// A unified diff of two versions' canonical texts.
#[utoipa::path(get, path = "/tools/{slug}/diff", params(("slug" = String, Path, description = "The tool's slug"), DiffParams), security((), ("bearer" = [])),
    responses((status = 200, body = VersionDiff), (status = 404, body = Problem), (status = 401, description = "No token, or one the library does not know", body = Problem), (status = 403, description = "The token's role is too low", body = Problem)))]
async fn diff(
    State(state): State<ServerState>,
    caller: Caller,
    Path(slug): Path<String>,
    Query(params): Query<DiffParams>,
) -> Answer<Json<VersionDiff>> {
    caller.require(Role::Viewer, state.access)?;
    let from = seen_version(&state, &caller, &slug, &Selector::Version(params.from)).await?;
    let to_selector = params.to.map_or(Selector::Latest, Selector::Version);
    let to = seen_version(&state, &caller, &slug, &to_selector).await?;
    let diff = similar::TextDiff::from_lines(&from.text, &to.text)
        .unified_diff()
        .context_radius(3)
        .header(&format!("{slug}@{}", from.version), &format!("{slug}@{}", to.version))
        .to_string();
    Ok(Json(VersionDiff { slug, from: from.version, to: to.version, diff }))
}

/// The API's OpenAPI document, made from the routes above.
#[derive(OpenApi)]
#[openapi(
    info(title = "llmtool tool library", description = "Versioned, tagged, labelled tools (docs/registry.md)."),
    servers((url = "/api/v1")),
    paths(search, publish, tool, versions, version, diff, render, crate::run_api::run, crate::run_api::usage, add_tag, remove_tag, set_label, delete,
        crate::studio_api::runs, crate::studio_api::avatar, crate::studio_api::tags, crate::studio_api::models, crate::studio_api::check, crate::studio_api::format,
        crate::session::sign_in, crate::session::sign_in_by_invite, crate::session::methods, crate::session::who, crate::session::sign_out,
        crate::members::members, crate::members::member, crate::members::add_member, crate::members::edit_member, crate::members::remove_member,
        crate::members::teams, crate::members::create_team, crate::members::rename_team, crate::members::remove_team,
        crate::members::invite, crate::members::import, crate::members::workspace, crate::members::set_workspace,
        crate::audit_api::audit,
        crate::control_api::integrations, crate::control_api::add_integration, crate::control_api::edit_integration, crate::control_api::remove_integration,
        crate::control_api::test_integration, crate::control_api::rotate, crate::control_api::prices, crate::control_api::set_price, crate::control_api::remove_price,
        crate::spend_api::spend, crate::spend_api::budgets, crate::spend_api::set_budget, crate::spend_api::remove_budget,
        crate::sidebar_api::list_conversations, crate::sidebar_api::edit_conversation, crate::sidebar_api::delete_conversation, crate::conversation_api::show,
        crate::collaboration_api::open_collaboration, crate::collaboration_api::close_collaboration, crate::collaboration_api::join_collaboration,
        crate::collaboration_api::leave_conversation, crate::collaboration_api::remove_collaborator, crate::conversation_api::message,
        crate::conversation_api::share, crate::conversation_api::unshare, crate::conversation_api::shared,
        crate::pictures_api::picture, crate::pictures_api::shared_picture,
        crate::snapshot_api::publish_snapshot, crate::snapshot_api::list_snapshots, crate::snapshot_api::public_snapshot,
        crate::snapshot_api::snapshot_picture, crate::snapshot_api::revoke_snapshot, crate::snapshot_api::revoke_snapshot_by_id,
        crate::documents_api::text,
        crate::token_api::list_tokens, crate::token_api::make_token, crate::token_api::revoke_token, crate::token_api::open_grant,
        crate::token_api::show_grant, crate::token_api::answer_grant, crate::token_api::redeem_grant,
        crate::slack::install::show, crate::slack::install::set, crate::slack::install::remove, crate::slack::install::install,
        crate::slack::sync_api::connect, crate::slack::sync_api::status, crate::slack::sync_api::disconnect, crate::slack::sync_api::channels),
    components(schemas(Page, Published, VersionBody, Rendered, VersionDiff, LabelBody, Problem, crate::run_api::RunBody, llmtool_log::Total,
        crate::studio_api::ModelChoice, crate::studio_api::FormattedText, crate::studio_api::RunSummary, llmtool_registry::TagCount, crate::session::SignIn, crate::session::InviteSignIn, crate::session::SignInMethods, llmtool_registry::wire::Signed,
        llmtool_registry::Member, llmtool_registry::NewMember, llmtool_registry::MemberEdit, llmtool_registry::Team, llmtool_registry::Role, crate::members::TeamName,
        crate::invites::Invite, crate::members::Imported, llmtool_registry::people_csv::RowProblem, llmtool_registry::Workspace, llmtool_registry::WorkspaceChange,
        llmtool_registry::AuditPage, llmtool_registry::AuditRecord, llmtool_registry::AuditEntry,
        llmtool_registry::Integration, llmtool_registry::IntegrationTest, llmtool_registry::PriceOverride, crate::control_api::NewIntegration, crate::control_api::IntegrationEdit,
        crate::control_api::TestBody, crate::control_api::Rotated, crate::control_api::Prices, crate::control_api::ModelPrice, crate::control_api::PerMillion,
        llmtool_registry::SpendReport, llmtool_registry::SpendTotals, llmtool_registry::SpendLine, llmtool_registry::DaySpend, llmtool_registry::BudgetStatus, llmtool_registry::Budget,
        llmtool_registry::Scope, llmtool_registry::Period, crate::spend_api::BudgetBody,
        llmtool_registry::ConversationInfo, crate::conversation_api::ConversationBody, crate::conversation_api::TurnBody,
        crate::conversation_api::MessageBody, crate::conversation_api::ShareBody, crate::sidebar_api::EditBody, crate::sidebar_api::ListedConversation,
        crate::collaboration_api::CollaborationLink, crate::collaboration_api::Joined, llmtool_registry::Collaborator,
        crate::snapshot_api::PublishedSnapshot, crate::snapshot_api::SnapshotBody, llmtool_registry::SnapshotInfo, crate::documents_api::DocumentText,
        llmtool_registry::TokenInfo, llmtool_registry::DeviceGrant, crate::token_api::TokenRequest, llmtool_registry::wire::MadeToken, crate::token_api::GrantRequest,
        llmtool_registry::wire::GrantOpened, crate::token_api::GrantAnswer, crate::token_api::GrantRedeem,
        crate::slack::install::SlackSetup, crate::slack::install::SlackCredentials, crate::slack::install::SlackInstall, llmtool_registry::SlackApp,
        llmtool_registry::SlackSync, crate::slack::sync_api::ConnectBody, crate::slack::sync_api::SlackChannel)),
    modifiers(&BearerScheme)
)]
pub(crate) struct ApiDoc;

/// The `bearer` security scheme the paths name: `Authorization: Bearer llmt_...`.
struct BearerScheme;

impl utoipa::Modify for BearerScheme {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
        let components = openapi.components.get_or_insert_with(Default::default);
        components
            .add_security_scheme("bearer", SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)));
    }
}

/// `GET /openapi.json`.
async fn openapi() -> Json<utoipa::openapi::OpenApi> {
    Json(ApiDoc::openapi())
}
