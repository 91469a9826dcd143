//! `POST /tools/{slug}/run` (the answer streamed as Server-Sent Events) and `GET /usage` (the
//! runs' totals and cost).

use std::sync::Arc;

use opentelemetry::context::FutureExt as _;
use tracing::Instrument as _;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use llmtool_format::model::ToolKind;
use llmtool_format::template::{Inputs, ToolTemplate};
use llmtool_providers::run::{RunOptions, RunReport};
use llmtool_registry::{Reference, Role};
use llmtool_runtime::{Choice, ParamOverrides, Subject, new_conversation_id};
use serde::Deserialize;
use tokio::sync::{Notify, OwnedSemaphorePermit};
use utoipa::{IntoParams, ToSchema};

use crate::api::VersionParams;
use crate::auth::Caller;
use crate::run_events::{
    DoneRun, Events, RunDone, RunEvent, RunStart, SmartDone, Unkept, event_channel,
};
use crate::runs::{Ask, Following, Prepared};
use crate::{Problem, ServerState};

/// `POST /tools/{slug}/run`: the values, and the model if not the tool's own.
#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct RunBody {
    /// The values, by variable name (as `llmtool render --vars` takes them).
    #[serde(default)]
    #[schema(value_type = Object)]
    values: serde_json::Value,
    /// The model (`provider/model`, or a name the server's providers know); default: the
    /// tool's own `model_version` list, else the server's default.
    model: Option<String>,
    provider: Option<String>,
}

/// Run a version of a tool on a model, its answer streamed as Server-Sent Events:
/// `start` (`{"slug", "version", "provider", "model", "conversation", "turn", "warnings",
/// "notices"}`: the conversation the run starts, which `POST /conversations/{id}/messages`
/// goes on with; the budgets past their warning share), then `text` events (`{"text"}`) as
/// the answer arrives (a tool that offers functions adds a `call` event, `{"name",
/// "arguments"}`, as the model asks for one, and a `result` event, `{"name", "result",
/// "failed", "ms"}`, as it ends), then one `done` with the run as it is kept: `outcome` (`ok`,
/// `rejected` when the answer never met the expected output, `failed`, `cancelled`),
/// `answer` (as the caller saw it: with data-loss prevention's values back), `error`, the tokens, `cost_usd`, `latency_ms` and `id`. Running needs a token
/// (any role), even where reading is public.
///
/// An image tool's `answer` is a line for each picture (its size, format and SHA-256), and
/// `done` adds `pictures`: each kept with the run (as many bytes as the server keeps) and
/// where to fetch it, for the run's owner (`GET /conversations/{id}/pictures/{run}/{position}`).
///
/// A smart tool runs its code in the sandbox (on a server started with `--smart-tools`):
/// `start` says `"kind": "smart"` (provider `sandbox`), its result comes as one `text` event,
/// and `done` adds `printed`, `printed_dropped`, `line` (of `tool_code`, for a failure),
/// `llm_calls` (each admitted and charged as a run of its own; `cost_usd` is their sum) and
/// `cpu_ms`; the body's `model` is the model its `llm()` calls use. A call refused by a hard
/// budget or the gate is an `LlmError` in the code, not a 402 or 422: the code may catch it.
#[utoipa::path(post, path = "/tools/{slug}/run", params(("slug" = String, Path, description = "The tool's slug"), VersionParams), security(("bearer" = [])),
    request_body = RunBody,
    responses((status = 200, description = "The run, as Server-Sent Events", content_type = "text/event-stream", body = crate::run_events::RunEvent),
        (status = 422, description = "A value is missing or not allowed, or no model can run the tool (or none the caller may use), or it is a smart tool this server does not run (no `--smart-tools`, or its requirements not fetched here)", body = Problem), (status = 404, body = Problem),
        (status = 402, description = "A hard budget of the caller or their team would be passed: nothing was sent (type `urn:llmtool:problem:over-budget`, with `budget`)", body = Problem),
        (status = 503, description = "Too many runs are running and waiting; try again after `Retry-After`", body = Problem),
        (status = 401, description = "No token, or one the library does not know", body = Problem), (status = 403, description = "The token's role is too low", body = Problem)))]
pub(crate) async fn run(
    State(state): State<ServerState>,
    caller: Caller,
    Path(slug): Path<String>,
    Query(params): Query<VersionParams>,
    Json(body): Json<RunBody>,
) -> Result<Events, Problem> {
    caller.require_token(Role::Viewer)?;
    let Some(runs) = state.runs().cloned() else {
        return Err(Problem::new(StatusCode::NOT_FOUND, "Not Found", "this server runs no tools"));
    };
    let version = crate::api::seen_version(&state, &caller, &slug, &params.selector()).await?;
    let Some(tool) = llmtool_format::Document::from_text(version.text).tool else {
        return Err(Problem::internal("a stored version does not read as a tool"));
    };
    if tool.kind() == ToolKind::Smart {
        let choice = Choice { model: body.model, provider: body.provider };
        let at = (slug.as_str(), version.version, version.tags.as_slice());
        return crate::smart_runs::run(&state, &runs, &caller, at, &tool, &body.values, choice)
            .await;
    }
    let template = ToolTemplate::new(&tool);
    let inputs = Inputs::from_json(&body.values, template.variables())
        .map_err(|error| Problem::unprocessable(error.to_string()))?;
    let prompt = template.render(&inputs).map_err(|problems| {
        Problem::unprocessable(
            problems.iter().map(|p| p.message.clone()).collect::<Vec<_>>().join("; "),
        )
    })?;
    // The turn first: the request's data-loss scan is CPU work that counts inside the limit.
    let turn = runs.turn_or_busy().await?;
    let choice = Choice { model: body.model, provider: body.provider };
    let who = caller.run_for();
    let ask =
        Ask::Prompt { tool: &tool, prompt, overrides: ParamOverrides::default(), choice: &choice };
    let mut prepared = runs.prepare(&state, &who, (&slug, &version.tags), ask).await?;
    let path = Reference::pinned(&slug, version.version).path();
    let subject = Subject {
        by: caller.name.clone(),
        account: Some(prepared.account.clone()),
        ..Subject::new(origin_of(&caller), Some(path), &tool, &inputs)
    };
    let conversation = new_conversation_id();
    prepared.request.cache_key = Some(conversation.clone());
    let subject = prepared.runtime.first_turn(subject, &conversation, &tool);
    Ok(stream(&state, prepared, subject, (turn, None), &slug, version.version))
}

/// What ran a run through the API: the studio (a signed-in session, told by its CSRF token)
/// or a program with a token.
pub(crate) fn origin_of(caller: &Caller) -> &'static str {
    if caller.csrf.is_some() { "studio" } else { "server" }
}

/// Runs `prepared`, a run of `subject` (of version `version` of `slug`), holding its `turn`
/// and, for a follow-up, its conversation (`following`) until it ends, and streams it:
/// `start` (the model, the conversation and its turn, the budgets' warnings and what the
/// request dropped), `text` as the answer arrives, `done` with the run as kept (and, for an
/// image tool, its pictures as kept with it). Both are let go before `done` is sent. A client
/// that goes away, or stops reading, cancels it.
pub(crate) fn stream(
    state: &ServerState,
    prepared: Prepared,
    subject: Subject,
    (turn, following): (OwnedSemaphorePermit, Option<Following>),
    slug: &str,
    version: u32,
) -> Events {
    let Prepared { runtime, mut request, warnings, .. } = prepared;
    let (conversation, number) =
        subject.turn.as_ref().map(|t| (t.conversation.clone(), t.number)).unzip();
    let start = RunEvent::Start(RunStart {
        slug: slug.to_owned(),
        version,
        kind: None,
        provider: request.target.endpoint.provider.clone(),
        model: request.target.model.clone(),
        conversation,
        turn: number,
        warnings,
        notices: request.notices.clone(),
    });
    let slug = slug.to_owned();
    let state = state.clone();
    let (events, stream) = event_channel();
    if let Some(functions) = request.functions.take() {
        // Each call and its result as an event, in order with the text.
        let (sender, hider) = (events.clone(), runtime.clone());
        let hide = move |text: &str| hider.redact(text).into_owned();
        let observer: llmtool_providers::functions::Observer = Arc::new(move |event| {
            let _ = sender.try_send(&RunEvent::function(event, &hide));
        });
        request.functions = Some(functions.with_observer(observer));
    }
    tokio::spawn(
        async move {
            events.send(&start).await;
            let text_events = events.clone();
            let stalled = Notify::new();
            // The text comes with the configured secrets hidden (the runtime's stream hider).
            let mut on_text = |text: &str| {
                if !text_events.try_send(&RunEvent::text(text)) {
                    stalled.notify_one();
                }
            };
            // A client that goes away, or stops reading, cancels the run (kept as cancelled).
            let cancelled = async {
                tokio::select! {
                    () = events.closed() => {}
                    () = stalled.notified() => {}
                }
            };
            let options = RunOptions::streamed(true);
            let finished =
                runtime.execute(&request, options, Some(&subject), &mut on_text, cancelled).await;
            if let Some(problem) = &finished.not_kept {
                tracing::warn!("the run is not kept: {problem}");
            }
            let run = match (finished.record.clone(), &finished.result) {
                (Some(mut record), Ok(report)) => {
                    record.answer = Some(shown_answer(report));
                    DoneRun::Kept(Box::new(record))
                }
                (Some(record), Err(_)) => DoneRun::Kept(Box::new(record)),
                (None, result) => DoneRun::Unkept(Unkept {
                    outcome: finished.ended().outcome(),
                    error: result
                        .as_ref()
                        .err()
                        .map(|e| runtime.redact(&e.to_string()).into_owned()),
                    answer: result.as_ref().ok().map(shown_answer),
                }),
            };
            let kept =
                finished.record.as_ref().and_then(|r| Some((r.conversation.as_ref()?, r.id?)));
            let mut pictures = None;
            if let (Some((conversation, id)), Ok(report)) = (kept, &finished.result)
                && !report.images.is_empty()
            {
                match crate::pictures_api::of_run(&state, conversation, id).await {
                    Ok(kept) => pictures = Some(kept),
                    Err(problem) => tracing::warn!("run {id}: its pictures: {}", problem.detail),
                }
            }
            let done =
                RunDone { slug, version, kind: None, run, pictures, smart: SmartDone::default() };
            drop(turn);
            if let Some(following) = following {
                following.end().await;
            }
            events.send_done(done).await;
        }
        // The run's spans go on under the request's (a `tracing` span, or OpenTelemetry's
        // context, as the server's request spans are).
        .in_current_span()
        .with_current_context(),
    );
    stream
}

/// The answer as the caller saw it stream: the run record keeps it with data-loss
/// prevention's placeholders, but the report has the values back (and keys hidden).
fn shown_answer(report: &RunReport) -> String {
    report.output.as_ref().unwrap_or(&report.raw).clone()
}

/// `GET /usage`: what to total by, and since when.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct UsageParams {
    /// `tool` (the default), `model`, `day` or `origin`.
    by: Option<String>,
    /// Only runs started at or after this time: RFC 3339 with an offset, a date (its
    /// midnight in UTC), or a span back from now (`30m`, `24h`, `7d`).
    since: Option<String>,
}

/// `since` as every reader of the run log takes it (`llmtool_log::since`).
pub(crate) fn since_text(since: &str) -> Result<String, Problem> {
    llmtool_log::since(since, jiff::Timestamp::now())
        .map_err(|error| Problem::bad_request(format!("`since={since}`: {error}")))
}

/// The totals of the runs made through this library (its API, its studio and MCP), by tool,
/// model, day or origin.
#[utoipa::path(get, path = "/usage", params(UsageParams), security(("bearer" = [])),
    responses((status = 200, body = Vec<llmtool_log::Total>), (status = 400, description = "`by` is not tool, model, day or origin", body = Problem),
        (status = 401, description = "No token, or one the library does not know", body = Problem), (status = 403, description = "The token's role is too low", body = Problem)))]
pub(crate) async fn usage(
    State(state): State<ServerState>,
    caller: Caller,
    Query(params): Query<UsageParams>,
) -> Result<Json<Vec<llmtool_log::Total>>, Problem> {
    caller.require_token(Role::Viewer)?;
    let by = match params.by.as_deref().unwrap_or("tool") {
        "tool" => llmtool_log::Grouping::Tool,
        "model" => llmtool_log::Grouping::Model,
        "day" => llmtool_log::Grouping::Day,
        "origin" => llmtool_log::Grouping::Origin,
        other => {
            return Err(Problem::bad_request(format!(
                "`by={other}`: use tool, model, day or origin"
            )));
        }
    };
    let since = params.since.as_deref().map(since_text).transpose()?;
    let totals = state.store.usage(by, since.as_deref(), &caller.visibility).await?;
    Ok(Json(totals))
}
