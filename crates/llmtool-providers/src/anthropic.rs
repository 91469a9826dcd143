//! Anthropic Messages: `POST /v1/messages`, streamed as `message_start` ... `message_stop`.

use serde_json::{Value, json};

use crate::endpoint::Endpoint;
use crate::error::ProviderError;
use crate::event::{Decoder, StreamEvent, Usage};
use crate::functions::FunctionCall;
use crate::http::{HeaderValue, HttpRequest, header};
use crate::openai::short;
use crate::request::{ChatRequest, Constraint, Role, WRAPPER_TOKENS};

/// The API version sent in `anthropic-version`.
pub const API_VERSION: &str = "2023-06-01";
/// `max_tokens` is required by this API; used when the tool sets none.
pub const DEFAULT_MAX_TOKENS: u64 = 4096;
/// The tool a `limited` answer is forced through.
const ANSWER_TOOL: &str = "answer";

pub fn build(
    endpoint: &Endpoint,
    request: &ChatRequest,
    warnings: &mut Vec<String>,
) -> HttpRequest {
    let params = &request.params;
    let system: Vec<&str> = request
        .messages
        .iter()
        .filter(|m| m.role == Role::System)
        .map(|m| m.content.as_str())
        .collect();
    let mut messages = messages(request);
    if request.cache
        && let Some(last) = messages.last_mut()
    {
        // A cache breakpoint on the last message: the next turn of the conversation finds
        // everything up to here cached (Anthropic looks for earlier breakpoints' prefixes).
        let content = last["content"].take();
        last["content"] = match content {
            Value::Array(mut blocks) => {
                if let Some(Value::Object(block)) = blocks.last_mut() {
                    block.insert("cache_control".into(), json!({ "type": "ephemeral" }));
                }
                Value::Array(blocks)
            }
            text => {
                json!([{ "type": "text", "text": text, "cache_control": { "type": "ephemeral" } }])
            }
        };
    }
    let mut body = json!({
        "model": request.model,
        "max_tokens": params.max_tokens.map_or(DEFAULT_MAX_TOKENS, |max| {
            if matches!(request.constraint, Constraint::OneOf(_)) { max + WRAPPER_TOKENS } else { max }
        }),
        "messages": messages,
    });
    let fields = body.as_object_mut().expect("a JSON object literal");
    if !system.is_empty() {
        fields.insert("system".into(), json!(system.join("\n\n")));
    }
    if let Some(temperature) = params.temperature {
        let clamped = temperature.clamp(0.0, 1.0);
        if (clamped - temperature).abs() > f64::EPSILON {
            warnings.push(format!(
                "`temperature` {temperature} lowered to {clamped}: Anthropic accepts 0 to 1"
            ));
        }
        fields.insert("temperature".into(), json!(clamped));
    }
    if let Some(top_p) = params.top_p {
        fields.insert("top_p".into(), json!(top_p));
    }
    for (name, value) in [
        ("frequency_penalty", params.frequency_penalty),
        ("presence_penalty", params.presence_penalty),
    ] {
        if value.is_some() {
            warnings.push(format!("`{name}` dropped: Anthropic does not support it"));
        }
    }
    let mut tools: Vec<Value> = request
        .functions
        .iter()
        .map(|f| json!({ "name": f.name, "description": f.description, "input_schema": f.parameters }))
        .collect();
    if let Constraint::OneOf(values) = &request.constraint {
        tools.push(json!({
            "name": ANSWER_TOOL,
            "description": "Give the answer: exactly one of the allowed values.",
            "input_schema": {
                "type": "object",
                "properties": { "answer": { "type": "string", "enum": values } },
                "required": ["answer"]
            }
        }));
        // Forced only when no other function is offered: the model must be free to call
        // those first (an answer in words is then checked, and repaired, as any other).
        if request.functions.is_empty() {
            fields.insert("tool_choice".into(), json!({ "type": "tool", "name": ANSWER_TOOL }));
        }
    }
    if !tools.is_empty() {
        fields.insert("tools".into(), Value::Array(tools));
    }
    if request.stream {
        fields.insert("stream".into(), json!(true));
    }
    for (name, value) in &params.extra {
        fields.entry(name.clone()).or_insert_with(|| value.clone());
    }
    let mut http = HttpRequest::post(&endpoint.display, endpoint.url("v1/messages"), body);
    http.headers.push(header("anthropic-version", API_VERSION));
    if let Some(key) = &endpoint.api_key {
        http =
            http.with_header("x-api-key", HeaderValue::Secret { prefix: "", secret: key.clone() });
    }
    http
}

/// The messages of `request` but its system ones, as the Messages API takes them: an
/// assistant's calls as `tool_use` blocks after its text, and the results of one round's
/// calls as the `tool_result` blocks of one user message.
fn messages(request: &ChatRequest) -> Vec<Value> {
    let mut messages: Vec<Value> = Vec::new();
    for message in request.messages.iter().filter(|m| m.role != Role::System) {
        match message.role {
            Role::Tool => {
                let mut result = json!({
                    "type": "tool_result",
                    "tool_use_id": message.answers.as_ref().map(|call| call.id.as_str()),
                    "content": message.content,
                });
                if message.failed {
                    result["is_error"] = json!(true);
                }
                let follows_results = messages.last().is_some_and(|last| {
                    last["role"] == "user" && last["content"][0]["type"] == "tool_result"
                });
                match messages.last_mut().and_then(|last| last["content"].as_array_mut()) {
                    Some(blocks) if follows_results => blocks.push(result),
                    _ => messages.push(json!({ "role": "user", "content": [result] })),
                }
            }
            Role::Assistant if !message.calls.is_empty() => {
                let mut blocks = Vec::new();
                if !message.content.is_empty() {
                    blocks.push(json!({ "type": "text", "text": message.content }));
                }
                blocks.extend(message.calls.iter().map(|call| {
                    json!({
                        "type": "tool_use",
                        "id": call.id,
                        "name": call.name,
                        "input": call.arguments_object()
                    })
                }));
                messages.push(json!({ "role": "assistant", "content": blocks }));
            }
            _ => messages.push(json!({ "role": message.role, "content": message.content })),
        }
    }
    messages
}

/// Decodes the Messages event stream, or a whole response.
#[derive(Debug, Default)]
pub struct AnthropicDecoder {
    /// The forced answer tool's input, streamed as partial JSON.
    tool_input: String,
    /// The function call whose block is streaming (its input arrives as partial JSON).
    call: Option<FunctionCall>,
    stop_reason: Option<String>,
    stopped: bool,
}

impl AnthropicDecoder {
    pub fn new() -> Self {
        Self::default()
    }
}

/// Anthropic's usage in common terms: its `input_tokens` leaves out the tokens read from and
/// written to the cache, which count as input here.
fn usage(value: &Value) -> Usage {
    let count = |key: &str| value.get(key).and_then(Value::as_u64);
    let (read, written) = (count("cache_read_input_tokens"), count("cache_creation_input_tokens"));
    Usage {
        input_tokens: count("input_tokens")
            .map(|input| input + read.unwrap_or(0) + written.unwrap_or(0)),
        cached_input_tokens: read,
        cache_write_tokens: written,
        output_tokens: count("output_tokens"),
        reasoning_tokens: None,
    }
}

fn filtered(reason: &str) -> Option<ProviderError> {
    (reason == "refusal").then(|| ProviderError::ContentFiltered {
        provider: "Anthropic".into(),
        reason: reason.into(),
    })
}

impl Decoder for AnthropicDecoder {
    fn event(&mut self, name: &str, data: &str) -> Result<Vec<StreamEvent>, ProviderError> {
        let event: Value = serde_json::from_str(data).map_err(|e| {
            ProviderError::MalformedStream(format!("an event is not JSON ({e}): {}", short(data)))
        })?;
        let kind = event.get("type").and_then(Value::as_str).unwrap_or(name);
        let mut out = Vec::new();
        match kind {
            "message_start" => {
                if let Some(u) = event.get("message").and_then(|m| m.get("usage")) {
                    out.push(StreamEvent::Usage(usage(u)));
                }
            }
            "content_block_start" => {
                let block = event.get("content_block").unwrap_or(&Value::Null);
                let name = block.get("name").and_then(Value::as_str);
                if block.get("type").and_then(Value::as_str) == Some("tool_use")
                    && name != Some(ANSWER_TOOL)
                {
                    self.call = Some(FunctionCall {
                        id: block.get("id").and_then(Value::as_str).unwrap_or("").to_owned(),
                        name: name.unwrap_or("").to_owned(),
                        arguments: String::new(),
                        signature: None,
                    });
                }
            }
            "content_block_delta" => {
                let delta = event.get("delta").unwrap_or(&Value::Null);
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => {
                        if let Some(text) = delta.get("text").and_then(Value::as_str) {
                            out.push(StreamEvent::Text(text.to_owned()));
                        }
                    }
                    Some("input_json_delta") => {
                        let piece = delta.get("partial_json").and_then(Value::as_str).unwrap_or("");
                        match self.call.as_mut() {
                            Some(call) => call.arguments.push_str(piece),
                            None => self.tool_input.push_str(piece),
                        }
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                if let Some(call) = self.call.take() {
                    out.push(StreamEvent::Call(call));
                }
            }
            "message_delta" => {
                if let Some(reason) =
                    event.get("delta").and_then(|d| d.get("stop_reason")).and_then(Value::as_str)
                {
                    if let Some(error) = filtered(reason) {
                        return Err(error);
                    }
                    self.stop_reason = Some(reason.to_owned());
                }
                if let Some(u) = event.get("usage") {
                    // The input was counted at `message_start`.
                    let output_tokens = usage(u).output_tokens;
                    out.push(StreamEvent::Usage(Usage { output_tokens, ..Usage::default() }));
                }
            }
            "message_stop" => {
                self.stopped = true;
                if !self.tool_input.is_empty() {
                    out.push(StreamEvent::Text(crate::openai::unwrap_answer(&self.tool_input)));
                }
                out.push(StreamEvent::Finish(
                    self.stop_reason.clone().unwrap_or_else(|| "end_turn".into()),
                ));
            }
            "error" => {
                let message = crate::error::error_message(data);
                let overloaded = event.pointer("/error/type").and_then(Value::as_str)
                    == Some("overloaded_error");
                let status = if overloaded { 529 } else { 500 };
                return Err(ProviderError::Server {
                    provider: "Anthropic".into(),
                    status,
                    message,
                });
            }
            _ => {}
        }
        Ok(out)
    }

    fn finish(&mut self) -> Result<Vec<StreamEvent>, ProviderError> {
        if self.stopped {
            Ok(Vec::new())
        } else {
            Err(ProviderError::MalformedStream("the stream ended before `message_stop`".into()))
        }
    }

    fn response(&mut self, body: &str) -> Result<Vec<StreamEvent>, ProviderError> {
        let message: Value = serde_json::from_str(body).map_err(|e| {
            ProviderError::MalformedStream(format!("the response is not JSON: {e}"))
        })?;
        let mut out = Vec::new();
        for block in message.get("content").and_then(Value::as_array).into_iter().flatten() {
            match block.get("type").and_then(Value::as_str) {
                Some("text") => {
                    out.push(StreamEvent::Text(block["text"].as_str().unwrap_or("").to_owned()))
                }
                Some("tool_use") if block["name"] != ANSWER_TOOL => {
                    out.push(StreamEvent::Call(FunctionCall {
                        id: block["id"].as_str().unwrap_or("").to_owned(),
                        name: block["name"].as_str().unwrap_or("").to_owned(),
                        arguments: block.get("input").map(Value::to_string).unwrap_or_default(),
                        signature: None,
                    }));
                }
                Some("tool_use") => {
                    let answer =
                        block.pointer("/input/answer").and_then(Value::as_str).unwrap_or("");
                    out.push(StreamEvent::Text(answer.to_owned()));
                }
                _ => {}
            }
        }
        let reason = message.get("stop_reason").and_then(Value::as_str).unwrap_or("end_turn");
        if let Some(error) = filtered(reason) {
            return Err(error);
        }
        out.push(StreamEvent::Finish(reason.to_owned()));
        if let Some(u) = message.get("usage") {
            out.push(StreamEvent::Usage(usage(u)));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endpoint::{ApiKind, Features};
    use crate::request::{Message, Params};

    fn endpoint() -> Endpoint {
        Endpoint {
            provider: "anthropic".into(),
            display: "Anthropic".into(),
            api: ApiKind::Anthropic,
            base_url: "https://api.anthropic.test".into(),
            api_key: Some("key".into()),
            key_variable: Some("ANTHROPIC_API_KEY".into()),
            features: Features::COMPATIBLE,
            vertex_path: None,
        }
    }

    #[test]
    fn maps_parameters_and_forces_the_answer_tool() {
        let endpoint = endpoint();
        let request = ChatRequest {
            model: "claude-sonnet-4".into(),
            messages: vec![Message::user("Go?")],
            params: Params {
                temperature: Some(1.5),
                presence_penalty: Some(0.1),
                ..Params::default()
            },
            constraint: Constraint::OneOf(vec!["go".into(), "stop".into()]),
            stream: true,
            cache: false,
            cache_key: None,
            functions: Vec::new(),
        };
        let mut warnings = Vec::new();
        let http = build(&endpoint, &request, &mut warnings);
        assert_eq!(http.url, "https://api.anthropic.test/v1/messages");
        assert_eq!(http.body["max_tokens"], 4096);
        assert_eq!(http.body["temperature"], 1.0);
        assert_eq!(http.body["tool_choice"]["name"], "answer");
        assert_eq!(warnings.len(), 2);
    }

    #[test]
    fn a_conversation_is_sent_turn_by_turn_with_a_cache_mark_on_its_last_message() {
        let endpoint = endpoint();
        let request = ChatRequest {
            model: "claude-sonnet-4".into(),
            messages: vec![
                Message::user("Plan it."),
                Message::assistant("Step 1."),
                Message::user("Why?"),
            ],
            params: Params::default(),
            constraint: Constraint::None,
            stream: true,
            cache: true,
            cache_key: None,
            functions: Vec::new(),
        };
        let http = build(&endpoint, &request, &mut Vec::new());
        let messages = &http.body["messages"];
        assert_eq!(messages[0], json!({ "role": "user", "content": "Plan it." }));
        assert_eq!(messages[1], json!({ "role": "assistant", "content": "Step 1." }));
        assert_eq!(
            messages[2],
            json!({ "role": "user", "content": [
                { "type": "text", "text": "Why?", "cache_control": { "type": "ephemeral" } }
            ] })
        );
        let uncached = build(&endpoint, &ChatRequest { cache: false, ..request }, &mut Vec::new());
        assert_eq!(uncached.body["messages"][2]["content"], "Why?");
    }

    #[test]
    fn decodes_text_and_tool_streams() {
        let mut decoder = AnthropicDecoder::new();
        let mut events = Vec::new();
        for (name, data) in [
            (
                "message_start",
                r#"{"type":"message_start","message":{"usage":{"input_tokens":9,"output_tokens":1}}}"#,
            ),
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            ),
            ("ping", r#"{"type":"ping"}"#),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}"#,
            ),
            ("content_block_stop", r#"{"type":"content_block_stop","index":0}"#),
            (
                "message_delta",
                r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}"#,
            ),
            ("message_stop", r#"{"type":"message_stop"}"#),
        ] {
            events.extend(decoder.event(name, data).unwrap());
        }
        assert_eq!(events[1], StreamEvent::Text("Hi".into()));
        assert_eq!(events.last(), Some(&StreamEvent::Finish("end_turn".into())));
        let mut tool = AnthropicDecoder::new();
        tool.event("", r#"{"type":"content_block_delta","delta":{"type":"input_json_delta","partial_json":"{\"answer\": \"st"}}"#).unwrap();
        tool.event("", r#"{"type":"content_block_delta","delta":{"type":"input_json_delta","partial_json":"op\"}"}}"#).unwrap();
        assert_eq!(
            tool.event("", r#"{"type":"message_stop"}"#).unwrap()[0],
            StreamEvent::Text("stop".into())
        );
        let overloaded = AnthropicDecoder::new().event(
            "error",
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        );
        assert!(matches!(overloaded, Err(ProviderError::Server { status: 529, .. })));
    }
}
