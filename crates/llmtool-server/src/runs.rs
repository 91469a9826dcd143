//! Running the library's tools on the server: `POST /tools/{slug}/run` streams the answer as
//! Server-Sent Events, MCP's `tools/call` waits for it whole. Both are admitted here
//! ([`Runs::prepare`]: on the integrations and prices the admins set, through the gate of
//! their models, charged to a member and a team, and holding their worst-case cost against
//! the budgets), then go through the runtime's one run path ([`Runtime::execute`]: the model
//! chosen, the expected output enforced), whose runs this server keeps with their cost in the
//! library's database, for `GET /usage` and the spend pages.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::http::StatusCode;
use llmtool_format::model::Tool;
use llmtool_log::Record;
use llmtool_mcp::RunLimits;
use llmtool_providers::images::Picture;
use llmtool_providers::run::RunRequest;
use llmtool_registry::{Charge, Integration, NewPicture, Reference, Role, Store};
use llmtool_runtime::worst_case::{self, Sending};
use llmtool_runtime::{
    Account, Choice, Conversation, KeepFuture, LogPolicy, ParamOverrides, RunError, RunKeeper,
    Runtime, Subject, ToKeep,
};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::metrics::{Metrics, RunSeen};
use crate::{Problem, ServerState};

/// How long a run's reservation holds its budget if the run is never kept (the server
/// stopped meanwhile): longer than any run lasts.
const RESERVATION_LIFETIME: std::time::Duration = std::time::Duration::from_mins(30);

/// How long a follow-up holds its conversation if its server dies before letting it go:
/// longer than any run lasts.
const FOLLOW_UP_LEASE: std::time::Duration = std::time::Duration::from_mins(10);

/// Whom a run is for: what its admission needs to know of its caller.
#[derive(Debug, Clone)]
pub(crate) struct RunFor {
    /// The member's e-mail (`""` for none).
    pub(crate) member: String,
    pub(crate) role: Role,
    pub(crate) teams: Vec<String>,
    /// The tools the caller sees (the one rule: [`llmtool_registry::Visibility`]): the only
    /// library tools a run of theirs may call as functions.
    pub(crate) visibility: llmtool_registry::Visibility,
    /// The token (or session) that asked, whose runs these are.
    pub(crate) by: Option<String>,
    /// How many tools deep this run is, for a tool's run a function of another's (0: asked
    /// by the caller).
    pub(crate) depth: u8,
}

/// What a run asks of a model.
pub(crate) enum Ask<'a> {
    /// A tool's rendered prompt, on the model `choice` picks (the tool's own by default),
    /// with `overrides` over its parameters.
    Prompt { tool: &'a Tool, prompt: String, overrides: ParamOverrides, choice: &'a Choice },
    /// A follow-up to a conversation, on its model, or on the one `choice` picks.
    FollowUp { conversation: &'a Conversation, text: String, choice: Option<&'a Choice> },
}

/// A run admitted: the runtime and request it runs with, whom it is charged to (with its
/// reservation), and the budgets it passed the warning share of.
pub(crate) struct Prepared {
    pub(crate) runtime: Runtime,
    pub(crate) request: RunRequest,
    pub(crate) account: Account,
    pub(crate) warnings: Vec<String>,
}

/// The server's runtime, its turns, and where runs are kept.
pub(crate) struct Runs {
    /// The server's runtime, keeping its runs in the library.
    pub(crate) runtime: Runtime,
    limits: RunLimits,
    turns: Arc<Semaphore>,
    waiting: AtomicUsize,
    /// Where the follow-ups under way are held, for every server of the library.
    store: Arc<dyn Store>,
}

/// A conversation's follow-up under way; the next may start once this is dropped.
pub(crate) struct Following {
    store: Arc<dyn Store>,
    id: String,
}

impl Following {
    /// Lets the conversation go now, before its caller is told the follow-up has ended, so
    /// that the next one (sent as soon as this one's answer is read) is not refused.
    pub(crate) async fn end(mut self) {
        let id = std::mem::take(&mut self.id);
        if let Err(error) = self.store.end_follow_up(&id).await {
            tracing::warn!("conversation {id}: its follow-up is not let go: {error}");
        }
    }
}

impl Drop for Following {
    fn drop(&mut self) {
        if self.id.is_empty() {
            return; // ended already
        }
        let (store, id) = (Arc::clone(&self.store), std::mem::take(&mut self.id));
        // Let go in the background; should that fail, the lease runs out.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                if let Err(error) = store.end_follow_up(&id).await {
                    tracing::warn!("conversation {id}: its follow-up is not let go: {error}");
                }
            });
        }
    }
}

impl Runs {
    /// Runs on `runtime`, each run kept in `store` with its cost (the API's and MCP's alike),
    /// as `keeping` says.
    pub(crate) fn new(
        runtime: Runtime,
        store: Arc<dyn Store>,
        keeping: Keeping,
        limits: RunLimits,
    ) -> Runs {
        let turns = Arc::new(Semaphore::new(limits.concurrent.max(1)));
        let keeper = Arc::new(LibraryKeeper { store: Arc::clone(&store), keeping });
        let runtime = runtime.keeping_runs_in(keeper, LogPolicy::On);
        Runs { runtime, limits, turns, waiting: AtomicUsize::new(0), store }
    }

    /// A turn to run: at once if fewer than `concurrent` run, after waiting if fewer than
    /// `queued` wait, else `None` (the server is busy).
    pub(crate) async fn turn(&self) -> Option<OwnedSemaphorePermit> {
        if let Ok(permit) = Arc::clone(&self.turns).try_acquire_owned() {
            return Some(permit);
        }
        let ahead = self.waiting.fetch_add(1, Ordering::SeqCst);
        // Uncounted however the wait ends, the request dropped while waiting included.
        let _waiting = Waiting(&self.waiting);
        if ahead >= self.limits.queued {
            return None;
        }
        Arc::clone(&self.turns).acquire_owned().await.ok()
    }

    /// Runs under way and waiting for a turn.
    pub(crate) fn load(&self) -> (usize, usize) {
        let running = self.limits.concurrent.max(1) - self.turns.available_permits();
        (running, self.waiting.load(Ordering::SeqCst))
    }
}

impl Runs {
    /// Marks a follow-up of conversation `id` under way on every server of the library, or
    /// refuses it (409) while another is.
    pub(crate) async fn follow(&self, id: &str) -> Result<Following, Problem> {
        if !self.store.begin_follow_up(id, FOLLOW_UP_LEASE).await? {
            let detail =
                "a follow-up of this conversation is under way: ask again once it has ended";
            return Err(Problem::new(StatusCode::CONFLICT, "Conflict", detail));
        }
        Ok(Following { store: Arc::clone(&self.store), id: id.to_owned() })
    }

    /// A turn to run ([`Runs::turn`]), or the problem of a busy server: 503, to try again
    /// after a second.
    pub(crate) async fn turn_or_busy(&self) -> Result<OwnedSemaphorePermit, Problem> {
        self.turn().await.ok_or_else(|| Problem {
            retry_after: Some(1),
            ..Problem::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "Service Unavailable",
                "too many runs are running and waiting; try again later",
            )
        })
    }
}

impl Runs {
    /// The runtime a run starts on now: the server's, on the enabled model integrations (their
    /// keys opened) and the admins' prices; and every integration (the database and search
    /// ones serve a tool's functions).
    pub(crate) async fn runtime_now(
        &self,
        state: &ServerState,
    ) -> Result<(Runtime, Vec<Integration>), Problem> {
        let integrations = state.store.integrations().await?;
        let prices = state.store.price_overrides().await?;
        let models = crate::integrations::of_models(integrations.clone());
        if models.is_empty() && prices.is_empty() {
            return Ok((self.runtime.clone(), integrations));
        }
        let base = self.runtime.providers();
        let (providers, problems) =
            crate::integrations::providers(base, &models, &prices, state.keyring());
        for problem in problems {
            tracing::warn!("{problem}");
        }
        Ok((self.runtime.with_providers(providers), integrations))
    }

    /// Admits a run for `who` of a tool tagged `tags`, asking `ask`: its request (on the model
    /// the caller's choice picks, or the conversation's), let through the gate of the
    /// integrations' models, charged to the member and the team (of theirs) the tool is
    /// curated for, else their first team, and holding its worst-case cost against their
    /// budgets. Refused with a problem document: 422 for a model that may not run, 402 over a
    /// hard budget (nothing is sent, or kept).
    pub(crate) async fn prepare(
        &self,
        state: &ServerState,
        who: &RunFor,
        (slug, tags): (&str, &[String]),
        ask: Ask<'_>,
    ) -> Result<Prepared, Problem> {
        let (runtime, integrations) = self.runtime_now(state).await?;
        let named = match &ask {
            Ask::Prompt { tool, .. } => crate::functions::names_functions(tool),
            Ask::FollowUp { conversation, .. } => {
                crate::functions::names_functions(&conversation.tool)
            }
        };
        let runtime = if named {
            crate::functions::with_functions(&runtime, state, who, slug, &integrations)
        } else {
            runtime
        };
        let integrations = crate::integrations::of_models(integrations);
        let request = match ask {
            Ask::Prompt { tool, prompt, overrides, choice } => {
                runtime.request_off_thread(tool, prompt, overrides, choice).await
            }
            Ask::FollowUp { conversation, text, choice } => {
                let switched = choice.map(|choice| runtime.switched(conversation, choice));
                match switched.transpose() {
                    Ok(switched) => {
                        let conversation = switched.as_ref().unwrap_or(conversation);
                        let overrides = ParamOverrides::default();
                        runtime.follow_up_off_thread(conversation, text, overrides).await
                    }
                    Err(refused) => Err(refused),
                }
            }
        }
        .map_err(|error| match error {
            // A library tool the caller does not see is missing, as on every path.
            RunError::Functions(llmtool_functions::FunctionsError::NotFound(slug)) => {
                llmtool_registry::StoreError::NoSuchTool(slug).into()
            }
            error => Problem::unprocessable(runtime.redact(&error.to_string()).into_owned()),
        })?;
        let target = &request.target;
        crate::integrations::gate(
            &integrations,
            &target.endpoint.provider,
            &target.model,
            who.role,
            &who.teams,
        )
        .map_err(Problem::unprocessable)?;
        let team = charged_team(&who.teams, tags);
        let charge = Charge { member: who.member.clone(), team };
        // What a budget reserves before the run starts, by the one worst-case rule; an
        // unpriced model, or one with no known limit on its answer, reserves nothing (its
        // runs still count once kept).
        let worst = worst_case::estimate(&request, None, Sending::Run).worst_cost.unwrap_or(0.0);
        let reserved = state.store.reserve(&charge, worst, RESERVATION_LIFETIME).await?;
        let warnings = reserved
            .warnings
            .iter()
            .map(|status| {
                format!(
                    "the {} budget of `{}` is at {:.0}% of its ${:.2} a {}",
                    status.budget.scope.as_str(),
                    status.budget.name,
                    status.share() * 100.0,
                    status.budget.limit_usd,
                    status.budget.period.as_str()
                )
            })
            .collect();
        let account =
            Account { member: charge.member, team: charge.team, reservation: Some(reserved.id) };
        Ok(Prepared { runtime, request, account, warnings })
    }
}

/// What runs MCP's tool calls on the server: each admitted as the API's runs are
/// ([`Runs::prepare`], as the caller whose token the call came with), then answered whole.
pub(crate) struct LibraryRunner {
    pub(crate) state: ServerState,
    pub(crate) runs: Arc<Runs>,
}

impl llmtool_runtime::Runner for LibraryRunner {
    fn is_remote(&self, tool: &Tool) -> bool {
        self.runs.runtime.is_remote(tool)
    }

    fn answer(
        &self,
        tool: Tool,
        prompt: String,
        subject: Subject,
    ) -> llmtool_runtime::AnswerFuture {
        self.answer_with(tool, prompt, subject, None)
    }

    fn answer_observed(
        &self,
        tool: Tool,
        prompt: String,
        subject: Subject,
        observer: llmtool_runtime::Observer,
    ) -> llmtool_runtime::AnswerFuture {
        self.answer_with(tool, prompt, subject, Some(observer))
    }

    fn answer_smart(
        &self,
        tool: Tool,
        variables: serde_json::Map<String, serde_json::Value>,
        subject: Subject,
    ) -> llmtool_runtime::AnswerFuture {
        let (state, runs) = (self.state.clone(), Arc::clone(&self.runs));
        llmtool_runtime::answer_in_task(move |cancel| async move {
            let refused = |problem: Problem| RunError::Refused(problem.detail);
            let caller = caller_of(&state, &subject).await.map_err(refused)?;
            crate::smart_runs::answer(state, runs, caller, tool, variables, subject, cancel).await
        })
    }

    fn public_message(&self, error: &RunError) -> String {
        self.runs.runtime.redact(&error.to_string()).into_owned()
    }
}

impl LibraryRunner {
    /// An MCP call's run, admitted as the API's are, its function calls told to `observer`.
    fn answer_with(
        &self,
        tool: Tool,
        prompt: String,
        subject: Subject,
        observer: Option<llmtool_runtime::Observer>,
    ) -> llmtool_runtime::AnswerFuture {
        let (state, runs) = (self.state.clone(), Arc::clone(&self.runs));
        llmtool_runtime::answer_in_task(move |cancel| async move {
            let refused = |problem: Problem| RunError::Refused(problem.detail);
            let (who, tags) = caller_of(&state, &subject).await.map_err(refused)?;
            let overrides = ParamOverrides::default();
            let ask = Ask::Prompt { tool: &tool, prompt, overrides, choice: &Choice::default() };
            let slug = subject
                .tool_path
                .as_deref()
                .and_then(Reference::from_path)
                .flatten()
                .map(|reference| reference.slug)
                .unwrap_or_default();
            let mut prepared =
                runs.prepare(&state, &who, (&slug, &tags), ask).await.map_err(refused)?;
            if let (Some(functions), Some(observer)) = (&mut prepared.request.functions, observer) {
                functions.observer = Some(observer);
            }
            let subject = Subject { account: Some(prepared.account), ..subject };
            let runtime = &prepared.runtime;
            // Said with this run's keys hidden too (the integrations' are its runtime's).
            runtime
                .answer_request(&prepared.request, Some(&subject), cancel)
                .await
                .map_err(|error| RunError::Refused(runtime.redact(&error.to_string()).into_owned()))
        })
    }
}

/// Whom an MCP call of `subject` is for, and the tags of the tool it calls.
async fn caller_of(
    state: &ServerState,
    subject: &Subject,
) -> Result<(RunFor, Vec<String>), Problem> {
    let who = run_for_token(state, subject.by.as_deref()).await?;
    // The server names each tool it serves `registry:SLUG@VERSION`.
    let reference = subject.tool_path.as_deref().and_then(Reference::from_path).flatten();
    let tags = match &reference {
        Some(reference) => state.store.tags_of(&reference.slug).await?,
        None => None,
    };
    Ok((who, tags.unwrap_or_default()))
}

/// Whom a run by the caller `name` is for: a token's member, with the lower of the two roles,
/// and the member's teams; or, for a studio session (named by its member's e-mail), the member.
async fn run_for_token(state: &ServerState, name: Option<&str>) -> Result<RunFor, Problem> {
    let unknown = || Problem::unauthorized();
    let name = name.ok_or_else(unknown)?;
    let workspace = crate::auth::workspace(state).await?;
    let run_for = |member: String, role: Role, teams: Vec<String>| RunFor {
        visibility: llmtool_registry::Visibility::of(role, &teams, &workspace),
        member,
        role,
        teams,
        by: Some(name.to_owned()),
        depth: 0,
    };
    let tokens = state.store.tokens(llmtool_registry::TokensOf::Everyone).await?;
    let Some(token) = tokens.into_iter().find(|t| t.name == name && !t.revoked) else {
        let member = state.store.member(name).await.map_err(|_| unknown())?;
        return Ok(run_for(member.email, member.role, member.teams));
    };
    let Some(email) = token.member else {
        return Ok(run_for(String::new(), token.role, Vec::new()));
    };
    let member = state.store.member(&email).await?;
    Ok(run_for(member.email, token.role.min(member.role), member.teams))
}

/// The team a run of a tool tagged `tags` is charged to, of the caller's `teams` (by name):
/// one the tool is curated for, else the first; `""` for a caller in no team.
pub(crate) fn charged_team(teams: &[String], tags: &[String]) -> String {
    teams
        .iter()
        .find(|team| tags.contains(team))
        .or_else(|| teams.first())
        .cloned()
        .unwrap_or_default()
}

/// Counts a waiter for as long as it waits.
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// What keeping the server's runs counts and allows.
pub(crate) struct Keeping {
    pub(crate) metrics: Arc<Metrics>,
    /// The most bytes of pictures the library keeps with runs.
    pub(crate) picture_storage: u64,
    /// Whether the metrics name the tools not every member sees.
    pub(crate) private_tools_named: bool,
    /// Woken when a conversation's turn is kept: it may be one to post in Slack.
    pub(crate) slack_wake: Arc<tokio::sync::Notify>,
}

/// Keeps the server's runs in the library's database, as runs of the version they ran, by the
/// token that ran them, and counts them in the metrics. An image tool's pictures are kept with
/// a run that starts a conversation (the API's and the studio's), for its owner to see again;
/// an MCP client got them in its answer, and nothing of theirs is kept but the record.
struct LibraryKeeper {
    store: Arc<dyn Store>,
    keeping: Keeping,
}

impl RunKeeper for LibraryKeeper {
    /// A run that was paid for is worth a wait: `GET /usage` counts what is kept.
    fn time_limit(&self) -> std::time::Duration {
        std::time::Duration::from_secs(30)
    }

    fn keep<'a>(&'a self, run: &'a ToKeep) -> KeepFuture<'a> {
        let (subject, record) = (&run.subject, &run.record);
        Box::pin(async move {
            // The server names each tool it runs `registry:SLUG@VERSION`.
            let reference = subject.tool_path.as_deref().and_then(Reference::from_path).flatten();
            let version = reference.as_ref().and_then(Reference::version).unwrap_or(0);
            let slug = reference.map(|reference| reference.slug).unwrap_or_default();
            let shown = self.shown_tool(&slug).await;
            self.keeping.metrics.run(&seen(shown, record));
            let account = subject.account.clone().unwrap_or_default();
            let charge = Charge { member: account.member, team: account.team };
            let by = subject.by.as_deref();
            let kept = self.store.log_run(&slug, version, by, record, &charge, account.reservation);
            let id = kept.await.map_err(|error| format!("a run of {slug}: {error}"))?;
            if record.conversation.is_some() {
                if !run.pictures.is_empty() {
                    self.keep_pictures(id, &run.pictures).await;
                }
                self.keeping.slack_wake.notify_one();
            }
            Ok(Some(id))
        })
    }
}

/// What the metrics call a tool that not every member sees (unless the operator asked for
/// its name).
pub(crate) const PRIVATE_TOOL_LABEL: &str = "private";

impl LibraryKeeper {
    /// The name the metrics give the tool `slug`: the slug of a tool every member sees, else
    /// [`PRIVATE_TOOL_LABEL`] unless the operator asked for every name.
    async fn shown_tool<'a>(&self, slug: &'a str) -> &'a str {
        if self.keeping.private_tools_named {
            return slug;
        }
        match self.store.tags_of(slug).await {
            Ok(Some(tags)) if tags.iter().any(|tag| tag == llmtool_registry::ALL) => slug,
            _ => PRIVATE_TOOL_LABEL,
        }
    }

    /// Keeps the run `id`'s pictures, as many bytes as the library allows. The run is kept
    /// whatever becomes of them: a problem is a warning.
    async fn keep_pictures(&self, id: i64, pictures: &[Picture]) {
        let new: Vec<NewPicture<'_>> = pictures
            .iter()
            .map(|picture| NewPicture {
                format: picture.format.name(),
                width: picture.size.width,
                height: picture.size.height,
                data: &picture.bytes,
            })
            .collect();
        match self.store.keep_pictures(id, &new, self.keeping.picture_storage).await {
            Ok(kept) if kept.kept == 0 => tracing::warn!(
                "run {id}: its pictures are larger than the library keeps (--picture-storage-mib)"
            ),
            Ok(kept) if kept.runs_dropped > 0 => tracing::info!(
                "run {id}: {} older runs' pictures let go to keep its own",
                kept.runs_dropped
            ),
            Ok(_) => {}
            Err(error) => tracing::warn!("run {id}: its pictures are not kept: {error}"),
        }
    }
}

/// What the metrics count of `record`, a run of the tool `slug`.
fn seen<'a>(slug: &'a str, record: &'a Record) -> RunSeen<'a> {
    let millis = |ms: Option<u64>| ms.map(std::time::Duration::from_millis);
    RunSeen {
        provider: &record.provider,
        model: &record.model,
        tool: slug,
        outcome: record.outcome.as_str(),
        input_tokens: record.input_tokens.unwrap_or(0),
        output_tokens: record.output_tokens.unwrap_or(0),
        cost_usd: record.cost_usd.unwrap_or(0.0),
        duration: millis(record.latency_ms),
        first_token: millis(record.first_token_ms),
        findings: &record.redactions,
    }
}
