//! A standalone mock of the OpenAI Chat Completions API for benchmarks and for independent
//! servers (such as LiteLLM's proxy) to use as a backend. Every request gets the same answer,
//! in the full wire format: streamed as `chat.completion.chunk`s when the request asks for a
//! stream, else as one `chat.completion`. Prints its URL, then serves until killed.
//!
//! usage: `mock-llm [ADDRESS=127.0.0.1:0] [CHUNKS=20] [LATENCY_MS=0]`
//!
//! `LATENCY_MS` holds every answer back that long (a provider's time to answer, for the batch
//! benchmark). A request's W3C `traceparent`, when it carries one, is printed on a line of its
//! own (`traceparent VALUE`), for the tests of trace propagation. `MOCK_LLM_ANSWER`, when set, is the
//! answer instead (streamed a word at a time): the studio's tests give it Markdown, and markup
//! that must stay text. `MOCK_LLM_ANSWERS`, a JSON object of model names to answers, gives the
//! requests for those models their own answer (one server for several answers: the promptfoo
//! comparison asks for each answer as a model of its own). `MOCK_LLM_CALL`, a JSON object
//! `{"name", "arguments"}`, makes a request that offers functions (`tools`) and does not end
//! with a function's result call that function instead (the studio's tests of a tool's
//! functions); the request after the result gets the answer.
//!
//! It also answers OpenAI's images API (`POST .../images/generations`): `n` real PNGs (at most
//! 10) of the `size` asked (`WIDTHxHEIGHT`, each side at most 2048; 1024x1024 when none), in
//! `b64_json`, with usage. A prompt holding `fault:500`, `fault:429`, `fault:link` or
//! `fault:garbage` gets that fault instead: a server error, a rate limit with `Retry-After: 1`,
//! a link instead of the picture, or base64 that is not a picture.

use std::collections::HashMap;
use std::sync::Arc;

use base64::Engine as _;

use axum::body::{Body, Bytes};
use axum::response::Response;
use serde_json::{Value, json};

fn chunk(model: &str, delta: &Value, finish: Option<&str>) -> Value {
    json!({
        "id": "chatcmpl-mock",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": model,
        "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }]
    })
}

/// The answer, a word at a time: the model's own when `MOCK_LLM_ANSWERS` names it.
struct Answers {
    default: Vec<String>,
    by_model: HashMap<String, Vec<String>>,
    /// The function a request that offers functions calls first (`MOCK_LLM_CALL`).
    call: Option<Value>,
}

/// The call `answers` makes of `request`: when it offers functions and has no result yet.
fn call_of<'a>(answers: &'a Answers, request: &Value) -> Option<&'a Value> {
    let offers = request.get("tools").and_then(Value::as_array).is_some_and(|t| !t.is_empty());
    let last = request.get("messages").and_then(Value::as_array).and_then(|m| m.last());
    let answered = last.and_then(|m| m.get("role")).and_then(Value::as_str) == Some("tool");
    answers.call.as_ref().filter(|_| offers && !answered)
}

/// An answer that calls `call`, streamed or whole as `stream` says.
fn calling(model: &str, call: &Value, stream: bool) -> Response {
    let called = json!([{ "index": 0, "id": "call_mock", "type": "function", "function": {
        "name": call["name"], "arguments": call["arguments"].to_string() } }]);
    let usage = json!({ "prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15 });
    let (kind, body) = if stream {
        let asked = chunk(model, &json!({ "role": "assistant", "tool_calls": called }), None);
        let mut ended = chunk(model, &json!({}), Some("tool_calls"));
        ended["usage"] = usage;
        ("text/event-stream", format!("data: {asked}\n\ndata: {ended}\n\ndata: [DONE]\n\n"))
    } else {
        let completion = json!({
            "id": "chatcmpl-mock", "object": "chat.completion", "created": 1_700_000_000, "model": model,
            "choices": [{ "index": 0, "message": { "role": "assistant", "content": null, "tool_calls": called }, "finish_reason": "tool_calls" }],
            "usage": usage
        });
        ("application/json", completion.to_string())
    };
    Response::builder().header("content-type", kind).body(Body::from(body)).unwrap_or_default()
}

fn words(answer: &str) -> Vec<String> {
    answer.split_inclusive(' ').map(str::to_owned).collect()
}

fn answer(answers: &Answers, body: &Bytes) -> Response {
    let request: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let model = request.get("model").and_then(Value::as_str).unwrap_or("mock").to_owned();
    if let Some(call) = call_of(answers, &request) {
        return calling(&model, call, request.get("stream").and_then(Value::as_bool) == Some(true));
    }
    let words = answers.by_model.get(&model).unwrap_or(&answers.default);
    let usage = json!({ "prompt_tokens": 10, "completion_tokens": words.len(), "total_tokens": 10 + words.len() });
    if request.get("stream").and_then(Value::as_bool) != Some(true) {
        let completion = json!({
            "id": "chatcmpl-mock",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": model,
            "choices": [{ "index": 0, "message": { "role": "assistant", "content": words.concat() }, "finish_reason": "stop" }],
            "usage": usage
        });
        return Response::builder()
            .header("content-type", "application/json")
            .body(Body::from(completion.to_string()))
            .unwrap_or_default();
    }
    let mut events = vec![chunk(&model, &json!({ "role": "assistant", "content": "" }), None)];
    events.extend(words.iter().map(|word| chunk(&model, &json!({ "content": word }), None)));
    events.push(chunk(&model, &json!({}), Some("stop")));
    let mut last = chunk(&model, &json!({}), None);
    last["choices"] = json!([]);
    last["usage"] = usage;
    events.push(last);
    let mut text = String::new();
    for event in &events {
        text.push_str(&format!("data: {event}\n\n"));
    }
    text.push_str("data: [DONE]\n\n");
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from(text))
        .unwrap_or_default()
}

fn json_response(status: u16, body: &Value) -> Response {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .header("retry-after", "1")
        .body(Body::from(body.to_string()))
        .unwrap_or_default()
}

/// An answer of the images API, or the fault its prompt asks for.
fn pictures(body: &Bytes) -> Response {
    let request: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let prompt = request.get("prompt").and_then(Value::as_str).unwrap_or_default();
    let error = |message: &str| json!({ "error": { "message": message, "type": "mock_fault" } });
    if prompt.contains("fault:500") {
        return json_response(500, &error("the mock's server error"));
    }
    if prompt.contains("fault:429") {
        return json_response(429, &error("the mock's rate limit"));
    }
    let side = |text: &str| text.parse::<u32>().ok().filter(|n| (1..=2048).contains(n));
    let (width, height) = request
        .get("size")
        .and_then(Value::as_str)
        .and_then(|size| size.split_once('x'))
        .and_then(|(w, h)| Some((side(w)?, side(h)?)))
        .unwrap_or((1024, 1024));
    let count = request.get("n").and_then(Value::as_u64).unwrap_or(1).clamp(1, 10);
    let picture = if prompt.contains("fault:garbage") {
        json!({ "b64_json": base64::engine::general_purpose::STANDARD.encode(b"not a picture") })
    } else if prompt.contains("fault:link") {
        json!({ "url": "http://127.0.0.1:9/picture.png" })
    } else {
        json!({ "b64_json": base64::engine::general_purpose::STANDARD.encode(llmtool_testkit::pictures::png(width, height)) })
    };
    let data: Vec<Value> = (0..count).map(|_| picture.clone()).collect();
    let usage = json!({ "input_tokens": 10, "output_tokens": 272 * count, "total_tokens": 10 + 272 * count });
    json_response(200, &json!({ "created": 1_700_000_000, "data": data, "usage": usage }))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let address = args.next().unwrap_or_else(|| "127.0.0.1:0".into());
    let chunks: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(20);
    let latency =
        std::time::Duration::from_millis(args.next().and_then(|n| n.parse().ok()).unwrap_or(0));
    let default = match std::env::var("MOCK_LLM_ANSWER") {
        Ok(answer) => words(&answer),
        Err(_) => (0..chunks).map(|i| format!("token{i} ")).collect(),
    };
    let by_model = match std::env::var("MOCK_LLM_ANSWERS") {
        Ok(json) => serde_json::from_str::<HashMap<String, String>>(&json)
            .map_err(|e| std::io::Error::other(format!("MOCK_LLM_ANSWERS: {e}")))?
            .into_iter()
            .map(|(model, answer)| (model, words(&answer)))
            .collect(),
        Err(_) => HashMap::new(),
    };
    let call = match std::env::var("MOCK_LLM_CALL") {
        Ok(json) => Some(
            serde_json::from_str::<Value>(&json)
                .map_err(|e| std::io::Error::other(format!("MOCK_LLM_CALL: {e}")))?,
        ),
        Err(_) => None,
    };
    let answers = Arc::new(Answers { default, by_model, call });
    let listener = tokio::net::TcpListener::bind(&address).await?;
    println!("http://{}", listener.local_addr()?);
    let app = axum::Router::new().fallback(
        move |uri: axum::http::Uri, headers: axum::http::HeaderMap, body: Bytes| {
            let answers = Arc::clone(&answers);
            if let Some(parent) = headers.get("traceparent").and_then(|v| v.to_str().ok()) {
                println!("traceparent {parent}");
            }
            async move {
                if !latency.is_zero() {
                    tokio::time::sleep(latency).await;
                }
                if uri.path().ends_with("/images/generations") {
                    return pictures(&body);
                }
                answer(&answers, &body)
            }
        },
    );
    axum::serve(listener, app).await
}
