//! The Streamable HTTP endpoint under abuse: foreign hosts and origins, missing tokens,
//! malformed bodies, a flood of sessions, more tool calls than it runs at once; and the quick
//! answers, which must be what the session worker would have said.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::ConnectInfo;
use llmtool_mcp::transport::{self, Connection, HttpOptions};
use llmtool_mcp::{
    AnswerFuture, Library, LibraryOptions, Only, RunLimits, Runner, SERVER_BUSY, Server,
};
use serde_json::{Value, json};
use tower::ServiceExt as _;

const ACCEPT: &str = "application/json, text/event-stream";

/// A runner that waits for `release` before it answers.
struct GatedRunner {
    release: Arc<tokio::sync::Semaphore>,
}

impl Runner for GatedRunner {
    fn is_remote(&self, _tool: &llmtool_format::model::Tool) -> bool {
        false
    }

    fn answer(
        &self,
        _tool: llmtool_format::model::Tool,
        _prompt: String,
        _subject: llmtool_runtime::Subject,
    ) -> AnswerFuture {
        let release = self.release.clone();
        Box::pin(async move {
            let _ = release.acquire().await.unwrap();
            Ok("done".to_owned().into())
        })
    }
}

/// A server of one tool, `greeter`, whose variable has a default.
fn server(limits: RunLimits, release: Arc<tokio::sync::Semaphore>) -> Server {
    let folder = tempfile::tempdir().unwrap();
    let tool = json!({"model_prompt": "Greet {{who}}.", "metadata": {"prompt_name": "Greeter",
        "variables": [{"name": "who", "type": "text", "default": "everyone"}]}});
    std::fs::write(folder.path().join("greeter.json"), tool.to_string()).unwrap();
    let options = LibraryOptions { name_prefix: String::new(), ..LibraryOptions::default() };
    let (library, problems) = Library::load(&[folder.path().to_path_buf()], &options, None);
    assert!(problems.is_empty() && library.entries().len() == 1);
    Server::with_limits(library, Arc::new(GatedRunner { release }), Only::Both, limits)
}

/// A server whose tools answer at once.
fn plain_server() -> Server {
    server(RunLimits::default(), Arc::new(tokio::sync::Semaphore::new(1000)))
}

/// Serves `server` on a loopback port; returns its URL.
async fn serve(server: &Server, options: HttpOptions) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}{}", listener.local_addr().unwrap(), transport::MCP_PATH);
    let server = server.clone();
    tokio::spawn(async move {
        transport::serve_http(&server, listener, &options, std::future::pending()).await
    });
    url
}

fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

/// A POST of JSON to `url`, accepting what the transport answers.
fn json_post(url: &str) -> reqwest::RequestBuilder {
    client().post(url).header("accept", ACCEPT).header("content-type", "application/json")
}

fn initialize(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}})
}

async fn post(url: &str, headers: &[(&str, &str)], body: &str) -> (u16, String) {
    let mut request = json_post(url).body(body.to_owned());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.unwrap();
    (response.status().as_u16(), response.text().await.unwrap())
}

/// The JSON-RPC message of an answer sent as JSON or as one SSE event.
fn message(body: &str) -> Value {
    let data =
        body.lines().filter_map(|l| l.strip_prefix("data:")).map(str::trim).find(|d| !d.is_empty());
    serde_json::from_str(data.unwrap_or(body)).unwrap()
}

#[tokio::test]
async fn foreign_origins_and_hosts_are_refused() {
    let url = serve(&plain_server(), HttpOptions::default()).await;
    let body = initialize(1).to_string();
    assert_eq!(post(&url, &[], &body).await.0, 200);
    assert_eq!(post(&url, &[("origin", "http://localhost:5173")], &body).await.0, 200);
    assert_eq!(post(&url, &[("origin", "https://evil.example")], &body).await.0, 403);
    assert_eq!(post(&url, &[("origin", "null")], &body).await.0, 403);
    assert_eq!(post(&url, &[("host", "evil.example")], &body).await.0, 403, "DNS rebinding");
    assert_eq!(post(&url, &[("host", "localhost")], &body).await.0, 200);

    let allowed = HttpOptions {
        allowed_origins: vec!["https://app.example.org".into()],
        allowed_hosts: vec!["mcp.example.org".into()],
        ..HttpOptions::default()
    };
    let url = serve(&plain_server(), allowed).await;
    assert_eq!(post(&url, &[("origin", "https://app.example.org")], &body).await.0, 200);
    assert_eq!(post(&url, &[("host", "mcp.example.org")], &body).await.0, 200);
}

#[tokio::test]
async fn a_loopback_host_name_from_another_machine_is_refused() {
    let server = plain_server();
    let router = transport::router(&server, &HttpOptions::default());
    let ask = |host: &'static str, peer: &str| {
        let connection = Connection {
            peer: peer.parse::<SocketAddr>().unwrap(),
            local: "192.0.2.1:8765".parse().unwrap(),
        };
        let request = axum::http::Request::post(transport::MCP_PATH)
            .header("host", host)
            .header("accept", ACCEPT)
            .header("content-type", "application/json")
            .extension(ConnectInfo(connection))
            .body(Body::from(initialize(1).to_string()))
            .unwrap();
        router.clone().oneshot(request)
    };
    assert_eq!(ask("localhost:8765", "192.0.2.50:4000").await.unwrap().status(), 403);
    assert_eq!(ask("127.0.0.1:8765", "192.0.2.50:4000").await.unwrap().status(), 403);
    assert_eq!(ask("192.0.2.1:8765", "192.0.2.50:4000").await.unwrap().status(), 200);
    assert_eq!(ask("localhost:8765", "127.0.0.1:4000").await.unwrap().status(), 200);
}

#[tokio::test]
async fn a_token_is_required_when_set() {
    let options =
        HttpOptions { token: Some("s3cret-token-value".into()), ..HttpOptions::default() };
    let url = serve(&plain_server(), options).await;
    let body = initialize(1).to_string();
    let response = json_post(&url).body(body.clone()).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 401);
    assert_eq!(response.headers()["www-authenticate"], "Bearer");
    assert_eq!(post(&url, &[("authorization", "Bearer wrong")], &body).await.0, 401);
    assert_eq!(post(&url, &[("authorization", "Bearer s3cret-token-valu")], &body).await.0, 401);
    assert_eq!(post(&url, &[("authorization", "Bearer s3cret-token-value")], &body).await.0, 200);
    assert_eq!(post(&url, &[("authorization", "bearer s3cret-token-value")], &body).await.0, 200);
}

#[tokio::test]
async fn malformed_bodies_are_json_rpc_errors() {
    let url = serve(&plain_server(), HttpOptions::default()).await;
    let (status, body) = post(&url, &[], "{\"jsonrpc\": \"2.0\", \"id\": 1,").await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(message(&body)["error"]["code"], -32700, "{body}");
    let (status, body) = post(&url, &[], "[1, 2, 3]").await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(message(&body)["error"]["code"], -32600, "{body}");
    let small = HttpOptions { max_body_bytes: 1000, ..HttpOptions::default() };
    let url = serve(&plain_server(), small).await;
    let (status, _) = post(&url, &[], &format!("{{\"pad\": \"{}\"}}", "x".repeat(5000))).await;
    assert_eq!(status, 413);
}

/// Opens a session; returns its id.
async fn open_session(url: &str) -> String {
    let response = json_post(url).body(initialize(1).to_string()).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let id = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let _ = response.text().await;
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let sent = post(
        url,
        &[("mcp-session-id", &id), ("mcp-protocol-version", "2025-06-18")],
        &initialized.to_string(),
    )
    .await;
    assert_eq!(sent.0, 202, "{}", sent.1);
    id
}

async fn list_tools(url: &str, session: &str) -> u16 {
    let request = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    post(
        url,
        &[("mcp-session-id", session), ("mcp-protocol-version", "2025-06-18")],
        &request.to_string(),
    )
    .await
    .0
}

#[tokio::test]
async fn past_the_session_cap_the_least_recently_used_session_is_closed() {
    let options = HttpOptions { max_sessions: 3, ..HttpOptions::default() };
    let url = serve(&plain_server(), options).await;
    let first = open_session(&url).await;
    let second = open_session(&url).await;
    let third = open_session(&url).await;
    assert_eq!(list_tools(&url, &first).await, 200, "using the first makes the second the oldest");
    let fourth = open_session(&url).await;
    assert_eq!(list_tools(&url, &second).await, 404, "the least recently used was closed");
    for session in [&first, &third, &fourth] {
        assert_eq!(list_tools(&url, session).await, 200);
    }
    for _ in 0..20 {
        open_session(&url).await;
    }
    let live = [&first, &third, &fourth];
    let mut alive = 0;
    for session in live {
        if list_tools(&url, session).await == 200 {
            alive += 1;
        }
    }
    assert_eq!(alive, 0, "20 newer sessions pushed the old ones out");
}

#[tokio::test]
async fn tool_calls_past_the_queue_are_refused_as_busy() {
    let release = Arc::new(tokio::sync::Semaphore::new(0));
    let server = server(RunLimits { concurrent: 1, queued: 1 }, release.clone());
    let url = serve(&server, HttpOptions::default()).await;
    let name = {
        let library = server.library();
        library.entries()[0].name.clone()
    };
    let session = open_session(&url).await;
    let call = |id: u64| {
        let (url, name, session) = (url.clone(), name.clone(), session.clone());
        async move {
            let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": name, "arguments": {}}});
            let headers =
                [("mcp-session-id", session.as_str()), ("mcp-protocol-version", "2025-06-18")];
            let (_, body) = post(&url, &headers, &request.to_string()).await;
            message(&body)
        }
    };
    let running = tokio::spawn(call(1));
    tokio::time::sleep(Duration::from_millis(200)).await;
    let waiting = tokio::spawn(call(2));
    tokio::time::sleep(Duration::from_millis(200)).await;
    let refused = call(3).await;
    assert_eq!(refused["error"]["code"], SERVER_BUSY, "{refused}");
    assert!(refused["error"]["message"].as_str().unwrap().contains("busy"));
    release.add_permits(2);
    for task in [running, waiting] {
        let answer = tokio::time::timeout(Duration::from_secs(10), task).await.unwrap().unwrap();
        assert_eq!(answer["result"]["content"][0]["text"], "done", "{answer}");
    }
}

/// Sends `method` with `params` in `session`; the HTTP status, content type and message (or
/// the body of a refusal).
async fn ask(url: &str, session: &str, method: &str, params: Value) -> (u16, String, Value) {
    let request = json!({"jsonrpc": "2.0", "id": 9, "method": method, "params": params});
    let response = json_post(url)
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", "2025-06-18")
        .body(request.to_string())
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let kind = response.headers().get("content-type").map_or("", |v| v.to_str().unwrap());
    let kind = kind.to_owned();
    let body = response.text().await.unwrap();
    let answer = if status == 200 { message(&body) } else { Value::String(body) };
    (status, kind, answer)
}

#[tokio::test]
async fn quick_answers_are_the_session_workers_answers() {
    let server = plain_server();
    let url = serve(&server, HttpOptions::default()).await;
    let session = open_session(&url).await;
    let name = server.library().entries()[0].name.clone();
    let cases = [
        ("prompts/get", json!({"name": name, "arguments": {"who": "the crew"}})),
        ("prompts/get", json!({"name": name})),
        ("prompts/get", json!({"name": "nothing-of-that-name"})),
        ("prompts/list", json!({})),
        ("tools/list", json!({})),
    ];
    for (method, params) in cases {
        let (status, kind, quick) = ask(&url, &session, method, params.clone()).await;
        assert_eq!((status, kind.as_str()), (200, "application/json"), "{method} {quick}");
        // A progress token needs the session's worker: the same request goes through rmcp.
        let mut tracked = params;
        tracked["_meta"] = json!({"progressToken": 1});
        let (status, kind, worker) = ask(&url, &session, method, tracked).await;
        assert_eq!((status, kind.as_str()), (200, "text/event-stream"), "{method} {worker}");
        assert_eq!(quick, worker, "{method}");
    }
    let (_, _, rendered) = ask(&url, &session, "prompts/get", json!({"name": name})).await;
    let text = &rendered["result"]["messages"][0]["content"]["text"];
    assert_eq!(text, "Greet everyone.", "{rendered}");
}

#[tokio::test]
async fn quick_answers_need_an_initialized_session() {
    let url = serve(&plain_server(), HttpOptions::default()).await;
    let (status, _, _) = ask(&url, "no-such-session", "tools/list", json!({})).await;
    assert_eq!(status, 404, "an unknown session is rmcp's 404");
    // Initialized by `initialize` alone: not yet open, so the worker answers.
    let response = json_post(&url).body(initialize(1).to_string()).send().await.unwrap();
    let session = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let _ = response.text().await;
    let asked = ask(&url, &session, "tools/list", json!({}));
    let (_, kind, _) = tokio::time::timeout(Duration::from_secs(10), asked).await.unwrap();
    assert_ne!(kind, "application/json", "not a quick answer before `initialized`");
    let session = open_session(&url).await;
    assert_eq!(ask(&url, &session, "tools/list", json!({})).await.1, "application/json");
    let close = client().delete(&url).header("mcp-session-id", &session).send().await.unwrap();
    assert!(close.status().is_success(), "{}", close.status());
    assert_eq!(list_tools(&url, &session).await, 404, "a closed session is not answered");
}

#[tokio::test]
async fn a_session_with_no_request_for_its_idle_time_is_closed() {
    let options = HttpOptions { session_idle: Duration::from_secs(1), ..HttpOptions::default() };
    let url = serve(&plain_server(), options).await;
    let (used, unused) = (open_session(&url).await, open_session(&url).await);
    // Quick answers count as use: the one asked every 300 ms stays open.
    for _ in 0..10 {
        assert_eq!(list_tools(&url, &used).await, 200);
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    assert_eq!(list_tools(&url, &unused).await, 404, "idle for 3 s, past its 1 s");
    assert_eq!(list_tools(&url, &used).await, 200);
}

#[tokio::test]
async fn a_tool_call_longer_than_the_idle_time_keeps_its_session() {
    let release = Arc::new(tokio::sync::Semaphore::new(0));
    let server = server(RunLimits::default(), release.clone());
    let options = HttpOptions { session_idle: Duration::from_secs(1), ..HttpOptions::default() };
    let url = serve(&server, options).await;
    let session = open_session(&url).await;
    let name = server.library().entries()[0].name.clone();
    let call = {
        let (url, session) = (url.clone(), session.clone());
        tokio::spawn(async move {
            ask(&url, &session, "tools/call", json!({"name": name, "arguments": {}})).await
        })
    };
    // The sweeper looks every second; the call runs for three.
    tokio::time::sleep(Duration::from_secs(3)).await;
    release.add_permits(1);
    let (status, _, answer) = call.await.unwrap();
    assert_eq!(status, 200);
    assert_eq!(answer["result"]["content"][0]["text"], "done", "{answer}");
    assert_eq!(list_tools(&url, &session).await, 200, "the session outlived its idle time");
}

#[tokio::test]
async fn an_accept_with_weights_is_left_to_rmcp() {
    let url = serve(&plain_server(), HttpOptions::default()).await;
    let session = open_session(&url).await;
    let request = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}).to_string();
    let refused = client()
        .post(&url)
        .header("accept", "application/json;Q=0, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-06-18")
        .body(request)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status().as_u16(), 406, "as rmcp answers it");
}
