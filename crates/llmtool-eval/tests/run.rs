//! Test files run against the scripted mock provider: every case on the model, repeated,
//! passing when enough runs pass; a weighted assertion and a case threshold decide a run; an
//! answer outside the tool's expected output fails its run; a rerun answers from the cache and
//! sends nothing, and a changed case is sent again.

use std::time::Duration;

use llmtool_config::{Config, Env};
use llmtool_eval::{Cache, Options, init, run_file};
use llmtool_providers::resolve::Providers;
use llmtool_providers::transport::RetryPolicy;
use llmtool_runtime::{Runtime, RuntimeOptions, TestsFile};
use llmtool_testkit::{Mock, Reply};

const TOOL: &str = r#"{"model_prompt": "Label this review: {{review}}", "metadata": {"prompt_name": "Label",
  "description": "Labels.", "model_version": ["mock/m"],
  "variables": [{"name": "review", "type": "text", "description": "A review."}],
  "expected_output": {"type": "limited", "allowed_values": ["positive", "negative"]}}}"#;

const TESTS: &str = r#"{
  "assert": [{"type": "one_of", "value": ["positive", "negative"]}],
  "cases": [
    {"name": "happy", "vars": {"review": "Loved it"},
     "assert": [{"type": "equals", "value": "positive"}]},
    {"name": "half right is enough", "vars": {"review": "Meh"}, "threshold": 0.5,
     "assert": [{"type": "equals", "value": "positive"}, {"type": "max_tokens", "value": 0, "weight": 0.5}]}
  ]
}"#;

fn answer(text: &str) -> Reply {
    let body = serde_json::json!({
        "choices": [{ "message": { "role": "assistant", "content": text }, "finish_reason": "stop" }],
        "usage": { "prompt_tokens": 9, "completion_tokens": 1 },
    });
    Reply::json(200, body.to_string())
}

fn runtime(mock: &Mock) -> Runtime {
    let config = format!(
        "[providers.mock]\napi = \"openai\"\nbase_url = \"{}/v1\"\napi_key_env = \"MOCK_KEY\"\njson_schema = false\n",
        mock.url
    );
    let providers =
        Providers::new(Config::parse(&config).unwrap(), Env::from_pairs([("MOCK_KEY", "k-1")]));
    let retry = RetryPolicy { base_delay: Duration::from_millis(1), ..RetryPolicy::default() };
    Runtime::new(providers, RuntimeOptions { retry, ..RuntimeOptions::default() }).unwrap()
}

#[tokio::test]
async fn cases_repeat_pass_by_count_and_a_rerun_comes_from_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("label.json"), TOOL).unwrap();
    std::fs::write(dir.path().join("label.tests.json"), TESTS).unwrap();
    // happy: positive, positive, then an answer outside the allowed values three times (the
    // first try and its two repairs). half right: positive three times.
    let replies =
        ["positive", "positive", "nope", "nope", "nope", "positive", "positive", "positive"];
    let mock = Mock::start(replies.iter().map(|t| answer(t)).collect()).await;
    let runtime = runtime(&mock);
    let file = TestsFile::load(&dir.path().join("label.tests.json"), 1 << 20, None).unwrap();
    assert!(!file.has_errors(), "{:?}", file.diagnostics);
    let options = Options {
        models: Vec::new(),
        repeat: 3,
        min_pass: 2,
        cache: Some(Cache::new(dir.path().join("cache"))),
        // One at a time: the mock answers in order.
        jobs: 1,
    };
    let result = run_file(&runtime, &file, &options).await;
    assert_eq!(result.models, ["mock/m"]);
    let happy = &result.cases[0];
    assert_eq!((happy.passed_runs, happy.needed, happy.pass), (2, 2, true), "{happy:#?}");
    assert_eq!(happy.line, 4);
    assert!(happy.runs[2].error.is_some(), "the third answer missed the allowed values");
    let half = &result.cases[1];
    // The shared one_of and equals pass (weight 1 each), max_tokens 0 fails (weight 0.5):
    // 2 of 2.5, over the case's 0.5.
    assert!(half.pass && (half.runs[0].score - 0.8).abs() < 1e-9, "{half:#?}");
    let sent = mock.requests().len();
    assert_eq!(sent, 8);

    // Again: every answer from the cache, nothing sent, the same verdicts.
    let again = run_file(&runtime, &file, &options).await;
    assert_eq!(mock.requests().len(), sent);
    assert!(again.cases.iter().flat_map(|c| &c.runs).all(|r| r.cached));
    assert_eq!(again.passed(), result.passed());

    // A changed case is new work: sent again (the mock has no replies left, so it fails).
    std::fs::write(dir.path().join("label.tests.json"), TESTS.replace("Loved it", "Adored it"))
        .unwrap();
    let changed = TestsFile::load(&dir.path().join("label.tests.json"), 1 << 20, None).unwrap();
    let third = run_file(&runtime, &changed, &options).await;
    assert!(mock.requests().len() > sent);
    assert!(!third.cases[0].runs[0].cached);
    assert!(third.cases[1].runs.iter().all(|r| r.cached));
}

#[tokio::test]
async fn a_judge_grades_with_its_reason_kept() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("label.json"), TOOL).unwrap();
    let tests = r#"{"cases": [{"name": "judged", "vars": {"review": "Loved it"},
      "assert": [{"type": "judge", "rubric": "The label fits the review.", "model": "mock/m", "threshold": 0.7}]}]}"#;
    std::fs::write(dir.path().join("label.tests.json"), tests).unwrap();
    let replies =
        [answer("positive"), answer(r#"{"score": 0.8, "reason": "It is a happy review."}"#)];
    let mock = Mock::start(replies.to_vec()).await;
    let runtime = runtime(&mock);
    let file = TestsFile::load(&dir.path().join("label.tests.json"), 1 << 20, None).unwrap();
    let options = Options { models: Vec::new(), repeat: 1, min_pass: 1, cache: None, jobs: 1 };
    let result = run_file(&runtime, &file, &options).await;
    let judged = &result.cases[0].runs[0].assertions[0];
    assert!(judged.pass && (judged.score - 0.8).abs() < 1e-12, "{judged:?}");
    assert_eq!(judged.reason.as_deref(), Some("It is a happy review."));
    // The judge saw the question, the answer and the rubric.
    let asked = mock.requests()[1].body.to_string();
    assert!(
        asked.contains("Loved it")
            && asked.contains("positive")
            && asked.contains("The label fits"),
        "{asked}"
    );
}

#[tokio::test]
async fn the_starter_file_loads_and_passes_on_every_model_named() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("label.json"), TOOL).unwrap();
    let tool = llmtool_format::Document::from_text(TOOL.to_owned()).tool.unwrap();
    let starter = init::starter(&tool, "label.json");
    let path = dir.path().join("label.tests.json");
    std::fs::write(&path, serde_json::to_string_pretty(&starter).unwrap()).unwrap();
    let mock = Mock::start(vec![answer("negative"), answer("positive")]).await;
    let runtime = runtime(&mock);
    let file = TestsFile::load(&path, 1 << 20, None).unwrap();
    assert!(!file.has_errors(), "{:?}", file.diagnostics);
    let options = Options {
        models: vec!["mock/first".into(), "mock/second".into()],
        repeat: 1,
        min_pass: 1,
        cache: None,
        jobs: 1,
    };
    let result = run_file(&runtime, &file, &options).await;
    assert_eq!(result.models, ["mock/first", "mock/second"]);
    let verdicts: Vec<(&str, bool)> =
        result.cases.iter().map(|case| (case.model.as_str(), case.pass)).collect();
    assert_eq!(verdicts, [("mock/first", true), ("mock/second", true)], "{result:#?}");
    let asked: Vec<String> = mock
        .requests()
        .iter()
        .map(|request| request.body["model"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(asked, ["first", "second"], "each model is asked once");
}
