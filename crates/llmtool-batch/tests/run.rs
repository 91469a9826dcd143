//! A batch run from the library, on the scripted mock provider: every row once (a row that
//! cannot fill the prompt is `invalid` and sends nothing), a rerun that sends nothing, a budget
//! that stops new rows, failed rows retried in place, the output in the dataset's order, and an
//! estimate that sends nothing.

use std::path::Path;
use std::time::Duration;

use llmtool_batch::{Batch, Mapping, OutputRecord, Progress, Via};
use llmtool_config::{Config, Env};
use llmtool_providers::resolve::Providers;
use llmtool_providers::transport::RetryPolicy;
use llmtool_runtime::{LogPolicy, Runtime, RuntimeOptions};
use llmtool_testkit::{Mock, Reply};

const TOOL: &str = r#"{"model_prompt": "One line about {{topic}}.", "metadata": {"prompt_name": "Line",
  "description": "A line.", "model_version": ["mock/m"],
  "parameters": {"max_tokens": 50},
  "variables": [{"name": "topic", "type": "text", "description": "What about."}]}}"#;

/// Each answer costs a dollar: 9 input tokens and 1 output token at $100,000 a million.
const PRICES: &str = "[prices.\"mock/m\"]\ninput = 100000\noutput = 100000\n";

fn answer(text: &str) -> Reply {
    let body = serde_json::json!({
        "choices": [{ "message": { "role": "assistant", "content": text }, "finish_reason": "stop" }],
        "usage": { "prompt_tokens": 9, "completion_tokens": 1 },
    });
    Reply::json(200, body.to_string())
}

fn runtime(mock: &Mock) -> Runtime {
    let config = format!(
        "[providers.mock]\napi = \"openai\"\nbase_url = \"{}/v1\"\napi_key_env = \"MOCK_KEY\"\n{PRICES}",
        mock.url
    );
    let providers =
        Providers::new(Config::parse(&config).unwrap(), Env::from_pairs([("MOCK_KEY", "k-1")]));
    let retry = RetryPolicy {
        max_retries: 1,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(2),
        ..RetryPolicy::default()
    };
    let options = RuntimeOptions { retry, log: LogPolicy::Off, ..RuntimeOptions::default() };
    Runtime::new(providers, options).unwrap()
}

/// A batch of `rows` topics (an empty one cannot fill the prompt) into `out.jsonl`; the rows
/// are numbered from 1, as the output numbers them.
fn batch(dir: &Path, rows: &[&str]) -> Batch {
    let data = dir.join("topics.csv");
    let mut csv = String::from("topic,number\n");
    for (number, row) in rows.iter().enumerate() {
        csv.push_str(&format!("{row},{}\n", number + 1));
    }
    std::fs::write(&data, csv).unwrap();
    Batch {
        tool: llmtool_format::Document::from_text(TOOL.to_owned()).tool.unwrap(),
        tool_path: Some("line.json".into()),
        data,
        out: dir.join("out.jsonl"),
        mapping: Mapping::default(),
        id_column: None,
        concurrency: 1,
        retry_failed: false,
        keep_order: false,
        max_cost: None,
        max_row_bytes: 1 << 20,
        via: Via::Here,
        pictures: dir.join("pictures"),
    }
}

/// The output's records.
fn records(path: &Path) -> Vec<OutputRecord> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines().map(|line| serde_json::from_str(line).unwrap()).collect()
}

#[tokio::test]
async fn every_row_runs_once_and_a_rerun_sends_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mock = Mock::start(vec![answer("tides turn"), answer("moons wane")]).await;
    let runtime = runtime(&mock);
    let batch = Batch { concurrency: 2, ..batch(dir.path(), &["tides", "", "the moon"]) };

    let summary = batch.run(&runtime, &Progress::default()).await.unwrap();
    assert_eq!((summary.rows, summary.ok, summary.invalid, summary.failed), (3, 2, 1, 0));
    assert!((summary.cost_usd - 2.0).abs() < 1e-9, "two answers at a dollar: {summary:?}");
    let written = records(&batch.out);
    assert_eq!(written.len(), 3);
    let invalid = written.iter().find(|r| r.outcome == "invalid").unwrap();
    assert_eq!(invalid.row, 2);
    assert!(invalid.error.as_deref().unwrap().contains("topic"), "{invalid:?}");
    assert_eq!(mock.requests().len(), 2, "the invalid row sends nothing");

    let again = batch.run(&runtime, &Progress::default()).await.unwrap();
    assert_eq!((again.rows, again.skipped), (0, 3), "{again:?}");
    assert_eq!(mock.requests().len(), 2, "a rerun sends nothing");
    assert_eq!(records(&batch.out).len(), 3, "and writes no row twice");
}

#[tokio::test]
async fn the_budget_stops_new_rows_and_a_later_run_finishes_them() {
    let dir = tempfile::tempdir().unwrap();
    let mock = Mock::start((0..3).map(|_| answer("a line")).collect()).await;
    let runtime = runtime(&mock);
    let budgeted = Batch { max_cost: Some(1.5), ..batch(dir.path(), &["a", "b", "c"]) };

    let summary = budgeted.run(&runtime, &Progress::default()).await.unwrap();
    assert_eq!((summary.ok, summary.left_at_budget), (2, 1), "{summary:?}");
    assert_eq!(mock.requests().len(), 2);
    // The budget counts the batch's earlier runs: the same budget starts nothing more.
    let still = budgeted.run(&runtime, &Progress::default()).await.unwrap();
    assert_eq!((still.ok, still.left_at_budget), (0, 1), "{still:?}");

    let unbudgeted = Batch { max_cost: None, ..budgeted };
    let rest = unbudgeted.run(&runtime, &Progress::default()).await.unwrap();
    assert_eq!((rest.ok, rest.skipped, rest.left_at_budget), (1, 2, 0), "{rest:?}");
    assert_eq!(records(&unbudgeted.out).len(), 3);
}

#[tokio::test]
async fn failed_rows_are_retried_and_their_new_records_replace_the_old() {
    let dir = tempfile::tempdir().unwrap();
    let error = || Reply::json(500, r#"{"error": {"message": "down"}}"#);
    // Row 1 answers; row 2 fails twice (the request and its one retry); then its retry answers.
    let mock = Mock::start(vec![answer("first"), error(), error(), answer("second")]).await;
    let runtime = runtime(&mock);
    let batch = batch(dir.path(), &["a", "b"]);

    let summary = batch.run(&runtime, &Progress::default()).await.unwrap();
    assert_eq!((summary.ok, summary.failed), (1, 1), "{summary:?}");
    let retry = Batch { retry_failed: true, ..batch };
    let retried = retry.run(&runtime, &Progress::default()).await.unwrap();
    assert_eq!((retried.ok, retried.skipped, retried.failed), (1, 1, 0), "{retried:?}");

    let written = records(&retry.out);
    let outcomes: Vec<(u64, &str)> = written.iter().map(|r| (r.row, r.outcome.as_str())).collect();
    assert_eq!(outcomes.len(), 2, "one record a row: {outcomes:?}");
    assert!(outcomes.contains(&(2, "ok")), "{outcomes:?}");
    assert_eq!(written.iter().find(|r| r.row == 2).unwrap().output.as_deref(), Some("second"));
}

#[tokio::test]
async fn keep_order_writes_the_rows_in_the_datasets_order() {
    let dir = tempfile::tempdir().unwrap();
    let mock = Mock::start((0..6).map(|i| answer(&format!("line {i}"))).collect()).await;
    let runtime = runtime(&mock);
    let topics = ["a", "b", "c", "d", "e", "f"];
    let batch = Batch { concurrency: 4, keep_order: true, ..batch(dir.path(), &topics) };

    let summary = batch.run(&runtime, &Progress::default()).await.unwrap();
    assert_eq!(summary.ok, 6);
    let rows: Vec<u64> = records(&batch.out).iter().map(|r| r.row).collect();
    assert_eq!(rows, [1, 2, 3, 4, 5, 6]);
}

#[tokio::test]
async fn an_estimate_counts_rows_tokens_and_the_worst_case_and_sends_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mock = Mock::start(Vec::new()).await;
    let runtime = runtime(&mock);
    let batch = batch(dir.path(), &["tides", "", "the moon"]);

    let estimate = batch.estimate(&runtime).unwrap();
    assert_eq!((estimate.rows, estimate.invalid, estimate.unbounded_rows), (3, 1, 0));
    assert!(estimate.input_tokens > 0, "{estimate:?}");
    // Each of the two rows may answer 50 tokens at $0.10 each: at least $10 in all.
    assert!(estimate.worst_cost >= 10.0, "{estimate:?}");
    assert!(mock.requests().is_empty());
    assert!(!batch.out.exists(), "an estimate writes no output");
}
