//! The function-calling loop against the mock, on each API: the functions offered in the API's
//! own form, the model's calls read (streamed in pieces or whole), answered by the host, sent
//! back as the API expects, and the loop bounded.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use llmtool_format::output::{OutputKind, OutputSpec};
use llmtool_providers::ProviderError;
use llmtool_providers::backend::Backend;
use llmtool_providers::functions::{
    FunctionCall, FunctionEvent, FunctionHost, FunctionLimits, FunctionSpec, Functions, Returned,
};
use llmtool_providers::resolve::Target;
use llmtool_providers::run::{RunOptions, RunReport, RunRequest, run};
use llmtool_providers::transport::{RetryPolicy, Timeouts, Transport};
use llmtool_providers::{ApiKind, Endpoint, Features, Params};
use llmtool_testkit::{Mock, Reply};
use serde_json::{Value, json};

/// A host that answers `lookup` with the city's weather, records every call it ran, and fails
/// anything else.
#[derive(Default)]
struct Weather {
    ran: Mutex<Vec<String>>,
}

#[async_trait::async_trait]
impl FunctionHost for Weather {
    async fn call(&self, call: &FunctionCall) -> Returned {
        self.ran.lock().unwrap().push(call.name.clone());
        match call.arguments() {
            Ok(arguments) if call.name == "lookup" => {
                Returned::ok(format!("{}: 14 C, rain", arguments["city"].as_str().unwrap_or("?")))
            }
            Ok(_) => Returned::failed("unknown"),
            Err(reason) => Returned::failed(reason),
        }
    }
}

fn lookup() -> FunctionSpec {
    FunctionSpec {
        name: "lookup".into(),
        description: "The weather in a city now.".into(),
        parameters: json!({
            "type": "object",
            "properties": { "city": { "type": "string" } },
            "required": ["city"]
        }),
    }
}

fn request(mock: &Mock, api: ApiKind, functions: Functions) -> RunRequest {
    let endpoint = Endpoint {
        provider: "mock".into(),
        display: "Mock".into(),
        api,
        base_url: mock.url.clone(),
        api_key: Some("test-key".into()),
        key_variable: None,
        features: Features::OPENAI,
        vertex_path: None,
    };
    RunRequest {
        history: Vec::new(),
        target: Target::new(endpoint, "m"),
        prompt: "What should I wear in Oslo?".into(),
        chat: false,
        params: Params::default(),
        spec: OutputSpec { kind: OutputKind::Text, format: None },
        price: None,
        redaction: None,
        notices: Vec::new(),
        secrets: llmtool_providers::Redactor::default(),
        cache: false,
        cache_key: None,
        functions: Some(functions),
    }
}

async fn run_with(
    mock: &Mock,
    api: ApiKind,
    functions: Functions,
    stream: bool,
) -> Result<RunReport, ProviderError> {
    let transport = Transport::new(
        Timeouts { idle: Duration::from_secs(5), ..Timeouts::default() },
        RetryPolicy { max_retries: 0, max_rate_limit_retries: 0, ..RetryPolicy::default() },
    )
    .unwrap();
    let options = RunOptions::streamed(stream);
    run(&Backend::Http(&transport), &request(mock, api, functions), options, &mut |_| {}).await
}

fn chunk(delta: &Value, finish: Option<&str>) -> String {
    json!({ "choices": [{ "delta": delta, "finish_reason": finish }] }).to_string()
}

#[tokio::test]
async fn openai_calls_streamed_in_pieces_are_answered_and_sent_back() {
    let call = |delta: Value| chunk(&json!({ "tool_calls": [delta] }), None);
    let calling = [
        chunk(&json!({ "content": "Let me look." }), None),
        call(json!({"index": 0, "id": "call_a", "function": {"name": "lookup", "arguments": ""}})),
        call(json!({"index": 0, "function": {"arguments": "{\"city\": "}})),
        call(json!({"index": 0, "function": {"arguments": "\"Oslo\"}"}})),
        call(
            json!({"index": 1, "id": "call_b", "function": {"name": "lookup", "arguments": "{\"city\":\"Bergen\"}"}}),
        ),
        chunk(&json!({}), Some("tool_calls")),
        "[DONE]".to_owned(),
    ];
    let answer = [chunk(&json!({ "content": "A raincoat." }), Some("stop")), "[DONE]".to_owned()];
    let sse =
        |chunks: &[String]| Reply::sse(&chunks.iter().map(String::as_str).collect::<Vec<_>>());
    let mock = Mock::start(vec![sse(&calling), sse(&answer)]).await;
    let host = Arc::new(Weather::default());
    let heard = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&heard);
    let functions =
        Functions::new(vec![lookup()], host.clone()).with_observer(Arc::new(move |event| {
            log.lock().unwrap().push(match event {
                FunctionEvent::Calling(call) => format!("calling {}", call.arguments),
                FunctionEvent::Returned(call) => format!("returned {}", call.result),
            });
        }));
    let report = run_with(&mock, ApiKind::OpenAi, functions, true).await.unwrap();
    assert_eq!(report.output.as_deref(), Some("A raincoat."));
    assert_eq!(report.repairs, 0, "a round of calls is no repair");
    let results: Vec<&str> = report.calls.iter().map(|c| c.result.as_str()).collect();
    assert_eq!(results, ["Oslo: 14 C, rain", "Bergen: 14 C, rain"]);
    assert_eq!(
        *heard.lock().unwrap(),
        [
            "calling {\"city\": \"Oslo\"}",
            "returned Oslo: 14 C, rain",
            "calling {\"city\":\"Bergen\"}",
            "returned Bergen: 14 C, rain"
        ]
    );
    let requests = mock.requests();
    assert_eq!(requests[0].body["tools"][0]["function"]["name"], "lookup");
    assert_eq!(requests[0].body["tools"][0]["type"], "function");
    let sent = &requests[1].body["messages"];
    assert_eq!(sent[1]["role"], "assistant");
    assert_eq!(sent[1]["content"], "Let me look.");
    assert_eq!(sent[1]["tool_calls"][0]["id"], "call_a");
    assert_eq!(sent[1]["tool_calls"][0]["function"]["arguments"], "{\"city\": \"Oslo\"}");
    assert_eq!(
        sent[2],
        json!({"role": "tool", "tool_call_id": "call_a", "content": "Oslo: 14 C, rain"})
    );
    assert_eq!(sent[3]["tool_call_id"], "call_b");
}

#[tokio::test]
async fn anthropic_tool_use_blocks_get_their_results_in_one_user_message() {
    let calling = json!({
        "content": [
            { "type": "text", "text": "Checking." },
            { "type": "tool_use", "id": "toolu_1", "name": "lookup", "input": { "city": "Oslo" } },
            { "type": "tool_use", "id": "toolu_2", "name": "lookup", "input": "not an object" }
        ],
        "stop_reason": "tool_use",
        "usage": { "input_tokens": 10, "output_tokens": 5 }
    });
    let answer = json!({
        "content": [{ "type": "text", "text": "Wear wool." }],
        "stop_reason": "end_turn",
        "usage": { "input_tokens": 30, "output_tokens": 3 }
    });
    let mock = Mock::start(vec![
        Reply::json(200, calling.to_string()),
        Reply::json(200, answer.to_string()),
    ])
    .await;
    let functions = Functions::new(vec![lookup()], Arc::new(Weather::default()));
    let report = run_with(&mock, ApiKind::Anthropic, functions, false).await.unwrap();
    assert_eq!(report.output.as_deref(), Some("Wear wool."));
    assert_eq!(report.usage.input_tokens, Some(40), "the rounds' usage is summed");
    assert!(report.calls[1].failed, "{:?}", report.calls[1]);
    let requests = mock.requests();
    assert_eq!(requests[0].body["tools"][0]["input_schema"]["required"], json!(["city"]));
    assert!(requests[0].body.get("tool_choice").is_none());
    let sent = &requests[1].body["messages"];
    assert_eq!(sent[1]["content"][1]["type"], "tool_use");
    assert_eq!(sent[1]["content"][1]["input"], json!({"city": "Oslo"}));
    assert_eq!(sent[2]["role"], "user");
    assert_eq!(sent[2]["content"][0]["tool_use_id"], "toolu_1");
    assert_eq!(sent[2]["content"][0]["content"], "Oslo: 14 C, rain");
    assert_eq!(sent[2]["content"][1]["tool_use_id"], "toolu_2");
    assert_eq!(sent[2]["content"][1]["is_error"], true, "a failed call says so");
    assert!(sent[2]["content"][0].get("is_error").is_none());
    assert_eq!(sent.as_array().unwrap().len(), 3, "both results in one message: {sent}");
}

#[tokio::test]
async fn anthropic_calls_streamed_as_blocks_are_read_whole() {
    let events = [
        (
            "message_start",
            json!({"type": "message_start", "message": {"usage": {"input_tokens": 9}}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_9", "name": "lookup", "input": {}}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"city\""}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": ": \"Oslo\"}"}}),
        ),
        ("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 4}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ];
    let events: Vec<(&str, String)> = events.iter().map(|(n, d)| (*n, d.to_string())).collect();
    let named: Vec<(&str, &str)> = events.iter().map(|(n, d)| (*n, d.as_str())).collect();
    let end = [
        ("message_start", json!({"type": "message_start", "message": {"usage": {"input_tokens": 20}}}).to_string()),
        ("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Boots."}}).to_string()),
        ("message_stop", json!({"type": "message_stop"}).to_string()),
    ];
    let end: Vec<(&str, &str)> = end.iter().map(|(n, d)| (*n, d.as_str())).collect();
    let mock = Mock::start(vec![Reply::named_sse(&named), Reply::named_sse(&end)]).await;
    let functions = Functions::new(vec![lookup()], Arc::new(Weather::default()));
    let report = run_with(&mock, ApiKind::Anthropic, functions, true).await.unwrap();
    assert_eq!(report.output.as_deref(), Some("Boots."));
    assert_eq!(report.calls[0].arguments, "{\"city\": \"Oslo\"}");
    assert_eq!(mock.requests()[1].body["messages"][1]["content"][0]["id"], "toolu_9");
}

#[tokio::test]
async fn gemini_function_calls_get_function_responses() {
    let calling = json!({
        "candidates": [{
            "content": { "role": "model", "parts": [{ "functionCall": { "name": "lookup", "args": { "city": "Oslo" } }, "thoughtSignature": "c2lnbmVk" }] },
            "finishReason": "STOP"
        }]
    });
    let answer = json!({
        "candidates": [{ "content": { "role": "model", "parts": [{ "text": "An umbrella." }] }, "finishReason": "STOP" }]
    });
    let mock = Mock::start(vec![
        Reply::json(200, calling.to_string()),
        Reply::json(200, answer.to_string()),
    ])
    .await;
    let functions = Functions::new(vec![lookup()], Arc::new(Weather::default()));
    let report = run_with(&mock, ApiKind::Gemini, functions, false).await.unwrap();
    assert_eq!(report.output.as_deref(), Some("An umbrella."));
    let requests = mock.requests();
    assert_eq!(requests[0].body["tools"][0]["functionDeclarations"][0]["name"], "lookup");
    let sent = &requests[1].body["contents"];
    assert_eq!(sent[1]["parts"][0]["functionCall"]["args"], json!({"city": "Oslo"}));
    // The model's reasoning goes on: its signature is given back with its call.
    assert_eq!(sent[1]["parts"][0]["thoughtSignature"], "c2lnbmVk");
    assert_eq!(
        sent[2]["parts"][0]["functionResponse"],
        json!({"name": "lookup", "response": {"content": "Oslo: 14 C, rain"}})
    );
}

fn calls_forever(name: &str) -> Reply {
    let body = json!({
        "choices": [{
            "message": { "content": null, "tool_calls": [{ "id": "c", "type": "function", "function": { "name": name, "arguments": "{\"city\":\"Oslo\"}" } }] },
            "finish_reason": "tool_calls"
        }]
    });
    Reply::json(200, body.to_string())
}

#[tokio::test]
async fn a_loop_that_does_not_converge_stops_with_a_clear_error() {
    let mock = Mock::start(vec![calls_forever("lookup"); 4]).await;
    let mut functions = Functions::new(vec![lookup()], Arc::new(Weather::default()));
    functions.limits = FunctionLimits { calls: 3, ..FunctionLimits::default() };
    let error = run_with(&mock, ApiKind::OpenAi, functions, false).await.unwrap_err();
    assert!(matches!(error, ProviderError::FunctionLoop(_)));
    assert_eq!(
        error.to_string(),
        "the model asked for more than 3 function calls without answering; stopped"
    );
    assert_eq!(mock.requests().len(), 4);
}

#[tokio::test]
async fn a_function_that_was_not_offered_is_refused_without_running() {
    let answer =
        json!({ "choices": [{ "message": { "content": "Fine." }, "finish_reason": "stop" }] });
    let mock =
        Mock::start(vec![calls_forever("delete_everything"), Reply::json(200, answer.to_string())])
            .await;
    let host = Arc::new(Weather::default());
    let functions = Functions::new(vec![lookup()], host.clone());
    let report = run_with(&mock, ApiKind::OpenAi, functions, false).await.unwrap();
    assert!(host.ran.lock().unwrap().is_empty(), "the host never ran it");
    assert!(report.calls[0].failed);
    assert_eq!(
        mock.requests()[1].body["messages"][2]["content"],
        "no function named `delete_everything` is offered in this run"
    );
}
