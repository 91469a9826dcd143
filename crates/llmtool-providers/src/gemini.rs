//! Google Gemini `generateContent`, on AI Studio (API key) and on Vertex AI (access token).

use serde_json::{Value, json};

use crate::endpoint::{ApiKind, Endpoint};
use crate::error::ProviderError;
use crate::event::{Decoder, StreamEvent, Usage};
use crate::functions::FunctionCall;
use crate::http::{HeaderValue, HttpRequest};
use crate::openai::short;
use crate::request::{ChatRequest, Constraint, Role};

pub fn build(endpoint: &Endpoint, request: &ChatRequest, _warnings: &mut [String]) -> HttpRequest {
    let params = &request.params;
    let contents = contents(request);
    let mut config = serde_json::Map::new();
    let numbers = [
        ("temperature", params.temperature),
        ("topP", params.top_p),
        ("frequencyPenalty", params.frequency_penalty),
        ("presencePenalty", params.presence_penalty),
    ];
    for (name, value) in numbers {
        if let Some(value) = value {
            config.insert(name.into(), json!(value));
        }
    }
    if let Some(max) = params.max_tokens {
        config.insert("maxOutputTokens".into(), json!(max));
    }
    match &request.constraint {
        // Gemini takes no function calls under a constrained answer: the answer is checked
        // (and repaired) as any other instead.
        _ if !request.functions.is_empty() => {}
        Constraint::OneOf(values) => {
            config.insert("responseMimeType".into(), json!("text/x.enum"));
            config.insert("responseSchema".into(), json!({ "type": "STRING", "enum": values }));
        }
        Constraint::Json => {
            config.insert("responseMimeType".into(), json!("application/json"));
        }
        Constraint::None => {}
    }
    for (name, value) in &params.extra {
        config.entry(name.clone()).or_insert_with(|| value.clone());
    }
    let mut body = json!({ "contents": contents });
    let fields = body.as_object_mut().expect("a JSON object literal");
    let system: Vec<Value> = request
        .messages
        .iter()
        .filter(|m| m.role == Role::System)
        .map(|m| json!({ "text": m.content }))
        .collect();
    if !system.is_empty() {
        fields.insert("systemInstruction".into(), json!({ "parts": system }));
    }
    if !config.is_empty() {
        fields.insert("generationConfig".into(), Value::Object(config));
    }
    if !request.functions.is_empty() {
        let declarations: Vec<Value> = request
            .functions
            .iter()
            .map(|f| json!({ "name": f.name, "description": f.description, "parameters": f.parameters }))
            .collect();
        fields.insert("tools".into(), json!([{ "functionDeclarations": declarations }]));
    }
    let method = if request.stream { "streamGenerateContent?alt=sse" } else { "generateContent" };
    post(endpoint, &request.model, method, body)
}

/// The conversation as `contents`: an assistant's calls as `functionCall` parts after its
/// text, and the results of one round's calls as the `functionResponse` parts of one turn.
fn contents(request: &ChatRequest) -> Vec<Value> {
    let mut contents: Vec<Value> = Vec::new();
    for message in request.messages.iter().filter(|m| m.role != Role::System) {
        match message.role {
            Role::Tool => {
                let name = message.answers.as_ref().map_or("", |call| call.name.as_str());
                let part = json!({
                    "functionResponse": { "name": name, "response": { "content": message.content } }
                });
                let follows_results = contents
                    .last()
                    .is_some_and(|last| last["parts"][0].get("functionResponse").is_some());
                match contents.last_mut().and_then(|last| last["parts"].as_array_mut()) {
                    Some(parts) if follows_results => parts.push(part),
                    _ => contents.push(json!({ "role": "user", "parts": [part] })),
                }
            }
            Role::Assistant => {
                let mut parts = Vec::new();
                if !message.content.is_empty() || message.calls.is_empty() {
                    parts.push(json!({ "text": message.content }));
                }
                parts.extend(message.calls.iter().map(|call| {
                    let mut part = json!({
                        "functionCall": { "name": call.name, "args": call.arguments_object() }
                    });
                    // The model's reasoning goes on only with its signature given back.
                    if let Some(signature) = &call.signature {
                        part["thoughtSignature"] = json!(signature);
                    }
                    part
                }));
                contents.push(json!({ "role": "model", "parts": parts }));
            }
            _ => contents.push(json!({ "role": "user", "parts": [{ "text": message.content }] })),
        }
    }
    contents
}

/// A POST of `body` to `model`'s `method` (`generateContent`, ...) on AI Studio or Vertex AI,
/// with the key as each takes it.
pub(crate) fn post(endpoint: &Endpoint, model: &str, method: &str, body: Value) -> HttpRequest {
    let (path, auth) = match endpoint.api {
        ApiKind::Vertex => (
            format!(
                "v1/{}/publishers/google/models/{model}:{method}",
                endpoint.vertex_path.as_deref().unwrap_or("projects/-/locations/us-central1"),
            ),
            ("authorization", "Bearer "),
        ),
        _ => (format!("v1beta/models/{model}:{method}"), ("x-goog-api-key", "")),
    };
    let mut http = HttpRequest::post(&endpoint.display, endpoint.url(&path), body);
    if let Some(key) = &endpoint.api_key {
        http =
            http.with_header(auth.0, HeaderValue::Secret { prefix: auth.1, secret: key.clone() });
    }
    http
}

/// Decodes `GenerateContentResponse` chunks (each a whole JSON object) or a whole response.
#[derive(Debug, Default)]
pub struct GeminiDecoder {
    finished: bool,
    /// How many calls were read so far (Gemini gives calls no id: they are numbered).
    calls: usize,
}

impl GeminiDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    fn chunk(&mut self, chunk: &Value) -> Result<Vec<StreamEvent>, ProviderError> {
        if let Some(reason) = chunk.pointer("/promptFeedback/blockReason").and_then(Value::as_str) {
            return Err(ProviderError::ContentFiltered {
                provider: "Gemini".into(),
                reason: reason.into(),
            });
        }
        let mut out = Vec::new();
        if let Some(candidate) = chunk.get("candidates").and_then(|c| c.get(0)) {
            for part in
                candidate.pointer("/content/parts").and_then(Value::as_array).into_iter().flatten()
            {
                if let Some(text) = part.get("text").and_then(Value::as_str)
                    && part.get("thought").and_then(Value::as_bool) != Some(true)
                {
                    out.push(StreamEvent::Text(text.to_owned()));
                }
                if let Some(call) = part.get("functionCall")
                    && self.calls < crate::openai::MOST_CALLS
                {
                    self.calls += 1;
                    let id = call.get("id").and_then(Value::as_str);
                    out.push(StreamEvent::Call(FunctionCall {
                        id: id.map_or_else(|| format!("call_{}", self.calls), str::to_owned),
                        name: call.get("name").and_then(Value::as_str).unwrap_or("").to_owned(),
                        arguments: call.get("args").map(Value::to_string).unwrap_or_default(),
                        signature: part
                            .get("thoughtSignature")
                            .and_then(Value::as_str)
                            .map(str::to_owned),
                    }));
                }
            }
            if let Some(reason) = candidate.get("finishReason").and_then(Value::as_str) {
                if matches!(
                    reason,
                    "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII"
                ) {
                    return Err(ProviderError::ContentFiltered {
                        provider: "Gemini".into(),
                        reason: reason.into(),
                    });
                }
                self.finished = true;
                out.push(StreamEvent::Finish(reason.to_lowercase()));
            }
        }
        if let Some(usage) = chunk.get("usageMetadata") {
            // Gemini counts the thinking apart from the answer; both are output here.
            let count = |key: &str| usage.get(key).and_then(Value::as_u64);
            let thoughts = count("thoughtsTokenCount");
            out.push(StreamEvent::Usage(Usage {
                input_tokens: count("promptTokenCount"),
                cached_input_tokens: count("cachedContentTokenCount"),
                cache_write_tokens: None,
                output_tokens: count("candidatesTokenCount")
                    .map(|answer| answer + thoughts.unwrap_or(0)),
                reasoning_tokens: thoughts,
            }));
        }
        Ok(out)
    }
}

impl Decoder for GeminiDecoder {
    fn event(&mut self, _name: &str, data: &str) -> Result<Vec<StreamEvent>, ProviderError> {
        let chunk: Value = serde_json::from_str(data).map_err(|e| {
            ProviderError::MalformedStream(format!("a chunk is not JSON ({e}): {}", short(data)))
        })?;
        if let Some(error) = chunk.get("error") {
            let status = error.get("code").and_then(Value::as_u64).unwrap_or(500) as u16;
            return Err(ProviderError::from_status("Gemini", status, &chunk.to_string(), None));
        }
        self.chunk(&chunk)
    }

    fn finish(&mut self) -> Result<Vec<StreamEvent>, ProviderError> {
        if self.finished {
            Ok(Vec::new())
        } else {
            Err(ProviderError::MalformedStream("the stream ended without a finish reason".into()))
        }
    }

    fn response(&mut self, body: &str) -> Result<Vec<StreamEvent>, ProviderError> {
        let value: Value = serde_json::from_str(body).map_err(|e| {
            ProviderError::MalformedStream(format!("the response is not JSON: {e}"))
        })?;
        self.chunk(&value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endpoint::Features;
    use crate::request::{Message, Params};

    fn endpoint(api: ApiKind) -> Endpoint {
        Endpoint {
            provider: "gemini".into(),
            display: "Gemini".into(),
            api,
            base_url: "https://gemini.test".into(),
            api_key: Some("k".into()),
            key_variable: Some("GEMINI_API_KEY".into()),
            features: Features::COMPATIBLE,
            vertex_path: Some("projects/p/locations/europe-west4".into()),
        }
    }

    #[test]
    fn maps_to_generation_config_and_enum_schema() {
        let request = ChatRequest {
            model: "gemini-2.5-flash".into(),
            messages: vec![Message::user("Sentiment?")],
            params: Params { temperature: Some(0.0), max_tokens: Some(5), ..Params::default() },
            constraint: Constraint::OneOf(vec!["positive".into(), "negative".into()]),
            stream: true,
            cache: false,
            cache_key: None,
            functions: Vec::new(),
        };
        let http = build(&endpoint(ApiKind::Gemini), &request, &mut []);
        assert_eq!(
            http.url,
            "https://gemini.test/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
        );
        assert_eq!(http.body["generationConfig"]["maxOutputTokens"], 5);
        assert_eq!(http.body["generationConfig"]["responseSchema"]["enum"][1], "negative");
        let vertex = build(&endpoint(ApiKind::Vertex), &request, &mut []);
        assert!(vertex.url.ends_with("v1/projects/p/locations/europe-west4/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse"));
        assert_eq!(vertex.headers[1].name, "authorization");
    }

    #[test]
    fn a_conversation_is_sent_as_user_and_model_turns() {
        let request = ChatRequest {
            model: "gemini-2.5-flash".into(),
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
        let http = build(&endpoint(ApiKind::Gemini), &request, &mut []);
        let turns: Vec<(&str, &str)> = http.body["contents"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["role"].as_str().unwrap(), c["parts"][0]["text"].as_str().unwrap()))
            .collect();
        assert_eq!(turns, [("user", "Plan it."), ("model", "Step 1."), ("user", "Why?")]);
    }

    #[test]
    fn decodes_chunks_and_safety_blocks() {
        let mut decoder = GeminiDecoder::new();
        let events = decoder
            .event("", r#"{"candidates":[{"content":{"parts":[{"text":"Hi"}],"role":"model"},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":4,"candidatesTokenCount":1}}"#)
            .unwrap();
        assert_eq!(events[0], StreamEvent::Text("Hi".into()));
        assert_eq!(events[1], StreamEvent::Finish("stop".into()));
        assert!(decoder.finish().unwrap().is_empty());
        let blocked =
            GeminiDecoder::new().event("", r#"{"candidates":[{"finishReason":"SAFETY"}]}"#);
        assert!(matches!(blocked, Err(ProviderError::ContentFiltered { .. })));
    }
}
