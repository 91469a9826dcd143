//! One run of a smart tool: a fresh instance of CPython on its own thread, given the job on
//! its stdin, with no environment, no network, no host folder but the run's scratch folder
//! (and the requirements' site folder, read-only), and limits on CPU time, wall time, memory,
//! output, scratch space and model calls, kept by a watchdog beside it. The calling task
//! answers the guest's `llm()` requests meanwhile; time spent waiting for a model is not CPU
//! time.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Deserialize;
use wasmtime::component::ResourceTableError;
use wasmtime::{Store, StoreLimits, StoreLimitsBuilder, Trap, UpdateDeadline};
use wasmtime_wasi::p1::WasiP1Ctx;
use wasmtime_wasi::{FsPerms, I32Exit, WasiCtxBuilder, WasiView as _};

use crate::pipes::{Inbox, Outbox, Printed};
use crate::python::TICK;
use crate::{
    Failure, Folders, Frame, FunctionAsk, Job, Limits, LlmCall, LlmFuture, LlmHost, Python, Ran,
    SandboxError,
};

/// The program the guest runs: reads the job, runs the code, answers on stdout.
const GUEST: &str = include_str!("guest.py");

/// What one instance holds: its WASI context and its memory limits.
pub(crate) struct Guest {
    pub(crate) wasi: WasiP1Ctx,
    limits: StoreLimits,
}

/// How the guest's program ended, as the engine saw it.
enum Exit {
    Finished,
    Code(i32),
    /// Stopped by the watchdog or the host, for the reason in [`Stop`].
    Stopped,
    StackExhausted,
    /// The guest held more files open than its limit.
    TooManyFiles,
    Trapped(String),
}

/// Why a run is being stopped, set once by whoever stops it first: the host (the caller gone,
/// the code flooding it) or the guest's watchdog (a limit reached).
#[derive(Default)]
pub(crate) struct Stop(AtomicU8);

#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Reason {
    Cancelled = 1,
    OutOfTime = 2,
    TooLong = 3,
    TooManyCalls = 4,
    ScratchFull = 5,
    Flooding = 6,
}

impl Stop {
    fn set(&self, reason: Reason) {
        let _ = self.0.compare_exchange(0, reason as u8, Ordering::SeqCst, Ordering::SeqCst);
    }

    fn reason(&self) -> Option<Reason> {
        match self.0.load(Ordering::SeqCst) {
            1 => Some(Reason::Cancelled),
            2 => Some(Reason::OutOfTime),
            3 => Some(Reason::TooLong),
            4 => Some(Reason::TooManyCalls),
            5 => Some(Reason::ScratchFull),
            6 => Some(Reason::Flooding),
            _ => None,
        }
    }
}

impl Reason {
    fn failure(self, limits: &Limits) -> Failure {
        match self {
            Reason::Cancelled => Failure::Cancelled,
            Reason::OutOfTime => Failure::OutOfTime { limit: limits.cpu },
            Reason::TooLong => Failure::TooLong { limit: limits.wall },
            Reason::TooManyCalls => Failure::TooManyCalls { limit: limits.llm_calls },
            Reason::ScratchFull => Failure::ScratchFull { limit: limits.scratch_bytes },
            Reason::Flooding => Failure::Crashed {
                reason: "the code wrote requests without reading their answers".into(),
            },
        }
    }
}

/// The guest's CPU time: wall time since it started, less the time it waited for models.
/// (Time the host did not schedule the guest's thread counts too: under heavy load the limit
/// comes sooner.)
struct Clock {
    started: Instant,
    waited: Mutex<(Duration, Option<Instant>)>,
}

impl Clock {
    fn new() -> Self {
        Self { started: Instant::now(), waited: Mutex::new((Duration::ZERO, None)) }
    }

    fn waiting(&self, now: bool) {
        let mut waited = self.waited.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match (now, waited.1) {
            (true, None) => waited.1 = Some(Instant::now()),
            (false, Some(since)) => *waited = (waited.0 + since.elapsed(), None),
            _ => {}
        }
    }

    fn used(&self) -> Duration {
        let waited = self.waited.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let waiting = waited.1.map_or(Duration::ZERO, |since| since.elapsed());
        self.started.elapsed().saturating_sub(waited.0 + waiting)
    }
}

/// A message the guest writes on its stdout.
#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum Message {
    Llm(LlmCall),
    Call(FunctionAsk),
    Result(String),
    Failed(Raised),
}

#[derive(Deserialize)]
struct Raised {
    #[serde(rename = "type")]
    kind: String,
    message: String,
    frames: Vec<Frame>,
}

/// Stops the run when its future is dropped: the guest is told at once (its stdin ends, the
/// watchdog sees the flag within a tick), so that its thread and memory go with it.
struct CancelOnDrop {
    stop: Arc<Stop>,
    inbox: Inbox,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.stop.set(Reason::Cancelled);
        self.inbox.close();
    }
}

/// The most answers may wait unread in the guest's stdin: a guest that asks and never reads
/// is stopped before it can grow the host's memory.
const MAX_UNREAD: usize = 4 << 20;

/// Runs at once in this process, whatever asks for them (a server's runs, a batch's rows): each
/// may hold its limits' disk, memory and a thread, so this bounds what all of them hold
/// (eight scratch folders of 256 MiB at most). A run past it waits its turn.
pub const RUNS_AT_ONCE: usize = 8;

static RUNNING: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(RUNS_AT_ONCE);

impl Python {
    /// Runs `job` under `limits`, with `folders` (a scratch folder, the requirements' site
    /// folder) the only host folders it can see, and `host` answering its `llm()` calls;
    /// [`RUNS_AT_ONCE`] at most at a time.
    ///
    /// The error is the host's problem (no thread, no scratch folder); everything the code
    /// does, including failing, is in [`Ran::result`].
    pub async fn run(
        &self,
        job: &Job,
        limits: &Limits,
        folders: Folders<'_>,
        host: &dyn LlmHost,
    ) -> Result<Ran, SandboxError> {
        let _turn = RUNNING
            .acquire()
            .await
            .map_err(|_| SandboxError::Engine { reason: "the runs' turns are closed".into() })?;
        let inbox = Inbox::default();
        // A result is JSON-escaped on its way (up to six bytes for one), with room to spare.
        let outbox = Outbox::new(limits.result_bytes.saturating_mul(6).saturating_add(64 << 10));
        let printed = Printed::new(limits.printed_bytes);
        let mut wasi = WasiCtxBuilder::new();
        wasi.stdin(inbox.clone())
            .stdout(outbox.clone())
            .stderr(printed.clone())
            .args(&["python", "-c", GUEST])
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false);
        let mounts = [
            (folders.scratch, "/scratch", FsPerms::ReadWrite),
            (folders.site, "/site", FsPerms::ReadOnly),
        ];
        for (dir, guest, perms) in mounts {
            let Some(dir) = dir else { continue };
            wasi.preopened_dir(dir, guest, perms).map_err(|e| SandboxError::Scratch {
                path: dir.to_path_buf(),
                reason: e.to_string(),
            })?;
        }
        let memory = usize::try_from(limits.memory).unwrap_or(usize::MAX);
        let mut guest = Guest {
            wasi: wasi.build_p1(),
            limits: StoreLimitsBuilder::new().memory_size(memory).instances(1).build(),
        };
        // Every file, folder and stream the guest holds is an entry of this table: bounded, so
        // that code cannot take the host's descriptors.
        guest.wasi.ctx().table.set_max_capacity(limits.open_files);
        let job_line = serde_json::json!({
            "code": job.code,
            "variables": job.variables,
            "site": folders.site.is_some(),
        });
        inbox.send_line(&job_line.to_string());

        let clock = Arc::new(Clock::new());
        let stop = Arc::new(Stop::default());
        let _cancel_on_drop = CancelOnDrop { stop: stop.clone(), inbox: inbox.clone() };
        let (done_tx, mut done_rx) = tokio::sync::oneshot::channel();
        let start = StartGuest {
            pre: self.pre.clone(),
            engine: self.engine,
            guest,
            clock: clock.clone(),
            limits: limits.clone(),
            // As `/proc/self/fd` names its files: with no symbolic link on the way.
            scratch: folders
                .scratch
                .map(|dir| dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf())),
            stop: stop.clone(),
        };
        std::thread::Builder::new()
            .name("llmtool-guest".into())
            .spawn(move || {
                let _ = done_tx.send(start.run());
            })
            .map_err(|e| SandboxError::Engine { reason: format!("no thread to run in: {e}") })?;

        let mut talk = Talk {
            outcome: None,
            llm_calls: 0,
            limits,
            host,
            inbox: &inbox,
            clock: &clock,
            stop: &stop,
        };
        let exit = loop {
            tokio::select! {
                exit = &mut done_rx => break exit.unwrap_or(Exit::Trapped("the runtime stopped".into())),
                () = outbox.written() => {}
            }
            for line in outbox.take_lines() {
                talk.message(&line).await;
            }
        };
        // What the guest wrote just before it ended.
        for line in outbox.take_lines() {
            talk.message(&line).await;
        }
        inbox.close();
        let Talk { outcome, llm_calls, .. } = talk;
        let result = match (exit, outcome) {
            (Exit::Stopped, _) => {
                Err(stop.reason().map_or(Failure::Cancelled, |reason| reason.failure(limits)))
            }
            (_, Some(outcome)) => outcome,
            (_, None) if outbox.overflowed() => {
                Err(Failure::TooMuchOutput { limit: limits.result_bytes })
            }
            (Exit::StackExhausted, None) => Err(Failure::StackExhausted),
            (Exit::TooManyFiles, None) => Err(Failure::TooManyFiles { limit: limits.open_files }),
            // The code ended the interpreter itself (`os._exit`) before `execute` returned.
            (Exit::Code(code), None) => Err(Failure::Exited { code }),
            (Exit::Finished, None) => {
                Err(Failure::Crashed { reason: "the runtime ended without a result".into() })
            }
            (Exit::Trapped(reason), None) => Err(Failure::Crashed { reason }),
        };
        let (printed, printed_dropped) = printed.take();
        Ok(Ran {
            result,
            printed,
            printed_dropped,
            llm_calls,
            cpu: clock.used(),
            wall: clock.started.elapsed(),
        })
    }
}

/// The host's side of the conversation with a guest: its messages read, its `llm()` calls
/// answered, its result kept.
struct Talk<'a> {
    outcome: Option<Result<String, Failure>>,
    llm_calls: u32,
    limits: &'a Limits,
    host: &'a dyn LlmHost,
    inbox: &'a Inbox,
    clock: &'a Clock,
    stop: &'a Stop,
}

/// What a call made after the result is told.
const ALREADY_GIVEN: &str = "the tool has already given its result";

impl Talk<'_> {
    /// The host's answer to a call: time spent waiting for it is not the code's CPU time.
    async fn waiting_for(&self, answer: LlmFuture<'_>) -> Result<String, String> {
        self.clock.waiting(true);
        let answer = answer.await;
        self.clock.waiting(false);
        answer
    }

    /// Gives the guest `reply` (as `{key: ...}`, or `{"error": ...}`), unless it leaves its
    /// answers unread: then it is stopped.
    fn reply(&self, key: &str, reply: Result<String, String>) {
        if self.inbox.unread() > MAX_UNREAD {
            self.stop.set(Reason::Flooding);
            return;
        }
        let reply = match reply {
            Ok(text) => serde_json::json!({ key: text }),
            Err(error) => serde_json::json!({ "error": error }),
        };
        self.inbox.send_line(&reply.to_string());
    }

    async fn message(&mut self, line: &str) {
        let limits = self.limits;
        match serde_json::from_str::<Message>(line) {
            Ok(Message::Llm(call)) => {
                self.llm_calls = self.llm_calls.saturating_add(1);
                let reply = if self.outcome.is_some() {
                    Err(ALREADY_GIVEN.to_owned())
                } else if self.llm_calls > limits.llm_calls.saturating_add(1) {
                    // Refused once already: a code that goes on asking is stopped.
                    self.stop.set(Reason::TooManyCalls);
                    return;
                } else if self.llm_calls > limits.llm_calls {
                    Err(format!("the tool may call llm() at most {} times", limits.llm_calls))
                } else {
                    self.waiting_for(self.host.call(call)).await
                };
                self.reply("answer", reply);
            }
            Ok(Message::Call(ask)) => {
                // The host bounds the calls (their number, time and bytes) as it bounds a
                // model's.
                let reply = if self.outcome.is_some() {
                    Err(ALREADY_GIVEN.to_owned())
                } else {
                    self.waiting_for(self.host.function(ask)).await
                };
                self.reply("result", reply);
            }
            Ok(Message::Result(text)) if self.outcome.is_none() => {
                self.outcome = Some(if text.len() > limits.result_bytes {
                    Err(Failure::TooMuchOutput { limit: limits.result_bytes })
                } else {
                    Ok(text)
                });
            }
            Ok(Message::Failed(raised)) if self.outcome.is_none() => {
                self.outcome = Some(Err(failure_of(raised, limits)));
            }
            // A line that is not a message, or a result after the result, is the code writing
            // to the real stdout: it changes nothing.
            _ => {}
        }
    }
}

/// What a [`Failure`] a Python exception is: a `MemoryError` is the memory limit.
fn failure_of(raised: Raised, limits: &Limits) -> Failure {
    match raised.kind.as_str() {
        "MemoryError" => Failure::OutOfMemory { limit: limits.memory },
        "NoExecute" => Failure::NoExecute,
        _ => Failure::Raised { kind: raised.kind, message: raised.message, frames: raised.frames },
    }
}

/// Everything the guest's thread needs.
struct StartGuest {
    pre: wasmtime::InstancePre<Guest>,
    engine: &'static wasmtime::Engine,
    guest: Guest,
    clock: Arc<Clock>,
    limits: Limits,
    scratch: Option<PathBuf>,
    stop: Arc<Stop>,
}

/// How often (in ticks) the watchdog measures the scratch folder: every 100 ms, so that a
/// code writing as fast as the disk takes passes the limit by little.
const SCRATCH_EVERY: u32 = 10;

impl StartGuest {
    /// Runs the guest's `_start` to its end on this thread, with its own small executor for
    /// the WASI streams, beside a watchdog that stops it at a limit or when the host asks,
    /// whether it is computing (the epoch callback) or waiting in a host call (the watchdog
    /// drops the call).
    fn run(self) -> Exit {
        let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
            Ok(runtime) => runtime,
            Err(e) => return Exit::Trapped(format!("no executor: {e}")),
        };
        let StartGuest { pre, engine, guest, clock, limits, scratch, stop } = self;
        let mut store = Store::new(engine, guest);
        store.limiter(|guest| &mut guest.limits);
        store.set_epoch_deadline(1);
        let (watched, cpu) = (stop.clone(), limits.cpu);
        let clocked = clock.clone();
        store.epoch_deadline_callback(move |_| {
            if clocked.used() > cpu {
                watched.set(Reason::OutOfTime);
            }
            if watched.reason().is_some() {
                return Ok(UpdateDeadline::Interrupt);
            }
            Ok(UpdateDeadline::Continue(1))
        });
        let watchdog = async {
            let mut ticks = 0u32;
            loop {
                tokio::time::sleep(TICK).await;
                ticks = ticks.wrapping_add(1);
                if clock.used() > limits.cpu {
                    stop.set(Reason::OutOfTime);
                }
                if clock.started.elapsed() > limits.wall {
                    stop.set(Reason::TooLong);
                }
                if ticks.is_multiple_of(SCRATCH_EVERY)
                    && let Some(dir) = &scratch
                    && scratch_bytes(dir, limits.scratch_bytes) > limits.scratch_bytes
                {
                    stop.set(Reason::ScratchFull);
                }
                if stop.reason().is_some() {
                    return;
                }
            }
        };
        let ended = runtime.block_on(async {
            tokio::select! {
                ended = async {
                    let instance = pre.instantiate_async(&mut store).await?;
                    let start = instance.get_typed_func::<(), ()>(&mut store, "_start")?;
                    start.call_async(&mut store, ()).await
                } => Some(ended),
                () = watchdog => None,
            }
        });
        let Some(ended) = ended else { return Exit::Stopped };
        match ended {
            Ok(()) => Exit::Finished,
            Err(error) => {
                if let Some(exit) = error.downcast_ref::<I32Exit>() {
                    Exit::Code(exit.0)
                } else if matches!(
                    error.downcast_ref::<ResourceTableError>(),
                    Some(ResourceTableError::Full)
                ) {
                    Exit::TooManyFiles
                } else if let Some(trap) = error.downcast_ref::<Trap>() {
                    match trap {
                        Trap::Interrupt => Exit::Stopped,
                        Trap::StackOverflow => Exit::StackExhausted,
                        other => Exit::Trapped(format!("the runtime stopped: {other}")),
                    }
                } else {
                    Exit::Trapped(error.to_string())
                }
            }
        }
    }
}

/// The bytes the scratch folder `dir` holds on disk: its files', and those of files opened in
/// it and unlinked since ([`unlinked_bytes`]), counted until they pass `limit`.
fn scratch_bytes(dir: &Path, limit: u64) -> u64 {
    let listed = folder_bytes(dir, limit);
    if listed > limit { listed } else { listed.saturating_add(unlinked_bytes(dir)) }
}

/// The bytes of the files this process holds open that were under `dir` and are unlinked: out
/// of the folder's listing, but on the disk until closed. The guest's files are the host's
/// open files (the WASI layer opens them), so Linux's `/proc/self/fd` shows each, its path
/// marked ` (deleted)`; elsewhere this finds none.
fn unlinked_bytes(dir: &Path) -> u64 {
    let Ok(open) = std::fs::read_dir("/proc/self/fd") else { return 0 };
    let mut total = 0u64;
    for entry in open.filter_map(Result::ok) {
        let Ok(target) = std::fs::read_link(entry.path()) else { continue };
        let Some(path) = target.to_str().and_then(|t| t.strip_suffix(" (deleted)")) else {
            continue;
        };
        if Path::new(path).starts_with(dir)
            && let Ok(metadata) = std::fs::metadata(entry.path())
        {
            total = total.saturating_add(metadata.len());
        }
    }
    total
}

/// The bytes of the files under `dir`, counted until they pass `limit` (or 10,000 entries).
fn folder_bytes(dir: &Path, limit: u64) -> u64 {
    let mut total = 0u64;
    let mut seen = 0u32;
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else { continue };
        for entry in entries.filter_map(Result::ok) {
            seen += 1;
            if seen > 10_000 || total > limit {
                return total.max(if seen > 10_000 { limit + 1 } else { 0 });
            }
            let Ok(kind) = entry.file_type() else { continue };
            if kind.is_dir() {
                pending.push(entry.path());
            } else if let Ok(metadata) = entry.metadata() {
                total += metadata.len();
            }
        }
    }
    total
}
