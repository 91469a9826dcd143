//! Running the library's tools on the server: `POST /tools/{slug}/run` streams the answer as
//! Server-Sent Events, MCP's `tools/call` waits for it whole. Both go through the runtime's
//! one run path ([`Runtime::execute`]: the model chosen, the expected output enforced), whose
//! runs this server keeps with their cost in the library's database, for `GET /usage`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use llmtool_log::Record;
use llmtool_mcp::RunLimits;
use llmtool_registry::{Charge, Reference, Store};
use llmtool_runtime::{KeepFuture, LogPolicy, RunKeeper, Runtime, Subject};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The server's runtime, its turns, and where runs are kept.
pub(crate) struct Runs {
    /// The server's runtime, keeping its runs in the library.
    pub(crate) runtime: Runtime,
    limits: RunLimits,
    turns: Arc<Semaphore>,
    waiting: AtomicUsize,
}

impl Runs {
    /// Runs on `runtime`, each run kept in `store` with its cost (the API's and MCP's alike).
    pub(crate) fn new(runtime: Runtime, store: Arc<dyn Store>, limits: RunLimits) -> Runs {
        let turns = Arc::new(Semaphore::new(limits.concurrent.max(1)));
        let runtime = runtime.keeping_runs_in(Arc::new(LibraryKeeper(store)), LogPolicy::On);
        Runs { runtime, limits, turns, waiting: AtomicUsize::new(0) }
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
}

/// Counts a waiter for as long as it waits.
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Keeps the server's runs in the library's database, as runs of the version they ran, by the
/// token that ran them.
struct LibraryKeeper(Arc<dyn Store>);

impl RunKeeper for LibraryKeeper {
    /// A run that was paid for is worth a wait: `GET /usage` counts what is kept.
    fn time_limit(&self) -> std::time::Duration {
        std::time::Duration::from_secs(30)
    }

    fn keep<'a>(&'a self, subject: &'a Subject, record: &'a Record) -> KeepFuture<'a> {
        Box::pin(async move {
            // The server names each tool it runs `registry:SLUG@VERSION`.
            let reference = subject.tool_path.as_deref().and_then(Reference::from_path).flatten();
            let version = reference.as_ref().and_then(Reference::version).unwrap_or(0);
            let slug = reference.map(|reference| reference.slug).unwrap_or_default();
            let account = subject.account.clone().unwrap_or_default();
            let charge = Charge { member: account.member, team: account.team };
            let by = subject.by.as_deref();
            let kept = self.0.log_run(&slug, version, by, record, &charge, account.reservation);
            let kept = kept.await;
            kept.map(Some).map_err(|error| format!("a run of {slug}: {error}"))
        })
    }
}
