//! `llmtool test` through the binary, against the scripted mock: the table, exit 1 on a
//! failing case, `JUnit` XML and GitHub annotations naming the case's line, each answer sent
//! for logged as a run, a rerun answered from the cache (nothing sent, nothing logged), `--no-cache`, a broken test file annotated on its lines, and
//! `--init` writing a starter that checks and passes on the local model.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::path::Path;
use std::process::{Command, Output, Stdio};

use llmtool_testkit::{Mock, Reply};

const TOOL: &str = r#"{"model_prompt": "Label this review: {{review}}", "metadata": {"prompt_name": "Label",
  "description": "Labels.", "model_version": ["mock/m"],
  "variables": [{"name": "review", "type": "text", "description": "A review."}],
  "expected_output": {"type": "limited", "allowed_values": ["positive", "negative"]}}}"#;

const TESTS: &str = "cases:\n  - name: happy\n    vars:\n      review: Loved it\n    assert:\n      - type: equals\n        value: positive\n  - name: sad\n    vars:\n      review: Broke at once\n    assert:\n      - type: equals\n        value: negative\n";

fn setup(dir: &Path, mock: &Mock) {
    std::fs::write(dir.join("label.json"), TOOL).unwrap();
    std::fs::write(dir.join("label.tests.yaml"), TESTS).unwrap();
    let config = format!(
        "[providers.mock]\napi = \"openai\"\nbase_url = \"{}/v1\"\napi_key_env = \"MOCK_KEY\"\njson_schema = false\n",
        mock.url
    );
    std::fs::write(dir.join("config.toml"), config).unwrap();
}

fn llmtool(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_llmtool"))
        .current_dir(dir)
        .args(args)
        .args(["--config", "config.toml"])
        .env("MOCK_KEY", "mock-key-3")
        .env("LLMTOOL_DATA_DIR", dir.join("data"))
        .env("LLMTOOL_MODELS_DIR", llmtool_local::store::models_dir().unwrap())
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// The runs the test command logged in the run log of `dir`.
fn logged_tests(dir: &Path) -> Vec<serde_json::Value> {
    let out = Command::new(env!("CARGO_BIN_EXE_llmtool"))
        .args(["logs", "--origin", "test", "--format", "json"])
        .env("LLMTOOL_DATA_DIR", dir.join("data"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap().as_array().unwrap().clone()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_case_is_shown_annotated_and_a_rerun_sends_nothing() {
    let answer = |label: &str| {
        let body = serde_json::json!({"choices": [{"message": {"role": "assistant", "content": label}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 9, "completion_tokens": 1}});
        Reply::json(200, body.to_string())
    };
    // happy gets "positive"; sad also gets "positive" and fails.
    let mock = Mock::start(vec![answer("positive"); 4]).await;
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path(), &mock);
    let out = llmtool(dir.path(), &["test", "--junit", "report.xml"]);
    let shown = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{shown}{}", text(&out.stderr));
    assert!(shown.contains("happy") && shown.contains("pass 1/1"), "{shown}");
    assert!(shown.contains("FAIL sad on mock/m (./label.tests.yaml:8)"), "{shown}");
    assert!(shown.contains("cases passed") && shown.contains("1/2 (50%)"), "{shown}");
    // Nothing priced: `$0`, as every report writes no cost.
    assert!(shown.contains("1 of 2 case(s) passed") && shown.contains("; $0 spent"), "{shown}");
    assert!(!shown.contains("$-"), "no negative zero: {shown}");
    let junit = std::fs::read_to_string(dir.path().join("report.xml")).unwrap();
    assert!(
        junit.contains(r#"tests="2" failures="1""#) && junit.contains(r#"line="8""#),
        "{junit}"
    );
    let sent = mock.requests().len();
    assert_eq!(sent, 2);
    // Each answer sent for is a run in the run log, with its case's values.
    let logged = logged_tests(dir.path());
    assert_eq!(logged.len(), 2, "{logged:?}");
    assert!(logged.iter().any(|run| run["variables"]["review"] == "Broke at once"));
    assert!(logged.iter().all(|run| run["tool_path"] == "./label.json"), "{logged:?}");

    let again = llmtool(dir.path(), &["test", "--format", "github"]);
    assert_eq!(mock.requests().len(), sent, "every answer came from the cache");
    let annotations = text(&again.stdout);
    assert!(
        annotations.starts_with(
            "::error file=./label.tests.yaml,line=8,title=llmtool test::sad on mock/m"
        ),
        "{annotations}"
    );
    assert_eq!(logged_tests(dir.path()).len(), 2, "an answer from the cache is not a run");
    let json = llmtool(dir.path(), &["test", "--format", "json", "--no-cache"]);
    assert_eq!(mock.requests().len(), sent + 2, "--no-cache sends every run");
    assert_eq!(logged_tests(dir.path()).len(), 4);
    let results: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(results[0]["cases"][1]["runs"][0]["assertions"][0]["type"], "equals");
}

#[test]
fn a_broken_test_file_is_annotated_on_its_lines_and_nothing_runs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("label.json"), TOOL).unwrap();
    std::fs::write(dir.path().join("config.toml"), "").unwrap();
    let broken = "cases:\n  - name: typo\n    vars:\n      reveiw: Loved it\n    assert:\n      - type: equals\n        value: maybe\n";
    std::fs::write(dir.path().join("label.tests.yaml"), broken).unwrap();
    let out = llmtool(dir.path(), &["test", "--format", "github"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let annotations = text(&out.stdout);
    // A YAML file's problems are placed at their case's line.
    let lines: Vec<&str> = annotations.lines().collect();
    assert_eq!(lines.len(), 2, "{annotations}");
    assert!(lines.iter().all(|l| l.contains("file=./label.tests.yaml,line=2,")), "{annotations}");
    assert!(
        annotations.contains("::error ") && annotations.contains("title=LT804 (case-variables)::"),
        "{annotations}"
    );
    assert!(annotations.contains("::warning ") && annotations.contains("LT805"), "{annotations}");
}

#[test]
fn init_writes_a_starter_that_checks_and_never_overwrites() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("label.json"), TOOL).unwrap();
    std::fs::write(dir.path().join("config.toml"), "").unwrap();
    let out = llmtool(dir.path(), &["test", "--init", "label.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let starter: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("label.tests.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(starter["cases"].as_array().unwrap().len(), 1, "one case, with the defaults");
    assert_eq!(starter["assert"][0]["type"], "one_of", "{starter}");
    let check = Command::new(env!("CARGO_BIN_EXE_llmtool"))
        .args(["check", dir.path().join("label.tests.json").to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(check.status.code(), Some(0), "{}", text(&check.stdout));
    let again = llmtool(dir.path(), &["test", "--init", "label.json"]);
    assert_eq!(again.status.code(), Some(2));
    assert!(text(&again.stderr).contains("exists already"));
}

/// The starter expects only what the tool's expected output promises, so it passes on the
/// local model as written: a limited tool and a JSON tool.
#[test]
fn init_writes_a_starter_that_passes_on_the_local_model() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("label.json"), TOOL).unwrap();
    let json_tool = r#"{"model_prompt": "Describe {{city}} as JSON with a name and a country.",
      "metadata": {"prompt_name": "City", "parameters": {"max_tokens": 40},
      "variables": [{"name": "city", "type": "text", "description": "A city.", "default": "Lyon"}],
      "expected_output": {"type": "text", "format": "JSON"}}}"#;
    std::fs::write(dir.path().join("city.json"), json_tool).unwrap();
    std::fs::write(dir.path().join("config.toml"), "").unwrap();
    for tool in ["label.json", "city.json"] {
        let out = llmtool(dir.path(), &["test", "--init", tool]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
    let out = llmtool(dir.path(), &["test", ".", "--model", "local", "--seed", "7", "--no-cache"]);
    let shown = text(&out.stdout) + &text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    assert!(shown.contains("2 of 2 case(s) passed"), "{shown}");
}
