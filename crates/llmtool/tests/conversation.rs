//! Conversations end to end: `run` then `reply` (and `run -c`, `run --cid`) against the mock
//! provider, the run log's transcript, data-loss prevention across turns, the version a
//! conversation started with, the context window, and `chat` under a real pseudo-terminal.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Duration;

use expectrl::Expect as _;
use llmtool_testkit::{End, Mock, Reply};
use serde_json::{Value, json};

const KEY: &str = "sk-conversation-test-51f0";

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples").join(name)
}

/// A test's own data directory (its run log), and a config naming the mock as provider
/// `mock` with a price (and a context window, when given).
struct Setup {
    data: tempfile::TempDir,
    config: PathBuf,
}

impl Setup {
    fn new(mock: &Mock, max_input: Option<u64>) -> Setup {
        let data = tempfile::tempdir().unwrap();
        let config = data.path().join("config.toml");
        let window = max_input.map(|n| format!("max_input = {n}\n")).unwrap_or_default();
        let text = format!(
            "default_model = \"mock/m\"\n[providers.mock]\napi = \"openai\"\nbase_url = \"{}/v1\"\napi_key_env = \"MOCK_KEY\"\njson_schema = false\n[prices.\"mock/m\"]\ninput = 1.0\noutput = 2.0\n{window}",
            mock.url
        );
        std::fs::write(&config, text).unwrap();
        Setup { data, config }
    }

    fn command(&self, args: &[&str]) -> std::process::Command {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_llmtool"));
        command
            .args(args)
            .env("NO_COLOR", "1")
            .env("XDG_CONFIG_HOME", "/nonexistent")
            .env("LLMTOOL_DATA_DIR", self.data.path())
            .env("LLMTOOL_CONFIG", &self.config)
            .env("MOCK_KEY", KEY)
            .env_remove("LLMTOOL_NO_LOG")
            .env_remove("LLMTOOL_MODEL")
            .env_remove("OPENAI_API_KEY");
        command
    }

    async fn llmtool(&self, args: &[&str]) -> Output {
        let mut command = tokio::process::Command::from(self.command(args));
        command.stdin(Stdio::null());
        command.output().await.unwrap()
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn answer(text: &str) -> Reply {
    let data = [
        json!({"choices": [{"delta": {"content": text}, "finish_reason": null}]}).to_string(),
        r#"{"choices":[{"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":40,"completion_tokens":8,"prompt_tokens_details":{"cached_tokens":32}}}"#.to_owned(),
        "[DONE]".to_owned(),
    ];
    Reply::sse(&data.iter().map(String::as_str).collect::<Vec<_>>())
}

fn messages(mock: &Mock, request: usize) -> Vec<(String, String)> {
    let body = &mock.requests()[request].body;
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (m["role"].as_str().unwrap().to_owned(), m["content"].as_str().unwrap().to_owned())
        })
        .collect()
}

fn teach(topic: &str) -> Vec<String> {
    let tool = example("teach-me-anything.json");
    vec!["run".into(), tool.to_str().unwrap().into(), "--var".into(), format!("topic={topic}")]
}

fn args(list: &[String]) -> Vec<&str> {
    list.iter().map(String::as_str).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn run_then_reply_sends_the_whole_conversation_and_logs_each_turn() {
    let mock = Mock::start(vec![
        answer("Tides come from the Moon."),
        answer("Because gravity weakens with distance."),
        answer("About 12 hours 25 minutes."),
    ])
    .await;
    let setup = Setup::new(&mock, None);
    let mut run = teach("tides");
    run.extend(["--format".into(), "json".into()]);
    let first = setup.llmtool(&args(&run)).await;
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    let shown: Value = serde_json::from_slice(&first.stdout).unwrap();
    let id = shown["conversation"].as_str().unwrap().to_owned();
    assert_eq!(shown["turn"], 1);
    assert_eq!(id.len(), 26, "a ULID: {id}");

    let second = setup.llmtool(&["reply", "Why?"]).await;
    assert_eq!(second.status.code(), Some(0), "{}", text(&second.stderr));
    assert_eq!(text(&second.stdout), "Because gravity weakens with distance.");
    let prompt = messages(&mock, 0)[0].clone();
    assert_eq!(prompt.0, "user");
    assert!(prompt.1.starts_with("Teach me about tides."), "{prompt:?}");
    assert_eq!(
        messages(&mock, 1),
        vec![
            prompt.clone(),
            ("assistant".into(), "Tides come from the Moon.".into()),
            ("user".into(), "Why?".into()),
        ],
        "the original prompt first, then the answer, then the follow-up"
    );
    assert_eq!(mock.requests()[1].body["temperature"], 0.7, "the tool's parameters hold");

    // `run -c` is `reply`; `run --cid` names the conversation.
    let third = setup.llmtool(&["run", "--cid", &id.to_uppercase(), "How often?"]).await;
    assert_eq!(third.status.code(), Some(0), "{}", text(&third.stderr));
    assert_eq!(messages(&mock, 2).len(), 5);
    assert_eq!(messages(&mock, 2)[4], ("user".into(), "How often?".into()));

    let transcript = setup.llmtool(&["logs", "--cid", &id, "--format", "json"]).await;
    assert_eq!(transcript.status.code(), Some(0), "{}", text(&transcript.stderr));
    let kept: Value = serde_json::from_slice(&transcript.stdout).unwrap();
    let turns = kept["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 3, "three runs logged: {kept}");
    for (n, turn) in turns.iter().enumerate() {
        assert_eq!(turn["turn"], n + 1);
        assert_eq!(turn["conversation"], id.as_str());
        // 40 input tokens at $1/M and 8 output at $2/M.
        assert!((turn["cost_usd"].as_f64().unwrap() - 0.000_056).abs() < 1e-9, "{turn}");
        assert_eq!(turn["cached_input_tokens"], 32, "the cached tokens are kept");
    }
    assert_eq!(turns[1]["prompt"], "Why?");
    let markdown = setup.llmtool(&["logs", "--cid", &id, "--format", "markdown"]).await;
    let markdown = text(&markdown.stdout);
    assert!(markdown.starts_with(&format!("# Conversation {id}")), "{markdown}");
    assert!(markdown.contains("## 2. Follow-up\n\nWhy?"), "{markdown}");
    let listed = text(&setup.llmtool(&["logs", "--conversations"]).await.stdout);
    assert!(listed.starts_with(&id) && listed.contains("3 turns"), "{listed}");
    let runs = text(&setup.llmtool(&["logs", "-n", "1"]).await.stdout);
    assert!(runs.contains(&format!("conversation {id} turn 3")), "{runs}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_conversation_is_exit_2_and_nothing_is_sent() {
    let mock = Mock::start(vec![]).await;
    let setup = Setup::new(&mock, None);
    let none = setup.llmtool(&["reply", "Why?"]).await;
    assert_eq!(none.status.code(), Some(2));
    assert!(text(&none.stderr).contains("no conversation to go on with"), "{}", text(&none.stderr));
    let unknown = setup.llmtool(&["reply", "--cid", "01jq0000000000000000000000", "Why?"]).await;
    assert_eq!(unknown.status.code(), Some(2));
    assert!(text(&unknown.stderr).contains("no conversation `01jq0000000000000000000000`"));
    let mixed = setup.llmtool(&["run", "-c", "Why?", "--var", "a=b"]).await;
    assert_eq!(mixed.status.code(), Some(2), "a follow-up takes no values");
    let transcript = setup.llmtool(&["logs", "--cid", "nope"]).await;
    assert_eq!(transcript.status.code(), Some(2));
    assert!(mock.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_follow_up_uses_the_tool_as_the_conversation_started() {
    let mock = Mock::start(vec![answer("First."), answer("Second.")]).await;
    let setup = Setup::new(&mock, None);
    let tool = setup.data.path().join("teach.json");
    std::fs::copy(example("teach-me-anything.json"), &tool).unwrap();
    let run = setup.llmtool(&["run", tool.to_str().unwrap(), "--var", "topic=tides"]).await;
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    let changed = std::fs::read_to_string(&tool)
        .unwrap()
        .replace("\"temperature\": 0.7", "\"temperature\": 0.1")
        .replace("Teach me about", "Tell me of");
    std::fs::write(&tool, changed).unwrap();
    let reply = setup.llmtool(&["run", "-c", "More?"]).await;
    assert_eq!(reply.status.code(), Some(0), "{}", text(&reply.stderr));
    assert_eq!(mock.requests()[1].body["temperature"], 0.7, "the version it started with");
    assert!(messages(&mock, 1)[0].1.starts_with("Teach me about tides"));
}

#[tokio::test(flavor = "multi_thread")]
async fn hidden_values_keep_their_placeholders_in_every_turn() {
    let mock = Mock::start(vec![
        answer("I will write to [EMAIL_1]."),
        answer("[EMAIL_2] and [EMAIL_1] are on it."),
        answer("Noted."),
    ])
    .await;
    let setup = Setup::new(&mock, None);
    let mut run = teach("mail ann@example.com");
    run.extend(["--dlp".into(), "redact".into()]);
    let first = setup.llmtool(&args(&run)).await;
    assert_eq!(text(&first.stdout), "I will write to ann@example.com.", "{}", text(&first.stderr));
    let second = setup.llmtool(&["reply", "Copy bob@example.com and ann@example.com"]).await;
    assert_eq!(second.status.code(), Some(0), "{}", text(&second.stderr));
    assert_eq!(text(&second.stdout), "bob@example.com and ann@example.com are on it.");
    let sent = messages(&mock, 1);
    assert!(sent[0].1.contains("mail [EMAIL_1]"), "{sent:?}");
    assert_eq!(sent[1].1, "I will write to [EMAIL_1].");
    assert_eq!(sent[2].1, "Copy [EMAIL_2] and [EMAIL_1]", "the same value, the same placeholder");
    // The conversation keeps the policy it started under; the user may set another.
    let third = setup.llmtool(&["reply", "--dlp", "off", "Also cy@example.com"]).await;
    assert_eq!(third.status.code(), Some(0), "{}", text(&third.stderr));
    assert_eq!(messages(&mock, 2)[4].1, "Also cy@example.com");
    for request in &mock.requests()[..2] {
        assert!(!request.body.to_string().contains("@example.com"), "no value reaches the model");
    }
    // The owner's transcript shows the values; the log's runs keep the placeholders.
    let transcript = text(&setup.llmtool(&["logs", "--cid", "", "--format", "text"]).await.stderr);
    assert!(transcript.contains("no conversation"), "an empty id is unknown: {transcript}");
    let listed = setup.llmtool(&["logs", "--conversations", "--format", "json"]).await;
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let id = listed[0]["id"].as_str().unwrap();
    let transcript = text(&setup.llmtool(&["logs", "--cid", id]).await.stdout);
    assert!(transcript.contains("Copy bob@example.com and ann@example.com"), "{transcript}");
    let runs = text(&setup.llmtool(&["logs", "--format", "json"]).await.stdout);
    assert!(!runs.contains("ann@") && !runs.contains("bob@"), "runs keep what was sent: {runs}");
}

#[tokio::test(flavor = "multi_thread")]
async fn follow_ups_answer_in_free_text_and_old_turns_leave_a_full_window() {
    let mock = Mock::start(vec![
        answer("go"),
        answer(&"long answer ".repeat(40)),
        answer(&"another long one ".repeat(30)),
        answer("Short."),
    ])
    .await;
    // A tool whose answer must be `go` or `stop`, on a model whose window is 200 tokens.
    let setup = Setup::new(&mock, Some(200));
    let tool = setup.data.path().join("decide.json");
    std::fs::write(
        &tool,
        r#"{"version":"2.1","model_prompt":"Decide about {{plan}}.","metadata":{"prompt_name":"Decide","expected_output":{"type":"limited","allowed_values":["go","stop"]},"variables":[{"name":"plan","type":"text"}]}}"#,
    )
    .unwrap();
    let run = setup.llmtool(&["run", tool.to_str().unwrap(), "--var", "plan=launch"]).await;
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    for question in ["Why go?", "And the risks?"] {
        let reply = setup.llmtool(&["reply", question]).await;
        assert_eq!(reply.status.code(), Some(0), "free text is no miss: {}", text(&reply.stderr));
    }
    let fourth = setup.llmtool(&["reply", "Summarise."]).await;
    assert_eq!(fourth.status.code(), Some(0), "{}", text(&fourth.stderr));
    let said = text(&fourth.stderr);
    assert!(said.contains("turn 2 left out"), "{said}");
    let sent = messages(&mock, 3);
    assert!(sent[0].1.starts_with("Decide about launch."), "the tool's prompt stays: {sent:?}");
    assert_eq!(sent[1].1, "go");
    assert_eq!(sent[2].1, "And the risks?", "turn 3 kept, turn 2 gone");
    assert_eq!(sent.len(), 5);
}

#[tokio::test(flavor = "multi_thread")]
async fn chat_works_in_a_terminal_and_ctrl_c_stops_only_the_answer() {
    let mock = Mock::start(vec![
        answer("Tides come from the Moon."),
        answer("Because of gravity."),
        Reply::sse(&[]).ending(End::Stall),
        answer("Twice a day."),
    ])
    .await;
    let setup = Setup::new(&mock, None);
    let tool = example("teach-me-anything.json");
    let mut command = setup.command(&["chat", tool.to_str().unwrap(), "--var", "topic=tides"]);
    command.env("TERM", "dumb");
    let session = tokio::task::spawn_blocking(move || {
        let mut chat = expectrl::Session::spawn(command).unwrap();
        chat.set_expect_timeout(Some(Duration::from_secs(20)));
        chat.expect("Tides come from the Moon.").unwrap();
        chat.expect("> ").unwrap();
        chat.send_line("Why?").unwrap();
        chat.expect("Because of gravity.").unwrap();
        chat.expect("> ").unwrap();
        chat.send_line("How often?").unwrap();
        chat
    })
    .await
    .unwrap();
    for _ in 0..200 {
        if mock.requests().len() == 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let done = tokio::task::spawn_blocking(move || {
        let mut chat = session;
        chat.send(expectrl::ControlCode::EndOfText).unwrap();
        chat.expect("cancelled").unwrap();
        chat.expect("> ").unwrap();
        chat.send_line("How often, really?").unwrap();
        chat.expect("Twice a day.").unwrap();
        chat.expect("> ").unwrap();
        chat.send(expectrl::ControlCode::EndOfTransmission).unwrap();
        chat.expect(expectrl::Eof).unwrap();
        chat.get_process().wait().unwrap()
    })
    .await
    .unwrap();
    let done = format!("{done:?}");
    assert!(done.starts_with("Exited(") && done.ends_with(", 0)"), "Ctrl-D ends with 0: {done}");
    let last = messages(&mock, 3);
    assert_eq!(last.len(), 5, "the cancelled turn is not sent again: {last:?}");
    assert_eq!(last[3].1, "Because of gravity.");
    assert_eq!(last[4].1, "How often, really?");
    let listed = setup.llmtool(&["logs", "--conversations", "--format", "json"]).await;
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(listed[0]["turns"], 4, "four turns logged, the cancelled one too: {listed}");
}
