//! `llmtool batch --via provider-batch` through the binary, against the testkit's mocks of the
//! OpenAI, Anthropic and Gemini batch engines: rows sent as one batch, followed, answered by
//! id with the expected output enforced and the batch price; a rerun sends nothing again;
//! `--detach`, `batch status` and `kill -9` while waiting, then a rerun that collects every
//! row once without sending again; an expired batch's rows fail and `--retry-failed` sends
//! only them.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use llmtool_testkit::batches::BatchMock;
use serde_json::Value;

const TOOL: &str = r#"{"model_prompt": "Classify this review: {{review}}", "metadata": {"prompt_name": "Sentiment",
  "description": "Positive or negative.", "model_version": ["MODEL"],
  "variables": [{"name": "review", "type": "text", "description": "A review."}],
  "parameters": {"max_tokens": 500},
  "expected_output": {"type": "limited", "allowed_values": ["positive", "negative"]}}}"#;

/// The reviews: two answered as allowed, one repeated, one answered outside the allowed
/// values, one that fails at the provider.
const ROWS: &str = "id,review\nr1,Loved it <<positive>>\nr2,Broke in a day <<negative>>\nr3,Loved it <<positive>>\nr4,Odd <<maybe>>\nr5,please FAIL\n";

/// A folder with the tool on `model`, the rows, and a config naming the mock as three
/// providers, each with a price and a batch price.
fn setup(dir: &Path, mock: &BatchMock, model: &str) {
    std::fs::write(dir.join("tool.json"), TOOL.replace("MODEL", model)).unwrap();
    std::fs::write(dir.join("rows.csv"), ROWS).unwrap();
    let url = &mock.url;
    let mut config = String::new();
    for (name, api, base) in [
        ("mock-openai", "openai", format!("{url}/v1")),
        ("mock-anthropic", "anthropic", url.clone()),
        ("mock-gemini", "gemini", url.clone()),
    ] {
        config += &format!(
            "[providers.{name}]\napi = \"{api}\"\nbase_url = \"{base}\"\napi_key_env = \"MOCK_KEY\"\n\n[prices.\"{name}/m-1\"]\ninput = 2.0\noutput = 4.0\nbatch_input = 1.0\nbatch_output = 2.0\n\n"
        );
    }
    std::fs::write(dir.join("config.toml"), config).unwrap();
}

fn llmtool(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_llmtool"));
    command
        .current_dir(dir)
        .args(args)
        .args(["--config", "config.toml"])
        .env("MOCK_KEY", "mock-secret-key-8128")
        .env("LLMTOOL_DATA_DIR", dir.join("data"))
        .stdin(Stdio::null());
    command
}

fn batch(dir: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["batch", "tool.json", "rows.csv", "-o", "out.jsonl", "--id", "id"];
    args.extend(["--via", "provider-batch", "--poll", "0.02"]);
    args.extend(extra);
    llmtool(dir, &args).output().unwrap()
}

fn records(dir: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join("out.jsonl")).unwrap_or_default();
    text.lines().map(|line| serde_json::from_str(line).unwrap()).collect()
}

/// Each record's id and outcome, by id.
fn outcomes(dir: &Path) -> Vec<(String, String)> {
    let mut outcomes: Vec<(String, String)> = records(dir)
        .iter()
        .map(|r| (r["id"].as_str().unwrap().to_owned(), r["outcome"].as_str().unwrap().to_owned()))
        .collect();
    outcomes.sort();
    outcomes
}

fn expected() -> Vec<(String, String)> {
    [("r1", "ok"), ("r2", "ok"), ("r3", "ok"), ("r4", "rejected"), ("r5", "failed")]
        .iter()
        .map(|(id, outcome)| ((*id).to_owned(), (*outcome).to_owned()))
        .collect()
}

/// How many batches the mock was asked to create.
fn creates(mock: &BatchMock) -> usize {
    mock.seen()
        .iter()
        .filter(|call| {
            call.starts_with("POST")
                && (call.ends_with("/v1/batches")
                    || call.ends_with("/v1/messages/batches")
                    || call.ends_with(":batchGenerateContent"))
        })
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_provider_answers_every_row_once_at_the_batch_price() {
    for provider in ["mock-openai", "mock-anthropic", "mock-gemini"] {
        let mock = BatchMock::start(1).await;
        let dir = tempfile::tempdir().unwrap();
        setup(dir.path(), &mock, &format!("{provider}/m-1"));
        // A service that fails now and then: the polls are sent again.
        mock.fail_next_to("GET", 2);
        let done = tokio::task::spawn_blocking({
            let dir = dir.path().to_owned();
            move || batch(&dir, &[])
        })
        .await
        .unwrap();
        let stderr = String::from_utf8_lossy(&done.stderr);
        assert_eq!(
            done.status.code(),
            Some(1),
            "{provider}: a rejected and a failed row\n{stderr}"
        );
        assert_eq!(outcomes(dir.path()), expected(), "{provider}\n{stderr}");
        assert_eq!(creates(&mock), 1, "{provider}: one batch for every row");
        assert!(stderr.contains("5 row(s) sent to the provider's batch engine"), "{stderr}");
        for record in records(dir.path()) {
            match record["id"].as_str().unwrap() {
                "r1" | "r3" => assert_eq!(record["output"], "positive"),
                "r2" => assert_eq!(record["output"], "negative"),
                "r4" => assert!(record["error"].as_str().unwrap().contains("maybe"), "{record}"),
                _ => {
                    assert!(record["error"].as_str().unwrap().contains("asked to fail"), "{record}")
                }
            }
            if record["outcome"] != "failed" {
                // 1,000 tokens in and 500 out at the batch price ($1 and $2 a million).
                let cost = record["cost_usd"].as_f64().unwrap();
                assert!((cost - 0.002).abs() < 1e-12, "{provider}: {record}");
                assert_eq!(record["input_tokens"], 1000);
            }
        }
        // The four answered rows are runs in the run log, at the batch price; the failed one
        // had no answer (and no cost).
        let logged = Command::new(env!("CARGO_BIN_EXE_llmtool"))
            .args(["logs", "--origin", "batch", "--format", "json"])
            .env("LLMTOOL_DATA_DIR", dir.path().join("data"))
            .output()
            .unwrap();
        let logged: Value = serde_json::from_slice(&logged.stdout).unwrap();
        let logged = logged.as_array().unwrap();
        assert_eq!(logged.len(), 4, "{provider}: {logged:?}");
        for run in logged {
            assert!((run["cost_usd"].as_f64().unwrap() - 0.002).abs() < 1e-12, "{run}");
            assert!(run["variables"]["row"].is_u64() && run["tool_path"] == "tool.json", "{run}");
        }
        // A rerun sends nothing: every row is done.
        let again = batch(dir.path(), &[]);
        let stderr = String::from_utf8_lossy(&again.stderr);
        assert_eq!(creates(&mock), 1, "{provider}: {stderr}");
        assert!(stderr.contains("5 already done"), "{stderr}");
        assert_eq!(outcomes(dir.path()), expected());
        let again = Command::new(env!("CARGO_BIN_EXE_llmtool"))
            .args(["logs", "--origin", "batch", "--format", "json"])
            .env("LLMTOOL_DATA_DIR", dir.path().join("data"))
            .output()
            .unwrap();
        let again: Value = serde_json::from_slice(&again.stdout).unwrap();
        assert_eq!(again.as_array().unwrap().len(), 4, "{provider}: each row logged once");
        assert!(again[0]["prompt"].is_null(), "no prompt is made up for a collected row");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_detached_batch_is_shown_by_status_and_collected_by_a_rerun() {
    let mock = BatchMock::start(1).await;
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path(), &mock, "mock-anthropic/m-1");
    let sent = batch(dir.path(), &["--detach"]);
    let stderr = String::from_utf8_lossy(&sent.stderr);
    assert_eq!(sent.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("5 row(s) wait for the provider's answers"), "{stderr}");
    assert!(records(dir.path()).is_empty(), "nothing is answered yet");

    let status = llmtool(dir.path(), &["batch", "status", "out.jsonl"]).output().unwrap();
    let shown = String::from_utf8_lossy(&status.stdout);
    assert_eq!(status.status.code(), Some(0), "{}", String::from_utf8_lossy(&status.stderr));
    assert!(shown.starts_with("msgbatch_"), "{shown}");
    assert!(shown.contains("on mock-anthropic"), "{shown}");
    // The id alone, its provider named.
    let id = shown.split_whitespace().next().unwrap();
    let by_id = llmtool(dir.path(), &["batch", "status", id, "--provider", "mock-anthropic"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&by_id.stdout).starts_with(id));

    let collected = batch(dir.path(), &[]);
    assert_eq!(creates(&mock), 1, "{}", String::from_utf8_lossy(&collected.stderr));
    assert_eq!(outcomes(dir.path()), expected());
    let status = llmtool(dir.path(), &["batch", "status", "out.jsonl"]).output().unwrap();
    assert!(String::from_utf8_lossy(&status.stdout).contains("collected"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_while_waiting_then_rerun_collects_without_sending_again() {
    let mock = BatchMock::start(2).await;
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path(), &mock, "mock-openai/m-1");
    let mut args = vec!["batch", "tool.json", "rows.csv", "-o", "out.jsonl", "--id", "id"];
    args.extend(["--via", "provider-batch", "--poll", "0.05"]);
    let mut child = llmtool(dir.path(), &args).stderr(Stdio::null()).spawn().unwrap();
    for _ in 0..200 {
        if creates(&mock) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(creates(&mock), 1, "the batch was sent");
    tokio::time::sleep(Duration::from_millis(100)).await;
    child.kill().unwrap(); // SIGKILL: no cleanup of any kind
    child.wait().unwrap();
    let rerun = tokio::task::spawn_blocking({
        let dir = dir.path().to_owned();
        move || batch(&dir, &[])
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&rerun.stderr);
    assert_eq!(creates(&mock), 1, "the rerun follows the batch sent before: {stderr}");
    assert_eq!(outcomes(dir.path()), expected(), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_batch_s_rows_fail_and_retry_failed_sends_only_them() {
    let mock = BatchMock::start(0).await;
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path(), &mock, "mock-gemini/m-1");
    mock.expire();
    let expired = batch(dir.path(), &[]);
    assert_eq!(expired.status.code(), Some(1));
    let all_failed = records(dir.path())
        .iter()
        .all(|r| r["outcome"] == "failed" && r["error"].as_str().unwrap().contains("EXPIRED"));
    assert!(all_failed, "{:?}", records(dir.path()));
    // Rows that failed are sent again, and only they: here, all five, in one new batch.
    let retried = batch(dir.path(), &["--retry-failed"]);
    let stderr = String::from_utf8_lossy(&retried.stderr);
    assert_eq!(creates(&mock), 2, "{stderr}");
    assert!(stderr.contains("5 row(s) sent"), "{stderr}");
    assert_eq!(records(dir.path()).len(), 5, "each row once, its old record replaced");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_budget_sends_only_what_surely_fits() {
    let mock = BatchMock::start(0).await;
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path(), &mock, "mock-openai/m-1");
    // A row's worst case: its prompt (about 10 tokens) and 500 tokens of answer, at $2 and
    // $4 a million: just over $0.002. Two rows fit in $0.0045, not three.
    let capped = batch(dir.path(), &["--max-cost", "0.0045"]);
    let stderr = String::from_utf8_lossy(&capped.stderr);
    assert!(stderr.contains("2 row(s) sent"), "{stderr}");
    assert!(stderr.contains("3 row(s) left to do"), "{stderr}");
    assert_eq!(records(dir.path()).len(), 2);
    let rest = batch(dir.path(), &[]);
    assert_eq!(outcomes(dir.path()), expected(), "{}", String::from_utf8_lossy(&rest.stderr));
}

#[test]
fn a_provider_without_a_batch_engine_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tool.json"), TOOL.replace("MODEL", "local:smollm2")).unwrap();
    std::fs::write(dir.path().join("rows.csv"), ROWS).unwrap();
    std::fs::write(dir.path().join("config.toml"), "").unwrap();
    let refused = batch(dir.path(), &[]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("no batch engine"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_tool_is_refused_before_anything_is_sent() {
    let mock = BatchMock::start(1).await;
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path(), &mock, "mock-openai/m-1");
    // The same tool, asking for pictures: a chat batch engine would make and bill them, then
    // lose them.
    let tool = std::fs::read_to_string(dir.path().join("tool.json")).unwrap().replace(
        r#""parameters": {"max_tokens": 500},
  "expected_output": {"type": "limited", "allowed_values": ["positive", "negative"]}"#,
        r#""expected_output": {"type": "image"}"#,
    );
    assert!(tool.contains(r#""type": "image""#), "{tool}");
    std::fs::write(dir.path().join("tool.json"), tool).unwrap();
    let dir_path = dir.path().to_owned();
    let refused = tokio::task::spawn_blocking(move || batch(&dir_path, &[])).await.unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("cannot go through a provider's batch engine"), "{stderr}");
    assert!(mock.seen().is_empty(), "{:?}", mock.seen());
}
