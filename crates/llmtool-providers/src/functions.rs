//! Functions a model may call during a run: what a tool offers (a name, a description and the
//! JSON Schema of the arguments), the calls a model makes, who answers them (a
//! [`FunctionHost`]), and the bounds that keep the loop of calls and answers finite.
//!
//! The run loop ([`crate::run::run`]) sends the offered functions in each API's own form,
//! answers every call through the host, and asks again, until the model answers in words or
//! a bound is reached.

use std::sync::Arc;
use std::time::Duration;

use llmtool_dlp::Redaction;
use serde::Serialize;
use serde_json::Value;

pub use llmtool_log::Call;

/// A function offered to the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FunctionSpec {
    pub name: String,
    pub description: String,
    /// The JSON Schema of its arguments (an object).
    pub parameters: Value,
}

/// A call the model made: its id (given by the API, or made up where the API gives none),
/// the function's name and the arguments as the model wrote them (JSON text).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FunctionCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
    /// What the API asks to be given back with the call when the conversation goes on
    /// (Gemini's `thoughtSignature`, which carries its reasoning across the call); opaque.
    #[serde(skip)]
    pub signature: Option<String>,
}

impl FunctionCall {
    /// The arguments as a JSON object; an empty text is no arguments.
    pub fn arguments(&self) -> Result<serde_json::Map<String, Value>, String> {
        if self.arguments.trim().is_empty() {
            return Ok(serde_json::Map::new());
        }
        match serde_json::from_str(&self.arguments) {
            Ok(Value::Object(fields)) => Ok(fields),
            Ok(_) => Err("the arguments are not a JSON object".to_owned()),
            Err(error) => Err(format!("the arguments are not JSON: {error}")),
        }
    }

    /// The arguments as an object for the APIs that take one (a text that is no object gives
    /// an empty one: the call's result already told the model so).
    pub(crate) fn arguments_object(&self) -> Value {
        Value::Object(self.arguments().unwrap_or_default())
    }
}

/// What a function gave back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Returned {
    pub content: String,
    /// Whether the call failed; `content` says why, for the model to read.
    pub failed: bool,
}

impl Returned {
    pub fn ok(content: impl Into<String>) -> Returned {
        Returned { content: content.into(), failed: false }
    }

    pub fn failed(reason: impl Into<String>) -> Returned {
        Returned { content: reason.into(), failed: true }
    }
}

/// Who answers the calls of a run: the built-in functions, other tools, MCP servers.
#[async_trait::async_trait]
pub trait FunctionHost: Send + Sync {
    /// Runs `call`. A failure is a result like any other: the model reads why and may try
    /// something else.
    async fn call(&self, call: &FunctionCall) -> Returned;

    /// The functions the host learns of only once the run starts (an MCP server's, from its
    /// `tools/list`), offered from the first request on; an error stops the run before
    /// anything is sent.
    async fn discovered(&self) -> Result<Vec<FunctionSpec>, String> {
        Ok(Vec::new())
    }
}

/// What a function's result goes through before the model reads it: data-loss prevention,
/// which may swap values for placeholders (added to `redaction`, so that the answer gets
/// them back) or withhold the result (the reason is returned).
pub trait ResultScreen: Send + Sync {
    fn screen(&self, result: String, redaction: &mut Redaction) -> Result<String, String>;
}

/// The bounds of a run's function calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FunctionLimits {
    /// Calls in one run; the model asking for more ends the run with an error.
    pub calls: u32,
    /// Time for all the calls of one run together.
    pub time: Duration,
    /// Bytes of one result the model reads (the rest is cut, and the model told so).
    pub result_bytes: usize,
    /// Bytes of all the results of one run.
    pub total_bytes: usize,
}

impl Default for FunctionLimits {
    fn default() -> Self {
        FunctionLimits {
            calls: 16,
            time: Duration::from_mins(2),
            result_bytes: 32 * 1024,
            total_bytes: 256 * 1024,
        }
    }
}

/// What the run loop tells an observer as calls happen (the CLI prints them, a server streams
/// them as events).
#[derive(Debug, Clone, Copy)]
pub enum FunctionEvent<'a> {
    /// The model asked for this call; it is running.
    Calling(&'a FunctionCall),
    /// The call ended, as the run keeps it.
    Returned(&'a Call),
}

/// Called with each [`FunctionEvent`] of a run.
pub type Observer = Arc<dyn Fn(FunctionEvent<'_>) + Send + Sync>;

/// The functions of a run: what is offered, who answers, the bounds, and who hears of each
/// call.
#[derive(Clone)]
pub struct Functions {
    pub specs: Vec<FunctionSpec>,
    pub host: Arc<dyn FunctionHost>,
    pub limits: FunctionLimits,
    pub screen: Option<Arc<dyn ResultScreen>>,
    pub observer: Option<Observer>,
}

impl std::fmt::Debug for Functions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.specs.iter().map(|spec| spec.name.as_str()).collect();
        f.debug_struct("Functions")
            .field("offered", &names)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl Functions {
    pub fn new(specs: Vec<FunctionSpec>, host: Arc<dyn FunctionHost>) -> Functions {
        Functions { specs, host, limits: FunctionLimits::default(), screen: None, observer: None }
    }

    #[must_use]
    pub fn with_observer(mut self, observer: Observer) -> Functions {
        self.observer = Some(observer);
        self
    }

    fn tell(&self, event: FunctionEvent<'_>) {
        if let Some(observer) = &self.observer {
            observer(event);
        }
    }
}

/// Where a run's calls stand: how many were made, the bytes given back, when the time is up.
/// A smart tool's code calling functions keeps one for its run, as the run loop does.
#[derive(Debug)]
pub struct Tally {
    calls: u32,
    bytes: usize,
    deadline: tokio::time::Instant,
}

impl Tally {
    pub fn new(limits: &FunctionLimits) -> Tally {
        Tally { calls: 0, bytes: 0, deadline: tokio::time::Instant::now() + limits.time }
    }
}

/// Answers `calls` in order: each runs through the host (a function that was not offered is
/// refused without running), its result is bounded and screened, the observer hears of it,
/// and it is returned with the call's record. An error when a bound of the run is passed.
pub async fn answer(
    functions: &Functions,
    calls: &[FunctionCall],
    tally: &mut Tally,
    redaction: &mut Option<Arc<Redaction>>,
) -> Result<Vec<(String, Call)>, crate::ProviderError> {
    let limits = &functions.limits;
    let mut answered = Vec::with_capacity(calls.len());
    for call in calls {
        tally.calls += 1;
        if tally.calls > limits.calls {
            return Err(crate::ProviderError::FunctionLoop(format!(
                "the model asked for more than {} function calls without answering; stopped",
                limits.calls
            )));
        }
        functions.tell(FunctionEvent::Calling(call));
        let started = std::time::Instant::now();
        let offered = functions.specs.iter().any(|spec| spec.name == call.name);
        let returned = if offered {
            match tokio::time::timeout_at(tally.deadline, functions.host.call(call)).await {
                Ok(returned) => returned,
                Err(_) => {
                    return Err(crate::ProviderError::FunctionLoop(format!(
                        "the function calls took longer than the run allows ({} s); stopped at `{}`",
                        limits.time.as_secs(),
                        call.name
                    )));
                }
            }
        } else {
            Returned::failed(format!("no function named `{}` is offered in this run", call.name))
        };
        let Returned { content, mut failed } = returned;
        let mut content = cut(content, limits.result_bytes);
        if tally.bytes + content.len() > limits.total_bytes {
            failed = true;
            content = format!(
                "result withheld: the run's function results reached their bound of {} bytes",
                limits.total_bytes
            );
        }
        tally.bytes += content.len();
        if let Some(screen) = &functions.screen {
            let mut grown = redaction.as_deref().cloned().unwrap_or_default();
            match screen.screen(content, &mut grown) {
                Ok(screened) => {
                    content = screened;
                    if !grown.is_empty() {
                        *redaction = Some(Arc::new(grown));
                    }
                }
                Err(reason) => {
                    failed = true;
                    content = format!("result withheld by data-loss prevention: {reason}");
                }
            }
        }
        let record = Call {
            name: call.name.clone(),
            arguments: call.arguments.clone(),
            result: content.clone(),
            failed,
            ms: crate::run::millis(started.elapsed()),
        };
        functions.tell(FunctionEvent::Returned(&record));
        answered.push((content, record));
    }
    Ok(answered)
}

/// `text` cut to at most `limit` bytes (at a character's edge), with a note of what was cut.
fn cut(mut text: String, limit: usize) -> String {
    if text.len() <= limit {
        return text;
    }
    let total = text.len();
    let mut edge = limit;
    while !text.is_char_boundary(edge) {
        edge -= 1;
    }
    text.truncate(edge);
    text.push_str(&format!("\n[cut: the result had {total} bytes; the first {edge} are shown]"));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_result_is_cut_at_a_characters_edge_and_says_so() {
        let cut = cut("é".repeat(10), 5);
        assert!(cut.starts_with("éé\n[cut: the result had 20 bytes; the first 4"), "{cut}");
        assert_eq!(super::cut("short".into(), 5), "short");
    }

    #[test]
    fn arguments_are_an_object_or_nothing() {
        let call = |arguments: &str| FunctionCall {
            id: "1".into(),
            name: "f".into(),
            arguments: arguments.into(),
            signature: None,
        };
        assert_eq!(call(r#"{"a": 1}"#).arguments().unwrap()["a"], 1);
        assert!(call("  ").arguments().unwrap().is_empty());
        assert_eq!(call("[1]").arguments().unwrap_err(), "the arguments are not a JSON object");
        assert!(call("{").arguments().unwrap_err().starts_with("the arguments are not JSON"));
        assert_eq!(call("[1]").arguments_object(), serde_json::json!({}));
    }
}
