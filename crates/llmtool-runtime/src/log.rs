//! The run log on the shared run path: what a run is a run of ([`Subject`]), how it ended
//! ([`Ended`]), the record made of them, and where it is written (`llmtool-log`'s database in
//! the data directory), so that `llmtool run` and the MCP server log their runs alike. Writing
//! never fails a run: the caller gets the problem to show as a warning.

use std::collections::BTreeMap;
use std::path::PathBuf;

use llmtool_dlp::Policy;
use llmtool_format::model::Tool;
use llmtool_format::template::Inputs;
use llmtool_log::{Outcome, Record, RunLog, Thread};
use llmtool_providers::Usage;
use llmtool_providers::run::{Placeholders, RunReport, RunRequest};
use sha2::{Digest as _, Sha256};
use tokio::sync::Mutex;

use crate::RunError;
use crate::lifecycle::{KeepAllFuture, KeepFuture, RunKeeper, ToKeep};

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
    /// Whom a team server charges the run to, and the budget reservation it holds.
    pub account: Option<Account>,
    /// The conversation the run is a turn of, when it is one.
    pub turn: Option<Turn>,
}

/// A run's place in a conversation: the conversation's id, which turn (1: the tool's own run),
/// and, with the first turn, the tool as it started (for the log to keep with the
/// conversation).
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    pub conversation: String,
    pub number: u32,
    /// The tool's JSON, given with the first turn.
    pub tool: Option<String>,
    /// The data-loss prevention policy the conversation started under, given with the
    /// first turn.
    pub dlp: Option<Policy>,
}

/// Whom a team server charges a run to: a member and one of their teams (`""` for none), and
/// the reservation of its worst-case cost, which keeping the run releases.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Account {
    pub member: String,
    pub team: String,
    pub reservation: Option<i64>,
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
            account: None,
            turn: None,
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

impl Ended<'_> {
    /// The outcome a run's record says: a report whose answer never met the expected output
    /// is `rejected`.
    pub fn outcome(&self) -> Outcome {
        match self {
            Ended::Report(report) if report.error.is_some() => Outcome::Rejected,
            Ended::Report(_) => Outcome::Ok,
            Ended::Failed(_) => Outcome::Failed,
            Ended::Cancelled => Outcome::Cancelled,
        }
    }
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
pub(crate) fn masked(
    values: &serde_json::Value,
    redact: &dyn Fn(&str) -> String,
) -> serde_json::Value {
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
///
/// Runs that finish together (a batch's rows, a test's cases) are written together: each
/// record joins a queue, and whoever holds the log next writes the whole queue in one
/// transaction. One commit per group rather than per run is what lets a batch log 4,000 rows a
/// second (`bench/batch.sh`); a run alone is written at once, as before.
#[derive(Debug)]
pub(crate) struct RunLogKeeper {
    path: Option<PathBuf>,
    open: Mutex<Option<RunLog>>,
    queue: std::sync::Mutex<Vec<Queued>>,
}

/// A record waiting to be written, and where its id (or why it was not kept) goes.
#[derive(Debug)]
struct Queued {
    record: Record,
    kept: tokio::sync::oneshot::Sender<Result<Option<i64>, String>>,
}

impl RunLogKeeper {
    pub(crate) fn new() -> Self {
        Self::at(llmtool_log::data_dir().map(|dir| dir.join(llmtool_log::DATABASE_FILE)))
    }

    fn at(path: Option<PathBuf>) -> Self {
        RunLogKeeper { path, open: Mutex::new(None), queue: std::sync::Mutex::default() }
    }

    /// Writes `records` with whatever else is waiting: for each, its id or why it is not
    /// kept.
    async fn append_all(
        &self,
        records: impl IntoIterator<Item = Record>,
    ) -> Vec<Result<Option<i64>, String>> {
        let Some(path) = &self.path else {
            let why = "set HOME, XDG_DATA_HOME or LLMTOOL_DATA_DIR";
            return records.into_iter().map(|_| Err(why.to_owned())).collect();
        };
        // A queue is only ever pushed to and emptied: one a panic left locked is still whole.
        let queue = || self.queue.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let ids: Vec<_> = {
            let mut queue = queue();
            records
                .into_iter()
                .map(|record| {
                    let (kept, id) = tokio::sync::oneshot::channel();
                    queue.push(Queued { record, kept });
                    id
                })
                .collect()
        };
        let mut open = self.open.lock().await;
        // Whoever held the log before may have written these records with its group already.
        let group = std::mem::take(&mut *queue());
        if !group.is_empty() {
            let (records, senders): (Vec<Record>, Vec<_>) =
                group.into_iter().map(|queued| (queued.record, queued.kept)).unzip();
            let appended = async {
                if open.is_none() {
                    *open = Some(RunLog::open(path).await?);
                }
                match open.as_ref() {
                    Some(log) => log.append_all(&records).await,
                    None => Ok(Vec::new()),
                }
            }
            .await;
            match appended {
                Ok(ids) => {
                    for (kept, id) in senders.into_iter().zip(ids) {
                        let _ = kept.send(Ok(Some(id)));
                    }
                }
                Err(error) => {
                    let error = error.to_string();
                    for kept in senders {
                        let _ = kept.send(Err(error.clone()));
                    }
                }
            }
        }
        drop(open);
        let mut kept = Vec::with_capacity(ids.len());
        for id in ids {
            kept.push(id.await.unwrap_or_else(|_| Err("the run log's writer stopped".into())));
        }
        kept
    }
}

impl RunKeeper for RunLogKeeper {
    fn keep<'a>(&'a self, run: &'a ToKeep) -> KeepFuture<'a> {
        Box::pin(async move {
            let kept = self.append_all([run.record.clone()]).await;
            kept.into_iter().next().unwrap_or_else(|| Err("the run log lost it".into()))
        })
    }

    fn keep_all<'a>(&'a self, runs: &'a [ToKeep]) -> KeepAllFuture<'a> {
        Box::pin(self.append_all(runs.iter().map(|run| run.record.clone())))
    }
}

/// What a run did, apart from whose run it was: the part of its record that a model's run and a
/// smart tool's run each know their own way. [`record`] joins it to the run's subject.
pub(crate) struct RunFacts {
    pub(crate) provider: String,
    pub(crate) model: String,
    pub(crate) usage: Usage,
    pub(crate) cost_usd: Option<f64>,
    pub(crate) price_entry: Option<String>,
    pub(crate) latency_ms: Option<u64>,
    pub(crate) first_token_ms: Option<u64>,
    pub(crate) repairs: u32,
    pub(crate) outcome: Outcome,
    pub(crate) error: Option<String>,
    pub(crate) answer: Option<String>,
    /// The prompt as sent, where the policy keeps it.
    pub(crate) prompt: Option<String>,
    pub(crate) redactions: BTreeMap<String, u64>,
    /// Whether the run's values may be kept: not for one data-loss prevention blocked.
    pub(crate) values_kept: bool,
    /// The placeholders of the values data-loss prevention hid, kept with the conversation.
    pub(crate) placeholders: BTreeMap<String, String>,
    /// The functions the model called, with keys masked in what they were given and gave back.
    pub(crate) calls: Vec<llmtool_log::Call>,
}

/// The one builder of a run's record: whose run it was (`subject`, started at `started`), what
/// it did (`facts`), its values kept as `policy` says with `redact` applied to them.
pub(crate) fn record(
    subject: &Subject,
    started: jiff::Timestamp,
    policy: LogPolicy,
    facts: RunFacts,
    redact: &dyn Fn(&str) -> String,
) -> Record {
    let values_kept = policy == LogPolicy::On && facts.values_kept;
    Record {
        id: None,
        started_at: llmtool_log::time_text(started),
        origin: subject.origin.into(),
        tool_path: subject.tool_path.clone(),
        tool_name: subject.tool_name.clone(),
        tool_hash: subject.tool_hash.clone(),
        // As given, but for a key pasted into a value (as everywhere llmtool prints).
        variables: values_kept.then(|| masked(&subject.values, redact)),
        prompt: facts.prompt.filter(|_| values_kept),
        variables_hash: hash(&subject.values.to_string()),
        provider: facts.provider,
        model: facts.model,
        input_tokens: facts.usage.input_tokens,
        cached_input_tokens: facts.usage.cached_input_tokens,
        cache_write_tokens: facts.usage.cache_write_tokens,
        output_tokens: facts.usage.output_tokens,
        reasoning_tokens: facts.usage.reasoning_tokens,
        cost_usd: facts.cost_usd,
        price_entry: facts.price_entry,
        latency_ms: facts.latency_ms,
        first_token_ms: facts.first_token_ms,
        repairs: facts.repairs,
        outcome: facts.outcome,
        error: facts.error,
        answer: facts.answer,
        redactions: facts.redactions,
        // What a call was given and gave back may hold the values: kept only where they are.
        calls: facts
            .calls
            .into_iter()
            .map(|call| {
                if values_kept {
                    call
                } else {
                    llmtool_log::Call { arguments: String::new(), result: String::new(), ..call }
                }
            })
            .collect(),
        conversation: subject.turn.as_ref().map(|turn| turn.conversation.clone()),
        turn: subject.turn.as_ref().map(|turn| turn.number),
        thread: subject.turn.as_ref().map(|turn| Thread {
            tool: turn.tool.clone(),
            dlp: turn.dlp.map(|policy| policy.name().to_owned()),
            // The values themselves: kept only where values are.
            placeholders: if values_kept { facts.placeholders.clone() } else { BTreeMap::new() },
        }),
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
        let redact = |text: &str| {
            let text = self.redact(text);
            match &request.redaction {
                Some(redaction) => redaction.mask(&text),
                None => text.into_owned(),
            }
        };
        let outcome = ended.outcome();
        let (report, error) = match ended {
            Ended::Report(report) => (Some(report), report.error.clone()),
            // Its pictures were lost, but made and paid for: its usage and cost are kept.
            Ended::Failed(why @ RunError::SavePictures { report, .. }) => {
                (Some(&**report), Some(why.to_string()))
            }
            Ended::Failed(why) => (None, Some(why.to_string())),
            Ended::Cancelled => (None, None),
        };
        let facts = RunFacts {
            provider: request.target.endpoint.provider.clone(),
            model: request.target.model.clone(),
            usage: report.map(|r| r.usage).unwrap_or_default(),
            cost_usd: report.and_then(|r| r.cost),
            price_entry: report.and_then(|r| r.price.as_ref()).map(|p| p.entry.clone()),
            latency_ms: report.map(|r| r.latency_ms),
            first_token_ms: report.and_then(|r| r.time_to_first_token_ms),
            repairs: report.map_or(0, |r| r.repairs),
            outcome,
            error: error.map(|e| redact(&e)),
            answer: report.filter(|_| outcome != Outcome::Failed).map(|r| kept_answer(r, &redact)),
            // The prompt holds the values: kept only where they are. A request made without
            // its prompt (a row answered by a provider's batch engine, collected later) has
            // none.
            prompt: (!request.prompt.is_empty()).then(|| redact(&request.first_message())),
            redactions: report
                .map(|r| r.redactions.iter().map(|(kind, n)| (kind.clone(), *n as u64)).collect())
                .unwrap_or_default(),
            values_kept: !matches!(ended, Ended::Failed(RunError::Blocked(_))),
            // The run's own, with those its function results added; else the request's.
            placeholders: match report.filter(|r| !r.placeholders.0.is_empty()) {
                Some(report) => report.placeholders.0.clone(),
                None => request
                    .redaction
                    .as_deref()
                    .map(|redaction| Placeholders::of(redaction).0)
                    .unwrap_or_default(),
            },
            calls: report
                .map(|r| {
                    let masked = |call: &llmtool_log::Call| llmtool_log::Call {
                        arguments: redact(&call.arguments),
                        result: redact(&call.result),
                        ..call.clone()
                    };
                    r.calls.iter().map(masked).collect()
                })
                .unwrap_or_default(),
        };
        record(subject, started, policy, facts, &redact)
    }
}

/// The answer a record keeps: the text, or an image tool's pictures as where they are and
/// their hash (never their bytes).
fn kept_answer(report: &RunReport, redact: &dyn Fn(&str) -> String) -> String {
    match report.images.as_slice() {
        [] => redact(report.output.as_ref().unwrap_or(&report.raw)),
        images => images
            .iter()
            .map(|i| {
                let place = i.path.as_deref().map(|p| format!("{p} ")).unwrap_or_default();
                format!("{place}sha256:{} {}x{} {}", i.sha256, i.width, i.height, i.format)
            })
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

    use std::sync::Arc;

    use super::*;

    fn record(n: usize) -> Record {
        Record {
            id: None,
            started_at: llmtool_log::time_text(jiff::Timestamp::now()),
            origin: "batch".into(),
            tool_path: None,
            tool_name: Some(format!("row {n}")),
            tool_hash: String::new(),
            variables: None,
            prompt: None,
            variables_hash: String::new(),
            provider: "mock".into(),
            model: "m".into(),
            input_tokens: None,
            cached_input_tokens: None,
            cache_write_tokens: None,
            output_tokens: None,
            reasoning_tokens: None,
            cost_usd: None,
            price_entry: None,
            latency_ms: None,
            first_token_ms: None,
            repairs: 0,
            outcome: Outcome::Ok,
            error: None,
            answer: Some(format!("answer {n}")),
            redactions: std::collections::BTreeMap::new(),
            conversation: None,
            turn: None,
            calls: Vec::new(),
            thread: None,
        }
    }

    /// Records kept at the same time are written in groups, each with an id of its own, and
    /// none is lost or written twice.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn runs_kept_together_each_get_their_own_id() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("runs.db");
        let keeper = Arc::new(RunLogKeeper::at(Some(path.clone())));
        let mut tasks = tokio::task::JoinSet::new();
        for n in 0..300 {
            let keeper = Arc::clone(&keeper);
            tasks.spawn(async move {
                let kept = keeper.append_all([record(n)]).await;
                (n, kept.into_iter().next().unwrap())
            });
        }
        let mut given = std::collections::BTreeMap::new();
        while let Some(joined) = tasks.join_next().await {
            let (n, kept) = joined.unwrap();
            assert!(given.insert(kept.unwrap().unwrap(), n).is_none(), "an id given twice");
        }
        assert_eq!(given.len(), 300);
        let log = RunLog::open(&path).await.unwrap();
        let filter = llmtool_log::Filter { limit: 1000, ..llmtool_log::Filter::default() };
        let logged = log.recent(&filter).await.unwrap();
        assert_eq!(logged.len(), 300, "every record once");
        for record in logged {
            let n = given[&record.id.unwrap()];
            assert_eq!(record.tool_name, Some(format!("row {n}")), "the id given is its record's");
        }
    }
}
