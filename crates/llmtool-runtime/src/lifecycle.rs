//! A run's whole life, in one place: [`Runtime::execute`] runs a request (its local model
//! loaded first), streams the text to the caller, stops on cancellation, and keeps the record
//! of the run where the runtime keeps runs ([`RunKeeper`]: the run log, or a server's
//! library). Every way of running a tool ends here: `llmtool run`, the MCP servers, the team
//! server's API, a batch and a test suite.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use llmtool_format::model::Tool;
use llmtool_format::output::OutputKind;
use llmtool_log::Record;
use llmtool_providers::ApiKind;
use llmtool_providers::ProviderError;
use llmtool_providers::backend::Backend;
use llmtool_providers::images::Picture;
use llmtool_providers::run::{RunOptions, RunReport, RunRequest};
use tracing::Instrument as _;

use crate::log::{Ended, LogPolicy, Subject};
use crate::{Answer, Choice, ParamOverrides, Rejected, RunError, Runtime};

/// The longest keeping a record may take before the run goes on without it, unless the
/// keeper says otherwise ([`RunKeeper::time_limit`]).
const KEEP_TIMEOUT: Duration = Duration::from_secs(2);

/// A boxed future of [`RunKeeper::keep`].
pub type KeepFuture<'a> =
    std::pin::Pin<Box<dyn Future<Output = Result<Option<i64>, String>> + Send + 'a>>;

/// A boxed future of [`RunKeeper::keep_all`]: for each run, its id or why it is not kept.
pub type KeepAllFuture<'a> =
    std::pin::Pin<Box<dyn Future<Output = Vec<Result<Option<i64>, String>>> + Send + 'a>>;

/// The record of a finished run of `subject`, made but not kept yet: a caller that runs many
/// at once ([`Runtime::execute_later`]) keeps them together with [`Runtime::keep_all`].
#[derive(Debug, Clone)]
pub struct ToKeep {
    pub subject: Subject,
    pub record: Record,
    /// The pictures of an image tool's run that the runtime hands back
    /// ([`crate::pictures::Pictures::Returned`]), for a keeper that stores them with the run
    /// (a team server's library); the run log keeps only what the record says of them.
    pub pictures: Vec<Picture>,
}

/// Where a runtime keeps the records of its runs: the run log in the data directory (the
/// default), or a team server's library.
pub trait RunKeeper: Send + Sync {
    /// Keeps `run` (its subject's record, and its pictures where the keeper stores them); its
    /// id, where the keeper numbers runs, or why it is not kept.
    fn keep<'a>(&'a self, run: &'a ToKeep) -> KeepFuture<'a>;

    /// Keeps `runs` together, in one write where the keeper can (the run log writes them in
    /// one transaction); by default one after the other.
    fn keep_all<'a>(&'a self, runs: &'a [ToKeep]) -> KeepAllFuture<'a> {
        Box::pin(async move {
            let mut kept = Vec::with_capacity(runs.len());
            for run in runs {
                kept.push(self.keep(run).await);
            }
            kept
        })
    }

    /// The longest keeping one record, or one group of them, may take: a command's run log
    /// is given 2 s, so that a locked log never holds up the answer; a server's library may
    /// want longer.
    fn time_limit(&self) -> Duration {
        KEEP_TIMEOUT
    }
}

/// The runs a keeper did not keep: how many, and why the first was not.
#[derive(Debug, Default)]
pub(crate) struct Unkept {
    count: AtomicU64,
    first: std::sync::Mutex<Option<String>>,
}

impl Unkept {
    fn add(&self, problem: &str) {
        if self.count.fetch_add(1, Ordering::Relaxed) == 0
            && let Ok(mut first) = self.first.lock()
        {
            *first = Some(problem.to_owned());
        }
    }

    pub(crate) fn get(&self) -> Option<(u64, String)> {
        let count = self.count.load(Ordering::Relaxed);
        let first = self.first.lock().ok()?.clone()?;
        (count > 0).then_some((count, first))
    }
}

/// A finished run: how it ended, and its record.
#[derive(Debug)]
pub struct Finished {
    /// The report, or why there is none ([`ProviderError::Cancelled`] when it was cancelled).
    pub result: Result<RunReport, RunError>,
    /// The record made of the run (with its id once kept), when the run has a subject and the
    /// runtime keeps runs.
    pub record: Option<Record>,
    /// Why the record is not kept, for the caller to show as a warning.
    pub not_kept: Option<String>,
}

impl Finished {
    /// How the run ended, as its record says.
    pub fn ended(&self) -> Ended<'_> {
        ended(&self.result)
    }

    /// Whether the run was cancelled.
    pub fn cancelled(&self) -> bool {
        matches!(self.result, Err(RunError::Provider(ProviderError::Cancelled)))
    }
}

fn ended(result: &Result<RunReport, RunError>) -> Ended<'_> {
    match result {
        Ok(report) => Ended::Report(report),
        Err(RunError::Provider(ProviderError::Cancelled)) => Ended::Cancelled,
        Err(error) => Ended::Failed(error),
    }
}

impl Runtime {
    /// Runs `request`: its expected output enforced (asked again up to `options.max_repairs`
    /// times), text that is shown unchanged given to `on_text` as it arrives, until it ends
    /// or `cancel` completes. A run of a `subject` is then kept as the runtime keeps runs;
    /// a run without one (an answer read from a cache, a check that sends nothing) is not.
    pub async fn execute(
        &self,
        request: &RunRequest,
        options: RunOptions,
        subject: Option<&Subject>,
        on_text: &mut (dyn FnMut(&str) + Send),
        cancel: impl Future<Output = ()>,
    ) -> Finished {
        let (result, to_keep) =
            self.execute_later(request, options, subject, on_text, cancel).await;
        let (record, not_kept) = match to_keep {
            Some(run) => self.keep_all(vec![run]).await.pop().unzip(),
            None => (None, None),
        };
        Finished { result, record, not_kept: not_kept.flatten() }
    }

    /// [`Runtime::execute`], with the record of the run returned rather than kept (`None`
    /// without a subject, or when the runtime keeps no runs): a caller running many at once
    /// keeps them together, with [`Runtime::keep_all`], so that a run never waits on the
    /// writing of another's record.
    pub async fn execute_later(
        &self,
        request: &RunRequest,
        options: RunOptions,
        subject: Option<&Subject>,
        on_text: &mut (dyn FnMut(&str) + Send),
        cancel: impl Future<Output = ()>,
    ) -> (Result<RunReport, RunError>, Option<ToKeep>) {
        let started = jiff::Timestamp::now();
        let span = crate::trace::run_span(request, subject);
        let ran = async {
            tokio::select! {
                result = self.run(request, options, on_text) => result,
                () = cancel => Err(ProviderError::Cancelled.into()),
            }
        };
        let result = ran.instrument(span.clone()).await;
        crate::trace::record_run(&span, &result);
        let mut to_keep =
            subject.and_then(|subject| self.to_keep(subject, request, started, ended(&result)));
        if let (Some(run), Ok(report)) = (&mut to_keep, &result) {
            // Shared, not copied: the caller still gets them with the report.
            run.pictures.clone_from(&report.pictures);
        }
        (result, to_keep)
    }

    /// The answer of `tool` to `prompt`, whole, with its expected output enforced: what a
    /// server returns to its client. The run is kept as a run of `subject`, when given (a
    /// problem keeping it is a logged warning).
    pub async fn answer(
        &self,
        tool: &Tool,
        prompt: String,
        subject: Option<&Subject>,
    ) -> Result<Answer, RunError> {
        self.answer_until(tool, prompt, subject, std::future::pending(), None).await
    }

    /// [`Runtime::answer`], cancelled (and kept as cancelled) when `cancel` completes.
    pub(crate) async fn answer_until(
        &self,
        tool: &Tool,
        prompt: String,
        subject: Option<&Subject>,
        cancel: impl Future<Output = ()>,
        observer: Option<llmtool_providers::functions::Observer>,
    ) -> Result<Answer, RunError> {
        let mut request = self
            .request_off_thread(tool, prompt, ParamOverrides::default(), &Choice::default())
            .await?;
        if let (Some(functions), Some(observer)) = (&mut request.functions, observer) {
            functions.observer = Some(observer);
        }
        self.answer_request(&request, subject, cancel).await
    }

    /// The answer to `request` whole, its expected output enforced, the run kept as a run of
    /// `subject`; cancelled when `cancel` completes (a server admitted the request itself).
    pub async fn answer_request(
        &self,
        request: &RunRequest,
        subject: Option<&Subject>,
        cancel: impl Future<Output = ()>,
    ) -> Result<Answer, RunError> {
        if let Some(note) = &request.target.note {
            tracing::info!("{note}");
        }
        let finished = self.execute(request, RunOptions::WHOLE, subject, &mut |_| {}, cancel).await;
        if let Some(problem) = &finished.not_kept {
            tracing::warn!("the run is not kept: {problem}");
        }
        let mut report = finished.result?;
        let text = Rejected::check(&report)?.to_owned();
        Ok(Answer {
            text,
            pictures: std::mem::take(&mut report.pictures),
            revised_prompt: report.revised_prompt.take(),
        })
    }

    /// Gets the backend of `request` ready: fetches (as the fetch policy allows) and loads its
    /// local model, if it runs on one. `execute` does this itself; a caller that wants a
    /// download or a slow load to happen before it starts listening for Ctrl-C calls it
    /// first.
    pub async fn prepare(&self, request: &RunRequest) -> Result<(), RunError> {
        if request.target.endpoint.api == ApiKind::Local {
            self.local_models().engine(&request.target).await?;
        }
        Ok(())
    }

    /// Runs `request` on its backend, with nothing kept.
    async fn run(
        &self,
        request: &RunRequest,
        options: RunOptions,
        on_text: &mut (dyn FnMut(&str) + Send),
    ) -> Result<RunReport, RunError> {
        let makes_pictures = matches!(request.spec.kind, OutputKind::Image(_));
        if makes_pictures && *self.pictures() == crate::pictures::Pictures::Refused {
            return Err(RunError::NoPictureFolder);
        }
        let backend = if request.target.endpoint.api == ApiKind::Local {
            Backend::Local(self.local_models().engine(&request.target).await?)
        } else {
            Backend::Http(self.transport())
        };
        let mut report = llmtool_providers::run::run(&backend, request, options, on_text).await?;
        crate::pictures::settle(self.pictures(), &mut report)?;
        Ok(report)
    }

    /// The record of a run of `subject` by `request`, started at `started`, as the runtime's
    /// policy says (`None` when it keeps no runs), to keep with [`Runtime::keep_all`]: for a
    /// run that ended elsewhere (a row answered by a provider's batch engine, collected later).
    pub fn to_keep(
        &self,
        subject: &Subject,
        request: &RunRequest,
        started: jiff::Timestamp,
        ended: Ended<'_>,
    ) -> Option<ToKeep> {
        let (_, policy, _) = self.keeping();
        (policy != LogPolicy::Off).then(|| ToKeep {
            subject: subject.clone(),
            record: self.run_record(subject, request, started, ended, policy),
            pictures: Vec::new(),
        })
    }

    /// Keeps `runs` where the runtime keeps runs, together: each record (with its id once
    /// kept) and why it is not kept. A problem is also counted for
    /// [`Runtime::runs_not_kept`].
    pub async fn keep_all(&self, runs: Vec<ToKeep>) -> Vec<(Record, Option<String>)> {
        if runs.is_empty() {
            return Vec::new();
        }
        let (keeper, _, unkept) = self.keeping();
        let limit = keeper.time_limit();
        let kept = match tokio::time::timeout(limit, keeper.keep_all(&runs)).await {
            Ok(kept) => kept,
            Err(_) => {
                let problem = format!("keeping it took over {} s", limit.as_secs());
                vec![Err(problem); runs.len()]
            }
        };
        let mut kept = kept.into_iter();
        runs.into_iter()
            .map(|ToKeep { mut record, .. }| {
                let outcome = kept.next().unwrap_or_else(|| Err("the keeper lost it".into()));
                let problem = match outcome {
                    Ok(id) => {
                        record.id = id;
                        None
                    }
                    Err(problem) => {
                        unkept.add(&problem);
                        Some(problem)
                    }
                };
                (record, problem)
            })
            .collect()
    }
}
