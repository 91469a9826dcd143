//! The Control Center over HTTP, on each backend, against the scripted mock provider: an admin
//! adds an integration (its key sealed, never answered back), prices its model and tests it; a
//! viewer's run uses it and is charged to their team (in the spend, its CSV, and only their own
//! for them); a team over its hard budget is refused before anything reaches the provider, by
//! the API and over MCP alike; and each change is in the audit log.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use crate::support;

use std::sync::Arc;

use llmtool_mcp::RunLimits;
use llmtool_providers::resolve::Providers;
use llmtool_registry::{NewMember, Publication, Role, SqlStore, Store};
use llmtool_runtime::{Runtime, RuntimeOptions};
use llmtool_server::{Access, Keyring, RateLimiter, ServerState, new_token, token_hash};
use llmtool_testkit::{Mock, Reply};
use reqwest::Method;
use serde_json::{Value, json};

const KEY: &str = "sk-mock-integration-0123456789-wxyz";

fn chunk(text: &str) -> String {
    json!({"choices": [{"index": 0, "delta": {"content": text}}]}).to_string()
}

/// A streamed answer of 1,000 prompt and 500 answer tokens.
fn streamed(text: &str) -> Reply {
    let usage = json!({"choices": [], "usage": {"prompt_tokens": 1000, "completion_tokens": 500}});
    Reply::sse(&[&chunk(text), &usage.to_string(), "[DONE]"])
}

/// The same, whole.
fn whole(text: &str) -> Reply {
    let body = json!({
        "choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 1},
    });
    Reply::json(200, body.to_string())
}

/// What every answer of the test is, gathered to check that the key is in none.
#[derive(Default)]
struct Seen(std::sync::Mutex<String>);

impl Seen {
    fn add(&self, text: &str) -> String {
        self.0.lock().unwrap().push_str(text);
        text.to_owned()
    }
}

/// Publishes `poet`, a tool that runs on the integration `mock`'s model `m`.
async fn publish_poet(store: &dyn Store) {
    let tool = json!({
        "model_prompt": "Write about {{topic}}.",
        "metadata": {"prompt_name": "Poet", "description": "Writes.", "model_version": ["mock/m"],
            "timestamp": "2026-11-23T10:00:00Z", "parameters": {"max_tokens": 100},
            "variables": [{"name": "topic", "type": "text", "description": "What about."}]}
    });
    let publication = Publication::from_text(&tool.to_string(), "tool.json").unwrap();
    store.publish("poet", &publication, None, None).await.unwrap();
}

/// A server of `store` with a keyring and no provider of its own: only what the admins set up
/// runs.
fn library_state(store: &Arc<dyn Store>) -> ServerState {
    let options = RuntimeOptions { only_configured: true, ..RuntimeOptions::default() };
    let runtime = Runtime::new(Providers::default(), options).unwrap();
    ServerState::new(
        Arc::clone(store),
        Access { public_read: false },
        Arc::new(RateLimiter::new(0)),
    )
    .with_keyring(Keyring::parse(&Keyring::new_key()).unwrap())
    .with_runtime(runtime, RunLimits { concurrent: 2, queued: 2 })
}

async fn control_center(store: Arc<dyn Store>) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mock = Mock::start(vec![whole("pong"), streamed("Tides turn.")]).await;
    let admin = new_token();
    store.create_token("ops", Role::Admin, &token_hash(&admin), None).await.unwrap();
    store.create_team("sales", false).await.unwrap();
    let newcomer = NewMember {
        email: "sam@example.org".into(),
        name: "Sam".into(),
        role: Role::Viewer,
        teams: vec!["sales".into()],
    };
    store.add_members(&[newcomer]).await.unwrap();
    let sam = new_token();
    store
        .create_token("sam-cli", Role::Viewer, &token_hash(&sam), Some("sam@example.org"))
        .await
        .unwrap();
    publish_poet(store.as_ref()).await;
    store.add_tag("poet", "sales").await.unwrap();

    let state = library_state(&store);
    let runner = state.library_runner().unwrap();
    let state = state.with_mcp(runner, llmtool_server::McpOptions::default()).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/api/v1", listener.local_addr().unwrap());
    tokio::spawn(llmtool_server::serve(state, listener, std::future::pending()));
    let client = reqwest::Client::new();
    let seen = Seen::default();
    let call = |method: Method, path: &str, token: &str, body: Option<Value>| {
        let request = client.request(method, format!("{base}{path}")).bearer_auth(token);
        let request = match body {
            Some(body) => request.json(&body),
            None => request,
        };
        let seen = &seen;
        async move {
            let response = request.send().await.unwrap();
            let status = response.status().as_u16();
            (status, seen.add(&response.text().await.unwrap()))
        }
    };

    let run = json!({"values": {"topic": "tides"}});

    // The admin adds the integration; its key is sealed and only its last four show.
    let added = json!({"name": "mock", "api": "openai", "base_url": format!("{}/v1", mock.url),
        "key": KEY, "models": ["m"]});
    assert_eq!(call(Method::POST, "/integrations", &sam, Some(added.clone())).await.0, 403);
    let (status, body) = call(Method::POST, "/integrations", &admin, Some(added.clone())).await;
    assert_eq!(status, 201, "{body}");
    let made: Value = serde_json::from_str(&body).unwrap();
    assert_eq!((made["key_hint"].as_str(), made.get("sealed_key")), (Some("wxyz"), None));
    assert_eq!(call(Method::POST, "/integrations", &admin, Some(added)).await.0, 409);
    let bad = json!({"name": "acme", "base_url": "http://127.0.0.1:9/v1"});
    assert_eq!(call(Method::POST, "/integrations", &admin, Some(bad)).await.0, 400);
    // Pointing it elsewhere takes the key again: nobody sends a key to a host of their choosing.
    let elsewhere = json!({"base_url": "http://203.0.113.9/v1"});
    let (status, body) = call(Method::PATCH, "/integrations/mock", &admin, Some(elsewhere)).await;
    assert_eq!(status, 400, "{body}");
    let sealed = store.integrations().await.unwrap()[0].sealed_key.clone().unwrap();
    assert!(sealed.starts_with("v1.") && !sealed.contains(KEY), "{sealed}");

    // "Test" sends one short request, with the key.
    let (status, body) =
        call(Method::POST, "/integrations/mock/test", &admin, Some(json!({}))).await;
    assert_eq!(status, 200, "{body}");
    let tested: Value = serde_json::from_str(&body).unwrap();
    assert_eq!((tested["ok"].as_bool(), tested["detail"].as_str()), (Some(true), Some("pong")));
    let first = &mock.requests()[0];
    assert_eq!(first.headers["authorization"], format!("Bearer {KEY}").as_str());

    // A negotiated price: $1,000 and $2,000 a million tokens.
    let price = json!({"model": "mock/m", "input": 1000.0, "output": 2000.0, "note": "contract 7"});
    assert_eq!(call(Method::PUT, "/prices", &admin, Some(price)).await.0, 204);
    let line_of = |body: &str| -> Value {
        let prices: Value = serde_json::from_str(body).unwrap();
        prices["models"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["model"] == "mock/m")
            .unwrap()
            .clone()
    };
    let admins = line_of(&call(Method::GET, "/prices", &admin, None).await.1);
    assert_eq!(admins["override"]["note"], "contract 7");
    // Sam sees the price of what Sam may run, without the admins' note.
    let line = line_of(&call(Method::GET, "/prices", &sam, None).await.1);
    assert_eq!(
        (line["effective"]["input"].as_f64(), line["override"]["note"].as_str()),
        (Some(1000.0), None)
    );

    // The studio's model list offers it to Sam, priced.
    let (_, models) = call(Method::GET, "/models", &sam, None).await;
    let models: Value = serde_json::from_str(&models).unwrap();
    let ids: Vec<&str> =
        models.as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["mock/m"]);
    assert_eq!(models[0]["input_per_million"].as_f64(), Some(1000.0));

    // Sam's run uses it, and costs 1,000 × $0.001 + 500 × $0.002 = $2.
    let (status, body) = call(Method::POST, "/tools/poet/run", &sam, Some(run.clone())).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("Tides turn."), "{body}");
    let done = body.split("event: done\ndata: ").nth(1).unwrap().lines().next().unwrap();
    let done: Value = serde_json::from_str(done).unwrap();
    assert_eq!(done["cost_usd"].as_f64(), Some(2.0), "{done}");
    assert_eq!(mock.requests()[1].headers["authorization"], format!("Bearer {KEY}").as_str());

    // Under the team `sales` in the spend, and its CSV; Sam sees their own.
    let (_, body) = call(Method::GET, "/spend", &admin, None).await;
    let spend: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(spend["by_team"][0]["key"], "sales", "{spend}");
    assert_eq!(spend["by_team"][0]["cost_usd"].as_f64(), Some(2.0));
    assert_eq!(spend["by_member"][0]["key"], "sam@example.org");
    let (status, csv) = call(Method::GET, "/spend?format=csv", &admin, None).await;
    assert_eq!(status, 200);
    let line = csv.lines().nth(1).unwrap();
    assert!(line.contains(",sales,sam@example.org,poet,mock/m,1,1000,500,2.000000"), "{csv}");
    let (_, theirs) = call(Method::GET, "/spend?member=ops@tokens.invalid", &sam, None).await;
    let theirs: Value = serde_json::from_str(&theirs).unwrap();
    assert_eq!(theirs["totals"]["runs"], 1, "a member sees their own spend, whatever they ask");

    // A hard budget of $2.50 for `sales`: the next run could cost up to about $0.92, so it is
    // refused, and nothing reaches the provider.
    let limit = json!({"limit_usd": 2.5});
    assert_eq!(call(Method::PUT, "/budgets/team/sales", &admin, Some(limit)).await.0, 204);
    let asked = mock.requests().len();
    let (status, body) = call(Method::POST, "/tools/poet/run", &sam, Some(run)).await;
    assert_eq!(status, 402, "{body}");
    let problem: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(problem["type"], "urn:llmtool:problem:over-budget");
    assert_eq!(problem["budget"]["budget"]["name"], "sales");
    assert_eq!(problem["budget"]["spent_usd"].as_f64(), Some(2.0));
    let (_, budgets) = call(Method::GET, "/budgets", &sam, None).await;
    assert!(budgets.contains("\"sales\""), "{budgets}");
    // Over MCP too.
    let url = base.replace("/api/v1", "/mcp");
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let (_, _, session) = support::mcp_request(&url, Some(&sam), None, &initialize).await;
    let session = session.unwrap();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    support::mcp_request(&url, Some(&sam), Some(&session), &initialized).await;
    let tool_call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "poet", "arguments": {"topic": "tides"}}});
    let (_, answer, _) = support::mcp_request(&url, Some(&sam), Some(&session), &tool_call).await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert!(
        answer["result"]["content"][0]["text"].as_str().unwrap().contains("budget"),
        "{answer}"
    );
    assert_eq!(mock.requests().len(), asked, "a refused run reaches no provider");
    let (_, spend) = call(Method::GET, "/spend", &admin, None).await;
    assert!(spend.contains("\"runs\":1,"), "a refused run is counted nowhere: {spend}");

    // Each change is in the audit log, and the key in no answer.
    let (_, log) = call(Method::GET, "/audit?actor=ops&limit=50", &admin, None).await;
    let log: Value = serde_json::from_str(&log).unwrap();
    let actions: Vec<&str> = log["records"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .map(|r| r["action"].as_str().unwrap())
        .collect();
    assert_eq!(actions, ["integration.add", "price.set", "budget.set"]);
    let (_, listed) = call(Method::GET, "/integrations", &admin, None).await;
    assert!(listed.contains("\"ok\":true"), "the test is kept: {listed}");
    let everything = seen.0.lock().unwrap().clone();
    assert!(!everything.contains(KEY) && !everything.contains(&KEY[..20]), "the key was answered");
    assert!(!everything.contains(&sealed), "the sealed key was answered");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_control_center_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> =
        Arc::new(SqlStore::open_sqlite(&dir.path().join("library.db")).await.unwrap());
    control_center(store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_control_center_on_postgres() {
    let Some(database) = llmtool_testkit::postgres::database().await else { return };
    let store: Arc<dyn Store> = Arc::new(SqlStore::connect_postgres(&database.url).await.unwrap());
    control_center(store).await;
}

/// Every model `GET /models` offers runs: each model of an integration, not only its first,
/// and nothing offered is refused afterwards (the picker and the run agree).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_model_offered_runs_and_a_follow_up_may_switch_to_one() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mock = Mock::start(vec![streamed("One."), streamed("Two."), streamed("Three.")]).await;
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> =
        Arc::new(SqlStore::open_sqlite(&dir.path().join("library.db")).await.unwrap());
    let admin = new_token();
    store.create_token("ops", Role::Admin, &token_hash(&admin), None).await.unwrap();
    publish_poet(store.as_ref()).await;
    let state = library_state(&store);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/api/v1", listener.local_addr().unwrap());
    tokio::spawn(llmtool_server::serve(state, listener, std::future::pending()));
    let client = reqwest::Client::new();
    let call = |method: Method, path: &str, body: Option<Value>| {
        let request = client.request(method, format!("{base}{path}")).bearer_auth(&admin);
        let request = match body {
            Some(body) => request.json(&body),
            None => request,
        };
        async move {
            let response = request.send().await.unwrap();
            (response.status().as_u16(), response.text().await.unwrap())
        }
    };
    let added = json!({"name": "mock", "api": "openai", "base_url": format!("{}/v1", mock.url),
        "key": KEY, "models": ["m", "m2"]});
    assert_eq!(call(Method::POST, "/integrations", Some(added)).await.0, 201);

    let (status, body) = call(Method::GET, "/models", None).await;
    assert_eq!(status, 200, "{body}");
    let offered: Vec<Value> = serde_json::from_str(&body).unwrap();
    let mine: Vec<&str> = offered
        .iter()
        .filter_map(|m| m["id"].as_str())
        .filter(|id| id.starts_with("mock/"))
        .collect();
    assert_eq!(mine, ["mock/m", "mock/m2"], "every model of the integration is offered");
    for (n, id) in mine.iter().enumerate() {
        let run = json!({"values": {"topic": "tides"}, "model": id});
        let (status, body) = call(Method::POST, "/tools/poet/run", Some(run)).await;
        assert_eq!(status, 200, "{id} was offered, then refused: {body}");
        assert!(body.contains("event: done"), "{body}");
        assert_eq!(mock.requests()[n].body["model"], id.trim_start_matches("mock/"));
    }

    // A conversation's next turn may switch to any model offered, and to no other.
    let run = json!({"values": {"topic": "tides"}, "model": "mock/m"});
    let (_, body) = call(Method::POST, "/tools/poet/run", Some(run)).await;
    let started = body.lines().find_map(|line| line.strip_prefix("data: ")).unwrap();
    let id = serde_json::from_str::<Value>(started).unwrap()["conversation"]
        .as_str()
        .unwrap()
        .to_owned();
    let messages = format!("/conversations/{id}/messages");
    let elsewhere = json!({"text": "Again?", "model": "elsewhere/x"});
    let (status, body) = call(Method::POST, &messages, Some(elsewhere)).await;
    assert_eq!(status, 422, "{body}");
    let switched = json!({"text": "Again?", "model": "mock/m2"});
    let (status, body) = call(Method::POST, &messages, Some(switched)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(mock.requests().last().unwrap().body["model"], "m2");
    let (_, body) = call(Method::GET, &format!("/conversations/{id}"), None).await;
    let kept: Value = serde_json::from_str(&body).unwrap();
    let models: Vec<&str> =
        kept["messages"].as_array().unwrap().iter().filter_map(|t| t["model"].as_str()).collect();
    assert_eq!(models, ["m", "m2"], "each turn says its model");
}
