//! The transport against the mock server: exact requests sent, streams of each API decoded,
//! and every fault injected (429 with Retry-After, 500, reset mid-stream, stall, malformed).

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::time::Duration;

use llmtool_providers::anthropic::{self, AnthropicDecoder};
use llmtool_providers::gemini::{self, GeminiDecoder};
use llmtool_providers::openai::{self, OpenAiDecoder};
use llmtool_providers::transport::{Completion, Delivery, RetryPolicy, Timeouts, Transport};
use llmtool_providers::{
    ApiKind, ChatRequest, Constraint, Decoder, Endpoint, Features, Message, Params, ProviderError,
    TimeoutKind,
};
use llmtool_testkit::{End, Mock, Reply};

const KEY: &str = "sk-test-secret-4f9a";

fn endpoint(mock: &Mock, api: ApiKind) -> Endpoint {
    Endpoint { api, ..endpoint_at(&format!("{}/v1", mock.url)) }
}

fn request(stream: bool) -> ChatRequest {
    ChatRequest {
        model: "m1".into(),
        messages: vec![Message::user("Say hello")],
        params: Params { temperature: Some(0.3), max_tokens: Some(20), ..Params::default() },
        constraint: Constraint::None,
        stream,
        cache: false,
        cache_key: None,
        functions: Vec::new(),
    }
}

fn timeouts() -> Timeouts {
    Timeouts {
        connect: Duration::from_secs(2),
        first_byte: Duration::from_secs(2),
        idle: Duration::from_millis(300),
        total: Duration::from_secs(5),
    }
}

fn retry(max_retries: u32) -> RetryPolicy {
    RetryPolicy {
        max_retries,
        max_rate_limit_retries: max_retries,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(20),
    }
}

fn transport(max_retries: u32) -> Transport {
    Transport::new(timeouts(), retry(max_retries)).unwrap()
}

async fn send_openai(
    transport: &Transport,
    mock: &Mock,
    stream: bool,
) -> (Result<Completion, ProviderError>, String) {
    let endpoint = endpoint(mock, ApiKind::OpenAi);
    let http = openai::build(&endpoint, &request(stream), &mut Vec::new());
    let mut text = String::new();
    let decoder = || -> Box<dyn Decoder> { Box::new(OpenAiDecoder::new("Mock", false)) };
    let result = transport
        .send(&http, stream, Delivery::Live, &decoder, &mut |piece| text.push_str(piece))
        .await;
    (result, text)
}

const HELLO: [&str; 4] = [
    r#"{"choices":[{"delta":{"content":"Hel"},"finish_reason":null}]}"#,
    r#"{"choices":[{"delta":{"content":"lo"},"finish_reason":"stop"}]}"#,
    r#"{"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":2}}"#,
    "[DONE]",
];

#[tokio::test]
async fn openai_stream_sends_the_exact_request() {
    let mock = Mock::start(vec![Reply::sse(&HELLO)]).await;
    let (result, text) = send_openai(&transport(0), &mock, true).await;
    let completion = result.unwrap();
    assert_eq!(text, "Hello");
    assert_eq!(completion.usage.input_tokens, Some(7));
    assert_eq!(completion.finish_reason.as_deref(), Some("stop"));
    assert!(completion.time_to_first_token.is_some());
    let sent = &mock.requests()[0];
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(sent.headers["authorization"], format!("Bearer {KEY}").as_str());
    assert_eq!(sent.headers["content-type"], "application/json");
    assert_eq!(
        sent.body,
        serde_json::json!({
            "model": "m1",
            "messages": [{"role": "user", "content": "Say hello"}],
            "temperature": 0.3,
            "max_completion_tokens": 20,
            "stream": true,
            "stream_options": {"include_usage": true}
        })
    );
}

#[tokio::test]
async fn non_streaming_response() {
    let body = r#"{"choices":[{"message":{"role":"assistant","content":"Hi!"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}"#;
    let mock = Mock::start(vec![Reply::json(200, body)]).await;
    let (result, text) = send_openai(&transport(0), &mock, false).await;
    assert_eq!(text, "Hi!");
    assert_eq!(result.unwrap().usage.output_tokens, Some(1));
    assert!(mock.requests()[0].body.get("stream").is_none());
}

#[tokio::test]
async fn rate_limit_is_retried_after_the_servers_delay() {
    let limited =
        Reply::json(429, r#"{"error":{"message":"slow down"}}"#).with_header("retry-after", "0.05");
    let mock = Mock::start(vec![limited, Reply::sse(&HELLO)]).await;
    let started = std::time::Instant::now();
    let (result, text) = send_openai(&transport(2), &mock, true).await;
    assert_eq!(text, "Hello");
    assert_eq!(result.unwrap().retries, 1);
    assert!(started.elapsed() >= Duration::from_millis(50), "Retry-After was not honoured");
    assert_eq!(mock.requests().len(), 2);
}

#[tokio::test]
async fn server_errors_are_retried_then_reported() {
    let mock =
        Mock::start(vec![Reply::json(500, "oops"), Reply::json(503, "busy"), Reply::sse(&HELLO)])
            .await;
    let (result, _) = send_openai(&transport(2), &mock, true).await;
    assert_eq!(result.unwrap().retries, 2);
    let mock =
        Mock::start(vec![Reply::json(502, "bad gateway"), Reply::json(502, "bad gateway")]).await;
    let (result, _) = send_openai(&transport(1), &mock, true).await;
    assert!(matches!(result, Err(ProviderError::Server { status: 502, .. })), "{result:?}");
}

#[tokio::test]
async fn reset_after_output_started_is_not_retried() {
    let mock =
        Mock::start(vec![Reply::sse(&HELLO[..1]).ending(End::Reset), Reply::sse(&HELLO)]).await;
    let (result, text) = send_openai(&transport(3), &mock, true).await;
    assert_eq!(text, "Hel", "the partial output was shown once");
    assert!(matches!(result, Err(ProviderError::InterruptedAfterOutput(_))), "{result:?}");
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test]
async fn a_buffered_answer_is_retried_after_a_reset_without_duplicating_text() {
    let mock =
        Mock::start(vec![Reply::sse(&HELLO[..1]).ending(End::Reset), Reply::sse(&HELLO)]).await;
    let endpoint = endpoint(&mock, ApiKind::OpenAi);
    let http = openai::build(&endpoint, &request(true), &mut Vec::new());
    let mut pieces = Vec::new();
    let decoder = || -> Box<dyn Decoder> { Box::new(OpenAiDecoder::new("Mock", false)) };
    let completion = transport(2)
        .send(&http, true, Delivery::Whole, &decoder, &mut |t| pieces.push(t.to_owned()))
        .await
        .unwrap();
    assert_eq!(pieces, ["Hello"], "one whole answer, not the broken attempt's piece");
    assert_eq!(completion.retries, 1);
}

#[tokio::test]
async fn reset_before_any_output_is_retried() {
    let mock = Mock::start(vec![Reply::sse(&[]).ending(End::Reset), Reply::sse(&HELLO)]).await;
    let (result, text) = send_openai(&transport(1), &mock, true).await;
    assert_eq!(text, "Hello");
    assert_eq!(result.unwrap().retries, 1);
}

#[tokio::test]
async fn a_stalled_stream_times_out() {
    let mock = Mock::start(vec![Reply::sse(&[]).ending(End::Stall)]).await;
    let (result, _) = send_openai(&transport(0), &mock, true).await;
    assert_eq!(result.unwrap_err(), ProviderError::Timeout(TimeoutKind::Idle));
    let mock = Mock::start(vec![Reply::sse(&HELLO[..1]).ending(End::Stall)]).await;
    let (result, _) = send_openai(&transport(0), &mock, true).await;
    assert_eq!(
        result.unwrap_err(),
        ProviderError::InterruptedAfterOutput(Box::new(ProviderError::Timeout(TimeoutKind::Idle)))
    );
}

#[tokio::test]
async fn malformed_events_and_truncated_streams_are_errors() {
    let mock = Mock::start(vec![Reply::sse(&["{not json"])]).await;
    let (result, _) = send_openai(&transport(0), &mock, true).await;
    assert!(matches!(result, Err(ProviderError::MalformedStream(_))), "{result:?}");
    let mock = Mock::start(vec![Reply::sse(&[])]).await;
    let (result, _) = send_openai(&transport(0), &mock, true).await;
    assert!(matches!(result, Err(ProviderError::MalformedStream(_))), "{result:?}");
}

#[tokio::test]
async fn auth_errors_are_clear_and_never_show_the_key() {
    for (status, check) in
        [(401, "rejected the API key"), (403, "refused"), (404, "does not know"), (413, "too long")]
    {
        let mock = Mock::start(vec![Reply::json(status, r#"{"error":{"message":"nope"}}"#)]).await;
        let (result, _) = send_openai(&transport(3), &mock, true).await;
        let message = result.unwrap_err().to_string();
        assert!(message.contains(check), "{status}: {message}");
        assert!(!message.contains(KEY));
        assert_eq!(mock.requests().len(), 1, "{status} is not retried");
    }
}

#[tokio::test]
async fn anthropic_stream_through_the_transport() {
    let events = [
        (
            "message_start",
            r#"{"type":"message_start","message":{"usage":{"input_tokens":9,"output_tokens":1}}}"#,
        ),
        (
            "content_block_start",
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        ),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Bonjour"}}"#,
        ),
        ("content_block_stop", r#"{"type":"content_block_stop","index":0}"#),
        (
            "message_delta",
            r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}"#,
        ),
        ("message_stop", r#"{"type":"message_stop"}"#),
    ];
    let mock = Mock::start(vec![Reply::named_sse(&events)]).await;
    let endpoint = Endpoint { base_url: mock.url.clone(), ..endpoint(&mock, ApiKind::Anthropic) };
    let http = anthropic::build(&endpoint, &request(true), &mut Vec::new());
    let mut text = String::new();
    let decoder = || -> Box<dyn Decoder> { Box::new(AnthropicDecoder::new()) };
    let completion = transport(0)
        .send(&http, true, Delivery::Live, &decoder, &mut |t| text.push_str(t))
        .await
        .unwrap();
    assert_eq!(text, "Bonjour");
    assert_eq!((completion.usage.input_tokens, completion.usage.output_tokens), (Some(9), Some(2)));
    let sent = &mock.requests()[0];
    assert_eq!(sent.path, "/v1/messages");
    assert_eq!(sent.headers["x-api-key"], KEY);
    assert_eq!(sent.headers["anthropic-version"], "2023-06-01");
    assert_eq!(sent.body["max_tokens"], 20);
}

#[tokio::test]
async fn gemini_stream_through_the_transport() {
    let chunks = [
        r#"{"candidates":[{"content":{"parts":[{"text":"Hal"}],"role":"model"}}]}"#,
        r#"{"candidates":[{"content":{"parts":[{"text":"lo"}],"role":"model"},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":4,"candidatesTokenCount":2}}"#,
    ];
    let mock = Mock::start(vec![Reply::sse(&chunks)]).await;
    let endpoint = Endpoint { base_url: mock.url.clone(), ..endpoint(&mock, ApiKind::Gemini) };
    let http = gemini::build(&endpoint, &request(true), &mut []);
    let mut text = String::new();
    let decoder = || -> Box<dyn Decoder> { Box::new(GeminiDecoder::new()) };
    let completion = transport(0)
        .send(&http, true, Delivery::Live, &decoder, &mut |t| text.push_str(t))
        .await
        .unwrap();
    assert_eq!(text, "Hallo");
    assert_eq!(completion.finish_reason.as_deref(), Some("stop"));
    let sent = &mock.requests()[0];
    assert_eq!(sent.path, "/v1beta/models/m1:streamGenerateContent?alt=sse");
    assert_eq!(sent.headers["x-goog-api-key"], KEY);
}

/// Sends the Anthropic request (its key in `x-api-key`) to `mock`.
async fn send_anthropic(mock: &Mock) -> Result<Completion, ProviderError> {
    let endpoint = Endpoint { base_url: mock.url.clone(), ..endpoint(mock, ApiKind::Anthropic) };
    let http = anthropic::build(&endpoint, &request(false), &mut Vec::new());
    let decoder = || -> Box<dyn Decoder> { Box::new(AnthropicDecoder::new()) };
    transport(0).send(&http, false, Delivery::Whole, &decoder, &mut |_| {}).await
}

#[tokio::test]
async fn a_key_never_follows_a_redirect_to_another_origin() {
    let elsewhere = Mock::start(vec![Reply::json(200, "{}")]).await;
    let location = format!("{}/v1/messages?key=abc", elsewhere.url);
    let mock = Mock::start(vec![Reply::json(307, "").with_header("location", &location)]).await;
    let error = send_anthropic(&mock).await.unwrap_err().to_string();
    assert!(elsewhere.requests().is_empty(), "the other origin was sent the request");
    assert!(error.contains("another origin") && error.contains(&elsewhere.url), "{error}");
    assert!(!error.contains("key=abc"), "{error}");
    // On the same origin, a redirect is followed.
    let answer = r#"{"content":[{"type":"text","text":"moved"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}"#;
    let mock = Mock::start(vec![
        Reply::json(308, "").with_header("location", "/v2/messages"),
        Reply::json(200, answer),
    ])
    .await;
    send_anthropic(&mock).await.unwrap();
    let paths: Vec<String> = mock.requests().iter().map(|r| r.path.clone()).collect();
    assert_eq!(paths, ["/v1/messages", "/v2/messages"]);
    assert_eq!(mock.requests()[1].headers["x-api-key"], KEY);
}

#[tokio::test]
async fn an_error_body_never_shows_the_key_and_is_read_only_so_far() {
    let echo = format!(r#"{{"error": {{"message": "invalid x-api-key {KEY}"}}}}"#);
    let mock = Mock::start(vec![Reply::json(401, echo)]).await;
    let error = send_anthropic(&mock).await.unwrap_err().to_string();
    assert!(error.contains("invalid x-api-key [redacted]"), "{error}");
    assert!(!error.contains(KEY), "{error}");
    let huge = format!("{KEY} {}", "x".repeat(4 << 20));
    let mock = Mock::start(vec![Reply::json(400, huge)]).await;
    let error = send_anthropic(&mock).await.unwrap_err().to_string();
    assert!(error.len() < 1000 && !error.contains(KEY), "{} bytes", error.len());
}

/// A server that reads each request and never answers; how many requests it was sent.
async fn silent_server() -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use tokio::io::AsyncReadExt as _;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let requests = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = std::sync::Arc::clone(&requests);
    tokio::spawn(async move {
        // At most a few connections, each held open until the test ends.
        for _ in 0..8 {
            let Ok((mut socket, _)) = listener.accept().await else { return };
            let counted = std::sync::Arc::clone(&counted);
            tokio::spawn(async move {
                let mut buffer = [0; 4096];
                while let Ok(read) = socket.read(&mut buffer).await {
                    if read == 0 {
                        return;
                    }
                    let seen = String::from_utf8_lossy(&buffer[..read]).matches("POST ").count();
                    counted.fetch_add(seen, std::sync::atomic::Ordering::SeqCst);
                }
            });
        }
    });
    (url, requests)
}

#[tokio::test]
async fn no_first_byte_is_asked_again_only_for_a_streamed_request() {
    for (stream, asked) in [(true, 3), (false, 1)] {
        let (url, requests) = silent_server().await;
        let endpoint = endpoint_at(&format!("{url}/v1"));
        let http = openai::build(&endpoint, &request(stream), &mut Vec::new());
        let decoder = || -> Box<dyn Decoder> { Box::new(OpenAiDecoder::new("Mock", false)) };
        let timeouts = Timeouts { first_byte: Duration::from_millis(200), ..timeouts() };
        let transport = Transport::new(timeouts, retry(2)).unwrap();
        let result = transport.send(&http, stream, Delivery::Live, &decoder, &mut |_| {}).await;
        assert_eq!(result.unwrap_err(), ProviderError::Timeout(TimeoutKind::FirstByte));
        // A request not streamed is answered once its work is done: it may still be under
        // way (and billed), so it is not sent again.
        assert_eq!(requests.load(std::sync::atomic::Ordering::SeqCst), asked, "stream: {stream}");
    }
}

fn endpoint_at(base_url: &str) -> Endpoint {
    Endpoint {
        provider: "mock".into(),
        display: "Mock".into(),
        api: ApiKind::OpenAi,
        base_url: base_url.into(),
        api_key: Some(KEY.into()),
        key_variable: Some("MOCK_API_KEY".into()),
        features: Features::OPENAI,
        vertex_path: None,
    }
}

/// A server that answers one request with a whole JSON `body` in four pieces, `gap` apart.
async fn slow_server(body: String, gap: Duration) -> String {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let Ok((mut socket, _)) = listener.accept().await else { return };
        let mut request = Vec::new();
        let mut buffer = [0; 4096];
        // The request's head and its small JSON body arrive before the answer starts.
        while !String::from_utf8_lossy(&request).contains("\"messages\"") {
            let Ok(read) = socket.read(&mut buffer).await else { return };
            if read == 0 {
                return;
            }
            request.extend_from_slice(&buffer[..read]);
        }
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            body.len()
        );
        let _ = socket.write_all(head.as_bytes()).await;
        let quarter = body.len().div_ceil(4);
        for piece in body.as_bytes().chunks(quarter) {
            tokio::time::sleep(gap).await;
            let _ = socket.write_all(piece).await;
            let _ = socket.flush().await;
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
    });
    url
}

#[tokio::test]
async fn a_whole_answer_may_take_longer_than_the_idle_timeout_while_it_keeps_coming() {
    let answer = serde_json::json!({
        "choices": [{ "message": { "role": "assistant", "content": "Hello" }, "finish_reason": "stop" }],
        "usage": { "prompt_tokens": 7, "completion_tokens": 2 }
    })
    .to_string();
    let decoder = || -> Box<dyn Decoder> { Box::new(OpenAiDecoder::new("Mock", false)) };
    // Four pieces 150 ms apart: 600 ms in all, twice the idle timeout of 300 ms.
    let url = slow_server(answer.clone(), Duration::from_millis(150)).await;
    let http = openai::build(&endpoint_at(&format!("{url}/v1")), &request(false), &mut Vec::new());
    let mut text = String::new();
    let result =
        transport(0).send(&http, false, Delivery::Live, &decoder, &mut |t| text.push_str(t)).await;
    assert_eq!(text, "Hello", "{result:?}");
    // A pause longer than the idle timeout between two pieces is one.
    let url = slow_server(answer, Duration::from_millis(500)).await;
    let http = openai::build(&endpoint_at(&format!("{url}/v1")), &request(false), &mut Vec::new());
    let result = transport(0).send(&http, false, Delivery::Live, &decoder, &mut |_| {}).await;
    assert_eq!(result.unwrap_err(), ProviderError::Timeout(TimeoutKind::Idle));
}
