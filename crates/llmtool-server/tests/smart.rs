//! Smart tools on the team server: refused unless its operator starts it with `--smart-tools`;
//! then run in the sandbox through `POST /tools/{slug}/run` (streamed, failures located in the
//! code) and MCP's `tools/call`, for the members who see the tool and nobody else, each
//! `llm()` call admitted and charged like any run (a team over its hard budget gets an
//! exception in the code, and the provider nothing), and requirements never fetched because a
//! client asked.
//!
//! The Python runtime is the one the test command installs (`LLMTOOL_SANDBOX_DIR`).

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use crate::support;

use crate::support::{Library, events, json_of, mcp_request, streamed_text};
use llmtool_registry::{Budget, NewMember, Period, Role, Scope};
use llmtool_runtime::RuntimeOptions;
use llmtool_server::{new_token, token_hash};
use llmtool_testkit::{End, Mock, Reply};
use serde_json::{Value, json};

const CODE: &str = "def execute(variables):\n    text = variables['text']\n    if not text.strip():\n        raise ValueError('no text to count')\n    print('counted', len(text.split()))\n    summary = llm('Summarise: ' + text, temperature=0)\n    return f\"{len(text.split())} words. {summary}\"\n";

fn smart_tool(code: &str, requirements: &[&str]) -> Value {
    json!({
        "version": "0.1",
        "metadata": {
            "tool_name": "Counter", "tool_code": code, "description": "Counts and sums up.",
            "model_version": ["mock/m"], "expected_output": "text",
            "timestamp": "2026-11-27T00:00:00Z", "requirements": requirements,
            "variables": [{"name": "text", "description": "What to count."}]
        }
    })
}

/// A whole answer, as an `llm()` call asks for one.
fn whole(text: &str) -> Reply {
    let body = json!({
        "choices": [{ "message": { "role": "assistant", "content": text }, "finish_reason": "stop" }],
        "usage": { "prompt_tokens": 20, "completion_tokens": 6 }
    });
    Reply::json(200, body.to_string())
}

fn smart_tools_on() -> RuntimeOptions {
    RuntimeOptions {
        smart: Some(llmtool_runtime::smart::Limits::default()),
        ..RuntimeOptions::default()
    }
}

/// A member of `team` with a viewer token: the token.
async fn member(library: &Library, email: &str, team: &str) -> String {
    let store = &library.state.store;
    let _ = store.create_team(team, true).await;
    let member = NewMember {
        email: email.into(),
        name: email.into(),
        role: Role::Viewer,
        teams: vec![team.into()],
    };
    store.add_members(&[member]).await.unwrap();
    let token = new_token();
    store.create_token(email, Role::Viewer, &token_hash(&token), Some(email)).await.unwrap();
    token
}

async fn run(library: &Library, token: &str, values: Value) -> (u16, String) {
    let response = reqwest::Client::new()
        .post(format!("{}/tools/counter/run", library.base))
        .bearer_auth(token)
        .json(&json!({ "values": values }))
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.text().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_smart_tools_a_smart_run_is_refused_before_anything_runs() {
    let mock = Mock::start(vec![]).await;
    let library = Library::start(&mock, &[("counter", smart_tool(CODE, &[]))]).await;
    let (status, body) = run(&library, &library.viewer, json!({"text": "one two"})).await;
    assert_eq!(status, 422, "{body}");
    assert!(body.contains("--smart-tools"), "{body}");
    assert!(mock.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_smart_tool_runs_for_its_team_and_its_model_calls_are_admitted_and_charged() {
    let mock = Mock::start(vec![whole("Short."), whole("Brief.")]).await;
    let tools = [("counter", smart_tool(CODE, &[]))];
    let library =
        Library::start_with(&mock, &tools, smart_tools_on(), &[("counter", "sales")]).await;
    let store = std::sync::Arc::clone(&library.state.store);
    let sam = member(&library, "sam@example.org", "sales").await;
    let lee = member(&library, "lee@example.org", "legal").await;

    // Another team's member does not see the tool, so cannot run it.
    let (status, body) = run(&library, &lee, json!({"text": "one two three"})).await;
    assert_eq!(status, 404, "{body}");

    let (status, body) = run(&library, &sam, json!({"text": "one two three"})).await;
    assert_eq!(status, 200, "{body}");
    let streamed = events(&body);
    assert_eq!(streamed[0].0, "start");
    assert_eq!(
        (streamed[0].1["kind"].as_str(), streamed[0].1["provider"].as_str()),
        (Some("smart"), Some("sandbox"))
    );
    assert_eq!(streamed_text(&streamed), "3 words. Short.");
    let (name, done) = streamed.last().unwrap();
    assert_eq!(name, "done");
    assert_eq!(
        (done["outcome"].as_str(), done["answer"].as_str()),
        (Some("ok"), Some("3 words. Short.")),
        "{done}"
    );
    assert_eq!(done["printed"], "counted 3\n");
    assert_eq!(done["llm_calls"].as_array().unwrap().len(), 1, "{done}");
    // 20 tokens in at $1 a million, 6 out at $2.
    assert!((done["cost_usd"].as_f64().unwrap() - 0.000_032).abs() < 1e-12, "{done}");
    assert!(done["id"].as_i64().is_some(), "{done}");
    let sent = &mock.requests()[0].body;
    assert_eq!(sent["messages"][0]["content"], "Summarise: one two three");
    assert_eq!(sent["temperature"], 0.0);

    // The call is charged to Sam and the team the tool is curated for; the sandbox run itself
    // costs nothing, and is priced (at zero), not unknown.
    let query = llmtool_registry::SpendQuery {
        from: "2000-01-01".into(),
        to: "2100-01-01".into(),
        ..Default::default()
    };
    let spend = serde_json::to_value(store.spend(&query).await.unwrap()).unwrap();
    assert_eq!(spend["by_team"][0]["key"], "sales", "{spend}");
    assert_eq!(spend["by_member"][0]["key"], "sam@example.org", "{spend}");
    assert!((spend["totals"]["cost_usd"].as_f64().unwrap() - 0.000_032).abs() < 1e-12, "{spend}");
    assert_eq!(spend["totals"]["runs"], 2, "the smart run and its call: {spend}");
    let usage =
        json_of(reqwest::Client::new().get(format!("{}/usage", library.base)).bearer_auth(&sam))
            .await;
    assert_eq!(
        (usage[0]["key"].as_str(), usage[0]["runs"].as_u64()),
        (Some("counter"), Some(2)),
        "{usage}"
    );
    assert_eq!(usage[0]["unpriced_runs"], 0, "{usage}");

    // A failure points at its line of the code.
    let (_, body) = run(&library, &sam, json!({"text": "  "})).await;
    let done = events(&body).pop().unwrap().1;
    assert_eq!(done["outcome"], "failed", "{done}");
    assert!(done["error"].as_str().unwrap().contains("ValueError: no text to count"), "{done}");
    assert_eq!(done["line"], 4, "{done}");

    // Over MCP, for the members who see it.
    let url = library.base.replace("/api/v1", "/mcp");
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "counter", "arguments": {"text": "a b"}}});
    let answer = mcp_call(&url, &sam, &call).await;
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert_eq!(answer["result"]["content"][0]["text"], "2 words. Brief.");
    let answer = mcp_call(&url, &lee, &call).await;
    assert_eq!(
        answer["error"]["code"], -32602,
        "another team's member knows no such tool: {answer}"
    );

    // A hard budget the team has spent: the code's call is refused before the provider hears
    // of it, and the code sees why.
    let budget = Budget {
        scope: Scope::Team,
        name: "sales".into(),
        period: Period::Month,
        limit_usd: 0.000_01,
        warn_at: 0.8,
        hard: true,
        updated_at: String::new(),
    };
    store.set_budget(&budget).await.unwrap();
    let asked = mock.requests().len();
    let (_, body) = run(&library, &sam, json!({"text": "one"})).await;
    let done = events(&body).pop().unwrap().1;
    assert_eq!(done["outcome"], "failed", "{done}");
    assert!(done["error"].as_str().unwrap().contains("budget"), "{done}");
    assert_eq!(mock.requests().len(), asked, "a refused call reaches no provider");
    assert!(!body.contains("mock-secret-key"), "a key never shows");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_goes_away_cancels_the_code_and_the_model_call_it_waits_for() {
    // The model never finishes its answer.
    let mock = Mock::start(vec![Reply::sse(&[&support::chunk("Slow")]).ending(End::Stall)]).await;
    let mut tool = smart_tool(CODE, &[]);
    tool["metadata"]["parameters"] = json!({"max_tokens": 100});
    let tools = [("counter", tool)];
    let library =
        Library::start_with(&mock, &tools, smart_tools_on(), &[("counter", "sales")]).await;
    let sam = member(&library, "sam@example.org", "sales").await;
    let client = reqwest::Client::new();
    let mut response = client
        .post(format!("{}/tools/counter/run", library.base))
        .bearer_auth(&sam)
        .json(&json!({"values": {"text": "one two"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let first = String::from_utf8_lossy(&response.chunk().await.unwrap().unwrap()).into_owned();
    assert!(first.contains("event: start"), "{first}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while mock.requests().is_empty() {
        assert!(std::time::Instant::now() < deadline, "the code never called the model");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    drop(response);

    // Both are kept as cancelled: the smart run, and its call (which so releases what it held
    // against the team's budget).
    let runs =
        || json_of(client.get(format!("{}/tools/counter/runs", library.base)).bearer_auth(&sam));
    let mut kept = runs().await;
    while kept.as_array().unwrap().len() < 2 {
        assert!(std::time::Instant::now() < deadline, "the cancelled runs are not kept: {kept}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        kept = runs().await;
    }
    let mut seen: Vec<(String, String)> = kept
        .as_array()
        .unwrap()
        .iter()
        .map(|run| {
            (
                run["provider"].as_str().unwrap().to_owned(),
                run["outcome"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    seen.sort();
    let cancelled = |provider: &str| (provider.to_owned(), "cancelled".to_owned());
    assert_eq!(seen, [cancelled("mock"), cancelled("sandbox")], "{kept}");
}

/// One MCP tool call by `token` in a session of its own.
async fn mcp_call(url: &str, token: &str, call: &Value) -> Value {
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let (_, _, session) = mcp_request(url, Some(token), None, &initialize).await;
    let session = session.unwrap();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    mcp_request(url, Some(token), Some(&session), &initialized).await;
    mcp_request(url, Some(token), Some(&session), call).await.1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requirements_are_never_fetched_because_a_client_asked() {
    let mock = Mock::start(vec![]).await;
    let code = "import left_pad_never_fetched\ndef execute(variables):\n    return 'x'\n";
    let tool = smart_tool(code, &["left-pad-never-fetched==1.0.0"]);
    let library = Library::start_with(&mock, &[("counter", tool)], smart_tools_on(), &[]).await;
    let (status, body) = run(&library, &library.viewer, json!({"text": "x"})).await;
    assert_eq!(status, 422, "{body}");
    assert!(body.contains("llmtool sandbox pull --requirements"), "{body}");
}
