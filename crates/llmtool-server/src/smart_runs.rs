//! Smart tools on the server, when its operator starts it with `--smart-tools`: the code runs
//! in the runtime's sandbox on a run turn of its own, and each of its `llm()` calls is
//! admitted as a run of its own ([`Runs::prepare`]: the integrations' gate, the budgets,
//! charged to the caller and their team). `POST /tools/{slug}/run` streams the run,
//! MCP's `tools/call` waits for it whole. Requirements are never fetched because a client
//! asked: a tool runs on the ones its operator fetched (`llmtool sandbox pull --requirements`).

use opentelemetry::context::FutureExt as _;
use std::sync::Arc;
use tracing::Instrument as _;

use llmtool_format::model::Tool;
use llmtool_format::template::{Inputs, ToolTemplate};
use llmtool_log::Outcome;
use llmtool_registry::Reference;
use llmtool_runtime::smart::{SANDBOX_MODEL, SANDBOX_PROVIDER};
use llmtool_runtime::{
    Account, Admission, AdmitFuture, Admitted, Choice, ParamOverrides, RunError, Runtime,
    SmartFinished, SmartRun, Subject,
};

use crate::auth::Caller;
use crate::run_api::origin_of;
use crate::run_events::{
    DoneRun, Events, RunDone, RunEvent, RunStart, SmartDone, Unkept, event_channel,
};
use crate::runs::{Ask, RunFor, Runs, charged_team};
use crate::{Problem, ServerState};

/// What `start` and `done` say a smart tool's run is.
const SMART: &str = "smart";

/// Lets a smart run's `llm()` calls through as the API's runs are: for the caller `who`, of a
/// tool tagged `tags`.
pub(crate) struct ServerAdmission {
    pub(crate) state: ServerState,
    pub(crate) runs: Arc<Runs>,
    pub(crate) who: RunFor,
    pub(crate) tags: Vec<String>,
}

impl Admission for ServerAdmission {
    fn admit<'a>(
        &'a self,
        tool: &'a Tool,
        prompt: String,
        overrides: ParamOverrides,
        choice: &'a Choice,
    ) -> AdmitFuture<'a> {
        Box::pin(async move {
            let ask = Ask::Prompt { tool, prompt, overrides, choice };
            let prepared = self
                .runs
                // An `llm()` call's prompt offers no functions: it is no library tool.
                .prepare(&self.state, &self.who, ("", &self.tags), ask)
                .await
                .map_err(|problem| problem.detail)?;
            Ok(Admitted {
                runtime: prepared.runtime,
                request: prepared.request,
                account: Some(prepared.account),
            })
        })
    }
}

impl ServerAdmission {
    /// Whom the smart run itself is charged to (it costs nothing: its calls carry the cost).
    pub(crate) fn account(&self) -> Account {
        let team = charged_team(&self.who.teams, &self.tags);
        Account { member: self.who.member.clone(), team, reservation: None }
    }
}

/// The problem of a smart run this server cannot start (422): smart tools off, the Python
/// runtime not installed, or the tool's requirements not fetched here (naming what the
/// operator runs).
pub(crate) async fn refuse_unready(runs: &Runs, tool: &Tool) -> Result<(), Problem> {
    if runs.runtime.smart_limits().is_none() {
        return Err(Problem::unprocessable(RunError::SmartToolsOff.to_string()));
    }
    // The Python runtime, loaded once: never fetched here, whoever asks.
    if let Err(error) = runs.runtime.python_ready().await {
        return Err(Problem::unprocessable(runs.runtime.redact(&error.to_string()).into_owned()));
    }
    let checked = tool.clone();
    let ready =
        tokio::task::spawn_blocking(move || llmtool_runtime::site::site_ready(&checked, None))
            .await
            .map_err(|error| Problem::internal(error.to_string()))?;
    match ready {
        Ok(true) => Ok(()),
        Ok(false) => {
            let listed: Vec<&str> = tool.requirements().iter().map(|r| r.value.trim()).collect();
            Err(Problem::unprocessable(format!(
                "the tool's requirements ({}) are not fetched on this server: its operator fetches them once with `llmtool sandbox pull --requirements FILE`",
                listed.join(", ")
            )))
        }
        Err(error) => Err(Problem::unprocessable(error.to_string())),
    }
}

/// The runtime the code of a smart run of the tool `slug` runs on, for `who`: the server's,
/// offering the functions the tool names as a prompt run of it is offered them (the database
/// and search integrations assigned to it, the library's tools as `who` sees them), never the
/// config file's.
async fn smart_runtime(
    state: &ServerState,
    runs: &Runs,
    who: &RunFor,
    slug: &str,
    tool: &Tool,
) -> Result<Runtime, Problem> {
    if !crate::functions::names_functions(tool) {
        return Ok(runs.runtime.clone());
    }
    let (runtime, integrations) = runs.runtime_now(state).await?;
    Ok(crate::functions::with_functions(&runtime, state, who, slug, &integrations))
}

/// Runs the smart tool `tool` (version `at.1` of slug `at.0`, tagged `at.2`) with `values`
/// for `caller`, streamed: `start` (`"kind": "smart"`), the result as one `text` event, then
/// `done` with the run as kept and what the code printed, its failure's line of `tool_code`
/// and its `llm()` calls. A client that goes away stops the code (the run is kept as
/// cancelled).
pub(crate) async fn run(
    state: &ServerState,
    runs: &Arc<Runs>,
    caller: &Caller,
    at: (&str, u32, &[String]),
    tool: &Tool,
    values: &serde_json::Value,
    choice: Choice,
) -> Result<Events, Problem> {
    let (slug, version, tags) = at;
    let template = ToolTemplate::new(tool);
    let inputs = Inputs::from_json(values, template.variables())
        .map_err(|error| Problem::unprocessable(error.to_string()))?;
    let resolved = template.resolve(&inputs).map_err(|problems| {
        Problem::unprocessable(
            problems.iter().map(|p| p.message.clone()).collect::<Vec<_>>().join("; "),
        )
    })?;
    refuse_unready(runs, tool).await?;
    let turn = runs.turn_or_busy().await?;
    let admission = ServerAdmission {
        state: state.clone(),
        runs: Arc::clone(runs),
        who: caller.run_for(),
        tags: tags.to_vec(),
    };
    let subject = Subject {
        by: caller.name.clone(),
        account: Some(admission.account()),
        ..Subject::new(
            origin_of(caller),
            Some(Reference::pinned(slug, version).path()),
            tool,
            &inputs,
        )
    };
    let run = SmartRun {
        variables: template.values_object(&resolved),
        choice,
        scratch: true,
        admission: Some(Arc::new(admission)),
        ..SmartRun::default()
    };
    let start = RunEvent::Start(RunStart {
        slug: slug.to_owned(),
        version,
        kind: Some(SMART.into()),
        provider: SANDBOX_PROVIDER.into(),
        model: SANDBOX_MODEL.into(),
        conversation: None,
        turn: None,
        warnings: Vec::new(),
        notices: Vec::new(),
    });
    let runtime = smart_runtime(state, runs, &caller.run_for(), slug, tool).await?;
    let (runs, tool, slug) = (Arc::clone(runs), tool.clone(), slug.to_owned());
    let (events, stream) = event_channel();
    tokio::spawn(
        async move {
            let _turn = turn;
            events.send(&start).await;
            let finished = runtime.run_smart(&tool, run, Some(&subject), events.closed()).await;
            let (run, smart_done) = match &finished {
                Ok(finished) => done_of(&runs, finished),
                Err(error) => {
                    let error = Some(runs.runtime.redact(&error.to_string()).into_owned());
                    let unkept = Unkept { outcome: Outcome::Failed, error, answer: None };
                    (DoneRun::Unkept(unkept), SmartDone::default())
                }
            };
            if let Some(answer) = run.answer_if_ok() {
                events.send(&RunEvent::text(answer)).await;
            }
            let done = RunDone {
                slug,
                version,
                kind: Some(SMART.into()),
                run,
                pictures: None,
                smart: smart_done,
            };
            events.send_done(done).await;
        }
        // The run's spans go on under the request's (a `tracing` span, or OpenTelemetry's
        // context, as the server's request spans are).
        .in_current_span()
        .with_current_context(),
    );
    Ok(stream)
}

/// What `done` says of a smart run: its record, with the result as the caller sees it and the
/// cost of its calls, and what the sandbox reported; every text with the server's secrets
/// hidden.
fn done_of(runs: &Runs, finished: &SmartFinished) -> (DoneRun, SmartDone) {
    if let Some(problem) = &finished.not_kept {
        tracing::warn!("the run is not kept: {problem}");
    }
    let ran = &finished.ran;
    let hidden = |text: &str| runs.runtime.redact(text).into_owned();
    let (outcome, answer, error) = match &ran.result {
        Ok(result) => (Outcome::Ok, Some(hidden(result)), None),
        Err(llmtool_runtime::smart::Failure::Cancelled) => (Outcome::Cancelled, None, None),
        Err(failure) => (Outcome::Failed, None, Some(hidden(&failure.to_string()))),
    };
    let latency_ms = Some(u64::try_from(ran.wall.as_millis()).unwrap_or(u64::MAX));
    let run = match finished.record.clone() {
        Some(record) => DoneRun::Kept(Box::new(llmtool_log::Record {
            outcome,
            answer,
            error,
            cost_usd: finished.cost(),
            latency_ms,
            ..record
        })),
        None => DoneRun::Unkept(Unkept { outcome, error, answer }),
    };
    let smart = SmartDone {
        printed: Some(hidden(&ran.printed)),
        printed_dropped: Some(ran.printed_dropped),
        line: ran.result.as_ref().err().and_then(llmtool_runtime::smart::Failure::line),
        llm_calls: Some(finished.calls.clone()),
        cpu_ms: Some(u64::try_from(ran.cpu.as_millis()).unwrap_or(u64::MAX)),
    };
    (run, smart)
}

/// MCP's `tools/call` of a smart tool, for the caller `who` of a tool tagged `tags`: the
/// result, or why there is none.
pub(crate) async fn answer(
    state: ServerState,
    runs: Arc<Runs>,
    (who, tags): (RunFor, Vec<String>),
    tool: Tool,
    variables: serde_json::Map<String, serde_json::Value>,
    subject: Subject,
    cancelled: impl Future<Output = ()> + Send,
) -> Result<llmtool_runtime::Answer, RunError> {
    refuse_unready(&runs, &tool).await.map_err(|problem| RunError::Refused(problem.detail))?;
    let path = subject.tool_path.as_deref().unwrap_or_default();
    let slug = Reference::from_path(path).flatten().map(|reference| reference.slug);
    let runtime = smart_runtime(&state, &runs, &who, slug.as_deref().unwrap_or_default(), &tool)
        .await
        .map_err(|problem| RunError::Refused(problem.detail))?;
    let admission = ServerAdmission { state, runs: Arc::clone(&runs), who, tags };
    let subject = Subject { account: Some(admission.account()), ..subject };
    let run = SmartRun {
        variables,
        scratch: true,
        admission: Some(Arc::new(admission)),
        ..SmartRun::default()
    };
    let finished = runtime.run_smart(&tool, run, Some(&subject), cancelled).await?;
    if let Some(problem) = &finished.not_kept {
        tracing::warn!("the run is not kept: {problem}");
    }
    Ok(runs.runtime.redact(&finished.ran.result?).into_owned().into())
}
