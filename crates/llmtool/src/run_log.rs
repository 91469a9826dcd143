//! Writing each `llmtool run` to the run log (`llmtool-log`): the record made from the run,
//! and the write, which never fails or holds up a run (a problem is a warning).

use std::time::Duration;

use llmtool_core::template::Inputs;
use llmtool_log::{Outcome, Record, RunLog};
use llmtool_providers::resolve::Target;
use llmtool_providers::run::RunReport;
use sha2::{Digest as _, Sha256};

/// The longest a write may take before the run goes on without it.
const WRITE_TIMEOUT: Duration = Duration::from_secs(2);

/// What is known of a run before it is sent.
#[derive(Debug)]
pub(crate) struct Started<'a> {
    pub(crate) at: jiff::Timestamp,
    pub(crate) tool_path: String,
    pub(crate) tool_name: Option<String>,
    pub(crate) tool_text: &'a str,
    pub(crate) inputs: &'a Inputs,
    /// Keep only the values' hash (`--no-log-values`).
    pub(crate) no_values: bool,
}

/// How the run ended: its report, or why there is none.
#[derive(Debug)]
pub(crate) enum Ended<'a> {
    Report(&'a RunReport),
    Failed(String),
    Cancelled,
}

/// Whether runs are logged: not when `LLMTOOL_NO_LOG` is set (to anything but `0` or empty).
pub(crate) fn enabled() -> bool {
    std::env::var("LLMTOOL_NO_LOG").map_or(true, |value| value.is_empty() || value == "0")
}

/// The record of a run.
pub(crate) fn record(started: &Started<'_>, target: &Target, ended: &Ended<'_>) -> Record {
    let values = values_json(started.inputs);
    let values_text = values.to_string();
    let (report, outcome, error) = match ended {
        Ended::Report(report) => {
            let outcome = if report.error.is_some() { Outcome::Rejected } else { Outcome::Ok };
            (Some(*report), outcome, report.error.clone())
        }
        Ended::Failed(why) => (None, Outcome::Failed, Some(why.clone())),
        Ended::Cancelled => (None, Outcome::Cancelled, None),
    };
    let usage = report.map(|r| r.usage).unwrap_or_default();
    Record {
        id: None,
        started_at: llmtool_log::time_text(started.at),
        origin: "run".into(),
        tool_path: Some(started.tool_path.clone()),
        tool_name: started.tool_name.clone(),
        tool_hash: hex_sha256(started.tool_text.as_bytes()),
        // Kept as given, but for a key pasted into a value (as everywhere llmtool prints).
        variables: (!started.no_values)
            .then(|| serde_json::from_str(&redact(&values_text)).unwrap_or(values)),
        variables_hash: hex_sha256(values_text.as_bytes()),
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
    }
}

/// Appends `record` to the log in the data directory; a problem is a warning on standard
/// error, and the run's outcome stands.
pub(crate) fn append(runtime: &tokio::runtime::Runtime, record: &Record) {
    let Some(dir) = llmtool_log::data_dir() else {
        eprintln!("warning: the run is not logged: set HOME, XDG_DATA_HOME or LLMTOOL_DATA_DIR");
        return;
    };
    let path = dir.join(llmtool_log::DATABASE_FILE);
    let written = runtime.block_on(async {
        tokio::time::timeout(WRITE_TIMEOUT, async {
            RunLog::open(&path).await?.append(record).await
        })
        .await
    });
    match written {
        Ok(Ok(_)) => {}
        Ok(Err(error)) => eprintln!("warning: the run is not logged: {error}"),
        Err(_) => eprintln!("warning: the run is not logged: {} is busy", path.display()),
    }
}

/// The values as JSON: a name's items as one string, or a list when given as one.
fn values_json(inputs: &Inputs) -> serde_json::Value {
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

fn redact(text: &str) -> String {
    crate::secrets::redact(text).into_owned()
}

fn hex_sha256(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}
