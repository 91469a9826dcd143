//! The run log on the shared run path: what a run is a run of ([`Subject`]), how it ended
//! ([`Ended`]), the record made of them, and where it is written (`llmtool-log`'s database in
//! the data directory), so that `llmtool run` and the MCP server log their runs alike. Writing
//! never fails a run: the caller gets the problem to show as a warning.

use std::path::PathBuf;

use llmtool_core::model::Tool;
use llmtool_core::template::Inputs;
use llmtool_log::{Outcome, Record, RunLog};
use llmtool_providers::run::{RunReport, RunRequest};
use sha2::{Digest as _, Sha256};
use tokio::sync::Mutex;

use crate::RunError;
use crate::lifecycle::{KeepFuture, RunKeeper};

/// Whether runs are logged, and what of their values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogPolicy {
    /// Nothing is written (a library's default: an application turns the log on).
    Off,
    /// Every run, with its values.
    On,
    /// Every run, with only a hash of its values (`--no-log-values`).
    HashValues,
}

impl LogPolicy {
    /// The user's choice: off when `LLMTOOL_NO_LOG` is set (to anything but `0` or empty),
    /// else on, with only the values' hash when `hash_values`.
    pub fn from_env(hash_values: bool) -> Self {
        let off = std::env::var("LLMTOOL_NO_LOG").is_ok_and(|v| !v.is_empty() && v != "0");
        match (off, hash_values) {
            (true, _) => LogPolicy::Off,
            (false, true) => LogPolicy::HashValues,
            (false, false) => LogPolicy::On,
        }
    }
}

/// What a run is a run of: the tool and the values it was given.
#[derive(Debug, Clone, PartialEq)]
pub struct Subject {
    /// What ran it: `run`, `mcp`, `batch` or `test` (a command), `server` or `studio` (a team
    /// server's API, and its studio).
    pub origin: &'static str,
    pub tool_path: Option<String>,
    pub tool_name: Option<String>,
    /// The tool's content hash ([`tool_hash`]).
    pub tool_hash: String,
    /// The values, as [`values_json`] gives them.
    pub values: serde_json::Value,
    /// Who ran it, when someone signed in did (a team server's token).
    pub by: Option<String>,
}

impl Subject {
    /// A run of `tool` (read from `path`) with `inputs`, by `origin`.
    pub fn new(origin: &'static str, path: Option<String>, tool: &Tool, inputs: &Inputs) -> Self {
        Self::with_values(origin, path, tool, values_json(inputs))
    }

    /// A run of `tool` (read from `path`) with `values` as JSON (a test case's, as written),
    /// by `origin`.
    pub fn with_values(
        origin: &'static str,
        path: Option<String>,
        tool: &Tool,
        values: serde_json::Value,
    ) -> Self {
        Subject {
            origin,
            tool_path: path,
            tool_name: tool.name().map(str::to_owned),
            tool_hash: tool_hash(tool),
            values,
            by: None,
        }
    }
}

/// How a run ended: its report, or why there is none.
#[derive(Debug, Clone, Copy)]
pub enum Ended<'a> {
    Report(&'a RunReport),
    Failed(&'a RunError),
    Cancelled,
}

/// SHA-256 of `text`, in hex.
pub fn hash(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// A tool's content hash: SHA-256 of its JSON as llmtool reads it (keys in the format's order,
/// no whitespace), so that reformatting a file or reading it from another place keeps the
/// hash, and any change to what the tool says changes it.
pub fn tool_hash(tool: &Tool) -> String {
    hash(&serde_json::to_string(tool).unwrap_or_default())
}

/// The values as JSON: a name's items as one string, or a list when given as one.
pub fn values_json(inputs: &Inputs) -> serde_json::Value {
    inputs
        .iter()
        .map(|input| {
            let value = if input.as_list || input.items.len() > 1 {
                serde_json::json!(input.items)
            } else {
                serde_json::json!(input.items.first().cloned().unwrap_or_default())
            };
            (input.name.clone(), value)
        })
        .collect::<serde_json::Map<_, _>>()
        .into()
}

/// `values` with `redact` applied to every string in them.
fn masked(values: &serde_json::Value, redact: &dyn Fn(&str) -> String) -> serde_json::Value {
    use serde_json::Value;
    match values {
        Value::String(text) => Value::String(redact(text)),
        Value::Array(items) => Value::Array(items.iter().map(|v| masked(v, redact)).collect()),
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), masked(v, redact))).collect())
        }
        other => other.clone(),
    }
}

/// The run log in the data directory: where a runtime keeps its runs unless told otherwise
/// ([`crate::Runtime::keeping_runs_in`]). Opened on its first record and kept open.
#[derive(Debug)]
pub(crate) struct RunLogKeeper {
    path: Option<PathBuf>,
    open: Mutex<Option<RunLog>>,
}

impl RunLogKeeper {
    pub(crate) fn new() -> Self {
        let path = llmtool_log::data_dir().map(|dir| dir.join(llmtool_log::DATABASE_FILE));
        RunLogKeeper { path, open: Mutex::new(None) }
    }

    async fn append(&self, record: &Record) -> Result<Option<i64>, String> {
        let Some(path) = &self.path else {
            return Err("set HOME, XDG_DATA_HOME or LLMTOOL_DATA_DIR".into());
        };
        let mut open = self.open.lock().await;
        if open.is_none() {
            *open = Some(RunLog::open(path).await.map_err(|error| error.to_string())?);
        }
        match open.as_ref() {
            Some(log) => log.append(record).await.map(Some).map_err(|error| error.to_string()),
            None => Ok(None),
        }
    }
}

impl RunKeeper for RunLogKeeper {
    fn keep<'a>(&'a self, _subject: &'a Subject, record: &'a Record) -> KeepFuture<'a> {
        Box::pin(self.append(record))
    }
}

impl crate::Runtime {
    /// The record of a run of `subject` by `request`, started at `started`, for a log that
    /// keeps its values (`LogPolicy::On`) or only their hash. Keys are redacted from the
    /// values, the answer and the error; so are the values data-loss prevention hid from the
    /// model (the log keeps what was sent, and how many of each kind were hidden). A run that
    /// data-loss prevention blocked keeps only its values' hash.
    pub(crate) fn run_record(
        &self,
        subject: &Subject,
        request: &RunRequest,
        started: jiff::Timestamp,
        ended: Ended<'_>,
        policy: LogPolicy,
    ) -> Record {
        let target = &request.target;
        let redact = |text: &str| {
            let text = self.redact(text);
            match &request.redaction {
                Some(redaction) => redaction.mask(&text),
                None => text.into_owned(),
            }
        };
        let blocked = matches!(ended, Ended::Failed(RunError::Blocked(_)));
        let values_text = subject.values.to_string();
        let (report, outcome, error) = match ended {
            Ended::Report(report) => {
                let outcome = if report.error.is_some() { Outcome::Rejected } else { Outcome::Ok };
                (Some(report), outcome, report.error.clone())
            }
            Ended::Failed(why) => (None, Outcome::Failed, Some(why.to_string())),
            Ended::Cancelled => (None, Outcome::Cancelled, None),
        };
        let usage = report.map(|r| r.usage).unwrap_or_default();
        Record {
            id: None,
            started_at: llmtool_log::time_text(started),
            origin: subject.origin.into(),
            tool_path: subject.tool_path.clone(),
            tool_name: subject.tool_name.clone(),
            tool_hash: subject.tool_hash.clone(),
            // As given, but for a key pasted into a value (as everywhere llmtool prints).
            variables: (policy == LogPolicy::On && !blocked)
                .then(|| masked(&subject.values, &redact)),
            // The prompt holds the values: kept only where they are. A request made without its
            // prompt (a row answered by a provider's batch engine, collected later) has none.
            prompt: (policy == LogPolicy::On && !blocked && !request.prompt.is_empty())
                .then(|| redact(&request.first_message())),
            variables_hash: hash(&values_text),
            provider: target.endpoint.provider.clone(),
            model: target.model.clone(),
            input_tokens: usage.input_tokens,
            cached_input_tokens: usage.cached_input_tokens,
            cache_write_tokens: usage.cache_write_tokens,
            output_tokens: usage.output_tokens,
            reasoning_tokens: usage.reasoning_tokens,
            cost_usd: report.and_then(|r| r.cost),
            price_entry: report.and_then(|r| r.price.as_ref()).map(|p| p.entry.clone()),
            latency_ms: report.map(|r| r.latency_ms),
            first_token_ms: report.and_then(|r| r.time_to_first_token_ms),
            repairs: report.map_or(0, |r| r.repairs),
            outcome,
            error: error.map(|e| redact(&e)),
            answer: report.map(|r| redact(r.output.as_ref().unwrap_or(&r.raw))),
            redactions: report
                .map(|r| r.redactions.iter().map(|(kind, n)| (kind.clone(), *n as u64)).collect())
                .unwrap_or_default(),
        }
    }
}
