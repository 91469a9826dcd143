//! Team-private publishing: a new tool published with a team's tag is that team's alone, on
//! every path another team's member could reach it by (the tool's routes, search, `/mcp`);
//! `all` is added only when no team's tag is given, or when it is asked for; an existing
//! tool keeps its tags; and an editor cannot publish with another team's tag.

use crate::support::{self, Library};

use llmtool_registry::Role;
use llmtool_testkit::Mock;
use reqwest::Method;
use serde_json::{Value, json};

/// Publishes `tool` as `slug` with `tags` (comma-separated) as the holder of `token`.
async fn publish(
    lib: &Library,
    token: &str,
    slug: &str,
    tags: &str,
    tool: &Value,
) -> reqwest::Response {
    let url = format!("{}/tools?slug={slug}&tags={tags}", lib.base);
    let request = reqwest::Client::new().post(url).bearer_auth(token).body(tool.to_string());
    request.send().await.unwrap()
}

/// The names `/mcp` lists to the holder of `token`, as tools.
async fn mcp_tools(lib: &Library, token: &str) -> Vec<String> {
    let url = format!("{}/mcp", lib.base.trim_end_matches("/api/v1"));
    let hello = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let (_, _, session) = support::mcp_request(&url, Some(token), None, &hello).await;
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    support::mcp_request(&url, Some(token), session.as_deref(), &initialized).await;
    let asked = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let (_, listed, _) = support::mcp_request(&url, Some(token), session.as_deref(), &asked).await;
    let tools = listed["result"]["tools"].as_array().cloned().unwrap_or_default();
    tools.iter().map(|tool| tool["name"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_published_for_a_team_is_that_teams_alone() {
    let mock = Mock::start(vec![]).await;
    let lib = Library::start(&mock, &[]).await;
    // As `llmtool serve` does: the MCP lists follow the library's changes.
    lib.state.follow_changes().await.unwrap();
    for team in ["sales", "support"] {
        lib.state.store.create_team(team, false).await.unwrap();
    }
    let sales = lib.member("sam@example.org", Role::Editor, &["sales"]).await;
    let support = lib.member("sue@example.org", Role::Editor, &["support"]).await;
    let poet = support::poet();

    let mut deal = poet.clone();
    deal["metadata"]["prompt_name"] = json!("Deal Poet");
    let made = publish(&lib, &sales, "deal-poet", "sales", &deal).await;
    assert_eq!(made.status(), 201);
    let made: Value = made.json().await.unwrap();
    assert_eq!(made["tags"], json!(["sales"]), "no `all` beside a team's tag");
    // There for the team's own, once MCP has read its lists again (a moment after a change).
    let tool = lib.call(Method::GET, "/tools/deal-poet".into(), &sales, None).await;
    assert_eq!(tool.status(), 200);
    let mut listed = Vec::new();
    for _ in 0..100 {
        listed = mcp_tools(&lib, &sales).await;
        if listed.iter().any(|name| name.to_lowercase().contains("deal")) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(listed.iter().any(|name| name.to_lowercase().contains("deal")), "{listed:?}");
    // Not there for another team's member: the tool, its search, MCP.
    let tool = lib.call(Method::GET, "/tools/deal-poet".into(), &support, None).await;
    assert_eq!(tool.status(), 404);
    let found: Value =
        lib.call(Method::GET, "/tools?q=poet".into(), &support, None).await.json().await.unwrap();
    assert_eq!(found["tools"], json!([]), "{found}");
    let theirs = mcp_tools(&lib, &support).await;
    assert!(!theirs.iter().any(|name| name.to_lowercase().contains("deal")), "{theirs:?}");

    // Tags that are no team's leave the tool everyone's; `all` asked for is kept.
    let plain: Value =
        publish(&lib, &sales, "plain-poet", "poetry", &poet).await.json().await.unwrap();
    assert_eq!(plain["tags"], json!(["all", "poetry"]));
    let both: Value =
        publish(&lib, &sales, "open-poet", "sales,all", &poet).await.json().await.unwrap();
    assert_eq!(both["tags"], json!(["all", "sales"]));
    let untagged: Value = publish(&lib, &sales, "any-poet", "", &poet).await.json().await.unwrap();
    assert_eq!(untagged["tags"], json!(["all"]));
    // An existing tool keeps its own tags.
    let edited =
        json!({"model_prompt": "Write a verse about {{topic}}.", "metadata": deal["metadata"]});
    let again: Value =
        publish(&lib, &sales, "deal-poet", "poetry", &edited).await.json().await.unwrap();
    assert_eq!((again["version"].as_u64(), &again["tags"]), (Some(2), &json!(["sales"])));
    // An editor publishes for their own teams only.
    let theirs = publish(&lib, &support, "sneaky-poet", "sales", &poet).await;
    assert_eq!(theirs.status(), 403);
    let gone = lib.call(Method::GET, "/tools/sneaky-poet".into(), &sales, None).await;
    assert_eq!(gone.status(), 404, "nothing was published");
}
