//! `llmtool run` end to end: the binary against the mock LLM server, reached the way users
//! reach any compatible server (`OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`).

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use llmtool_testkit::{Mock, Reply};

const KEY: &str = "sk-cli-test-7c1e";

/// The run log of this test process's runs, unless a test names its own.
static DATA_DIR: std::sync::LazyLock<tempfile::TempDir> =
    std::sync::LazyLock::new(|| tempfile::tempdir().unwrap());

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples").join(name)
}

/// Runs the binary with a clean provider environment plus `env`.
async fn llmtool(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_llmtool"));
    command
        .args(args)
        .stdin(Stdio::null())
        .env("NO_COLOR", "1")
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .env("LLMTOOL_DATA_DIR", DATA_DIR.path())
        .env_remove("LLMTOOL_NO_LOG");
    for variable in [
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "LLMTOOL_MODEL",
        "OPENAI_BASE_URL",
        "LLMTOOL_CONFIG",
    ] {
        command.env_remove(variable);
    }
    command.envs(env.iter().copied());
    command.output().await.unwrap()
}

/// A config file declaring the mock as provider `mock` (OpenAI protocol, no structured output).
fn mock_config(mock: &Mock) -> tempfile::NamedTempFile {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    let config = format!(
        "default_model = \"mock/m\"\n[providers.mock]\napi = \"openai\"\nbase_url = \"{}/v1\"\napi_key_env = \"MOCK_KEY\"\njson_schema = false\n[prices.\"mock/m\"]\ninput = 1.0\noutput = 2.0\n",
        mock.url
    );
    std::io::Write::write_all(&mut file, config.as_bytes()).unwrap();
    file
}

/// Runs the strategy-consultant example, as JSON, on a config-file provider served by a mock
/// with `replies`.
async fn consultant_on_mock(replies: Vec<Reply>, situation: &str) -> (Output, Mock) {
    let mock = Mock::start(replies).await;
    let config = mock_config(&mock);
    let tool = example("strategy-consultant.json");
    let situation = format!("situation={situation}");
    let config_path = config.path().to_str().unwrap();
    let args = [
        "run",
        tool.to_str().unwrap(),
        "--var",
        &situation,
        "--config",
        config_path,
        "--format",
        "json",
    ];
    (llmtool(&args, &[("MOCK_KEY", KEY)]).await, mock)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn openai_answer(pieces: &[&str]) -> Reply {
    let mut data: Vec<String> = pieces
        .iter()
        .map(|p| {
            serde_json::json!({"choices": [{"delta": {"content": p}, "finish_reason": null}]})
                .to_string()
        })
        .collect();
    data.push(r#"{"choices":[{"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":3}}"#.into());
    data.push("[DONE]".into());
    Reply::sse(&data.iter().map(String::as_str).collect::<Vec<_>>())
}

#[tokio::test(flavor = "multi_thread")]
async fn streams_a_text_answer_exactly() {
    let mock = Mock::start(vec![openai_answer(&["Tides come ", "from the Moon."])]).await;
    let base = format!("{}/v1", mock.url);
    let tool = example("teach-me-anything.json");
    let out = llmtool(
        &["run", tool.to_str().unwrap(), "--var", "topic=tides"],
        &[("OPENAI_API_KEY", KEY), ("OPENAI_BASE_URL", &base)],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "Tides come from the Moon.");
    let sent = &mock.requests()[0];
    assert_eq!(sent.headers["authorization"], format!("Bearer {KEY}").as_str());
    assert_eq!(sent.body["model"], "gpt-4o-mini", "the first model of the tool's list");
    assert_eq!(sent.body["temperature"], 0.7);
    assert_eq!(sent.body["max_completion_tokens"], 1200);
    assert!(
        sent.body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .starts_with("Teach me about tides. I am a curious beginner")
    );
    assert!(!text(&out.stderr).contains(KEY));
}

#[tokio::test(flavor = "multi_thread")]
async fn limited_answer_is_repaired_and_printed_canonically() {
    let replies = vec![openai_answer(&["Honestly, I'd wait."]), openai_answer(&["WAIT"])];
    let (out, mock) = consultant_on_mock(replies, "a bakery").await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["output"], "wait");
    assert_eq!(report["raw"], "WAIT");
    assert_eq!(report["repairs"], 1);
    assert_eq!(report["provider"], "mock");
    assert_eq!(report["usage"]["input_tokens"], 24);
    assert!((report["cost"].as_f64().unwrap() - (24.0 * 1e-6 + 6.0 * 2e-6)).abs() < 1e-12);
    for key in ["latency_ms", "time_to_first_token_ms", "finish_reason"] {
        assert!(report.get(key).is_some(), "{key} missing");
    }
    assert_eq!(mock.requests()[0].headers["authorization"], format!("Bearer {KEY}").as_str());
}

#[tokio::test(flavor = "multi_thread")]
async fn an_answer_that_never_fits_exits_1_with_the_raw_answer() {
    let replies =
        vec![openai_answer(&["maybe"]), openai_answer(&["perhaps"]), openai_answer(&["unsure"])];
    let (out, _mock) = consultant_on_mock(replies, "x").await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["output"], serde_json::Value::Null);
    assert_eq!(report["raw"], "unsure");
    assert_eq!(report["repairs"], 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn provider_failures_exit_2_with_clear_messages_and_no_key() {
    let mock = Mock::start(vec![Reply::json(
        401,
        r#"{"error":{"message":"Incorrect API key provided"}}"#,
    )])
    .await;
    let base = format!("{}/v1", mock.url);
    let tool = example("teach-me-anything.json");
    let out = llmtool(
        &["run", tool.to_str().unwrap(), "--var", "topic=x"],
        &[("OPENAI_API_KEY", KEY), ("OPENAI_BASE_URL", &base)],
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("rejected the API key (401 Unauthorized): Incorrect API key provided"),
        "{stderr}"
    );
    assert!(!stderr.contains(KEY) && !text(&out.stdout).contains(KEY));
    let out = llmtool(
        &["run", tool.to_str().unwrap(), "--var", "topic=x", "--model", "claude-sonnet-4-5"],
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("set the environment variable `ANTHROPIC_API_KEY`"));
}

#[tokio::test(flavor = "multi_thread")]
async fn dry_run_prints_the_request_and_sends_nothing() {
    let mock = Mock::start(vec![]).await;
    let base = format!("{}/v1", mock.url);
    let tool = example("legal-agreement-review.json");
    let out = llmtool(
        &[
            "run",
            tool.to_str().unwrap(),
            "--var",
            "agreement=text",
            "--dry-run",
            "--provider",
            "groq",
            "--model",
            "llama-3.3-70b-versatile",
        ],
        &[("GROQ_API_KEY", KEY), ("OPENAI_BASE_URL", &base)],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(shown.starts_with("POST https://api.groq.com/openai/v1/chat/completions\n"), "{shown}");
    assert!(shown.contains("authorization: Bearer [redacted]") && !shown.contains(KEY));
    assert!(shown.contains("\"response_format\""), "JSON mode for a JSON tool");
    assert!(mock.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dry_run_needs_no_key_and_says_none_is_configured() {
    let tool = example("teach-me-anything.json");
    for (model, url) in [
        ("openai/gpt-4o-mini", "POST https://api.openai.com/v1/chat/completions\n"),
        ("anthropic/claude-sonnet-4-5", "POST https://api.anthropic.com/v1/messages\n"),
    ] {
        let args = ["run", tool.to_str().unwrap(), "--var", "topic=tides", "--dry-run"];
        let out = llmtool(&[&args[..], &["--model", model]].concat(), &[]).await;
        assert_eq!(out.status.code(), Some(0), "{model}: {}", text(&out.stderr));
        let shown = text(&out.stdout);
        assert!(shown.starts_with(url) && shown.contains("[redacted]"), "{shown}");
        assert!(!shown.contains("no-key-configured"), "the stand-in is redacted too: {shown}");
        let said = text(&out.stderr);
        assert!(said.contains("note: no key for") && said.contains("is not set"), "{said}");
        assert!(said.contains("worst case $"), "the estimate still comes: {said}");
    }
    // Nor does a batch's estimate: its rows are priced, not called invalid.
    let dir = tempfile::tempdir().unwrap();
    let rows = dir.path().join("rows.csv");
    std::fs::write(&rows, "topic\ntides\nsand\n").unwrap();
    let out_file = dir.path().join("out.jsonl");
    let estimate = [
        "batch",
        tool.to_str().unwrap(),
        rows.to_str().unwrap(),
        "-o",
        out_file.to_str().unwrap(),
        "--estimate",
        "--model",
        "openai/gpt-4o-mini",
    ];
    let out = llmtool(&estimate, &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let said = text(&out.stderr);
    assert!(said.contains("2 row(s) (0 invalid") && said.contains("note: no key"), "{said}");
    assert!(!out_file.exists(), "an estimate writes nothing");
    // A real run with no key is still an error, naming the variable.
    let out = llmtool(
        &["run", tool.to_str().unwrap(), "--var", "topic=tides", "--model", "openai/gpt-4o-mini"],
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("OPENAI_API_KEY"), "{}", text(&out.stderr));
}

#[tokio::test(flavor = "multi_thread")]
async fn model_errors_name_the_unknown_provider_and_the_url_that_refused() {
    let tool = example("teach-me-anything.json");
    let args = ["run", tool.to_str().unwrap(), "--var", "topic=tides"];
    let out = llmtool(&[&args[..], &["--model", "foo/bar"]].concat(), &[]).await;
    assert_eq!(out.status.code(), Some(2));
    let said = text(&out.stderr);
    assert!(
        said.contains("no provider is called `foo`; known: openai,") && said.contains("ollama"),
        "{said}"
    );
    // A local server that is not running: the provider and where it was looked for.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!("[providers.ollama]\nbase_url = \"http://127.0.0.1:{port}/v1\"\n"),
    )
    .unwrap();
    let refused =
        ["--model", "ollama/llama3", "--retries", "0", "--config", config.to_str().unwrap()];
    let out = llmtool(&[&args[..], &refused[..]].concat(), &[]).await;
    assert_eq!(out.status.code(), Some(2));
    let said = text(&out.stderr);
    assert!(
        said.contains(&format!("Ollama at http://127.0.0.1:{port}: Connection refused")),
        "{said}"
    );
    assert!(said.contains("is the server running"), "{said}");
}

#[tokio::test(flavor = "multi_thread")]
async fn anthropic_through_its_base_url() {
    let events = [
        (
            "message_start",
            r#"{"type":"message_start","message":{"usage":{"input_tokens":5,"output_tokens":1}}}"#,
        ),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"print('hi')"}}"#,
        ),
        (
            "message_delta",
            r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":4}}"#,
        ),
        ("message_stop", r#"{"type":"message_stop"}"#),
    ];
    let mock = Mock::start(vec![Reply::named_sse(&events)]).await;
    let tool = example("pair-programmer.json");
    let env = [("ANTHROPIC_API_KEY", KEY), ("ANTHROPIC_BASE_URL", mock.url.as_str())];
    let out = llmtool(
        &["run", tool.to_str().unwrap(), "--var", "code=x = 1", "--model", "claude-sonnet-4-5"],
        &env,
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "print('hi')", "a bare code answer is printed as the code");
    let sent = &mock.requests()[0];
    assert_eq!(sent.headers["x-api-key"], KEY);
    assert_eq!(sent.body["max_tokens"], 2048);
    assert!(
        text(&out.stderr)
            .contains("warning: `frequency_penalty` dropped: Anthropic does not support it")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_cancels_cleanly() {
    let mock = Mock::start(vec![Reply::sse(&[]).ending(llmtool_testkit::End::Stall)]).await;
    let base = format!("{}/v1", mock.url);
    let tool = example("teach-me-anything.json");
    let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_llmtool"))
        .args(["run", tool.to_str().unwrap(), "--var", "topic=x", "--model", "openai/gpt-4o-mini"])
        .env("OPENAI_API_KEY", KEY)
        .env("OPENAI_BASE_URL", &base)
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the request is in flight, then interrupt.
    for _ in 0..100 {
        if !mock.requests().is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let pid = child.id().unwrap().to_string();
    assert!(std::process::Command::new("kill").args(["-INT", &pid]).status().unwrap().success());
    let out = tokio::time::timeout(std::time::Duration::from_secs(10), child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("cancelled"));
}

#[tokio::test(flavor = "multi_thread")]
async fn providers_lists_readiness_without_keys() {
    let out = llmtool(&["providers", "--format", "json"], &[("ANTHROPIC_API_KEY", KEY)]).await;
    assert_eq!(out.status.code(), Some(0));
    let stdout = text(&out.stdout);
    assert!(!stdout.contains(KEY));
    let statuses: Vec<serde_json::Value> = serde_json::from_str(&stdout).unwrap();
    let ready = |name: &str| {
        statuses.iter().find(|s| s["name"] == name).unwrap()["ready"].as_bool().unwrap()
    };
    assert!(ready("anthropic"));
    assert!(!ready("openai"));
    assert!(!ready("ollama"), "a local server is ready only once configured");
}

#[tokio::test(flavor = "multi_thread")]
async fn no_key_or_password_reaches_any_output() {
    // An error body that echoes the key.
    let echo = format!(r#"{{"error":{{"message":"key {KEY} is revoked"}}}}"#);
    let mock = Mock::start(vec![Reply::json(403, echo)]).await;
    let config = mock_config(&mock);
    let config = config.path().to_str().unwrap();
    let tool = example("teach-me-anything.json");
    let tool = tool.to_str().unwrap();
    let out =
        llmtool(&["run", tool, "--var", "topic=x", "--config", config], &[("MOCK_KEY", KEY)]).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("key [redacted] is revoked") && !stderr.contains(KEY), "{stderr}");
    // An answer that contains the key, shown as JSON.
    let mock = Mock::start(vec![openai_answer(&["the key is ", KEY])]).await;
    let config = mock_config(&mock);
    let config = config.path().to_str().unwrap();
    let out = llmtool(
        &["run", tool, "--var", "topic=x", "--config", config, "--format", "json"],
        &[("MOCK_KEY", KEY)],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(!text(&out.stdout).contains(KEY) && text(&out.stdout).contains("[redacted]"));
    // The same answer streamed as plain text, the key cut across two chunks.
    let (head, tail) = KEY.split_at(KEY.len() / 2);
    let mock = Mock::start(vec![openai_answer(&["the key is ", head, tail, "."])]).await;
    let config = mock_config(&mock);
    let config = config.path().to_str().unwrap();
    let out =
        llmtool(&["run", tool, "--var", "topic=x", "--config", config], &[("MOCK_KEY", KEY)]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim_end(), "the key is [redacted].");
    // A password in a base URL, in `--dry-run` and `providers`.
    let mut file = tempfile::NamedTempFile::new().unwrap();
    let with_password = "[providers.proxy]\napi = \"openai\"\nbase_url = \"http://alice:hunter2-secret@127.0.0.1:9/v1\"\n";
    std::io::Write::write_all(&mut file, with_password.as_bytes()).unwrap();
    let config = file.path().to_str().unwrap();
    let out = llmtool(
        &["run", tool, "--var", "topic=x", "--config", config, "--model", "proxy/m", "--dry-run"],
        &[],
    )
    .await;
    let shown = text(&out.stdout);
    assert!(shown.starts_with("POST http://[redacted]@127.0.0.1:9/v1/"), "{shown}");
    let out = llmtool(&["providers", "--config", config], &[]).await;
    assert!(
        !text(&out.stdout).contains("hunter2") && text(&out.stdout).contains("proxy"),
        "{}",
        text(&out.stdout)
    );
    let out = llmtool(
        &[
            "run",
            tool,
            "--var",
            "topic=x",
            "--config",
            config,
            "--model",
            "proxy/m",
            "--retries",
            "0",
        ],
        &[],
    )
    .await;
    assert!(!text(&out.stderr).contains("hunter2"), "{}", text(&out.stderr));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_priced_model_costs_the_price_table_times_the_reported_usage() {
    let mock = Mock::start(vec![openai_answer(&["Tides."]), openai_answer(&["Tides."])]).await;
    let base = format!("{}/v1", mock.url);
    let tool = example("teach-me-anything.json");
    let env = [("OPENAI_API_KEY", KEY), ("OPENAI_BASE_URL", base.as_str())];
    let args = ["run", tool.to_str().unwrap(), "--var", "topic=tides"];
    let out = llmtool(&[&args[..], &["--format", "json"]].concat(), &env).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // gpt-4o-mini in the table: $0.15 per million input tokens, $0.60 per million output.
    assert_eq!(report["price"]["entry"], "gpt-4o-mini");
    assert!(report["price"]["source"].as_str().unwrap().starts_with("litellm-core"));
    assert!((report["cost"].as_f64().unwrap() - (12.0 * 1.5e-7 + 3.0 * 6e-7)).abs() < 1e-15);
    // `--usage` says the same on standard error.
    let out = llmtool(&[&args[..], &["--usage"]].concat(), &env).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let said = text(&out.stderr);
    assert!(
        said.contains(
            "usage: 12 input tokens, 3 output; cost $0.000004 (gpt-4o-mini in litellm-core"
        ),
        "{said}"
    );
    // `--dry-run` estimates before sending, by the one worst-case rule: the prompt's 213 bytes
    // and the tool's max_tokens, for the run and its two repairs (each sending the answers
    // before): 4,239 input tokens at $0.15/M and 3,600 output tokens at $0.60/M.
    let out = llmtool(&[&args[..], &["--dry-run"]].concat(), &env).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let said = text(&out.stderr);
    assert!(
        said.contains("input tokens (") && said.contains("not the model's tokenizer"),
        "{said}"
    );
    assert!(
        said.contains("at most 1,200 output tokens (max_tokens); worst case $0.002796"),
        "{said}"
    );
    assert_eq!(mock.requests().len(), 2, "a dry run sends nothing");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unpriced_model_says_so_and_never_costs_zero() {
    let mock = Mock::start(vec![openai_answer(&["Hi."])]).await;
    let config = mock_config(&mock);
    let mut text_config = std::fs::read_to_string(config.path()).unwrap();
    // The same provider with no price for its model.
    text_config = text_config.replace("[prices.\"mock/m\"]\ninput = 1.0\noutput = 2.0\n", "");
    std::fs::write(config.path(), text_config).unwrap();
    let tool = example("teach-me-anything.json");
    let args = ["run", tool.to_str().unwrap(), "--var", "topic=tides", "--model", "mock/m"];
    let config_path = config.path().to_str().unwrap();
    let out = llmtool(
        &[&args[..], &["--config", config_path, "--format", "json"]].concat(),
        &[("MOCK_KEY", KEY)],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(report["cost"].is_null() && report["price"].is_null(), "{report}");
}

/// Runs teach-me-anything on the OpenAI API served by a mock that answers `answer`, with the
/// run log in `data` and `extra` arguments and environment.
async fn teach_on_mock(answer: &str, data: &Path, extra: &[&str], env: &[(&str, &str)]) -> Output {
    let mock = Mock::start(vec![openai_answer(&[answer])]).await;
    let base = format!("{}/v1", mock.url);
    let tool = example("teach-me-anything.json");
    let args = [&["run", tool.to_str().unwrap(), "--var", "topic=tides"][..], extra].concat();
    let data = data.to_str().unwrap();
    let common =
        [("OPENAI_API_KEY", KEY), ("OPENAI_BASE_URL", base.as_str()), ("LLMTOOL_DATA_DIR", data)];
    llmtool(&args, &[&common[..], env].concat()).await
}

/// `llmtool logs`/`usage` with `args`, on the run log in `data`, as JSON.
async fn log_json(args: &[&str], data: &Path) -> serde_json::Value {
    let data = data.to_str().unwrap();
    let out = llmtool(&[args, &["--format", "json"]].concat(), &[("LLMTOOL_DATA_DIR", data)]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn every_run_is_logged_with_its_cost_and_listed_and_totalled() {
    let data = tempfile::tempdir().unwrap();
    let out = teach_on_mock("Tides.", data.path(), &["--format", "json"], &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // Only the hash of the values, then not logged at all.
    let out = teach_on_mock("Tides.", data.path(), &["--no-log-values"], &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = teach_on_mock("Tides.", data.path(), &[], &[("LLMTOOL_NO_LOG", "1")]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    let runs = log_json(&["logs"], data.path()).await;
    let runs = runs.as_array().unwrap();
    assert_eq!(runs.len(), 2, "LLMTOOL_NO_LOG=1 logs nothing: {runs:?}");
    let (hashed, first) = (&runs[0], &runs[1]);
    assert_eq!(first["cost_usd"], report["cost"]);
    assert!(first["cost_usd"].as_f64().unwrap() > 0.0);
    assert_eq!(first["price_entry"], "gpt-4o-mini");
    assert_eq!(
        (first["provider"].as_str(), first["model"].as_str()),
        (Some("openai"), Some("gpt-4o-mini"))
    );
    assert_eq!(first["tool_name"], "Teach Me Anything");
    assert_eq!(first["variables"], serde_json::json!({ "topic": "tides" }));
    assert_eq!(
        (first["input_tokens"].as_u64(), first["output_tokens"].as_u64()),
        (Some(12), Some(3))
    );
    assert_eq!((first["outcome"].as_str(), first["answer"].as_str()), (Some("ok"), Some("Tides.")));
    assert!(first["latency_ms"].is_u64() && first["tool_hash"].as_str().unwrap().len() == 64);
    assert!(hashed["variables"].is_null());
    assert_eq!(hashed["variables_hash"], first["variables_hash"]);
    // Filters.
    assert_eq!(log_json(&["logs", "-n", "1"], data.path()).await.as_array().unwrap().len(), 1);
    let other = log_json(&["logs", "--model", "openai/gpt-4o"], data.path()).await;
    assert!(other.as_array().unwrap().is_empty());
    let later = log_json(&["logs", "--since", "2999-01-01"], data.path()).await;
    assert!(later.as_array().unwrap().is_empty());
    // Totals.
    let usage = log_json(&["usage", "--by", "tool"], data.path()).await;
    let total = &usage["totals"][0];
    assert_eq!(
        (total["key"].as_str(), total["runs"].as_u64()),
        (Some("Teach Me Anything"), Some(2))
    );
    let twice = 2.0 * report["cost"].as_f64().unwrap();
    assert!((total["cost_usd"].as_f64().unwrap() - twice).abs() < 1e-15);
    let data_dir = data.path().to_str().unwrap();
    let out = llmtool(&["usage", "--by", "day"], &[("LLMTOOL_DATA_DIR", data_dir)]).await;
    let table = text(&out.stdout);
    assert!(table.contains("cost per day") && table.contains('█'), "{table}");
    // One run whole: its values and the prompt as sent; with only the hash kept, no prompt.
    let id = first["id"].as_i64().unwrap().to_string();
    let out = llmtool(&["logs", "show", &id], &[("LLMTOOL_DATA_DIR", data_dir)]).await;
    let whole = text(&out.stdout);
    assert!(
        whole.contains("Prompt\n    Teach me about tides.")
            && whole.contains("\"topic\": \"tides\""),
        "{whole}"
    );
    assert_eq!(
        first["prompt"].as_str().map(|p| p.starts_with("Teach me about tides.")),
        Some(true)
    );
    assert!(hashed["prompt"].is_null(), "the prompt holds the values: {hashed}");
    let out = llmtool(&["logs", "show", "999"], &[("LLMTOOL_DATA_DIR", data_dir)]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no run #999"), "{}", text(&out.stderr));
}

#[tokio::test(flavor = "multi_thread")]
async fn logs_shows_the_start_of_a_long_answer_and_where_the_rest_is() {
    let data = tempfile::tempdir().unwrap();
    let long = (1..=20).fold(String::new(), |text, n| text + &format!("Line {n}.\n"));
    let out = teach_on_mock(&long, data.path(), &[], &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let data_dir = data.path().to_str().unwrap();
    let listed = text(&llmtool(&["logs"], &[("LLMTOOL_DATA_DIR", data_dir)]).await.stdout);
    assert!(listed.contains("Line 6.") && !listed.contains("Line 7."), "{listed}");
    assert!(listed.contains("… 14 more line(s): llmtool logs show 1"), "{listed}");
    let whole =
        text(&llmtool(&["logs", "show", "#1"], &[("LLMTOOL_DATA_DIR", data_dir)]).await.stdout);
    assert!(whole.contains("Line 20."), "{whole}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_data_directory_that_cannot_be_written_is_a_warning_not_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    // A path under a regular file: no folder can be made there, even by root.
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let out = teach_on_mock("Tides.", &file.join("data"), &[], &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "Tides.");
    assert!(text(&out.stderr).contains("warning: the run is not logged"), "{}", text(&out.stderr));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_log_survives_runs_killed_at_any_moment() {
    let data = tempfile::tempdir().unwrap();
    let data_dir = data.path().to_str().unwrap();
    let tool = example("teach-me-anything.json");
    // One run logged whole first.
    let out = teach_on_mock("Tides.", data.path(), &[], &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // Then runs killed with SIGKILL after growing delays: while starting, while waiting for
    // the answer, while writing the log.
    let replies = (0..8).map(|_| openai_answer(&["Tides."])).collect();
    let mock = Mock::start(replies).await;
    let base = format!("{}/v1", mock.url);
    for delay_ms in [0, 2, 5, 10, 20, 40, 80, 160] {
        let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_llmtool"))
            .args(["run", tool.to_str().unwrap(), "--var", "topic=tides"])
            .env("OPENAI_API_KEY", KEY)
            .env("OPENAI_BASE_URL", &base)
            .env("LLMTOOL_DATA_DIR", data_dir)
            .env("XDG_CONFIG_HOME", "/nonexistent")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(delay_ms)).await;
        let _ = child.start_kill(); // SIGKILL
        let _ = child.wait().await;
    }
    // The log opens, keeps the first run, and takes new ones.
    let runs = log_json(&["logs", "-n", "100"], data.path()).await;
    let runs = runs.as_array().unwrap();
    assert!(!runs.is_empty() && runs.len() <= 9, "{runs:?}");
    assert!(runs.iter().all(|run| run["outcome"] == "ok" && run["answer"] == "Tides."));
    let out = teach_on_mock("Again.", data.path(), &[], &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let after = log_json(&["logs", "-n", "100"], data.path()).await;
    assert_eq!(after.as_array().unwrap().len(), runs.len() + 1);
    assert_eq!(after[0]["answer"], "Again.");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_locked_run_log_is_a_warning_and_the_run_stands() {
    use sqlx::Connection as _;
    let data = tempfile::tempdir().unwrap();
    let out = teach_on_mock("Tides.", data.path(), &[], &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // Another program holds the log while the next run ends.
    let options = sqlx::sqlite::SqliteConnectOptions::new().filename(data.path().join("runs.db"));
    let mut holder = sqlx::SqliteConnection::connect_with(&options).await.unwrap();
    sqlx::query("BEGIN EXCLUSIVE").execute(&mut holder).await.unwrap();
    let out = teach_on_mock("Again.", data.path(), &[], &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "Again.");
    let said = text(&out.stderr);
    assert!(said.contains("warning: the run is not logged") && said.contains("locked"), "{said}");
    sqlx::query("ROLLBACK").execute(&mut holder).await.unwrap();
    assert_eq!(log_json(&["logs"], data.path()).await.as_array().unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_over_the_context_window_or_the_size_limit_is_not_sent() {
    let mock = Mock::start(vec![]).await;
    let config = mock_config(&mock);
    let with_window = std::fs::read_to_string(config.path()).unwrap() + "max_input = 20\n";
    std::fs::write(config.path(), with_window).unwrap();
    let config = config.path().to_str().unwrap();
    let tool = example("teach-me-anything.json");
    let tool = tool.to_str().unwrap();
    let topic = format!("topic={}", "tides ".repeat(50));
    let out =
        llmtool(&["run", tool, "--var", &topic, "--config", config], &[("MOCK_KEY", KEY)]).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("more than the 20 of `mock/m`'s context window"), "{stderr}");
    // A limit the tool file is under and its prompt, with a long value, over.
    let long_topic = format!("topic={}", "tides ".repeat(5_000));
    let out = llmtool(
        &["run", tool, "--var", &long_topic, "--config", config],
        &[("MOCK_KEY", KEY), ("LLMTOOL_MAX_FILE_BYTES", "20K")],
    )
    .await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("LLMTOOL_MAX_FILE_BYTES"), "{stderr}");
    assert!(mock.requests().is_empty(), "nothing was sent");
}
