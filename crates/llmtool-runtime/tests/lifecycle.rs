//! A run's one lifecycle (`Runtime::execute`): it ends with a report, a failure or a
//! cancellation, and a run of a subject is kept, as it ended, where the runtime keeps runs;
//! a keeper that fails or hangs costs the run nothing.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::sync::{Arc, Mutex};

use llmtool_config::{Config, Env};
use llmtool_format::Document;
use llmtool_format::template::Inputs;
use llmtool_log::{Outcome, Record};
use llmtool_providers::resolve::Providers;
use llmtool_providers::run::RunOptions;
use llmtool_runtime::{
    KeepFuture, LogPolicy, ParamOverrides, RunKeeper, Runner, Runtime, RuntimeOptions, Subject,
    ToKeep,
};
use llmtool_testkit::{End, Mock, Reply};

const SECRET: &str = "mock-secret-key-8086";

/// Keeps records in memory, numbering them; or fails, or never answers.
#[derive(Default)]
struct Kept {
    records: Mutex<Vec<(Subject, Record)>>,
    failing: bool,
    hanging: bool,
}

impl RunKeeper for Kept {
    fn keep<'a>(&'a self, run: &'a ToKeep) -> KeepFuture<'a> {
        let (subject, record) = (&run.subject, &run.record);
        Box::pin(async move {
            if self.hanging {
                std::future::pending::<()>().await;
            }
            if self.failing {
                return Err("the disk is full".to_owned());
            }
            let mut records = self.records.lock().unwrap();
            records.push((subject.clone(), record.clone()));
            Ok(Some(i64::try_from(records.len()).unwrap()))
        })
    }
}

fn on_mock(mock: &Mock) -> Runtime {
    let config = format!(
        "[providers.mock]\napi = \"openai\"\nbase_url = \"{}/v1\"\napi_key_env = \"MOCK_KEY\"\n",
        mock.url
    );
    let providers =
        Providers::new(Config::parse(&config).unwrap(), Env::from_pairs([("MOCK_KEY", SECRET)]));
    Runtime::new(providers, RuntimeOptions::default()).unwrap()
}

fn weather() -> llmtool_format::model::Tool {
    let text = serde_json::json!({
        "model_prompt": "Is it going to rain in {{city}}?",
        "metadata": { "prompt_name": "Weather", "model_version": ["mock/m"],
            "variables": [{ "name": "city", "type": "text" }] },
    });
    Document::from_text(text.to_string()).tool.unwrap()
}

fn subject(tool: &llmtool_format::model::Tool) -> Subject {
    let values = serde_json::json!({ "city": "Oslo" });
    let inputs = Inputs::from_json(&values, &[]).unwrap_or_default();
    Subject {
        by: Some("ann".into()),
        ..Subject::new("test", Some("weather.json".into()), tool, &inputs)
    }
}

/// An answer whole.
fn whole(text: &str) -> Reply {
    let body = serde_json::json!({
        "choices": [{ "message": { "role": "assistant", "content": text }, "finish_reason": "stop" }],
    });
    Reply::json(200, body.to_string())
}

/// An answer streamed in `texts`.
fn streamed(texts: &[&str]) -> Reply {
    let mut events: Vec<String> = texts
        .iter()
        .map(|text| {
            serde_json::json!({ "choices": [{ "delta": { "content": text } }] }).to_string()
        })
        .collect();
    events.push("[DONE]".into());
    Reply::sse(&events.iter().map(String::as_str).collect::<Vec<_>>())
}

#[tokio::test]
async fn a_run_streams_and_is_kept_once_as_it_ended() {
    let mock = Mock::start(vec![streamed(&["Ra", "in."])]).await;
    let keeper = Arc::new(Kept::default());
    let runtime = on_mock(&mock).keeping_runs_in(keeper.clone(), LogPolicy::On);
    let tool = weather();
    let request =
        runtime.request(&tool, "Rain in Oslo?".into(), ParamOverrides::default()).unwrap();
    let mut pieces = Vec::new();
    let subject = subject(&tool);
    let finished = runtime
        .execute(
            &request,
            RunOptions::streamed(true),
            Some(&subject),
            &mut |text| pieces.push(text.to_owned()),
            std::future::pending(),
        )
        .await;
    assert_eq!(pieces.concat(), "Rain.");
    assert_eq!(finished.result.unwrap().output.as_deref(), Some("Rain."));
    assert_eq!(finished.not_kept, None);
    let record = finished.record.unwrap();
    assert_eq!(
        (record.id, record.outcome, record.answer.as_deref()),
        (Some(1), Outcome::Ok, Some("Rain."))
    );
    let kept = keeper.records.lock().unwrap();
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].0.by.as_deref(), Some("ann"), "the keeper learns who ran it");
    assert_eq!(Record { id: Some(1), ..kept[0].1.clone() }, record);
}

#[tokio::test]
async fn a_cancelled_run_is_kept_as_cancelled_and_a_run_without_subject_is_not_kept() {
    // The answer starts, then the server stops sending: only cancelling ends the run.
    let mock = Mock::start(vec![streamed(&["Ra"]).ending(End::Stall), whole("Dry.")]).await;
    let keeper = Arc::new(Kept::default());
    let runtime = on_mock(&mock).keeping_runs_in(keeper.clone(), LogPolicy::HashValues);
    let tool = weather();
    let request = runtime.request(&tool, "Rain?".into(), ParamOverrides::default()).unwrap();
    let subject = subject(&tool);
    let (cancel, cancelled) = tokio::sync::oneshot::channel::<()>();
    let mut first = String::new();
    let mut cancel = Some(cancel);
    let finished = runtime
        .execute(
            &request,
            RunOptions::streamed(true),
            Some(&subject),
            &mut |text| {
                first.push_str(text);
                if let Some(cancel) = cancel.take() {
                    let _ = cancel.send(());
                }
            },
            async {
                let _ = cancelled.await;
            },
        )
        .await;
    assert_eq!(first, "Ra");
    assert!(finished.cancelled(), "{:?}", finished.result);
    let record = finished.record.unwrap();
    assert_eq!(record.outcome, Outcome::Cancelled);
    assert_eq!(record.variables, None, "the policy keeps only the values' hash");

    // A batch row or a test case keeps its own record: nothing reaches the keeper.
    let finished = runtime
        .execute(&request, RunOptions::WHOLE, None, &mut |_| {}, std::future::pending())
        .await;
    assert_eq!(finished.result.unwrap().output.as_deref(), Some("Dry."));
    assert!(finished.record.is_none());
    assert_eq!(keeper.records.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_keeper_that_fails_or_hangs_costs_the_run_nothing() {
    let mock = Mock::start(vec![whole("Sun."), whole("Snow.")]).await;
    let tool = weather();
    let subject = subject(&tool);

    let failing = Arc::new(Kept { failing: true, ..Kept::default() });
    let runtime = on_mock(&mock).keeping_runs_in(failing, LogPolicy::On);
    let answer = runtime.answer(&tool, "Rain?".into(), Some(&subject)).await.unwrap();
    assert_eq!(answer.text, "Sun.");
    let request = runtime.request(&tool, "Rain?".into(), ParamOverrides::default()).unwrap();

    let hanging = Arc::new(Kept { hanging: true, ..Kept::default() });
    let runtime = runtime.keeping_runs_in(hanging, LogPolicy::On);
    let finished = runtime
        .execute(&request, RunOptions::WHOLE, Some(&subject), &mut |_| {}, std::future::pending())
        .await;
    assert_eq!(finished.result.unwrap().output.as_deref(), Some("Snow."));
    let why = finished.not_kept.unwrap();
    assert!(why.contains("2 s"), "{why}");
    assert_eq!(finished.record.unwrap().id, None);
}

#[tokio::test]
async fn a_server_call_dropped_midway_is_cancelled_and_kept_as_cancelled() {
    // MCP's tool call goes through `Runner::answer`: a session that closes drops the call.
    // The model stops being asked (no one would read the answer; the run limit stays true),
    // and the run is still kept, as cancelled.
    let mock = Mock::start(vec![streamed(&["Fo"]).ending(End::Stall)]).await;
    let keeper = Arc::new(Kept::default());
    let runtime = on_mock(&mock).keeping_runs_in(keeper.clone(), LogPolicy::On);
    let tool = weather();
    let call = Runner::answer(&runtime, tool.clone(), "Rain?".into(), subject(&tool));
    let waited = tokio::time::timeout(std::time::Duration::from_millis(300), call).await;
    assert!(waited.is_err(), "the answer stalls until the call is dropped");
    for _ in 0..200 {
        if !keeper.records.lock().unwrap().is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let kept = keeper.records.lock().unwrap();
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].1.outcome, Outcome::Cancelled);
}

/// `request` run whole by `runtime` as a run of `subject`, its record returned, not kept.
async fn run_later(
    runtime: &Runtime,
    request: &llmtool_providers::run::RunRequest,
    subject: &Subject,
) -> (Result<llmtool_providers::run::RunReport, llmtool_runtime::RunError>, Option<ToKeep>) {
    runtime
        .execute_later(
            request,
            RunOptions::WHOLE,
            Some(subject),
            &mut |_| {},
            std::future::pending(),
        )
        .await
}

#[tokio::test]
async fn runs_executed_later_are_kept_only_when_kept_all_together() {
    // A batch runs its rows with `execute_later` and keeps each group's runs at once: a run
    // does not wait on the writing of another's record.
    let mock = Mock::start(vec![whole("Sun."), whole("Snow.")]).await;
    let keeper = Arc::new(Kept::default());
    let runtime = on_mock(&mock).keeping_runs_in(keeper.clone(), LogPolicy::On);
    let tool = weather();
    let request = runtime.request(&tool, "Rain?".into(), ParamOverrides::default()).unwrap();
    let subject = subject(&tool);
    let mut runs = Vec::new();
    for answer in ["Sun.", "Snow."] {
        let (result, run) = run_later(&runtime, &request, &subject).await;
        assert_eq!(result.unwrap().output.as_deref(), Some(answer));
        runs.push(run.expect("a run of a subject has a record to keep"));
    }
    assert!(keeper.records.lock().unwrap().is_empty(), "nothing is kept before keep_all");
    let kept = runtime.keep_all(runs).await;
    let kept: Vec<_> =
        kept.into_iter().map(|(record, problem)| (record.id, record.answer, problem)).collect();
    assert_eq!(
        kept,
        [(Some(1), Some("Sun.".to_owned()), None), (Some(2), Some("Snow.".to_owned()), None)]
    );
    assert_eq!(keeper.records.lock().unwrap().len(), 2);

    // A runtime that keeps no runs has nothing to keep later.
    let runtime = runtime.keeping_runs_in(keeper.clone(), LogPolicy::Off);
    let mock = Mock::start(vec![whole("Fog.")]).await;
    let request = on_mock(&mock).request(&tool, "Rain?".into(), ParamOverrides::default()).unwrap();
    let (result, run) = run_later(&runtime, &request, &subject).await;
    assert_eq!(result.unwrap().output.as_deref(), Some("Fog."));
    assert!(run.is_none());
}
