//! OpenAI Chat Completions, spoken by OpenAI and by most other servers (Groq, Mistral,
//! Together, DeepSeek, OpenRouter, Ollama, llama.cpp, vLLM, LM Studio, ...).

use serde_json::{Value, json};

use crate::endpoint::Endpoint;
use crate::error::ProviderError;
use crate::event::{Decoder, StreamEvent, Usage};
use crate::functions::FunctionCall;
use crate::http::{HeaderValue, HttpRequest};
use crate::request::{ChatRequest, Constraint, Message, Role, WRAPPER_TOKENS};

/// The request body and headers; `warnings` lists what the server cannot take and was dropped.
pub fn build(
    endpoint: &Endpoint,
    request: &ChatRequest,
    warnings: &mut Vec<String>,
) -> HttpRequest {
    let features = endpoint.features;
    let messages: Vec<Value> = request.messages.iter().map(message).collect();
    let mut body = json!({ "model": request.model, "messages": messages });
    let fields = body.as_object_mut().expect("a JSON object literal");
    if !request.functions.is_empty() {
        let tools: Vec<Value> = request
            .functions
            .iter()
            .map(|f| {
                json!({
                    "type": "function",
                    "function": {
                        "name": f.name, "description": f.description, "parameters": f.parameters
                    }
                })
            })
            .collect();
        fields.insert("tools".into(), Value::Array(tools));
    }
    let params = &request.params;
    for (name, value) in [("temperature", params.temperature), ("top_p", params.top_p)] {
        if let Some(value) = value {
            fields.insert(name.into(), json!(value));
        }
    }
    if let Some(max) = params.max_tokens {
        let headroom = if wraps_answer(endpoint, request) { WRAPPER_TOKENS } else { 0 };
        fields.insert(features.max_tokens_field.into(), json!(max + headroom));
    }
    for (name, value) in [
        ("frequency_penalty", params.frequency_penalty),
        ("presence_penalty", params.presence_penalty),
    ] {
        match value {
            Some(value) if features.penalties => {
                fields.insert(name.into(), json!(value));
            }
            Some(_) => {
                warnings.push(format!("`{name}` dropped: {} does not support it", endpoint.display))
            }
            None => {}
        }
    }
    match &request.constraint {
        Constraint::OneOf(values) if features.json_schema => {
            fields.insert("response_format".into(), one_of_schema(values));
        }
        Constraint::OneOf(values) if features.json_object_schema => {
            fields.insert(
                "response_format".into(),
                json!({ "type": "json_object", "schema": answer_schema(values) }),
            );
        }
        Constraint::Json if features.json_mode => {
            fields.insert("response_format".into(), json!({ "type": "json_object" }));
        }
        _ => {}
    }
    if request.stream {
        fields.insert("stream".into(), json!(true));
        if features.stream_usage {
            fields.insert("stream_options".into(), json!({ "include_usage": true }));
        }
    }
    for (name, value) in &params.extra {
        fields.entry(name.clone()).or_insert_with(|| value.clone());
    }
    post(endpoint, "chat/completions", body)
}

/// A message as Chat Completions takes it: an assistant's calls as `tool_calls`, a function's
/// result as a `tool` message naming the call it answers.
fn message(message: &Message) -> Value {
    match message.role {
        Role::Assistant if !message.calls.is_empty() => {
            let calls: Vec<Value> = message
                .calls
                .iter()
                .map(|call| {
                    json!({
                        "id": call.id,
                        "type": "function",
                        "function": { "name": call.name, "arguments": call.arguments }
                    })
                })
                .collect();
            let content =
                if message.content.is_empty() { Value::Null } else { json!(message.content) };
            json!({ "role": "assistant", "content": content, "tool_calls": calls })
        }
        Role::Tool => json!({
            "role": "tool",
            "tool_call_id": message.answers.as_ref().map(|call| call.id.as_str()),
            "content": message.content
        }),
        _ => json!({ "role": message.role, "content": message.content }),
    }
}

/// A POST of `body` to `path` under the endpoint's base URL, with its key as a bearer token.
pub(crate) fn post(endpoint: &Endpoint, path: &str, body: Value) -> HttpRequest {
    let http = HttpRequest::post(&endpoint.display, endpoint.url(path), body);
    match &endpoint.api_key {
        Some(key) => http.with_header(
            "authorization",
            HeaderValue::Secret { prefix: "Bearer ", secret: key.clone() },
        ),
        None => http,
    }
}

/// Structured output that only allows `{"answer": <one of values>}`.
fn one_of_schema(values: &[String]) -> Value {
    json!({
        "type": "json_schema",
        "json_schema": { "name": "answer", "strict": true, "schema": answer_schema(values) }
    })
}

/// The JSON Schema of `{"answer": <one of values>}`.
fn answer_schema(values: &[String]) -> Value {
    json!({
        "type": "object",
        "properties": { "answer": { "type": "string", "enum": values } },
        "required": ["answer"],
        "additionalProperties": false
    })
}

/// Whether answers come wrapped in `{"answer": ...}` (structured output for a limited output).
pub fn wraps_answer(endpoint: &Endpoint, request: &ChatRequest) -> bool {
    let features = endpoint.features;
    matches!(request.constraint, Constraint::OneOf(_))
        && (features.json_schema || features.json_object_schema)
}

/// The most function calls one answer is read with; the run's own bound is lower.
pub(crate) const MOST_CALLS: usize = 64;

/// Decodes Chat Completions chunks (`data: {...}` then `data: [DONE]`) or a whole response.
#[derive(Debug)]
pub struct OpenAiDecoder {
    provider: String,
    /// Buffer the text and unwrap `{"answer": ...}` at the end.
    wrapped: bool,
    buffer: String,
    finished: bool,
    /// The function calls under way, by their index in the stream (id, name, arguments so
    /// far), given whole when the answer finishes.
    calls: Vec<FunctionCall>,
}

impl OpenAiDecoder {
    pub fn new(provider: &str, wrapped: bool) -> Self {
        Self {
            provider: provider.to_owned(),
            wrapped,
            buffer: String::new(),
            finished: false,
            calls: Vec::new(),
        }
    }

    /// Adds a choice's `tool_calls` to the calls under way: whole in a response, in pieces
    /// (keyed by `index`) in a stream.
    fn tool_calls(&mut self, calls: &[Value]) {
        for (position, piece) in calls.iter().enumerate() {
            let index = piece
                .get("index")
                .and_then(Value::as_u64)
                .and_then(|i| usize::try_from(i).ok())
                .unwrap_or(position);
            // A bounded number of calls: an index far past the last is a broken stream.
            if index > self.calls.len() || index >= MOST_CALLS {
                continue;
            }
            if index == self.calls.len() {
                self.calls.push(FunctionCall {
                    id: format!("call_{index}"),
                    name: String::new(),
                    arguments: String::new(),
                    signature: None,
                });
            }
            let call = &mut self.calls[index];
            if let Some(id) = piece.get("id").and_then(Value::as_str) {
                id.clone_into(&mut call.id);
            }
            let function = piece.get("function").unwrap_or(&Value::Null);
            if let Some(name) = function.get("name").and_then(Value::as_str) {
                call.name.push_str(name);
            }
            match function.get("arguments") {
                Some(Value::String(arguments)) => call.arguments.push_str(arguments),
                Some(object @ Value::Object(_)) => call.arguments = object.to_string(),
                _ => {}
            }
        }
    }

    fn choice(
        &mut self,
        choice: &Value,
        content_key: &str,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ProviderError> {
        if let Some(text) =
            choice.get(content_key).and_then(|d| d.get("content")).and_then(Value::as_str)
            && !text.is_empty()
        {
            if self.wrapped {
                self.buffer.push_str(text);
            } else {
                out.push(StreamEvent::Text(text.to_owned()));
            }
        }
        if let Some(calls) =
            choice.get(content_key).and_then(|d| d.get("tool_calls")).and_then(Value::as_array)
        {
            self.tool_calls(calls);
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finished = true;
            out.extend(self.calls.drain(..).map(StreamEvent::Call));
            if reason == "content_filter" {
                return Err(ProviderError::ContentFiltered {
                    provider: self.provider.clone(),
                    reason: reason.into(),
                });
            }
            if self.wrapped {
                out.push(StreamEvent::Text(unwrap_answer(&self.buffer)));
            }
            out.push(StreamEvent::Finish(reason.to_owned()));
        }
        Ok(())
    }
}

fn usage(value: &Value) -> Option<Usage> {
    let usage = value.get("usage").filter(|u| u.is_object())?;
    let detail = |details: &str, key: &str| {
        usage.get(details).and_then(|d| d.get(key)).and_then(Value::as_u64)
    };
    Some(Usage {
        input_tokens: usage.get("prompt_tokens").and_then(Value::as_u64),
        cached_input_tokens: detail("prompt_tokens_details", "cached_tokens"),
        cache_write_tokens: None,
        output_tokens: usage.get("completion_tokens").and_then(Value::as_u64),
        reasoning_tokens: detail("completion_tokens_details", "reasoning_tokens"),
    })
}

/// The `answer` of a `{"answer": "..."}` document; any other text is returned as it is, for
/// the expected-output check to judge (and the run loop to repair).
pub fn unwrap_answer(text: &str) -> String {
    serde_json::from_str::<Value>(text)
        .ok()
        .and_then(|value| value.get("answer").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| text.to_owned())
}

impl Decoder for OpenAiDecoder {
    fn event(&mut self, _name: &str, data: &str) -> Result<Vec<StreamEvent>, ProviderError> {
        let data = data.trim();
        if data == "[DONE]" {
            self.finished = true;
            return Ok(Vec::new());
        }
        let chunk: Value = serde_json::from_str(data).map_err(|e| {
            ProviderError::MalformedStream(format!("a chunk is not JSON ({e}): {}", short(data)))
        })?;
        if let Some(error) = chunk.get("error") {
            return Err(ProviderError::Server {
                provider: self.provider.clone(),
                status: 200,
                message: crate::error::error_message(&error.to_string()),
            });
        }
        let mut out = Vec::new();
        if let Some(choice) = chunk.get("choices").and_then(|c| c.get(0)) {
            self.choice(choice, "delta", &mut out)?;
        }
        if let Some(usage) = usage(&chunk) {
            out.push(StreamEvent::Usage(usage));
        }
        Ok(out)
    }

    fn finish(&mut self) -> Result<Vec<StreamEvent>, ProviderError> {
        if self.finished {
            Ok(Vec::new())
        } else {
            Err(ProviderError::MalformedStream(
                "the stream ended before the answer was complete".into(),
            ))
        }
    }

    fn response(&mut self, body: &str) -> Result<Vec<StreamEvent>, ProviderError> {
        let value: Value = serde_json::from_str(body).map_err(|e| {
            ProviderError::MalformedStream(format!("the response is not JSON: {e}"))
        })?;
        let choice = value
            .get("choices")
            .and_then(|c| c.get(0))
            .ok_or_else(|| ProviderError::MalformedStream("the response has no choices".into()))?;
        let mut out = Vec::new();
        self.choice(choice, "message", &mut out)?;
        if let Some(usage) = usage(&value) {
            out.push(StreamEvent::Usage(usage));
        }
        Ok(out)
    }
}

pub(crate) fn short(text: &str) -> String {
    text.chars().take(120).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endpoint::{ApiKind, Features};
    use crate::request::{Message, Params};

    fn endpoint(features: Features) -> Endpoint {
        Endpoint {
            provider: "openai".into(),
            display: "OpenAI".into(),
            api: ApiKind::OpenAi,
            base_url: "https://api.openai.test/v1/".into(),
            api_key: Some("sk-test".into()),
            key_variable: Some("OPENAI_API_KEY".into()),
            features,
            vertex_path: None,
        }
    }

    fn request(constraint: Constraint) -> ChatRequest {
        ChatRequest {
            model: "gpt-4o-mini".into(),
            messages: vec![Message::user("Hi")],
            params: Params {
                temperature: Some(0.2),
                max_tokens: Some(50),
                frequency_penalty: Some(0.5),
                ..Params::default()
            },
            constraint,
            stream: true,
            cache: false,
            cache_key: None,
            functions: Vec::new(),
        }
    }

    #[test]
    fn maps_parameters_per_server() {
        let mut warnings = Vec::new();
        let http = build(
            &endpoint(Features::OPENAI),
            &request(Constraint::OneOf(vec!["yes".into(), "no".into()])),
            &mut warnings,
        );
        assert_eq!(http.url, "https://api.openai.test/v1/chat/completions");
        assert_eq!(
            http.body["max_completion_tokens"],
            50 + WRAPPER_TOKENS,
            "room for the {{\"answer\": ...}} wrapper"
        );
        assert_eq!(http.body["frequency_penalty"], 0.5);
        assert_eq!(
            http.body["response_format"]["json_schema"]["schema"]["properties"]["answer"]["enum"],
            json!(["yes", "no"])
        );
        assert_eq!(http.body["stream_options"]["include_usage"], true);
        assert!(warnings.is_empty());
        let groq = Features { penalties: false, ..Features::COMPATIBLE };
        let http = build(&endpoint(groq), &request(Constraint::Json), &mut warnings);
        assert_eq!(http.body["max_tokens"], 50);
        assert!(http.body.get("frequency_penalty").is_none());
        assert_eq!(http.body["response_format"]["type"], "json_object");
        assert_eq!(warnings, ["`frequency_penalty` dropped: OpenAI does not support it"]);
    }

    #[test]
    fn llama_cpp_servers_get_the_schema_inside_json_mode() {
        let llama = Features { json_object_schema: true, ..Features::COMPATIBLE };
        let request = request(Constraint::OneOf(vec!["yes".into(), "no".into()]));
        let http = build(&endpoint(llama), &request, &mut Vec::new());
        assert_eq!(http.body["response_format"]["type"], "json_object");
        assert_eq!(
            http.body["response_format"]["schema"]["properties"]["answer"]["enum"],
            json!(["yes", "no"])
        );
        assert!(wraps_answer(&endpoint(llama), &request));
        assert!(!wraps_answer(&endpoint(Features::COMPATIBLE), &request));
    }

    #[test]
    fn decodes_a_stream() {
        let mut decoder = OpenAiDecoder::new("OpenAI", false);
        let mut events = Vec::new();
        for data in [
            r#"{"choices":[{"delta":{"role":"assistant","content":""},"finish_reason":null}]}"#,
            r#"{"choices":[{"delta":{"content":"Hel"},"finish_reason":null}]}"#,
            r#"{"choices":[{"delta":{"content":"lo"},"finish_reason":"stop"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2}}"#,
            "[DONE]",
        ] {
            events.extend(decoder.event("", data).unwrap());
        }
        events.extend(decoder.finish().unwrap());
        assert_eq!(
            events,
            [
                StreamEvent::Text("Hel".into()),
                StreamEvent::Text("lo".into()),
                StreamEvent::Finish("stop".into()),
                StreamEvent::Usage(Usage {
                    input_tokens: Some(5),
                    output_tokens: Some(2),
                    ..Usage::default()
                })
            ]
        );
    }

    #[test]
    fn wrapped_answers_are_unwrapped_and_truncation_is_an_error() {
        let mut decoder = OpenAiDecoder::new("OpenAI", true);
        decoder
            .event("", r#"{"choices":[{"delta":{"content":"{\"answer\":"},"finish_reason":null}]}"#)
            .unwrap();
        let events = decoder
            .event("", r#"{"choices":[{"delta":{"content":"\"yes\"}"},"finish_reason":"stop"}]}"#)
            .unwrap();
        assert_eq!(events[0], StreamEvent::Text("yes".into()));
        let mut cut = OpenAiDecoder::new("OpenAI", false);
        cut.event("", r#"{"choices":[{"delta":{"content":"Hel"}}]}"#).unwrap();
        assert!(matches!(cut.finish(), Err(ProviderError::MalformedStream(_))));
        assert!(matches!(cut.event("", "{not json"), Err(ProviderError::MalformedStream(_))));
    }
}
