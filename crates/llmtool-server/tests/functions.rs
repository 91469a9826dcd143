//! Tools that call tools on the server: a tool that names a library tool in
//! `metadata.functions` offers it to its model; the call runs that tool as the caller (kept as
//! their run), is streamed as `call` and `result` events and kept with the turn for the studio's
//! thread; and a tool of another team is not found, so nothing is sent.

use crate::support::{Library, answer, events, streamed_text};

use llmtool_registry::Role;
use llmtool_runtime::RuntimeOptions;
use llmtool_testkit::{Mock, Reply};
use reqwest::Method;
use serde_json::{Value, json};

/// A streamed answer that calls `name` with `arguments`.
fn calling(name: &str, arguments: &Value) -> Reply {
    let call = json!({ "index": 0, "id": "call_1", "function": { "name": name, "arguments": arguments.to_string() } });
    let asked = json!({ "choices": [{ "index": 0, "delta": { "tool_calls": [call] } }] });
    let ended = json!({ "choices": [{ "index": 0, "delta": {}, "finish_reason": "tool_calls" }], "usage": { "prompt_tokens": 100, "completion_tokens": 10 } });
    Reply::sse(&[&asked.to_string(), &ended.to_string(), "[DONE]"])
}

/// An answer given whole (not streamed).
fn whole(text: &str) -> Reply {
    let body = json!({
        "choices": [{ "index": 0, "message": { "content": text }, "finish_reason": "stop" }],
        "usage": { "prompt_tokens": 20, "completion_tokens": 5 }
    });
    Reply::json(200, body.to_string())
}

/// A tool on the mock's model, asking `prompt` of its one value `text`, calling `functions`.
fn tool(name: &str, prompt: &str, functions: &Value) -> Value {
    json!({
        "model_prompt": prompt,
        "metadata": {
            "prompt_name": name, "description": format!("{name}."), "model_version": ["mock/m"],
            "timestamp": "2026-12-04T10:00:00Z",
            "variables": [{ "name": "text", "type": "text", "description": "The text." }],
            "functions": functions
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_calls_a_tool_its_caller_sees_and_another_teams_tool_is_not_found() {
    let mock = Mock::start(vec![
        calling("summarize", &json!({ "text": "Tides rise twice a day." })),
        // The called tool's run is answered whole, as every run a function makes.
        whole("Twice daily."),
        answer("Brief: tides rise twice daily."),
    ])
    .await;
    let tools = [
        ("summarize", tool("Summarize", "Summarize: {{text}}", &json!([]))),
        (
            "brief",
            tool("Brief", "Brief me on {{text}}", &json!([{ "tool": "registry:summarize" }])),
        ),
        ("peek", tool("Peek", "Peek at {{text}}", &json!([{ "tool": "registry:secret" }]))),
        ("secret", tool("Secret", "Keep {{text}}", &json!([]))),
    ];
    let curated = [("summarize", "red"), ("brief", "red"), ("peek", "red"), ("secret", "blue")];
    let lib = Library::start_with(&mock, &tools, RuntimeOptions::default(), &curated).await;
    for team in ["red", "blue"] {
        lib.state.store.create_team(team, true).await.unwrap();
    }
    let red = lib.member("rae@example.org", Role::Viewer, &["red"]).await;

    let body = json!({ "values": { "text": "tides" } });
    let ran = lib.call(Method::POST, "/tools/brief/run".into(), &red, Some(body.clone())).await;
    assert_eq!(ran.status(), 200);
    let streamed = events(&ran.text().await.unwrap());
    let names: Vec<&str> = streamed.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names, ["start", "call", "result", "text", "done"], "{streamed:?}");
    assert_eq!(
        streamed[1].1,
        json!({ "name": "summarize", "arguments": "{\"text\":\"Tides rise twice a day.\"}" })
    );
    assert_eq!(streamed[2].1["result"], "Twice daily.");
    assert_eq!(streamed[2].1["failed"], false);
    assert_eq!(streamed_text(&streamed), "Brief: tides rise twice daily.");
    let done = &streamed[4].1;
    assert_eq!(done["calls"][0]["name"], "summarize", "{done}");

    // The called tool ran as the caller's own run, on its own prompt.
    let sent = mock.requests();
    assert_eq!(sent.len(), 3);
    assert_eq!(sent[0].body["tools"][0]["function"]["name"], "summarize");
    assert_eq!(sent[1].body["messages"][0]["content"], "Summarize: Tides rise twice a day.");
    assert_eq!(sent[2].body["messages"][2]["content"], "Twice daily.");
    let usage: Value =
        lib.call(Method::GET, "/usage?by=origin".into(), &red, None).await.json().await.unwrap();
    let origins: Vec<&str> =
        usage.as_array().unwrap().iter().map(|row| row["key"].as_str().unwrap()).collect();
    assert!(origins.contains(&"function"), "{usage}");

    // The studio's thread shows the call with the turn.
    let conversation = streamed[0].1["conversation"].as_str().unwrap();
    let thread: Value = lib
        .call(Method::GET, format!("/conversations/{conversation}"), &red, None)
        .await
        .json()
        .await
        .unwrap();
    let calls = &thread["messages"][0]["calls"];
    assert_eq!(calls[0]["name"], "summarize", "{thread}");
    assert_eq!(calls[0]["result"], "Twice daily.");

    // A tool of another team is not found, as on every path: nothing is sent.
    let peek = lib.call(Method::POST, "/tools/peek/run".into(), &red, Some(body)).await;
    assert_eq!(peek.status(), 404);
    let problem: Value = peek.json().await.unwrap();
    assert!(problem["detail"].as_str().unwrap().contains("secret"), "{problem}");
    assert_eq!(mock.requests().len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_integration_serves_only_the_tools_it_is_assigned_to() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("shop.db");
    {
        use sqlx::Connection as _;
        let options =
            sqlx::sqlite::SqliteConnectOptions::new().filename(&path).create_if_missing(true);
        let mut connection = sqlx::SqliteConnection::connect_with(&options).await.unwrap();
        sqlx::raw_sql(include_str!("../../../examples/data/shop.sql"))
            .execute(&mut connection)
            .await
            .unwrap();
    }
    let mock = Mock::start(vec![
        calling(
            "query_database",
            &json!({ "database": "shop", "sql": "SELECT count(*) AS n FROM orders" }),
        ),
        answer("Six orders."),
    ])
    .await;
    let reads = json!([{ "builtin": "query_database", "database": "shop" }]);
    let tools = [
        ("shop-assistant", tool("Shop assistant", "Answer: {{text}}", &reads)),
        ("other-assistant", tool("Other assistant", "Answer: {{text}}", &reads)),
    ];
    let lib = Library::start_with(&mock, &tools, RuntimeOptions::default(), &[]).await;
    let admin = lib.token("ops", Role::Admin).await;
    let url = format!("sqlite:{}", path.display());
    let added = lib
        .call(
            Method::POST,
            "/integrations".into(),
            &admin,
            Some(json!({
                "name": "shop", "api": "sqlite", "key": url, "tools": ["shop-assistant"]
            })),
        )
        .await;
    assert_eq!(added.status(), 201);
    let added = added.text().await.unwrap();
    assert!(!added.contains("shop.db"), "the connection URL never comes back: {added}");
    let tested: Value = lib
        .call(Method::POST, "/integrations/shop/test".into(), &admin, None)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        (tested["ok"].as_bool(), tested["detail"].as_str()),
        (Some(true), Some("ok\n1\n(1 row)"))
    );
    let audit: Value =
        lib.call(Method::GET, "/audit".into(), &admin, None).await.json().await.unwrap();
    assert!(audit.to_string().contains("\"shop\""), "the change is audited: {audit}");
    assert!(!audit.to_string().contains("shop.db"), "never the URL: {audit}");

    let body = json!({ "values": { "text": "How many orders?" } });
    let ran = lib
        .call(Method::POST, "/tools/shop-assistant/run".into(), &lib.viewer, Some(body.clone()))
        .await;
    let streamed = events(&ran.text().await.unwrap());
    let result = streamed.iter().find(|(name, _)| name == "result").map(|(_, data)| data.clone());
    assert_eq!(result.unwrap()["result"], "n\n6\n(1 row)", "{streamed:?}");
    assert_eq!(streamed_text(&streamed), "Six orders.");

    // Not assigned to this tool: the database is not there for its runs, and nothing is sent.
    let other =
        lib.call(Method::POST, "/tools/other-assistant/run".into(), &lib.viewer, Some(body)).await;
    assert_eq!(other.status(), 422);
    let problem: Value = other.json().await.unwrap();
    assert!(problem["detail"].as_str().unwrap().contains("database `shop`"), "{problem}");
    assert_eq!(mock.requests().len(), 2);
}
