//! Running the library's tools on the server: `POST /tools/{slug}/run` streams the answer as
//! Server-Sent Events, MCP's `tools/call` waits for it whole. Both go through the shared run
//! path (`llmtool_runtime`: the model chosen, the expected output enforced) and each run is
//! kept with its cost in the library's database, for `GET /usage`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use llmtool_core::model::Tool;
use llmtool_log::Record;
use llmtool_mcp::{AnswerFuture, RunLimits, Runner};
use llmtool_providers::run::{RunOptions, RunReport, RunRequest};
use llmtool_registry::Store;
use llmtool_runtime::{
    Choice, Ended, LogPolicy, ParamOverrides, Rejected, RunError, Runtime, Subject,
};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The server's runtime, its turns, and where runs are kept.
pub(crate) struct Runs {
    pub(crate) runtime: Runtime,
    store: Arc<dyn Store>,
    limits: RunLimits,
    turns: Arc<Semaphore>,
    waiting: AtomicUsize,
}

/// A run, and what it is a run of.
pub(crate) struct Job {
    pub(crate) slug: String,
    pub(crate) version: u32,
    /// The name of the caller's token.
    pub(crate) by: Option<String>,
    pub(crate) request: RunRequest,
    pub(crate) subject: Subject,
}

/// How a kept run ended.
pub(crate) struct Finished {
    /// The record kept, with its id (`None` when it could not be kept).
    pub(crate) record: Record,
    pub(crate) report: Option<Result<RunReport, RunError>>,
}

impl Runs {
    pub(crate) fn new(runtime: Runtime, store: Arc<dyn Store>, limits: RunLimits) -> Runs {
        let turns = Arc::new(Semaphore::new(limits.concurrent.max(1)));
        Runs { runtime, store, limits, turns, waiting: AtomicUsize::new(0) }
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

    /// Runs `job`, giving text to `on_text` as it arrives (when `stream`), until it ends or
    /// `cancelled` completes; then keeps it in the library's database.
    pub(crate) async fn run(
        &self,
        job: &Job,
        stream: bool,
        on_text: &mut (dyn FnMut(&str) + Send),
        cancelled: impl Future<Output = ()>,
    ) -> Finished {
        let options = RunOptions { stream, max_repairs: 2, raw: false, live: stream };
        let started = jiff::Timestamp::now();
        let report = tokio::select! {
            report = self.runtime.run(&job.request, options, on_text) => Some(report),
            () = cancelled => None,
        };
        let ended = match &report {
            Some(Ok(report)) => Ended::Report(report),
            Some(Err(error)) => Ended::Failed(error),
            None => Ended::Cancelled,
        };
        let mut record =
            self.runtime.run_record(&job.subject, &job.request, started, ended, LogPolicy::On);
        match self.store.log_run(&job.slug, job.version, job.by.as_deref(), &record).await {
            Ok(id) => record.id = Some(id),
            Err(error) => tracing::warn!("a run of {} is not kept: {error}", job.slug),
        }
        Finished { record, report }
    }
}

/// Counts a waiter for as long as it waits.
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Runs MCP's tool calls through [`Runs`], so that they are kept like the API's.
pub(crate) struct LibraryRunner(pub(crate) Arc<Runs>);

impl Runner for LibraryRunner {
    fn is_remote(&self, tool: &Tool) -> bool {
        self.0.runtime.is_remote(tool)
    }

    fn answer(&self, tool: Tool, prompt: String, subject: Subject) -> AnswerFuture {
        let runs = Arc::clone(&self.0);
        // The run is a task of its own, so that it is kept even if the call is dropped (its
        // session closed) before it ends.
        let run = tokio::spawn(async move {
            let request = runs
                .runtime
                .request_off_thread(&tool, prompt, ParamOverrides::default(), &Choice::default())
                .await?;
            // MCP names each tool `registry:SLUG@VERSION` (see `mcp::load`).
            let (slug, version) = subject
                .tool_path
                .as_deref()
                .and_then(|path| path.strip_prefix("registry:"))
                .and_then(|path| path.rsplit_once('@'))
                .map(|(slug, version)| (slug.to_owned(), version.parse().unwrap_or(0)))
                .unwrap_or_default();
            let job = Job { slug, version, by: None, request, subject };
            let finished = runs.run(&job, false, &mut |_| {}, std::future::pending()).await;
            // Nothing cancels this run, so it always has a report.
            let report = finished.report.unwrap_or_else(|| {
                Err(RunError::from(Rejected {
                    reason: "cancelled".into(),
                    repairs: 0,
                    raw: String::new(),
                }))
            });
            Ok(Rejected::check(&report?)?.to_owned())
        });
        Box::pin(async move {
            run.await.unwrap_or_else(|error| {
                Err(RunError::from(Rejected {
                    reason: format!("the run stopped: {error}"),
                    repairs: 0,
                    raw: String::new(),
                }))
            })
        })
    }

    fn public_message(&self, error: &RunError) -> String {
        self.0.runtime.redact(&error.to_string()).into_owned()
    }
}
