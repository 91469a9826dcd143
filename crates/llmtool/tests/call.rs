//! `llmtool call` end to end: the binary run with the arguments a model gave a tool's exported
//! function form, against the mock provider: the arguments read back into the tool's values
//! (renamed parameters, `null` for one not given, from standard input too), the answer printed
//! (with usage and cost as JSON), the run logged as a `call`; wrong arguments refused (exit 1)
//! before anything is sent.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::path::Path;
use std::process::{Output, Stdio};

use llmtool_testkit::{Mock, Reply};
use serde_json::json;
use tokio::io::AsyncWriteExt as _;

/// A tool whose first variable's name is no parameter name (`received email`): its
/// exported parameter is `received_email`.
const TOOL: &str = include_str!("fixtures/reply-helper.json");

fn answer(text: &str) -> Reply {
    let body = json!({
        "choices": [{ "index": 0, "message": { "role": "assistant", "content": text }, "finish_reason": "stop" }],
        "usage": { "prompt_tokens": 1000, "completion_tokens": 500 }
    });
    Reply::json(200, body.to_string())
}

/// A folder with the tool and a config naming the mock as provider `mock`, priced.
fn setup(mock: &Mock) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("reply.json"), TOOL).unwrap();
    let config = format!(
        "[providers.mock]\napi = \"openai\"\nbase_url = \"{}/v1\"\napi_key_env = \"MOCK_KEY\"\n[prices.\"mock/m\"]\ninput = 1.0\noutput = 2.0\n",
        mock.url
    );
    std::fs::write(dir.path().join("config.toml"), config).unwrap();
    dir
}

/// The binary in `dir`, `stdin` written to its standard input.
async fn llmtool(dir: &Path, args: &[&str], stdin: &str) -> Output {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_llmtool"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("NO_COLOR", "1")
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .env("LLMTOOL_DATA_DIR", dir.join("data"))
        .env("MOCK_KEY", "sk-call-test-51d2")
        .env_remove("LLMTOOL_NO_LOG")
        .env_remove("OPENAI_API_KEY")
        .env_remove("LLMTOOL_MODEL")
        .env_remove("LLMTOOL_CONFIG")
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    // A command that refuses its arguments exits before it reads: the pipe it closed is its
    // answer, not the test's failure.
    match input.write_all(stdin.as_bytes()).await {
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => {}
        written => written.unwrap(),
    }
    drop(input);
    child.wait_with_output().await.unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_models_arguments_run_the_tool_and_print_its_answer() {
    let mock = Mock::start(vec![answer("Dear Ann, Friday suits me."), answer("Thanks!")]).await;
    let dir = setup(&mock);
    let arguments = r#"{"received_email": "Can we meet on Friday?", "tone": null, "points": ["dates", "thanks"]}"#;
    let args = ["call", "reply.json", arguments, "--config", "config.toml", "--no-stream"];
    let out = llmtool(dir.path(), &args, "").await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "Dear Ann, Friday suits me.");
    let sent = &mock.requests()[0].body["messages"];
    let prompt = sent.as_array().unwrap().last().unwrap()["content"].as_str().unwrap().to_owned();
    assert_eq!(
        prompt, "Reply to Can we meet on Friday? in a warm tone, covering dates, thanks.",
        "a renamed parameter, a default for null, a list"
    );

    // From standard input, as JSON with its usage and cost; the run log says it was a call.
    let args =
        ["call", "reply.json", "-", "--config", "config.toml", "--format", "json", "--no-stream"];
    let out = llmtool(
        dir.path(),
        &args,
        r#"{"received email": "Thanks for the quote.", "points": ["thanks"]}"#,
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["output"], "Thanks!");
    assert_eq!(report["usage"]["input_tokens"], 1000);
    assert!((report["cost"].as_f64().unwrap() - 0.002).abs() < 1e-12, "{report}");
    let logs = llmtool(dir.path(), &["logs", "--format", "json"], "").await;
    let logged: serde_json::Value = serde_json::from_slice(&logs.stdout).unwrap();
    let origins: Vec<&str> =
        logged.as_array().unwrap().iter().map(|r| r["origin"].as_str().unwrap()).collect();
    assert_eq!(origins, ["call", "call"], "{logged}");
}

#[tokio::test(flavor = "multi_thread")]
async fn wrong_arguments_are_refused_before_anything_is_sent() {
    let mock = Mock::start(vec![]).await;
    let dir = setup(&mock);
    let cases = [
        (r#"{"received_email": ["a", "b"]}"#, "`received_email` must be a string, found an array"),
        (
            r#"{"received_email": "Hi", "subject": "x"}"#,
            "`subject` is not a parameter of this tool",
        ),
        (r#"{"received_email": "Hi", "tone": "rude"}"#, "`rude` is not an allowed value of `tone`"),
        (r#"{"tone": "warm"}"#, "no value for `received email`"),
        (r#"{"received_email": "#, "the arguments are not JSON"),
        (r#"["Hi"]"#, "must be a JSON object"),
        ("@/etc/passwd", "the arguments are not JSON"),
        // Accepted once, the last copy winning: one value to serde, another to other readers.
        (
            r#"{"received_email": "Hi", "received_email": "Bye"}"#,
            "key `received_email` appears twice in this object",
        ),
    ];
    for (arguments, said) in cases {
        let args = ["call", "reply.json", arguments, "--config", "config.toml"];
        let out = llmtool(dir.path(), &args, "").await;
        assert_eq!(out.status.code(), Some(1), "{arguments}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains(said), "{arguments}: {}", text(&out.stderr));
    }
    // A value is the model's text: `@FILE` is never read.
    let mock_text = Mock::start(vec![answer("ok")]).await;
    let dir = setup(&mock_text);
    let arguments = r#"{"received_email": "@/etc/hostname", "points": "price"}"#;
    let args = ["call", "reply.json", arguments, "--config", "config.toml", "--no-stream"];
    let out = llmtool(dir.path(), &args, "").await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let sent = mock_text.requests()[0].body.to_string();
    assert!(sent.contains("Reply to @/etc/hostname in a warm tone"), "{sent}");
    assert!(mock.requests().is_empty(), "nothing was sent for a refused call");
    // Both from standard input is a usage error.
    let out = llmtool(dir.path(), &["call", "-", "-"], "{}").await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
}

/// `export --with-runner` prints, beside the schema, the command that runs the tool: `llmtool
/// call` on its absolute path; that command, given the model's arguments, answers.
#[tokio::test(flavor = "multi_thread")]
async fn an_export_with_its_runner_names_the_command_that_answers() {
    let mock = Mock::start(vec![answer("Noted.")]).await;
    let dir = setup(&mock);
    let args = ["export", "reply.json", "--to", "anthropic", "--with-runner"];
    let out = llmtool(dir.path(), &args, "").await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let exported: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(exported["tool"]["name"], "reply_helper");
    assert!(exported["tool"]["input_schema"]["properties"]["received_email"].is_object());
    let command = exported["run"]["command"].as_array().unwrap();
    let absolute = std::fs::canonicalize(dir.path().join("reply.json")).unwrap();
    assert_eq!(
        command,
        &[json!("llmtool"), json!("call"), json!(absolute.to_str().unwrap()), json!("-")]
    );
    // The command, as a framework runs it (from another folder).
    let elsewhere = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    let args = [
        "call",
        absolute.to_str().unwrap(),
        "-",
        "--config",
        config.to_str().unwrap(),
        "--no-stream",
    ];
    let out = llmtool(elsewhere.path(), &args, r#"{"received_email": "Hi", "points": []}"#).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "Noted.");
    // Not for a target that is no function tool, nor for a tool from standard input.
    for (args, stdin) in [
        (vec!["export", "reply.json", "--to", "prompty", "--with-runner"], ""),
        (vec!["export", "-", "--to", "openai", "--with-runner"], TOOL),
    ] {
        let out = llmtool(dir.path(), &args, stdin).await;
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains("--with-runner"), "{}", text(&out.stderr));
    }
}
