//! The run loop against the mock: expected output enforced, repairs asked with the reason,
//! structured output requested where the API has it.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::time::Duration;

use llmtool_format::output::{OutputFormat, OutputKind, OutputSpec};
use llmtool_providers::backend::Backend;
use llmtool_providers::pricing::{Price, PriceEntry};
use llmtool_providers::resolve::Target;
use llmtool_providers::run::{RunOptions, RunRequest, run};
use llmtool_providers::transport::{RetryPolicy, Timeouts, Transport};
use llmtool_providers::{ApiKind, Endpoint, Features, Params};
use llmtool_testkit::{Mock, Reply};

fn chunk(text: &str, finish: Option<&str>) -> String {
    serde_json::json!({ "choices": [{ "delta": { "content": text }, "finish_reason": finish }] })
        .to_string()
}

fn answer(text: &str) -> Reply {
    let chunks = [chunk(text, Some("stop")), "[DONE]".to_owned()];
    Reply::sse(&chunks.iter().map(String::as_str).collect::<Vec<_>>())
}

fn run_request(mock: &Mock, features: Features, spec: OutputSpec) -> RunRequest {
    let endpoint = Endpoint {
        provider: "mock".into(),
        display: "Mock".into(),
        api: ApiKind::OpenAi,
        base_url: mock.url.clone(),
        api_key: None,
        key_variable: None,
        features,
        vertex_path: None,
    };
    RunRequest {
        history: Vec::new(),
        target: Target::new(endpoint, "m"),
        prompt: "Should we launch?".into(),
        chat: false,
        params: Params::default(),
        spec,
        price: Some(PriceEntry {
            entry: "mock/m".into(),
            source: "this test".into(),
            price: Price { input: 1e-6, output: 2e-6, ..Price::default() },
        }),
        redaction: None,
        notices: Vec::new(),
        secrets: llmtool_providers::Redactor::default(),
        cache: false,
        cache_key: None,
        functions: None,
    }
}

fn transport() -> Transport {
    let timeouts = Timeouts { idle: Duration::from_secs(2), ..Timeouts::default() };
    Transport::new(
        timeouts,
        RetryPolicy { max_retries: 0, max_rate_limit_retries: 0, ..RetryPolicy::default() },
    )
    .unwrap()
}

fn limited() -> OutputSpec {
    OutputSpec {
        kind: OutputKind::Limited { allowed: vec!["go".into(), "wait".into(), "stop".into()] },
        format: None,
    }
}

#[tokio::test]
async fn limited_answer_is_repaired_with_the_reason() {
    let mock = Mock::start(vec![answer("I think we should probably go"), answer("Go.")]).await;
    let request = run_request(&mock, Features::COMPATIBLE, limited());
    let report = run(&Backend::Http(&transport()), &request, RunOptions::default(), &mut |_| {
        panic!("limited answers are not streamed")
    })
    .await
    .unwrap();
    assert_eq!(report.output.as_deref(), Some("go"));
    assert_eq!(report.raw, "Go.");
    assert_eq!(report.repairs, 1);
    let second = &mock.requests()[1].body["messages"];
    assert_eq!(
        second[0]["content"],
        "Should we launch?\n\nAnswer with exactly one of: go, wait, stop."
    );
    assert_eq!(
        second[1],
        serde_json::json!({"role": "assistant", "content": "I think we should probably go"})
    );
    assert!(second[2]["content"].as_str().unwrap().contains("exactly one of: go, wait, stop"));
}

#[tokio::test]
async fn repairs_are_bounded_and_the_raw_answer_is_kept() {
    let mock = Mock::start(vec![answer("maybe"), answer("perhaps")]).await;
    let request = run_request(&mock, Features::COMPATIBLE, limited());
    let options = RunOptions { max_repairs: 1, ..RunOptions::default() };
    let report = run(&Backend::Http(&transport()), &request, options, &mut |_| {}).await.unwrap();
    assert_eq!(report.output, None);
    assert_eq!(report.raw, "perhaps");
    assert_eq!(report.repairs, 1);
    assert!(report.error.unwrap().contains("`perhaps`"));
    assert_eq!(mock.requests().len(), 2);
}

#[tokio::test]
async fn structured_output_is_requested_and_unwrapped() {
    let wrapped = [chunk("{\"answer\":\"wait\"}", Some("stop")), "[DONE]".to_owned()];
    let mock =
        Mock::start(vec![Reply::sse(&wrapped.iter().map(String::as_str).collect::<Vec<_>>())])
            .await;
    let request = run_request(&mock, Features::OPENAI, limited());
    let report = run(&Backend::Http(&transport()), &request, RunOptions::default(), &mut |_| {})
        .await
        .unwrap();
    assert_eq!(report.output.as_deref(), Some("wait"));
    let body = &mock.requests()[0].body;
    assert_eq!(
        body["response_format"]["json_schema"]["schema"]["properties"]["answer"]["enum"][2],
        "stop"
    );
}

#[tokio::test]
async fn json_output_is_unfenced_and_pretty_printed() {
    let mock = Mock::start(vec![answer("```json\n{\"launch\":false}\n```")]).await;
    let spec = OutputSpec { kind: OutputKind::Text, format: Some(OutputFormat::Json) };
    let request = run_request(&mock, Features::COMPATIBLE, spec);
    let report = run(&Backend::Http(&transport()), &request, RunOptions::default(), &mut |_| {})
        .await
        .unwrap();
    assert_eq!(report.output.as_deref(), Some("{\n  \"launch\": false\n}"));
    assert_eq!(mock.requests()[0].body["response_format"]["type"], "json_object");
    assert!(
        mock.requests()[0].body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .ends_with("Answer with JSON only.")
    );
}

#[tokio::test]
async fn text_streams_through_and_costs_are_counted() {
    let chunks = [
        chunk("Yes, ", None),
        chunk("launch.", Some("stop")),
        r#"{"choices":[],"usage":{"prompt_tokens":1000,"completion_tokens":500}}"#.to_owned(),
        "[DONE]".to_owned(),
    ];
    let mock =
        Mock::start(vec![Reply::sse(&chunks.iter().map(String::as_str).collect::<Vec<_>>())]).await;
    let request = run_request(
        &mock,
        Features::COMPATIBLE,
        OutputSpec { kind: OutputKind::Text, format: None },
    );
    let mut streamed = Vec::new();
    let report = run(&Backend::Http(&transport()), &request, RunOptions::default(), &mut |t| {
        streamed.push(t.to_owned())
    })
    .await
    .unwrap();
    assert_eq!(streamed, ["Yes, ", "launch."]);
    assert_eq!(report.output.as_deref(), Some("Yes, launch."));
    assert!((report.cost.unwrap() - 0.002).abs() < 1e-12);
}

/// The request of "Mail ann@example.com" with data-loss prevention's placeholder in it.
fn redacted_request(mock: &Mock, spec: OutputSpec) -> RunRequest {
    let text = "Mail ann@example.com";
    let findings = llmtool_dlp::Scanner::with_defaults().scan(text);
    let mut redaction = llmtool_dlp::Redaction::new();
    let prompt = redaction.redact(text, &findings);
    RunRequest {
        history: Vec::new(),
        prompt,
        chat: false,
        redaction: Some(std::sync::Arc::new(redaction)),
        ..run_request(mock, Features::COMPATIBLE, spec)
    }
}

#[tokio::test]
async fn placeholders_are_restored_in_a_stream_even_when_cut_across_chunks() {
    let chunks =
        [chunk("Dear [EMA", None), chunk("IL_1], done.", Some("stop")), "[DONE]".to_owned()];
    let mock =
        Mock::start(vec![Reply::sse(&chunks.iter().map(String::as_str).collect::<Vec<_>>())]).await;
    let request = redacted_request(&mock, OutputSpec { kind: OutputKind::Text, format: None });
    let mut streamed = String::new();
    let report = run(&Backend::Http(&transport()), &request, RunOptions::default(), &mut |t| {
        streamed.push_str(t)
    })
    .await
    .unwrap();
    assert_eq!(mock.requests()[0].body["messages"][0]["content"], "Mail [EMAIL_1]");
    assert_eq!(streamed, "Dear ann@example.com, done.");
    assert_eq!(report.output.as_deref(), Some("Dear ann@example.com, done."));
    assert_eq!(report.redactions.get("email"), Some(&1));
}

#[tokio::test]
async fn a_key_the_provider_echoes_is_hidden_whole_and_in_the_stream() {
    let key = "sk-live-0123456789abcdef";
    // The echo cut in the key's middle, and the key again whole, with a placeholder too.
    let chunks = [
        chunk("Your key is sk-live-01", None),
        chunk("23456789abcdef; again sk-live-0123456789abcdef for [EMAIL_1].", Some("stop")),
        "[DONE]".to_owned(),
    ];
    let mock =
        Mock::start(vec![Reply::sse(&chunks.iter().map(String::as_str).collect::<Vec<_>>())]).await;
    let request = RunRequest {
        history: Vec::new(),
        secrets: llmtool_providers::Redactor::new([key.to_owned()]),
        cache: false,
        cache_key: None,
        functions: None,
        ..redacted_request(&mock, OutputSpec { kind: OutputKind::Text, format: None })
    };
    let mut streamed = String::new();
    let report = run(&Backend::Http(&transport()), &request, RunOptions::default(), &mut |t| {
        streamed.push_str(t)
    })
    .await
    .unwrap();
    let shown = "Your key is [redacted]; again [redacted] for ann@example.com.";
    assert_eq!(streamed, shown);
    assert_eq!((report.output.as_deref(), report.raw.as_str()), (Some(shown), shown));
    // The same for a provider's batch answer.
    let answer =
        llmtool_providers::batch_api::Answer { text: format!("k={key}"), ..Default::default() };
    assert_eq!(request.batch_report(&answer).raw, "k=[redacted]");
}

#[tokio::test]
async fn a_repair_shows_the_model_its_own_answer_with_placeholders() {
    let mock = Mock::start(vec![answer("Ask [EMAIL_1] first"), answer("wait")]).await;
    let request = redacted_request(&mock, limited());
    let report = run(&Backend::Http(&transport()), &request, RunOptions::default(), &mut |_| {})
        .await
        .unwrap();
    assert_eq!(report.output.as_deref(), Some("wait"));
    let second = &mock.requests()[1].body["messages"];
    assert_eq!(second[1]["content"], "Ask [EMAIL_1] first");
    assert!(!second.to_string().contains("ann@example.com"));
}
