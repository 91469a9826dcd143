//! What is asked of a model, independent of any API: the conversation, the sampling
//! parameters, and the constraint the tool's expected output puts on the answer.

use llmtool_format::chat::Turn;
use llmtool_format::model::Parameters;
use llmtool_format::output::{OutputFormat, OutputKind, OutputSpec};
use serde::Serialize;

use crate::functions::{FunctionCall, FunctionSpec};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    /// A function's result, answering one of the calls of the assistant message before it.
    Tool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Message {
    pub role: Role,
    pub content: String,
    /// The functions an assistant message called (its `content` is any text before them).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<FunctionCall>,
    /// The call a tool message answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answers: Option<FunctionCall>,
    /// Whether a tool message is a failed call's (the APIs that say so are told).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub failed: bool,
}

impl Message {
    fn new(role: Role, content: String) -> Self {
        Self { role, content, calls: Vec::new(), answers: None, failed: false }
    }

    pub fn user(content: impl Into<String>) -> Self {
        Self::new(Role::User, content.into())
    }

    pub fn assistant(content: impl Into<String>) -> Self {
        Self::new(Role::Assistant, content.into())
    }

    /// An assistant message that calls functions, after `content` (which may be empty).
    pub fn calling(content: impl Into<String>, calls: Vec<FunctionCall>) -> Self {
        Self { calls, ..Self::assistant(content) }
    }

    /// A function's result, answering `call` (`failed` when the call failed).
    pub fn result(call: &FunctionCall, content: impl Into<String>, failed: bool) -> Self {
        Self { answers: Some(call.clone()), failed, ..Self::new(Role::Tool, content.into()) }
    }

    /// A chat prompt's turn as a message: `developer` is sent as `system` (every API reads a
    /// system message; OpenAI reads it as the developer's), and a `tool` turn, which `check`
    /// refuses (LT109), as what the user says.
    pub fn of_turn(turn: &Turn) -> Self {
        let role = match turn.role {
            "system" | "developer" => Role::System,
            "assistant" => Role::Assistant,
            _ => Role::User,
        };
        Self::new(role, turn.text.clone())
    }
}

/// Sampling parameters, as the tool states them (each API maps them to its own names).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Params {
    pub temperature: Option<f64>,
    pub top_p: Option<f64>,
    pub max_tokens: Option<u64>,
    pub frequency_penalty: Option<f64>,
    pub presence_penalty: Option<f64>,
    /// Parameters the format does not name (`seed`, `stop`, ...), passed on as they are.
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl Params {
    /// These parameters as a chat request takes them: without the parameters only pictures
    /// have (`quality`, `n`), which `check` says a tool that writes text ignores (LT407).
    #[must_use]
    pub fn for_chat(&self) -> Params {
        let mut params = self.clone();
        params.extra.retain(|name, _| {
            name == "seed" || !llmtool_format::output::IMAGE_PARAMETERS.contains(&name.as_str())
        });
        params
    }

    pub fn from_tool(parameters: Option<&Parameters>) -> Self {
        let Some(p) = parameters else { return Self::default() };
        let number =
            |param: &Option<llmtool_format::model::Parameter>| param.as_ref().map(|p| p.value);
        Self {
            temperature: number(&p.temperature),
            top_p: number(&p.top_p),
            max_tokens: p.max_tokens.as_ref().map(|m| m.value as u64),
            frequency_penalty: number(&p.frequency_penalty),
            presence_penalty: number(&p.presence_penalty),
            extra: p.other.clone(),
        }
    }
}

/// Extra answer tokens allowed when an API wraps a constrained answer in JSON or a tool call
/// (`{"answer": "wait"}` takes more tokens than `wait`, and a tool's `max_tokens` is sized for
/// the bare answer).
pub const WRAPPER_TOKENS: u64 = 32;

/// What the answer must be, for APIs that can constrain it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Constraint {
    None,
    /// Exactly one of these strings.
    OneOf(Vec<String>),
    /// A JSON document.
    Json,
}

impl Constraint {
    pub fn of(spec: &OutputSpec) -> Self {
        match (&spec.kind, &spec.format) {
            (OutputKind::Limited { allowed }, _) if !allowed.is_empty() => {
                Constraint::OneOf(allowed.clone())
            }
            (_, Some(OutputFormat::Json)) => Constraint::Json,
            _ => Constraint::None,
        }
    }
}

/// One request to a model.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    /// The model name as the provider knows it.
    pub model: String,
    pub messages: Vec<Message>,
    pub params: Params,
    pub constraint: Constraint,
    pub stream: bool,
    /// Whether a provider that caches prompts on request (Anthropic) should cache the
    /// conversation up to its last message, so that the next turn reads it back at the cached
    /// price (providers that cache on their own, as OpenAI does, need no mark).
    pub cache: bool,
    /// Whose conversation this is (its id), for an engine that keeps an answer's work for the
    /// same conversation's next turn and no one else's (the local model).
    pub cache_key: Option<String>,
    /// The functions the model may call (see [`crate::functions`]); none for most runs.
    pub functions: Vec<FunctionSpec>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chat_request_leaves_out_the_parameters_only_pictures_have() {
        let mut params = Params::default();
        for (name, value) in
            [("quality", "high".into()), ("n", 3.into()), ("seed", 7.into()), ("stop", "x".into())]
        {
            params.extra.insert(name.into(), value);
        }
        let sent: Vec<_> = params.for_chat().extra.keys().cloned().collect();
        assert_eq!(sent, ["seed", "stop"]);
    }
}
