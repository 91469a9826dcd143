//! Smart tools in a WebAssembly sandbox: a tool's Python `execute(variables)` run by CPython
//! compiled to WASI, inside wasmtime, in this process.
//!
//! The guest has no network (WASIp1 has no way to open a socket, and the context allows no
//! address), no environment, no host folder except the run's scratch folder (and, for a
//! tool's requirements, a read-only site folder), and no processes. Its CPU time, memory,
//! result, printed text and model calls are bounded ([`Limits`]). It reaches a model only
//! through `llm(prompt, **params)`, and the tool's functions (a database, a page, a search)
//! only through `sql()`, `fetch()` and `search()`, which the host answers ([`LlmHost`]): the
//! caller runs each call through its own run path, so keys and connection addresses never
//! enter the sandbox.
//!
//! The runtime is compiled once per machine by wasmtime's own compiler ([`compile`]);
//! [`Python::load`] loads it, and [`Python::run`] starts a fresh instance per run, so runs
//! share nothing.

pub mod compile;
mod descriptors;
mod pipes;
mod python;
mod run;

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use descriptors::raise_open_files_limit;
pub use python::Python;
pub use run::RUNS_AT_ONCE;

/// What to run: the tool's code, and the variables `execute` gets (one entry per variable:
/// a string, or a list of strings for a multi-select).
#[derive(Debug, Clone, Serialize)]
pub struct Job {
    pub code: String,
    pub variables: serde_json::Map<String, serde_json::Value>,
}

/// The host folders a run's guest sees: nothing else of the host's file system.
#[derive(Debug, Clone, Copy, Default)]
pub struct Folders<'a> {
    /// Read and written by the code as `/scratch`.
    pub scratch: Option<&'a std::path::Path>,
    /// The tool's requirements, unpacked: read-only, as `/site`, first on `sys.path`.
    pub site: Option<&'a std::path::Path>,
}

/// The bounds of one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// CPU time the code may use; time spent waiting for `llm()` answers does not count.
    pub cpu: Duration,
    /// Wall time the whole run may take, model calls included.
    pub wall: Duration,
    /// Linear memory the interpreter may grow to, in bytes.
    pub memory: u64,
    /// The longest result `execute` may return, in bytes.
    pub result_bytes: usize,
    /// How much printed text is kept (the rest is counted, not kept).
    pub printed_bytes: usize,
    /// How many times the code may call `llm()`.
    pub llm_calls: u32,
    /// How many bytes the files in the scratch folder may hold.
    pub scratch_bytes: u64,
    /// How many files, folders and streams the code may hold open at once (each open file is
    /// one of the host's descriptors).
    pub open_files: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            cpu: Duration::from_secs(30),
            wall: Duration::from_mins(10),
            memory: 512 << 20,
            result_bytes: 1 << 20,
            printed_bytes: 64 << 10,
            llm_calls: 32,
            scratch_bytes: 256 << 20,
            open_files: 128,
        }
    }
}

/// One `llm(prompt, **params)` call from the code.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct LlmCall {
    pub prompt: String,
    /// The keyword arguments, as given (`temperature=0.2`, `model="..."`).
    #[serde(default)]
    pub params: serde_json::Map<String, serde_json::Value>,
}

/// One call of a function the tool offers, from the code: `sql(query)` is `query_database`,
/// `fetch(url)` is `fetch_url`, `search(query)` is `web_search`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct FunctionAsk {
    pub function: String,
    #[serde(default)]
    pub arguments: serde_json::Map<String, serde_json::Value>,
}

/// A boxed future of [`LlmHost::call`] and [`LlmHost::function`].
pub type LlmFuture<'a> = Pin<Box<dyn Future<Output = Result<String, String>> + Send + 'a>>;

/// Answers the code's `llm()` calls and its function calls: the answer, or why there is none
/// (raised in the code as `LlmError` or `FunctionError`).
pub trait LlmHost: Send + Sync {
    fn call(&self, call: LlmCall) -> LlmFuture<'_>;

    /// A function call; by default none is offered.
    fn function(&self, ask: FunctionAsk) -> LlmFuture<'_> {
        let refused = format!("`{}`: this tool offers no functions", ask.function);
        Box::pin(async move { Err(refused) })
    }
}

/// A host for code that may not call a model: every call is refused with `reason`.
#[derive(Debug, Clone)]
pub struct NoModel {
    pub reason: String,
}

impl LlmHost for NoModel {
    fn call(&self, _call: LlmCall) -> LlmFuture<'_> {
        let reason = self.reason.clone();
        Box::pin(async move { Err(reason) })
    }
}

/// A line of the code's traceback: its line in `tool_code` (1-based) and its function.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Frame {
    pub line: u32,
    pub function: String,
}

/// A finished run.
#[derive(Debug)]
pub struct Ran {
    /// The text `execute` returned (a non-string result as JSON), or how the code failed.
    pub result: Result<String, Failure>,
    /// What the code printed (its first [`Limits::printed_bytes`]).
    pub printed: String,
    /// How many printed bytes were left out.
    pub printed_dropped: u64,
    /// How many `llm()` calls the code made (refused ones included).
    pub llm_calls: u32,
    /// The CPU time the code used (wall time less the time it waited for models).
    pub cpu: Duration,
    /// Wall time from start to end.
    pub wall: Duration,
}

/// How the code failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Failure {
    /// The code raised an exception (at `frames`, innermost last).
    #[error("the tool's code raised {kind}: {message}")]
    Raised { kind: String, message: String, frames: Vec<Frame> },
    #[error("the tool's code defines no execute(variables) function")]
    NoExecute,
    #[error("the tool's code used more than {} s of CPU time", limit.as_secs_f64())]
    OutOfTime { limit: Duration },
    #[error("the tool's run took more than {} s in all, model calls included", limit.as_secs_f64())]
    TooLong { limit: Duration },
    #[error("the tool's code used more than {} MiB of memory", limit >> 20)]
    OutOfMemory { limit: u64 },
    #[error("the tool's code went on calling llm() past its limit of {limit} calls")]
    TooManyCalls { limit: u32 },
    #[error("the tool's scratch folder holds more than {} MiB", limit >> 20)]
    ScratchFull { limit: u64 },
    #[error("the tool's code held more than {limit} files open at once")]
    TooManyFiles { limit: usize },
    #[error("the tool's code ended the interpreter (exit code {code}) before execute returned")]
    Exited { code: i32 },
    #[error("the tool's result is larger than {limit} bytes")]
    TooMuchOutput { limit: usize },
    #[error("the tool's code ran out of stack (a recursion too deep)")]
    StackExhausted,
    #[error("the Python runtime failed: {reason}")]
    Crashed { reason: String },
    #[error("the run was cancelled")]
    Cancelled,
}

impl Failure {
    /// The innermost line of `tool_code` the failure happened at, when known.
    pub fn line(&self) -> Option<u32> {
        match self {
            Failure::Raised { frames, .. } => frames.last().map(|frame| frame.line),
            _ => None,
        }
    }
}

/// A problem of the host: the runtime could not be loaded or started.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("the WebAssembly engine could not start: {reason}")]
    Engine { reason: String },
    #[error("the Python runtime {} could not be loaded: {reason}", path.display())]
    Module { path: PathBuf, reason: String },
    #[error("the folder {} could not be given to the tool: {reason}", path.display())]
    Scratch { path: PathBuf, reason: String },
}
