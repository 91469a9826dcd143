//! One run as the log keeps it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// The answer met the tool's expected output.
    Ok,
    /// The answer never met it, after the repairs.
    Rejected,
    /// The provider or the model failed.
    Failed,
    /// Stopped by the user.
    Cancelled,
}

impl Outcome {
    pub const fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Rejected => "rejected",
            Outcome::Failed => "failed",
            Outcome::Cancelled => "cancelled",
        }
    }

    pub(crate) fn parse(text: &str) -> Outcome {
        match text {
            "ok" => Outcome::Ok,
            "rejected" => Outcome::Rejected,
            "cancelled" => Outcome::Cancelled,
            _ => Outcome::Failed,
        }
    }
}

/// A run: when, what tool with which values, which model, the tokens by class, the cost, the
/// latency, and how it ended with which answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct Record {
    /// Given by the log when the record is written.
    pub id: Option<i64>,
    /// RFC 3339 in UTC, as [`crate::time_text`] writes it.
    pub started_at: String,
    /// What ran it: `run`, `mcp`, `batch`, `test`, `server` or `studio`.
    pub origin: String,
    pub tool_path: Option<String>,
    pub tool_name: Option<String>,
    /// SHA-256 of the tool file's text, in hex.
    pub tool_hash: String,
    /// The values, or `None` when only their hash is kept.
    pub variables: Option<serde_json::Value>,
    /// The prompt as it was sent, or `None` when only the values' hash is kept (it holds
    /// them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// SHA-256 of the values' JSON, in hex.
    pub variables_hash: String,
    pub provider: String,
    pub model: String,
    pub input_tokens: Option<u64>,
    pub cached_input_tokens: Option<u64>,
    pub cache_write_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub reasoning_tokens: Option<u64>,
    /// US dollars; `None` when the model is unpriced.
    pub cost_usd: Option<f64>,
    /// The price entry the cost was computed at.
    pub price_entry: Option<String>,
    pub latency_ms: Option<u64>,
    pub first_token_ms: Option<u64>,
    pub repairs: u32,
    pub outcome: Outcome,
    pub error: Option<String>,
    pub answer: Option<String>,
    /// How many sensitive values were swapped for placeholders, by kind (`email`); empty
    /// when none were. Never the values.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub redactions: BTreeMap<String, u64>,
    /// The conversation the run is a turn of, and which turn (1: the tool's own run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<u32>,
    /// The functions the model called on the way to its answer, in order; empty when it
    /// called none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<Call>,
    /// What the log keeps with the conversation (written with the run, never listed).
    #[serde(skip)]
    pub thread: Option<Thread>,
}

/// One function a model called during a run, as the run keeps it: what was asked, what the
/// model was given back (after data-loss prevention, and cut to the run's bounds), and how
/// long it took.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = FunctionCall))]
pub struct Call {
    /// The function's name as the model saw it (`fetch_url`, `query_database`, ...).
    pub name: String,
    /// The arguments as the model wrote them (JSON text).
    pub arguments: String,
    /// What the model was given back.
    pub result: String,
    /// Whether the call failed (the result says why), or was refused.
    #[serde(default)]
    pub failed: bool,
    pub ms: u64,
}

/// `calls` as the log's `calls` column keeps them: a JSON list, or NULL for none.
pub(crate) fn calls_json(calls: &[Call]) -> Option<String> {
    (!calls.is_empty()).then(|| serde_json::to_string(calls).unwrap_or_default())
}

/// What a run gives its conversation to keep: the tool as it started (with the first turn),
/// so that a follow-up uses that version whatever the file became; and the placeholders of the
/// values data-loss prevention hid so far, with the values, so that a value keeps its
/// placeholder in every turn and the conversation's owner sees it.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Thread {
    /// The tool's JSON, with the first turn.
    pub tool: Option<String>,
    /// The data-loss prevention policy the conversation started under (`redact`), with the
    /// first turn.
    pub dlp: Option<String>,
    /// Each placeholder and its value (every one so far, not only this turn's).
    pub placeholders: BTreeMap<String, String>,
}

impl std::fmt::Debug for Thread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the values.
        f.debug_struct("Thread")
            .field("tool", &self.tool.as_ref().map(String::len))
            .field("dlp", &self.dlp)
            .field("placeholders", &self.placeholders.len())
            .finish()
    }
}
