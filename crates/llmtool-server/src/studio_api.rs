//! The API routes the web studio needs besides the library's own: `check`'s diagnostics of a
//! text as it is typed, `fmt` of a text, the models a run may choose, a tool's kept runs, the
//! tags, and a tool's avatar as an image.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse as _, Response};
use llmtool_format::image;
use llmtool_registry::{PicturesOf, Role, RunsOf, Selector, TagCount};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::auth::Caller;
use crate::{Problem, ServerState};

/// The diagnostics of a tool file, as `llmtool check --format json` prints them (the body is
/// the file; nothing is stored): at most 1,000, errors first; `X-Diagnostics-Omitted` counts
/// those left out. A large file costs its caller more than one request of the rate limit: one
/// for every 64 KiB, and one for every 100 ms of checking.
#[utoipa::path(post, path = "/check", security((), ("bearer" = [])),
    request_body(content = String, description = "A tool file", content_type = "application/json"),
    responses((status = 200, description = "The diagnostics (an empty list when there are none), at most 1,000",
            headers(("x-diagnostics-omitted" = usize, description = "How many diagnostics past the first 1,000 were left out")),
            body = Vec<Object>),
        (status = 429, description = "The caller's allowance is spent (a large file counts as several requests)", body = Problem),
        (status = 401, description = "No token, or one the library does not know", body = Problem)))]
pub(crate) async fn check(
    State(state): State<ServerState>,
    caller: Caller,
    body: String,
) -> Result<Response, Problem> {
    caller.require(Role::Viewer, state.access)?;
    let (found, omitted) = costly(&state, &caller, body.len(), move || {
        let document = llmtool_format::Document::from_text(body);
        llmtool_registry::diagnostics_json(&document, "tool.json")
    })
    .await?;
    let mut response = Json(found).into_response();
    response.headers_mut().insert("x-diagnostics-omitted", omitted.into());
    Ok(response)
}

/// How many bytes of a body count as one request of the rate limit.
const BYTES_PER_REQUEST: usize = 64 << 10;

/// How much work counts as one request of the rate limit.
const WORK_PER_REQUEST: std::time::Duration = std::time::Duration::from_millis(100);

/// Runs `work` on a body of `bytes`: charged to `caller`'s rate limit by size before and by
/// time after (past the one request the call has taken: a debt its next requests wait off),
/// on a blocking thread, and at most as many at once as the machine has cores, so that
/// checking a large file stalls nobody else.
async fn costly<T: Send + 'static>(
    state: &ServerState,
    caller: &Caller,
    bytes: usize,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Problem> {
    state.limiter.charge(&caller.limit_key, (bytes / BYTES_PER_REQUEST) as f64).await;
    let turn = Arc::clone(&state.checks)
        .acquire_owned()
        .await
        .map_err(|stopped| Problem::internal(stopped.to_string()))?;
    let started = std::time::Instant::now();
    let done = tokio::task::spawn_blocking(move || {
        let _turn = turn;
        work()
    })
    .await
    .map_err(|stopped| Problem::internal(stopped.to_string()))?;
    let by_time = started.elapsed().as_secs_f64() / WORK_PER_REQUEST.as_secs_f64() - 1.0;
    state.limiter.charge(&caller.limit_key, by_time).await;
    Ok(done)
}

/// `POST /format`: whether to apply the safe fixes first.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct FormatParams {
    /// `safe`: apply the fixes `llmtool fmt --fix` applies, then format.
    fix: Option<String>,
}

/// A tool file in canonical form.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct FormattedText {
    text: String,
    fixes_applied: usize,
}

/// The tool file of the body in canonical form, as `llmtool fmt` writes it. Costs as `check`
/// does.
#[utoipa::path(post, path = "/format", params(FormatParams), security((), ("bearer" = [])),
    request_body(content = String, description = "A tool file", content_type = "application/json"),
    responses((status = 200, body = FormattedText), (status = 422, description = "Not valid JSON: `diagnostics` say where (at most 1,000)", body = Problem),
        (status = 429, description = "The caller's allowance is spent (a large file counts as several requests)", body = Problem),
        (status = 401, description = "No token, or one the library does not know", body = Problem)))]
pub(crate) async fn format(
    State(state): State<ServerState>,
    caller: Caller,
    Query(params): Query<FormatParams>,
    body: String,
) -> Result<Json<FormattedText>, Problem> {
    caller.require(Role::Viewer, state.access)?;
    let fix = params.fix.as_deref() == Some("safe");
    let formatted = costly(&state, &caller, body.len(), move || {
        llmtool_format::format::format_source(&body, fix).map_err(|not| {
            let detail = not.to_string();
            let document = llmtool_format::Document::from_text(not.text);
            (detail, llmtool_registry::diagnostics_json(&document, "tool.json").0)
        })
    })
    .await?;
    match formatted {
        Ok(formatted) => {
            Ok(Json(FormattedText { text: formatted.text, fixes_applied: formatted.fixes_applied }))
        }
        Err((detail, diagnostics)) => Err(Problem {
            diagnostics: Some(diagnostics),
            ..Problem::new(StatusCode::UNPROCESSABLE_ENTITY, "Unprocessable Content", detail)
        }),
    }
}

/// A model a run may choose, and its price.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ModelChoice {
    /// `provider/model`, as a run's `model` takes it.
    id: String,
    provider: String,
    model: String,
    /// Always true: only models a run may use are listed (kept for clients that read it).
    ready: bool,
    /// US dollars per million tokens, when the price is known.
    input_per_million: Option<f64>,
    output_per_million: Option<f64>,
}

/// The models a run may choose on this server, exactly: each provider its operator enabled
/// (a key set, a `[providers.NAME]` table, an integration, or named with
/// `--provider`/`--model`) with its default model and the models it offers (every model of an
/// integration), the operator's and the config's default model, priced models and aliases on
/// those providers, and the embedded local model when it is installed: the runtime's one list
/// (`Runtime::allowed_targets`), so that every model offered runs. A run that asks for anything
/// else is refused (422, naming these).
#[utoipa::path(get, path = "/models", security((), ("bearer" = [])),
    responses((status = 200, body = Vec<ModelChoice>), (status = 401, description = "No token, or one the library does not know", body = Problem)))]
pub(crate) async fn models(
    State(state): State<ServerState>,
    caller: Caller,
) -> Result<Json<Vec<ModelChoice>>, Problem> {
    caller.require(Role::Viewer, state.access)?;
    let Some(runs) = state.runs().cloned() else { return Ok(Json(Vec::new())) };
    let (runtime, integrations) = runs.runtime_now(&state).await?;
    let providers = runtime.providers();
    let mut targets = runtime.allowed_targets();
    // Only what the caller may run.
    let (role, teams) = (caller.role.unwrap_or(Role::Viewer), &caller.teams);
    targets.retain(|t| {
        crate::integrations::gate(&integrations, &t.endpoint.provider, &t.model, role, teams)
            .is_ok()
    });
    let choices = targets
        .into_iter()
        .map(|target| {
            let price = providers.price(&target);
            let per_million = |per_token: f64| (per_token * 1_000_000.0 * 1e6).round() / 1e6;
            ModelChoice {
                id: format!("{}/{}", target.endpoint.provider, target.model),
                ready: true,
                input_per_million: price.as_ref().map(|p| per_million(p.price.input)),
                output_per_million: price.as_ref().map(|p| per_million(p.price.output)),
                provider: target.endpoint.provider,
                model: target.model,
            }
        })
        .collect();
    Ok(Json(choices))
}

/// `GET /tools/{slug}/runs`: how many.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct RunsParams {
    /// At most this many, newest first (20 by default, at most 500).
    limit: Option<u32>,
    /// Where the page starts: the `X-Next-Cursor` of the page before.
    before: Option<i64>,
}

/// A kept run as the history shows it: what ran, on what, for whom, at what cost and how it
/// ended; never its values, answer or error, which belong to whoever ran it.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct RunSummary {
    id: Option<i64>,
    started_at: String,
    version: u32,
    run_by: Option<String>,
    provider: String,
    model: String,
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cost_usd: Option<f64>,
    latency_ms: Option<u64>,
    /// `ok`, `rejected`, `failed` or `cancelled`.
    outcome: String,
    /// An image tool's pictures as kept with the run, shown to whoever may read the run's
    /// conversation (its owner, or an admin); nobody else learns of them here.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pictures: Vec<crate::pictures_api::PictureLink>,
}

/// The runs of a tool made through this library, newest first: the caller's own, or for an
/// admin everyone's. A full page says where the next one starts in `X-Next-Cursor`.
#[utoipa::path(get, path = "/tools/{slug}/runs", params(("slug" = String, Path, description = "The tool's slug"), RunsParams), security(("bearer" = [])),
    responses((status = 200, body = Vec<RunSummary>,
            headers(("x-next-cursor" = String, description = "Where the next page starts, when there may be one"))),
        (status = 401, description = "No token, or one the library does not know", body = Problem)))]
pub(crate) async fn runs(
    State(state): State<ServerState>,
    caller: Caller,
    Path(slug): Path<String>,
    Query(params): Query<RunsParams>,
) -> Result<(axum::http::HeaderMap, Json<Vec<RunSummary>>), Problem> {
    caller.require_token(Role::Viewer)?;
    crate::api::seen_version(&state, &caller, &slug, &Selector::Latest).await?;
    let limit = params.limit.unwrap_or(20);
    // A member sees their own runs (who ran them and what they cost is theirs); an admin,
    // everyone's.
    let admin = caller.role.is_some_and(|role| role >= Role::Admin);
    let name = caller.name.as_deref().unwrap_or_default();
    let only = (!admin).then_some(RunsOf { run_by: name, member: &caller.member });
    let page = state.store.runs(&slug, limit, params.before, only).await?;
    let kept = page.runs;
    let ids: Vec<i64> = kept.iter().filter_map(|run| run.record.id).collect();
    let mut headers = axum::http::HeaderMap::new();
    if let Some(next) = page.next {
        headers.insert(crate::sidebar_api::NEXT_CURSOR, axum::http::HeaderValue::from(next));
    }
    let pictures = state.store.pictures_of(PicturesOf::Runs(&ids)).await?;
    let seen = pictures
        .into_iter()
        .filter(|picture| crate::conversation_api::may_read(&caller, &picture.owner, true));
    let pictures = crate::pictures_api::links(seen.collect());
    Ok((
        headers,
        Json(
            kept.into_iter()
                .map(|run| RunSummary {
                    pictures: pictures
                        .iter()
                        .filter(|p| Some(p.run) == run.record.id)
                        .cloned()
                        .collect(),
                    id: run.record.id,
                    started_at: run.record.started_at,
                    version: run.version,
                    run_by: run.run_by,
                    provider: run.record.provider,
                    model: run.record.model,
                    input_tokens: run.record.input_tokens,
                    output_tokens: run.record.output_tokens,
                    cost_usd: run.record.cost_usd,
                    latency_ms: run.record.latency_ms,
                    outcome: run.record.outcome.as_str().to_owned(),
                })
                .collect(),
        ),
    ))
}

/// Every tag on a tool that is not deleted and the caller sees, with how many such tools carry
/// it, most used first.
#[utoipa::path(get, path = "/tags", security((), ("bearer" = [])),
    responses((status = 200, body = Vec<TagCount>), (status = 401, description = "No token, or one the library does not know", body = Problem)))]
pub(crate) async fn tags(
    State(state): State<ServerState>,
    caller: Caller,
) -> Result<Json<Vec<TagCount>>, Problem> {
    caller.require(Role::Viewer, state.access)?;
    Ok(Json(state.store.tags(&caller.visibility).await?))
}

/// A tool's avatar (of its latest version), when it is image data in the tool file: an
/// avatar given as a URL is not fetched, so that the studio never loads from elsewhere.
#[utoipa::path(get, path = "/tools/{slug}/avatar", params(("slug" = String, Path, description = "The tool's slug")), security((), ("bearer" = [])),
    responses((status = 200, description = "The image", content_type = "image/*", body = Vec<u8>), (status = 404, description = "No such tool, or no avatar held in the file", body = Problem),
        (status = 401, description = "No token, or one the library does not know", body = Problem)))]
pub(crate) async fn avatar(
    State(state): State<ServerState>,
    caller: Caller,
    Path(slug): Path<String>,
) -> Result<Response, Problem> {
    caller.require(Role::Viewer, state.access)?;
    let version = crate::api::seen_version(&state, &caller, &slug, &Selector::Latest).await?;
    let no_avatar = || {
        Problem::new(
            StatusCode::NOT_FOUND,
            "Not Found",
            format!("`{slug}` has no avatar held in its file"),
        )
    };
    let tool = llmtool_format::Document::from_text(version.text).tool.ok_or_else(no_avatar)?;
    let avatar = tool.metadata.as_ref().and_then(|m| m.avatar.as_ref()).ok_or_else(no_avatar)?;
    let data = avatar.data.as_ref().map(|d| d.value.trim()).ok_or_else(no_avatar)?;
    let kind = avatar.kind.as_ref().map_or("", |k| k.value.as_str());
    if !data.starts_with("data:") && !kind.eq_ignore_ascii_case("base64") {
        return Err(no_avatar());
    }
    let bytes = image::decode_base64(data).map_err(|_| no_avatar())?;
    let media_type = image::sniff(&bytes).map_err(|_| no_avatar())?.format.media_type();
    let headers = [
        (header::CONTENT_TYPE, media_type),
        // An SVG opened on its own runs nothing and loads nothing.
        (header::CONTENT_SECURITY_POLICY, "default-src 'none'; style-src 'unsafe-inline'; sandbox"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::CACHE_CONTROL, "no-cache"),
    ];
    Ok((headers, bytes).into_response())
}
