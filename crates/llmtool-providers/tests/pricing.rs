//! The cost of a run against the mock, for each provider API: the usage the mock reports (with
//! cached input, cache writes and reasoning where the API has them), read in common terms,
//! times the price table's entry for the model; and an unpriced model costs nothing known.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::time::Duration;

use llmtool_format::output::{OutputKind, OutputSpec};
use llmtool_providers::backend::Backend;
use llmtool_providers::pricing::PriceEntry;
use llmtool_providers::resolve::{Providers, Target};
use llmtool_providers::run::{RunOptions, RunReport, RunRequest, run};
use llmtool_providers::transport::{RetryPolicy, Timeouts, Transport};
use llmtool_providers::{ApiKind, Endpoint, Features, Params};
use llmtool_testkit::{Mock, Reply};

async fn run_on_mock(api: ApiKind, provider: &str, model: &str, reply: String) -> RunReport {
    let mock = Mock::start(vec![Reply::json(200, reply)]).await;
    let endpoint = Endpoint {
        provider: provider.into(),
        display: provider.into(),
        api,
        base_url: mock.url.clone(),
        api_key: Some("test-key".into()),
        key_variable: None,
        features: Features::OPENAI,
        vertex_path: None,
    };
    let target = Target::new(endpoint, model);
    let price = Providers::default().price(&target);
    let request = RunRequest {
        history: Vec::new(),
        target,
        prompt: "Hello".into(),
        chat: false,
        params: Params::default(),
        spec: OutputSpec { kind: OutputKind::Text, format: None },
        price,
        redaction: None,
        notices: Vec::new(),
        secrets: llmtool_providers::Redactor::default(),
        cache: false,
        cache_key: None,
        functions: None,
    };
    let transport = Transport::new(
        Timeouts { idle: Duration::from_secs(5), ..Timeouts::default() },
        RetryPolicy { max_retries: 0, max_rate_limit_retries: 0, ..RetryPolicy::default() },
    )
    .unwrap();
    let options = RunOptions { stream: false, ..RunOptions::default() };
    run(&Backend::Http(&transport), &request, options, &mut |_| {}).await.unwrap()
}

/// The cost `entry` gives: each class at its own price, or its parent class's.
fn expected(
    entry: &PriceEntry,
    plain_in: u64,
    cached: u64,
    written: u64,
    out: u64,
    reasoning: u64,
) -> f64 {
    let p = entry.price;
    plain_in as f64 * p.input
        + cached as f64 * p.cached_input.unwrap_or(p.input)
        + written as f64 * p.cache_write.unwrap_or(p.input)
        + out as f64 * p.output
        + reasoning as f64 * p.reasoning.unwrap_or(p.output)
}

fn assert_close(actual: Option<f64>, expected: f64) {
    let actual = actual.unwrap();
    assert!((actual - expected).abs() <= expected * 1e-12, "{actual} != {expected}");
}

#[tokio::test]
async fn openai_cost_counts_cached_input_and_reasoning() {
    let reply = r#"{"choices":[{"message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}],
        "usage":{"prompt_tokens":1200,"completion_tokens":300,
        "prompt_tokens_details":{"cached_tokens":1000},"completion_tokens_details":{"reasoning_tokens":100}}}"#;
    let report = run_on_mock(ApiKind::OpenAi, "openai", "gpt-4o", reply.into()).await;
    let entry = report.price.clone().unwrap();
    assert_eq!(entry.entry, "gpt-4o");
    assert!(entry.source.starts_with("litellm-core "), "{}", entry.source);
    assert_eq!(report.usage.cached_input_tokens, Some(1000));
    assert_eq!(report.usage.reasoning_tokens, Some(100));
    assert_close(report.cost, expected(&entry, 200, 1000, 0, 200, 100));
    // The table's own figures: $2.50 and $1.25 per million input, $10 per million output.
    assert_close(report.cost, 200.0 * 2.5e-6 + 1000.0 * 1.25e-6 + 300.0 * 1e-5);
}

#[tokio::test]
async fn anthropic_cost_counts_cache_reads_and_writes_as_input() {
    let reply = r#"{"type":"message","role":"assistant","content":[{"type":"text","text":"Hi"}],
        "stop_reason":"end_turn","usage":{"input_tokens":50,"cache_read_input_tokens":2000,
        "cache_creation_input_tokens":300,"output_tokens":80}}"#;
    let report =
        run_on_mock(ApiKind::Anthropic, "anthropic", "claude-sonnet-4-5", reply.into()).await;
    let entry = report.price.clone().unwrap();
    assert_eq!(entry.entry, "claude-sonnet-4-5");
    assert_eq!(report.usage.input_tokens, Some(2350), "input counts the cache reads and writes");
    assert_close(report.cost, expected(&entry, 50, 2000, 300, 80, 0));
}

#[tokio::test]
async fn gemini_cost_counts_thoughts_as_output() {
    let reply = r#"{"candidates":[{"content":{"parts":[{"text":"Hi"}],"role":"model"},"finishReason":"STOP"}],
        "usageMetadata":{"promptTokenCount":900,"cachedContentTokenCount":400,
        "candidatesTokenCount":60,"thoughtsTokenCount":240}}"#;
    let report = run_on_mock(ApiKind::Gemini, "gemini", "gemini-2.5-flash", reply.into()).await;
    let entry = report.price.clone().unwrap();
    assert_eq!(entry.entry, "gemini/gemini-2.5-flash");
    assert_eq!(report.usage.output_tokens, Some(300), "output counts the thoughts");
    assert_close(report.cost, expected(&entry, 500, 400, 0, 60, 240));
}

#[tokio::test]
async fn an_unpriced_model_has_no_cost_not_zero() {
    let reply = r#"{"choices":[{"message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}],
        "usage":{"prompt_tokens":10,"completion_tokens":2}}"#;
    let report = run_on_mock(ApiKind::OpenAi, "my-server", "house-model", reply.into()).await;
    assert_eq!(report.price, None);
    assert_eq!(report.cost, None);
    let json = serde_json::to_value(&report).unwrap();
    assert!(json["cost"].is_null());
}
