//! Data-loss prevention end to end: the binary against the mock LLM server. What the server
//! receives has placeholders, what the user sees has the values back, a blocked run sends
//! nothing and exits 1, the run log keeps counts and never the values, and `llmtool scan`
//! reports kinds and places.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::path::Path;
use std::process::{Output, Stdio};

use llmtool_testkit::{Mock, Reply};
use serde_json::Value;

const KEY: &str = "sk-dlp-test-51aa";
// Its card is looked for as `4111 1111`, never `4111` alone, which the mock's port may hold.
const MAIL: &str = "From ann.lee@example.com: please charge card 4111 1111 1111 1111 again.";

async fn llmtool(args: &[&str], data_dir: &Path, config: Option<&Path>) -> Output {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_llmtool"));
    command
        .args(args)
        .stdin(Stdio::null())
        .env("NO_COLOR", "1")
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .env("LLMTOOL_DATA_DIR", data_dir)
        .env("MOCK_KEY", KEY)
        .env_remove("LLMTOOL_NO_LOG")
        .env_remove("OPENAI_API_KEY")
        .env_remove("LLMTOOL_MODEL");
    match config {
        Some(config) => command.env("LLMTOOL_CONFIG", config),
        None => command.env_remove("LLMTOOL_CONFIG"),
    };
    command.output().await.unwrap()
}

fn chunk(text: &str, finish: Option<&str>) -> String {
    serde_json::json!({ "choices": [{ "delta": { "content": text }, "finish_reason": finish }] })
        .to_string()
}

/// A streamed answer cut inside a placeholder.
fn answer_with_placeholders() -> Reply {
    let chunks = [
        chunk("I will write to [EMAIL", None),
        chunk("_1] about [CARD_1].", Some("stop")),
        "[DONE]".to_owned(),
    ];
    Reply::sse(&chunks.iter().map(String::as_str).collect::<Vec<_>>())
}

/// A tool with one text variable, and the config of the mock provider (with `extra` added).
fn setup(dir: &Path, mock: &Mock, extra: &str) -> (String, std::path::PathBuf) {
    let tool = dir.join("reply.json");
    let tool_text = serde_json::json!({
        "model_prompt": "Answer this mail:\n{{mail}}",
        "metadata": { "prompt_name": "reply", "variables": [{ "name": "mail", "type": "text" }] }
    });
    std::fs::write(&tool, tool_text.to_string()).unwrap();
    let config = dir.join("config.toml");
    let text = format!(
        "default_model = \"mock/m\"\n{extra}\n[providers.mock]\napi = \"openai\"\nbase_url = \"{}/v1\"\napi_key_env = \"MOCK_KEY\"\n",
        mock.url
    );
    std::fs::write(&config, text).unwrap();
    (tool.to_str().unwrap().to_owned(), config)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[tokio::test]
async fn redacted_values_never_reach_the_server_and_come_back_in_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    let mock = Mock::start(vec![answer_with_placeholders()]).await;
    let (tool, config) = setup(dir.path(), &mock, "");
    let var = format!("mail={MAIL}");
    let args = ["run", &tool, "--var", &var, "--dlp", "redact"];
    let output = llmtool(&args, dir.path(), Some(&config)).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(
        text(&output.stdout).trim(),
        "I will write to ann.lee@example.com about 4111 1111 1111 1111."
    );
    let sent = mock.requests()[0].body["messages"][0]["content"].as_str().unwrap().to_owned();
    assert_eq!(sent, "Answer this mail:\nFrom [EMAIL_1]: please charge card [CARD_1] again.");

    let logs = llmtool(&["logs", "--format", "json"], dir.path(), Some(&config)).await;
    let logged = text(&logs.stdout);
    assert!(logged.contains("\"redactions\""), "{logged}");
    assert!(logged.contains("\"payment_card\": 1"), "{logged}");
    assert!(!logged.contains("ann.lee@example.com") && !logged.contains("4111 1111"), "{logged}");
}

#[tokio::test]
async fn a_dry_run_shows_the_request_as_it_would_leave() {
    let dir = tempfile::tempdir().unwrap();
    let mock = Mock::start(Vec::new()).await;
    let (tool, config) = setup(dir.path(), &mock, "[dlp]\npolicy = \"redact\"");
    let var = format!("mail={MAIL}");
    let output =
        llmtool(&["run", &tool, "--var", &var, "--dry-run"], dir.path(), Some(&config)).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    let shown = text(&output.stdout);
    assert!(shown.contains("From [EMAIL_1]: please charge card [CARD_1] again."), "{shown}");
    assert!(!shown.contains("ann.lee") && !shown.contains("4111 1111"), "{shown}");
    assert!(mock.requests().is_empty());
}

#[tokio::test]
async fn the_config_policy_applies_and_the_flag_overrides_it() {
    let dir = tempfile::tempdir().unwrap();
    let mock = Mock::start(vec![Reply::sse(&[&chunk("ok", Some("stop")), "[DONE]"])]).await;
    let (tool, config) = setup(dir.path(), &mock, "[dlp]\npolicy = \"block\"");
    let var = format!("mail={MAIL}");
    let blocked = llmtool(&["run", &tool, "--var", &var], dir.path(), Some(&config)).await;
    assert_eq!(blocked.status.code(), Some(1), "{}", text(&blocked.stderr));
    let report = text(&blocked.stderr);
    assert!(report.contains("an e-mail address (line 2, column 6)"), "{report}");
    assert!(report.contains("a payment card number (line 2, column 46)"), "{report}");
    assert!(!report.contains("ann.lee") && !report.contains("4111 1111"), "{report}");
    assert!(mock.requests().is_empty(), "nothing is sent");

    let allowed = ["run", &tool, "--var", &var, "--dlp", "off"];
    let output = llmtool(&allowed, dir.path(), Some(&config)).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    let sent = mock.requests()[0].body["messages"][0]["content"].as_str().unwrap().to_owned();
    assert!(sent.contains("ann.lee@example.com"));
}

#[tokio::test]
async fn warn_sends_the_prompt_and_says_what_it_holds() {
    let dir = tempfile::tempdir().unwrap();
    let mock = Mock::start(vec![Reply::sse(&[&chunk("ok", Some("stop")), "[DONE]"])]).await;
    let (tool, config) = setup(dir.path(), &mock, "");
    let var = format!("mail={MAIL}");
    let output =
        llmtool(&["run", &tool, "--var", &var, "--dlp", "warn"], dir.path(), Some(&config)).await;
    assert!(output.status.success());
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("warning: the prompt holds 2 sensitive values and is sent as it is"),
        "{stderr}"
    );
    assert!(!stderr.contains("ann.lee"));
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test]
async fn scan_reports_kinds_and_places_and_never_values() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes.txt");
    std::fs::write(
        &file,
        format!("Notes\n{MAIL}\nssh://deploy:hunter2hunter2@git.example.com/x\n"),
    )
    .unwrap();
    let path = file.to_str().unwrap();
    let output = llmtool(&["scan", path], dir.path(), None).await;
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        text(&output.stdout),
        format!(
            "{path}:2:6: an e-mail address (high confidence)\n{path}:2:46: a payment card number (high confidence)\n{path}:3:7: credentials in a URL (high confidence)\n3 sensitive values found\n"
        )
    );
    let json = llmtool(&["scan", path, "--format", "json"], dir.path(), None).await;
    let report: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let kinds: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["email", "payment_card", "url_credentials"]);
    assert!(!text(&json.stdout).contains("hunter2"));

    let clean = llmtool(&["scan", "../../examples/teach-me-anything.json"], dir.path(), None).await;
    assert_eq!(clean.status.code(), Some(0), "{}", text(&clean.stdout));
}

#[tokio::test]
async fn scan_a_folder_scans_the_tool_files_in_it() {
    let dir = tempfile::tempdir().unwrap();
    let tools = dir.path().join("tools");
    std::fs::create_dir(&tools).unwrap();
    let tool = |prompt: &str| {
        serde_json::json!({"model_prompt": prompt, "metadata": {"prompt_name": "T"}}).to_string()
    };
    std::fs::write(tools.join("leaky.json"), tool(&format!("Write to {MAIL}"))).unwrap();
    std::fs::write(tools.join("clean.json"), tool("Write a haiku")).unwrap();
    // Not a tool file: left out, as `check` leaves it out.
    std::fs::write(tools.join("notes.txt"), MAIL).unwrap();
    let folder = tools.to_str().unwrap();
    let output = llmtool(&["scan", folder], dir.path(), None).await;
    assert_eq!(output.status.code(), Some(1));
    let shown = text(&output.stdout);
    assert!(shown.contains("leaky.json:1:") && shown.contains("in model_prompt"), "{shown}");
    assert!(!shown.contains("notes.txt") && shown.ends_with("found in 2 files\n"), "{shown}");
    let json = llmtool(&["scan", folder, "--format", "json"], dir.path(), None).await;
    let report: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(report.as_array().unwrap().len(), 2, "{report}");
}

#[tokio::test]
async fn scan_places_values_in_a_tool_file_across_escapes() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("reply.json");
    // Escapes before each value (`\n`, `\u00e9`, an invalid `\q`), so decoded and written
    // offsets differ; a value written with an escape inside it maps to its whole written form.
    let tool = r#"{
  "model_prompt": "Reply.\nCaf\u00e9 \q card 5500 0000 0000 0004.\nMail: ann\u0040example.com",
  "metadata": {"prompt_name": "Reply", "variables": []}
}"#;
    std::fs::write(&file, tool).unwrap();
    let json =
        llmtool(&["scan", file.to_str().unwrap(), "--format", "json"], dir.path(), None).await;
    assert_eq!(json.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let written: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| &tool[f["start"].as_u64().unwrap() as usize..f["end"].as_u64().unwrap() as usize])
        .collect();
    assert_eq!(written, ["5500 0000 0000 0004", r"ann\u0040example.com"]);
    let human = llmtool(&["scan", file.to_str().unwrap()], dir.path(), None).await;
    let card_column = tool.lines().nth(1).unwrap().find("5500").unwrap() + 1;
    assert!(text(&human.stdout).contains(&format!(":2:{card_column}: a payment card number")));

    // After a byte-order mark (which `check` and `render` allow) it is still a tool file,
    // and the mark is no column.
    std::fs::write(&file, format!("\u{feff}{tool}")).unwrap();
    let marked = text(&llmtool(&["scan", file.to_str().unwrap()], dir.path(), None).await.stdout);
    assert!(marked.contains(&format!(":2:{card_column}: a payment card number in model_prompt")));
    assert!(marked.contains("an e-mail address in model_prompt"), "{marked}");
}

#[tokio::test]
async fn a_bad_dlp_table_is_a_usage_error_said_once() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "[dlp]\nignore = [\"ip_adress\"]\n").unwrap();
    let tool = "../../examples/teach-me-anything.json";
    for args in [&["run", tool, "--var", "topic=tides", "--dry-run"][..], &["scan", tool][..]] {
        let output = llmtool(args, dir.path(), Some(&config)).await;
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let said = text(&output.stderr);
        assert_eq!(
            said.matches("`ip_adress` in `ignore` is neither").count(),
            1,
            "{args:?}: {said}"
        );
    }
}

#[tokio::test]
async fn scan_refuses_a_binary_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("image.bin");
    std::fs::write(&file, b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR ann@example.com").unwrap();
    let output = llmtool(&["scan", file.to_str().unwrap()], dir.path(), None).await;
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("is not a text file"), "{}", text(&output.stderr));
    assert!(output.stdout.is_empty());
}

/// `llmtool mcp` over standard input and output: initializes, then calls the one tool in
/// `tools` with `mail` and returns the call's result.
async fn mcp_call(tools: &Path, data_dir: &Path, config: &Path, policy: &str, mail: &str) -> Value {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_llmtool"))
        .args(["mcp", "--dlp", policy])
        .arg(tools)
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .env("LLMTOOL_CONFIG", config)
        .env("LLMTOOL_DATA_DIR", data_dir)
        .env("MOCK_KEY", KEY)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let messages = [
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "dlp-test", "version": "1"}}}),
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "reply", "arguments": {"mail": mail}}}),
    ];
    for message in messages {
        stdin.write_all(format!("{message}\n").as_bytes()).await.unwrap();
    }
    loop {
        let line = tokio::time::timeout(std::time::Duration::from_secs(30), lines.next_line())
            .await
            .expect("the server answers within 30 s")
            .unwrap()
            .expect("the server answers before it ends");
        let message: Value = serde_json::from_str(&line).unwrap();
        if message["id"] == 2 {
            return message["result"].clone();
        }
    }
}

#[tokio::test]
async fn the_mcp_server_redacts_and_blocks_tool_calls() {
    let dir = tempfile::tempdir().unwrap();
    let answer = serde_json::json!({
        "choices": [{ "message": { "role": "assistant", "content": "Wrote to [EMAIL_1]." },
                      "finish_reason": "stop" }],
    });
    let mock = Mock::start(vec![Reply::json(200, answer.to_string())]).await;
    let tools = dir.path().join("tools");
    std::fs::create_dir_all(&tools).unwrap();
    let (tool, config) = setup(&tools, &mock, "");
    std::fs::rename(&tool, tools.join("reply.llmtool.json")).unwrap();
    std::fs::rename(&config, dir.path().join("config.toml")).unwrap();
    let config = dir.path().join("config.toml");

    let redacted = mcp_call(&tools, dir.path(), &config, "redact", MAIL).await;
    assert_eq!(redacted["isError"], false, "{redacted}");
    assert_eq!(redacted["content"][0]["text"], "Wrote to ann.lee@example.com.", "{redacted}");
    let sent = mock.requests()[0].body["messages"][0]["content"].as_str().unwrap().to_owned();
    assert_eq!(sent, "Answer this mail:\nFrom [EMAIL_1]: please charge card [CARD_1] again.");

    let blocked = mcp_call(&tools, dir.path(), &config, "block", MAIL).await;
    assert_eq!(blocked["isError"], true, "{blocked}");
    let said = blocked["content"][0]["text"].as_str().unwrap();
    assert!(said.contains("an e-mail address") && said.contains("a payment card"), "{said}");
    assert!(!said.contains("ann.lee") && !said.contains("4111 1111"), "{said}");
    assert_eq!(mock.requests().len(), 1, "a blocked call sends nothing");
}
