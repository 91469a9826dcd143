//! `llmtool batch` through the binary, against the scripted mock provider: every row's result
//! in the output once, with its id, usage and cost, and its run in the run log; a rerun skips
//! what is done; `kill -9` in the
//! middle of a batch and a rerun still give every row exactly once; bad rows are reported as
//! rows, not as a crash.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::path::Path;
use std::process::{Command, Output, Stdio};

use llmtool_testkit::{Capacity, Mock, Reply};
use serde_json::Value;

const TOOL: &str = r#"{"model_prompt": "Write one line about {{topic}}.", "metadata": {"prompt_name": "Liner",
  "description": "One line.", "model_version": ["mock/m"],
  "variables": [{"name": "topic", "type": "text", "description": "What about."}],
  "expected_output": {"type": "text"}}}"#;

/// A folder with the tool, `rows` rows of CSV, and a config naming the mock with a price.
fn setup(dir: &Path, mock: &str, rows: usize) {
    std::fs::write(dir.join("tool.json"), TOOL).unwrap();
    let mut csv = String::from("ticket,topic\n");
    for n in 0..rows {
        csv.push_str(&format!("T{n},\"topic {n}, with a comma\"\n"));
    }
    std::fs::write(dir.join("rows.csv"), csv).unwrap();
    let config = format!(
        "[providers.mock]\napi = \"openai\"\nbase_url = \"{mock}/v1\"\napi_key_env = \"MOCK_KEY\"\n\n[prices.\"mock/m\"]\ninput = 1.0\noutput = 2.0\n"
    );
    std::fs::write(dir.join("config.toml"), config).unwrap();
}

fn batch(dir: &Path, extra: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_llmtool"));
    command
        .current_dir(dir)
        .args([
            "batch",
            "tool.json",
            "rows.csv",
            "-o",
            "out.jsonl",
            "--id",
            "ticket",
            "--config",
            "config.toml",
        ])
        .args(extra)
        .env("MOCK_KEY", "mock-secret-key-5150")
        .env("LLMTOOL_DATA_DIR", dir.join("data"))
        .stdin(Stdio::null());
    command
}

fn run(dir: &Path, extra: &[&str]) -> Output {
    batch(dir, extra).output().unwrap()
}

/// The output's records.
fn read_records(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("out.jsonl"))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// `llmtool ARGS --format json` on the run log of `dir`.
fn log_json(dir: &Path, args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_llmtool"))
        .args(args)
        .args(["--format", "json"])
        .env("LLMTOOL_DATA_DIR", dir.join("data"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The runs of the run log of `dir` made by `origin`.
fn logged_runs(dir: &Path, origin: &str) -> Vec<Value> {
    let runs = log_json(dir, &["logs", "-n", "1000", "--origin", origin]);
    runs.as_array().unwrap().clone()
}

/// What `llmtool usage --by origin` says the batches of `dir` cost.
fn batch_usage(dir: &Path) -> f64 {
    let usage = log_json(dir, &["usage", "--by", "origin"]);
    let totals = usage["totals"].as_array().unwrap();
    let batch = totals.iter().find(|total| total["key"] == "batch").unwrap();
    batch["cost_usd"].as_f64().unwrap()
}

fn answer() -> Reply {
    let body = serde_json::json!({
        "choices": [{"message": {"role": "assistant", "content": "A line."}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1000, "completion_tokens": 500},
    });
    Reply::json(200, body.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_row_once_with_its_cost_and_a_rerun_skips_them() {
    let mock = Mock::repeating("127.0.0.1:0", answer()).await;
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path(), &mock.url, 40);
    let first = run(dir.path(), &["-j", "8"]);
    assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
    let records = read_records(dir.path());
    assert_eq!(records.len(), 40);
    let mut ids: Vec<&str> = records.iter().map(|r| r["id"].as_str().unwrap()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 40);
    let one = &records[0];
    assert_eq!((one["outcome"].as_str(), one["output"].as_str()), (Some("ok"), Some("A line.")));
    assert!((one["cost_usd"].as_f64().unwrap() - 0.002).abs() < 1e-12, "{one}");
    assert!(
        !std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap().contains("mock-secret")
    );
    assert!(String::from_utf8_lossy(&first.stderr).starts_with("40 row(s) run: 40 ok"));

    // Every row's run is in the run log too, with its values, and `usage` totals its cost.
    let logged = logged_runs(dir.path(), "batch");
    assert_eq!(logged.len(), 40);
    assert!(logged.iter().all(|run| run["tool_path"] == "tool.json" && run["outcome"] == "ok"));
    assert!(logged.iter().any(|run| run["variables"]["topic"] == "topic 7, with a comma"));
    assert!((batch_usage(dir.path()) - 0.08).abs() < 1e-9);

    // The same command again: nothing to run, nothing written twice.
    let again = run(dir.path(), &[]);
    assert!(String::from_utf8_lossy(&again.stderr).starts_with("0 row(s) run"));
    assert!(String::from_utf8_lossy(&again.stderr).contains("40 already done"));
    assert_eq!(read_records(dir.path()).len(), 40);
    assert_eq!(logged_runs(dir.path(), "batch").len(), 40, "a row done before is not a run");

    // --keep-order writes the output in the rows' order.
    let ordered = run(dir.path(), &["--keep-order"]);
    assert!(ordered.status.success());
    let rows: Vec<u64> =
        read_records(dir.path()).iter().map(|r| r["row"].as_u64().unwrap()).collect();
    assert_eq!(rows, (1..=40).collect::<Vec<_>>());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_in_the_middle_then_rerun_every_row_is_written_exactly_once() {
    let mock = Mock::repeating("127.0.0.1:0", answer()).await;
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path(), &mock.url, 3000);
    let mut child = batch(dir.path(), &["-j", "16"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill it once some rows are out, well before all are.
    let out = dir.path().join("out.jsonl");
    let deadline = std::time::Instant::now() + std::time::Duration::from_mins(1);
    while std::fs::read_to_string(&out).map_or(0, |text| text.lines().count()) < 200 {
        assert!(std::time::Instant::now() < deadline, "the batch wrote nothing");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let written = read_records(dir.path()).len();
    assert!(written < 3000, "killed too late to prove anything ({written} rows)");

    let rerun = run(dir.path(), &["-j", "16"]);
    assert!(rerun.status.success(), "{}", String::from_utf8_lossy(&rerun.stderr));
    let records = read_records(dir.path());
    let mut ids: Vec<&str> = records.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 3000, "every row, once");
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 3000, "no row twice");
}

#[test]
fn a_bad_row_is_a_row_with_an_error_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path(), "http://127.0.0.1:9", 0);
    std::fs::write(dir.path().join("rows.csv"), "ticket,other\nT1,x\n").unwrap();
    let output = run(dir.path(), &[]);
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    let records = read_records(dir.path());
    assert_eq!(records[0]["outcome"], "invalid");
    assert!(records[0]["error"].as_str().unwrap().contains("topic"), "{}", records[0]);
    // A dataset that is not there is an I/O error (exit 2), named.
    let missing = Command::new(env!("CARGO_BIN_EXE_llmtool"))
        .current_dir(dir.path())
        .args(["batch", "tool.json", "nowhere.csv", "-o", "x.jsonl", "--config", "config.toml"])
        .env("LLMTOOL_DATA_DIR", dir.path().join("data"))
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("nowhere.csv"));
}

/// The most memory `command`'s process held (its `VmHWM`), sampled until it ends, and how it
/// ended.
fn peak_memory(command: &mut Command) -> (u64, std::process::ExitStatus) {
    let mut child = command.stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let mut peak = 0;
    loop {
        // Read only once the child is llmtool: between fork and exec it is a copy of this
        // test, whose memory (the big cells it wrote) is not the batch's.
        let status = std::fs::read_to_string(format!("/proc/{}/status", child.id()));
        if let Ok(status) = status
            && status.lines().next().is_some_and(|name| name.trim_end().ends_with("llmtool"))
            && let Some(line) = status.lines().find(|l| l.starts_with("VmHWM:"))
        {
            let kb: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
            peak = peak.max(kb * 1024);
        }
        if let Some(status) = child.try_wait().unwrap() {
            assert!(peak > 0, "llmtool's memory was never read");
            return (peak, status);
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_past_the_size_limit_is_invalid_unsent_and_never_held_whole() {
    let mock = Mock::repeating("127.0.0.1:0", answer()).await;
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path(), &mock.url, 0);
    // A 64 MB cell, quoted, with commas, quotes and line breaks, between two plain rows; and
    // the same rows with a short cell, to measure what the process needs anyway.
    let write = |cell: &str, name: &str| {
        let quoted = cell.replace('"', "\"\"");
        let csv = format!("ticket,topic\nT1,tides\nT2,\"{quoted}\"\nT3,sand\n");
        std::fs::write(dir.path().join(format!("{name}.csv")), &csv).unwrap();
        let jsonl = format!(
            "{{\"ticket\":\"T1\",\"topic\":\"tides\"}}\n{{\"ticket\":\"T2\",\"topic\":{}}}\n{{\"ticket\":\"T3\",\"topic\":\"sand\"}}\n",
            serde_json::to_string(cell).unwrap()
        );
        std::fs::write(dir.path().join(format!("{name}.jsonl")), &jsonl).unwrap();
    };
    write(&"a, \"b\"\n".repeat(8 << 20), "big");
    write("a, \"b\"\n", "small");
    let peak_of = |data: &str| {
        for done in ["out.jsonl", "out.jsonl.journal"] {
            let _ = std::fs::remove_file(dir.path().join(done));
        }
        let mut command = Command::new(env!("CARGO_BIN_EXE_llmtool"));
        command
            .current_dir(dir.path())
            .args(["batch", "tool.json", data, "-o", "out.jsonl", "--id", "ticket"])
            .args(["--config", "config.toml"])
            .env("MOCK_KEY", "mock-secret-key-5150")
            .env("LLMTOOL_DATA_DIR", dir.path().join("data"))
            .env("LLMTOOL_MAX_FILE_BYTES", "1M")
            .stdin(Stdio::null());
        peak_memory(&mut command)
    };
    for format in ["csv", "jsonl"] {
        let (baseline, status) = peak_of(&format!("small.{format}"));
        assert_eq!(status.code(), Some(0), "{format}: the short rows all run");
        let (peak, status) = peak_of(&format!("big.{format}"));
        assert_eq!(status.code(), Some(1), "{format}: one row is invalid");
        // The cell is 64 MB (more as JSON): the process never held it, nor a copy of it.
        assert!(
            peak < baseline + (16 << 20),
            "{format}: peak memory {} MB, {} MB without the cell",
            peak >> 20,
            baseline >> 20
        );
        let records = read_records(dir.path());
        let by_id = |id: &str| records.iter().find(|r| r["id"] == id).unwrap().clone();
        assert_eq!(
            (by_id("T1")["outcome"].as_str(), by_id("T3")["outcome"].as_str()),
            (Some("ok"), Some("ok"))
        );
        let big = records.iter().find(|r| r["outcome"] == "invalid").unwrap();
        assert!(big["error"].as_str().unwrap().contains("LLMTOOL_MAX_FILE_BYTES"), "{big}");
    }
    // A row within the limit whose prompt, as the tool makes it, is over it: not sent.
    std::fs::write(
        dir.path().join("rows.csv"),
        format!("ticket,topic\nT9,{}\n", "z".repeat(899_990)),
    )
    .unwrap();
    let _ = std::fs::remove_file(dir.path().join("out.jsonl"));
    let _ = std::fs::remove_file(dir.path().join("out.jsonl.journal"));
    let output = batch(dir.path(), &[]).env("LLMTOOL_MAX_FILE_BYTES", "900000").output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    let records = read_records(dir.path());
    assert_eq!(records[0]["outcome"], "invalid", "{}", records[0]);
    assert!(records[0]["error"].as_str().unwrap().contains("the prompt is"), "{}", records[0]);
    // A prompt over the model's context window (the price table's, here the config's over it)
    // is not sent either; a short one is.
    let config = std::fs::read_to_string(dir.path().join("config.toml")).unwrap();
    std::fs::write(dir.path().join("config.toml"), format!("{config}max_input = 100\n")).unwrap();
    std::fs::write(
        dir.path().join("rows.csv"),
        format!("ticket,topic\nT1,tides\nT2,{}\n", "long ".repeat(200)),
    )
    .unwrap();
    for done in ["out.jsonl", "out.jsonl.journal"] {
        let _ = std::fs::remove_file(dir.path().join(done));
    }
    let output = run(dir.path(), &[]);
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    let records = read_records(dir.path());
    let by_id = |id: &str| records.iter().find(|r| r["id"] == id).unwrap().clone();
    assert_eq!(by_id("T1")["outcome"], "ok");
    let over = by_id("T2");
    assert_eq!(over["outcome"], "invalid", "{over}");
    assert!(over["error"].as_str().unwrap().contains("context window"), "{over}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_estimate_sends_nothing_and_a_budget_stops_cleanly_then_resumes() {
    let mock = Mock::repeating("127.0.0.1:0", answer()).await;
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path(), &mock.url, 100);
    // A tool with an output limit has a worst case: 100 rows of `max_tokens` 50.
    let limited = TOOL
        .replace(r#""expected_output""#, r#""parameters": {"max_tokens": 50}, "expected_output""#);
    std::fs::write(dir.path().join("tool.json"), limited).unwrap();
    let estimate = run(dir.path(), &["--estimate"]);
    assert!(estimate.status.success());
    let said = String::from_utf8_lossy(&estimate.stderr).into_owned();
    assert!(said.starts_with("estimate: 100 row(s) (0 invalid, not sent)"), "{said}");
    // Each prompt is 43 or 44 characters, shown as 11 tokens at 4 a token. The worst case is
    // the one rule's (`llmtool_runtime::worst_case`): each prompt's bytes (4,390 in all) at $1
    // a million and 50 output tokens at $2 a million, three times (a run and two repairs,
    // each sending the answers before: 50 and 100 more input tokens), for each of 100 rows:
    // 3 x 4,390 + 100 x (150 + 300) = 58,170 micro-dollars.
    assert!(said.contains("about 1,100 input tokens"), "{said}");
    assert!(said.contains("worst case $0.058170"), "{said}");
    assert!(!dir.path().join("out.jsonl").exists(), "an estimate writes nothing");

    // Each row costs $0.002: a budget of $0.05 stops after about 25 rows, cleanly.
    let stopped = run(dir.path(), &["-j", "1", "--max-cost", "0.05"]);
    assert_eq!(stopped.status.code(), Some(1));
    let said = String::from_utf8_lossy(&stopped.stderr).into_owned();
    assert!(said.contains("stopped at the budget"), "{said}");
    let done = read_records(dir.path()).len();
    assert_eq!(done, 25, "{said}");
    // A higher budget goes on from there; every row is there once.
    let resumed = run(dir.path(), &["-j", "4", "--max-cost", "10"]);
    assert!(resumed.status.success(), "{}", String::from_utf8_lossy(&resumed.stderr));
    assert!(String::from_utf8_lossy(&resumed.stderr).contains("25 already done"));
    assert_eq!(read_records(dir.path()).len(), 100);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_output_that_is_not_the_batchs_is_kept_and_two_batches_never_share_one() {
    let mock = Mock::repeating("127.0.0.1:0", answer()).await;
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path(), &mock.url, 3000);
    // An output with no journal is someone else's file: refused, untouched.
    std::fs::write(dir.path().join("out.jsonl"), "precious\n").unwrap();
    let refused = run(dir.path(), &[]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("no journal"));
    assert_eq!(std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap(), "precious\n");
    std::fs::remove_file(dir.path().join("out.jsonl")).unwrap();
    // While one batch writes the output, a second is refused.
    let mut first = batch(dir.path(), &["-j", "4"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let journal = dir.path().join("out.jsonl.journal");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !journal.exists() {
        assert!(std::time::Instant::now() < deadline);
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let second = run(dir.path(), &[]);
    assert!(first.wait().unwrap().success());
    assert_eq!(second.status.code(), Some(2), "{}", String::from_utf8_lossy(&second.stderr));
    assert!(String::from_utf8_lossy(&second.stderr).contains("another batch"));
    assert_eq!(read_records(dir.path()).len(), 3000);
}

/// The records' (id, outcome, output) in row order.
fn summary_of(dir: &Path) -> Vec<(String, String)> {
    let mut records = read_records(dir);
    records.sort_by_key(|r| r["row"].as_u64());
    records
        .iter()
        .map(|r| (r["id"].as_str().unwrap().to_owned(), r["outcome"].as_str().unwrap().to_owned()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_output_follows_the_dataset_row_for_row() {
    let mock = Mock::repeating("127.0.0.1:0", answer()).await;
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path(), &mock.url, 0);
    let rows = dir.path().join("rows.csv");
    // Two identical rows are two rows; a ragged row is an invalid row, not the end.
    std::fs::write(&rows, "ticket,topic\nT1,same\nT2,same\nT3,other\nT4,ragged,row\n").unwrap();
    let first = run(dir.path(), &[]);
    assert_eq!(first.status.code(), Some(1), "{}", String::from_utf8_lossy(&first.stderr));
    let expected = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
        pairs.iter().map(|(id, outcome)| ((*id).to_owned(), (*outcome).to_owned())).collect()
    };
    assert_eq!(
        summary_of(dir.path()),
        expected(&[("T1", "ok"), ("T2", "ok"), ("T3", "ok"), ("4", "invalid")])
    );
    let ragged = read_records(dir.path()).into_iter().find(|r| r["outcome"] == "invalid").unwrap();
    assert!(ragged["error"].as_str().unwrap().contains("3 field(s) where the header has 2"));
    let keys: Vec<String> =
        read_records(dir.path()).iter().map(|r| r["key"].as_str().unwrap().to_owned()).collect();
    assert!(keys.iter().any(|k| k.ends_with("/2")), "the second identical row: {keys:?}");

    // Reordered, the same rows are done; --keep-order writes them in their new order.
    std::fs::write(&rows, "ticket,topic\nT4,ragged,row\nT3,other\nT2,same\nT1,same\n").unwrap();
    let reordered = run(dir.path(), &["--keep-order"]);
    let said = String::from_utf8_lossy(&reordered.stderr).into_owned();
    assert!(said.contains("0 row(s) run") && said.contains("4 already done"), "{said}");
    assert_eq!(read_records(dir.path()).len(), 4);

    // A row edited: it runs again, and its old record goes.
    std::fs::write(&rows, "ticket,topic\nT1,same\nT2,same\nT3,edited\n").unwrap();
    let edited = run(dir.path(), &[]);
    let said = String::from_utf8_lossy(&edited.stderr).into_owned();
    assert!(edited.status.success(), "{said}");
    assert!(
        said.contains("1 row(s) run") && said.contains("2 earlier record(s) dropped"),
        "{said}"
    );
    assert_eq!(summary_of(dir.path()), expected(&[("T1", "ok"), ("T2", "ok"), ("T3", "ok")]));

    // Another model: every row runs again, said so, and only the new records stay.
    let other_model = TOOL.replace("mock/m", "mock/m2");
    std::fs::write(dir.path().join("tool.json"), other_model).unwrap();
    let changed = run(dir.path(), &[]);
    let said = String::from_utf8_lossy(&changed.stderr).into_owned();
    assert!(said.contains("the tool or its model changed"), "{said}");
    assert!(said.contains("3 earlier record(s) dropped"), "{said}");
    let records = read_records(dir.path());
    assert_eq!(records.len(), 3);
    assert!(records.iter().all(|r| r["model"] == "m2"), "{records:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retried_rows_replace_their_failed_records_even_when_the_retry_stops() {
    let dir = tempfile::tempdir().unwrap();
    // Nothing listens on port 9: every row fails.
    setup(dir.path(), "http://127.0.0.1:9", 10);
    let failed = run(dir.path(), &[]);
    assert_eq!(failed.status.code(), Some(1));
    assert!(summary_of(dir.path()).iter().all(|(_, outcome)| outcome == "failed"));
    // Retried on a live mock under a budget that stops after 5 rows of $0.002.
    let mock = Mock::repeating("127.0.0.1:0", answer()).await;
    setup(dir.path(), &mock.url, 10);
    let retried = run(dir.path(), &["--retry-failed", "-j", "1", "--max-cost", "0.01"]);
    assert_eq!(retried.status.code(), Some(1));
    let outcomes = summary_of(dir.path());
    assert_eq!(outcomes.len(), 10, "one record a row: {outcomes:?}");
    assert_eq!(outcomes.iter().filter(|(_, outcome)| outcome == "ok").count(), 5);
    let finished = run(dir.path(), &["--retry-failed"]);
    assert!(finished.status.success(), "{}", String::from_utf8_lossy(&finished.stderr));
    assert!(summary_of(dir.path()).iter().all(|(_, outcome)| outcome == "ok"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_that_rate_limits_slows_the_batch_down_and_no_row_fails() {
    // The provider bears 6 requests at once; the batch starts 32.
    let capacity = Capacity {
        capacity: 6,
        latency: std::time::Duration::from_millis(20),
        retry_after: "0.1".to_owned(),
    };
    let mock = Mock::limited(answer(), capacity).await;
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path(), &mock.url, 150);
    let output = run(dir.path(), &["-j", "32"]);
    let said = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{said}");
    assert!(said.starts_with("150 row(s) run: 150 ok"), "{said}");
    let (peak, refused) = mock.load();
    assert!(peak <= 6, "{peak}");
    // Without slowing down, 26 of every 32 requests would be refused, round after round.
    assert!(refused > 0 && refused < 150, "refused {refused} requests for 150 rows");
    assert_eq!(read_records(dir.path()).len(), 150);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parquet_out_is_written_whole_and_reads_back_as_a_dataset() {
    let mock = Mock::repeating("127.0.0.1:0", answer()).await;
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path(), &mock.url, 30);
    let parquet_run = |extra: &[&str]| {
        let command = batch(dir.path(), extra);
        let args: Vec<String> = command
            .get_args()
            .map(|a| a.to_string_lossy().replace("out.jsonl", "out.parquet"))
            .collect();
        let mut command = Command::new(command.get_program());
        command.current_dir(dir.path()).args(args).env("MOCK_KEY", "mock-secret-key-5150");
        command.env("LLMTOOL_DATA_DIR", dir.path().join("data")).output().unwrap()
    };
    let first = parquet_run(&["-j", "4"]);
    assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
    let bytes = std::fs::read(dir.path().join("out.parquet")).unwrap();
    assert!(bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"), "a whole Parquet file");
    let again = parquet_run(&[]);
    assert!(String::from_utf8_lossy(&again.stderr).contains("30 already done"));

    // Its records as a dataset: `output` fills `topic`, the ids carry over.
    let reread = Command::new(env!("CARGO_BIN_EXE_llmtool"))
        .current_dir(dir.path())
        .args(["batch", "tool.json", "out.parquet", "-o", "again.jsonl", "--id", "id"])
        .args(["--map", "topic=output", "--config", "config.toml"])
        .env("MOCK_KEY", "mock-secret-key-5150")
        .env("LLMTOOL_DATA_DIR", dir.path().join("data"))
        .output()
        .unwrap();
    assert!(reread.status.success(), "{}", String::from_utf8_lossy(&reread.stderr));
    let records: Vec<Value> = std::fs::read_to_string(dir.path().join("again.jsonl"))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let mut ids: Vec<&str> = records.iter().map(|r| r["id"].as_str().unwrap()).collect();
    ids.sort_unstable();
    let mut expected: Vec<String> = (0..30).map(|n| format!("T{n}")).collect();
    expected.sort_unstable();
    assert_eq!(ids, expected);
    assert!(records.iter().all(|r| r["outcome"] == "ok"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_blocked_by_data_loss_prevention_is_failed_and_a_retry_under_redact_sends_it() {
    let dir = tempfile::tempdir().unwrap();
    let mock = Mock::start(vec![answer(), answer()]).await;
    setup(dir.path(), &mock.url, 2);
    let csv = "ticket,topic\nT0,the sea\nT1,mail zed@example.com about it\n";
    std::fs::write(dir.path().join("rows.csv"), csv).unwrap();
    let blocked = run(dir.path(), &["--dlp", "block"]);
    assert_eq!(blocked.status.code(), Some(1));
    assert_eq!(
        summary_of(dir.path()),
        [("T0".to_owned(), "ok".to_owned()), ("T1".to_owned(), "failed".to_owned())]
    );
    let records = read_records(dir.path());
    let record = records.iter().find(|r| r["id"] == "T1").unwrap();
    assert!(record["error"].as_str().unwrap().contains("e-mail address"), "{record}");
    assert!(!record.to_string().contains("zed@example.com"), "the report never shows the value");
    assert_eq!(mock.requests().len(), 1, "the blocked row sent nothing");

    let retried = run(dir.path(), &["--dlp", "redact", "--retry-failed"]);
    let said = String::from_utf8_lossy(&retried.stderr);
    assert!(retried.status.success(), "{said}");
    assert!(!said.contains("dropped"), "the retry is the same work: {said}");
    assert!(summary_of(dir.path()).iter().all(|(_, outcome)| outcome == "ok"));
    assert_eq!(mock.requests().len(), 2, "only the blocked row was sent again");
    assert!(!mock.requests()[1].body.to_string().contains("zed@example.com"));
}

/// With `--documents`, a cell `@FILE` is the document's text; a document without text fails
/// its row alone; without the flag, cells are as written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn document_cells_are_read_only_with_the_flag() {
    let mock = Mock::start(vec![answer(), answer(), answer(), answer()]).await;
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path(), &mock.url, 0);
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../llmtool-documents/tests/fixtures/real-world")
        .canonicalize()
        .unwrap();
    std::fs::copy(fixtures.join("docx/tables.docx"), dir.path().join("tables.docx")).unwrap();
    std::fs::copy(fixtures.join("pdf/c02-22-scanned.pdf"), dir.path().join("scan.pdf")).unwrap();
    std::fs::write(
        dir.path().join("rows.csv"),
        "ticket,topic\nA,@tables.docx\nB,@scan.pdf\nC,@@home\nE,@/etc/hostname\n",
    )
    .unwrap();
    let out = tokio::task::block_in_place(|| run(dir.path(), &["--documents", "--keep-order"]));
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "one row failed: {said}");
    let records = read_records(dir.path());
    assert_eq!(records.len(), 4, "{records:?}");
    let outside = records[3]["error"].as_str().unwrap();
    assert!(outside.contains("must be below that file's folder"), "{outside}");
    assert!(records[1]["error"].as_str().unwrap().contains("no text layer"), "{}", records[1]);
    let sent: Vec<String> = mock
        .requests()
        .iter()
        .map(|request| request.body["messages"][0]["content"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        sent.iter().any(|prompt| prompt.starts_with("Write one line about Above\n\nTop left")),
        "{sent:?}"
    );
    assert!(sent.iter().any(|prompt| prompt == "Write one line about @home."), "{sent:?}");
    assert_eq!(sent.len(), 2);

    // Without the flag, `@tables.docx` is the topic as written.
    let plain = tempfile::tempdir().unwrap();
    setup(plain.path(), &mock.url, 0);
    std::fs::copy(fixtures.join("docx/tables.docx"), plain.path().join("tables.docx")).unwrap();
    std::fs::write(plain.path().join("rows.csv"), "ticket,topic\nD,@tables.docx\n").unwrap();
    let out = tokio::task::block_in_place(|| run(plain.path(), &[]));
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let last = mock.requests().last().unwrap().body["messages"][0]["content"].clone();
    assert_eq!(last, "Write one line about @tables.docx.");
}
