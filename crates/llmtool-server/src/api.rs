//! The `/api/v1` routes: search and read tools, publish versions, compare and render them,
//! tag, label and delete.

use axum::Json;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::routing::{get, post, put};
use llmtool_registry::{Page, Publication, Published, Role, Selector, ToolVersion};
use serde::{Deserialize, Serialize};

use crate::auth::Caller;
use crate::{Problem, ServerState};

pub(crate) fn routes() -> Router<ServerState> {
    Router::new()
        .route("/tools", get(search).post(publish))
        .route("/tools/{slug}", get(tool).delete(delete))
        .route("/tools/{slug}/versions", get(versions))
        .route("/tools/{slug}/versions/{number}", get(version))
        .route("/tools/{slug}/diff", get(diff))
        .route("/tools/{slug}/render", post(render))
        .route("/tools/{slug}/tags/{tag}", put(add_tag).delete(remove_tag))
        .route("/tools/{slug}/labels/{label}", put(set_label))
}

type Answer<T> = Result<T, Problem>;

/// `GET /tools`: the search's parameters.
#[derive(Debug, Deserialize)]
struct SearchParams {
    q: Option<String>,
    tag: Option<String>,
    variable_type: Option<String>,
    output_type: Option<String>,
    model: Option<String>,
    cursor: Option<String>,
    limit: Option<u32>,
}

async fn search(
    State(state): State<ServerState>,
    caller: Caller,
    Query(params): Query<SearchParams>,
) -> Answer<Json<Page>> {
    caller.require(Role::Viewer, state.access)?;
    let query = llmtool_registry::Query {
        text: params.q,
        tag: params.tag,
        variable_type: params.variable_type,
        output_type: params.output_type,
        model: params.model,
        cursor: params.cursor,
        limit: params.limit.unwrap_or(50),
    };
    Ok(Json(state.store.search(&query).await?))
}

/// `POST /tools`: where to publish the tool file of the body, and why.
#[derive(Debug, Deserialize)]
struct PublishParams {
    /// The tool's slug (default: made from its `prompt_name`).
    slug: Option<String>,
    note: Option<String>,
}

async fn publish(
    State(state): State<ServerState>,
    caller: Caller,
    Query(params): Query<PublishParams>,
    body: String,
) -> Answer<(StatusCode, Json<Published>)> {
    caller.require(Role::Editor, state.access)?;
    let publication =
        Publication::from_text(&body, "tool.json").map_err(llmtool_registry::StoreError::from)?;
    let slug = params.slug.unwrap_or_else(|| publication.default_slug());
    let by = caller.name.as_deref();
    let published = state.store.publish(&slug, &publication, params.note.as_deref(), by).await?;
    let status = if published.created { StatusCode::CREATED } else { StatusCode::OK };
    Ok((status, Json(published)))
}

/// A version as the API shows it: the tool file as JSON, not as text.
#[derive(Debug, Serialize)]
struct VersionBody {
    slug: String,
    version: u32,
    content_hash: String,
    tool: serde_json::Value,
    note: Option<String>,
    published_at: String,
    published_by: Option<String>,
    tags: Vec<String>,
    labels: Vec<String>,
}

impl From<ToolVersion> for VersionBody {
    fn from(version: ToolVersion) -> VersionBody {
        VersionBody {
            tool: serde_json::from_str(&version.text).unwrap_or(serde_json::Value::Null),
            slug: version.slug,
            version: version.version,
            content_hash: version.content_hash,
            note: version.note,
            published_at: version.published_at,
            published_by: version.published_by,
            tags: version.tags,
            labels: version.labels,
        }
    }
}

/// `GET /tools/{slug}`: the latest version, or the one a label points at.
#[derive(Debug, Deserialize)]
struct ToolParams {
    label: Option<String>,
}

async fn tool(
    State(state): State<ServerState>,
    caller: Caller,
    Path(slug): Path<String>,
    Query(params): Query<ToolParams>,
) -> Answer<Json<VersionBody>> {
    caller.require(Role::Viewer, state.access)?;
    let selector = params.label.map_or(Selector::Latest, Selector::Label);
    Ok(Json(state.store.version(&slug, &selector).await?.into()))
}

async fn versions(
    State(state): State<ServerState>,
    caller: Caller,
    Path(slug): Path<String>,
) -> Answer<Json<Vec<VersionBody>>> {
    caller.require(Role::Viewer, state.access)?;
    let versions = state.store.versions(&slug).await?;
    Ok(Json(versions.into_iter().map(VersionBody::from).collect()))
}

async fn version(
    State(state): State<ServerState>,
    caller: Caller,
    Path((slug, number)): Path<(String, u32)>,
) -> Answer<Json<VersionBody>> {
    caller.require(Role::Viewer, state.access)?;
    Ok(Json(state.store.version(&slug, &Selector::Version(number)).await?.into()))
}

async fn add_tag(
    State(state): State<ServerState>,
    caller: Caller,
    Path((slug, tag)): Path<(String, String)>,
) -> Answer<StatusCode> {
    caller.require(Role::Editor, state.access)?;
    state.store.add_tag(&slug, &tag).await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn remove_tag(
    State(state): State<ServerState>,
    caller: Caller,
    Path((slug, tag)): Path<(String, String)>,
) -> Answer<StatusCode> {
    caller.require(Role::Editor, state.access)?;
    state.store.remove_tag(&slug, &tag).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `PUT /tools/{slug}/labels/{label}`: the version the label moves to.
#[derive(Debug, Deserialize)]
struct LabelBody {
    version: u32,
}

async fn set_label(
    State(state): State<ServerState>,
    caller: Caller,
    Path((slug, label)): Path<(String, String)>,
    Json(body): Json<LabelBody>,
) -> Answer<StatusCode> {
    caller.require(Role::Editor, state.access)?;
    state.store.set_label(&slug, &label, body.version).await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn delete(
    State(state): State<ServerState>,
    caller: Caller,
    Path(slug): Path<String>,
) -> Answer<StatusCode> {
    caller.require(Role::Admin, state.access)?;
    state.store.delete(&slug).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Which version a request means: `?version=N`, else `?label=L`, else the latest.
#[derive(Debug, Deserialize)]
struct VersionParams {
    version: Option<u32>,
    label: Option<String>,
}

impl VersionParams {
    fn selector(self) -> Selector {
        match (self.version, self.label) {
            (Some(number), _) => Selector::Version(number),
            (None, Some(label)) => Selector::Label(label),
            (None, None) => Selector::Latest,
        }
    }
}

/// A rendered prompt, and the version it is the prompt of.
#[derive(Debug, Serialize)]
struct Rendered {
    slug: String,
    version: u32,
    prompt: String,
}

/// `POST /tools/{slug}/render`: the prompt with the values of the body (a JSON object, as
/// `llmtool render --vars` takes it) filled in.
async fn render(
    State(state): State<ServerState>,
    caller: Caller,
    Path(slug): Path<String>,
    Query(params): Query<VersionParams>,
    Json(values): Json<serde_json::Value>,
) -> Answer<Json<Rendered>> {
    caller.require(Role::Viewer, state.access)?;
    let version = state.store.version(&slug, &params.selector()).await?;
    let document = llmtool_core::Document::from_text(version.text);
    let Some(tool) = document.tool.as_ref() else {
        return Err(Problem::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Internal Server Error",
            "a stored version does not read as a tool",
        ));
    };
    let template = llmtool_core::template::ToolTemplate::new(tool);
    let inputs = llmtool_core::template::Inputs::from_json(&values, template.variables())
        .map_err(|error| Problem::bad_request(error.to_string()))?;
    match template.render(&inputs) {
        Ok(prompt) => Ok(Json(Rendered { slug, version: version.version, prompt })),
        Err(problems) => {
            let detail = problems.iter().map(|p| p.message.clone()).collect::<Vec<_>>().join("; ");
            Err(Problem::new(StatusCode::UNPROCESSABLE_ENTITY, "Unprocessable Content", detail))
        }
    }
}

/// `GET /tools/{slug}/diff?from=&to=`: the two versions' canonical texts.
#[derive(Debug, Deserialize)]
struct DiffParams {
    from: u32,
    to: Option<u32>,
}

/// What changed from one version to another, as a unified diff of their canonical texts.
#[derive(Debug, Serialize)]
struct VersionDiff {
    slug: String,
    from: u32,
    to: u32,
    diff: String,
}

async fn diff(
    State(state): State<ServerState>,
    caller: Caller,
    Path(slug): Path<String>,
    Query(params): Query<DiffParams>,
) -> Answer<Json<VersionDiff>> {
    caller.require(Role::Viewer, state.access)?;
    let from = state.store.version(&slug, &Selector::Version(params.from)).await?;
    let to_selector = params.to.map_or(Selector::Latest, Selector::Version);
    let to = state.store.version(&slug, &to_selector).await?;
    let diff = similar::TextDiff::from_lines(&from.text, &to.text)
        .unified_diff()
        .context_radius(3)
        .header(&format!("{slug}@{}", from.version), &format!("{slug}@{}", to.version))
        .to_string();
    Ok(Json(VersionDiff { slug, from: from.version, to: to.version, diff }))
}
