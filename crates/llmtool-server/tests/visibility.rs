//! Who sees which tool, on every path, checked against the rule for generated members, teams
//! and tags: a member with a generated role and teams, tools with generated tags (`built-in`
//! among them) in a workspace with the built-in tools on or off, and for each tool the answer
//! of search, the tag counts, the usage figures, the tool's routes, its studio page (with the
//! studio's session cookie) and `/mcp`'s `tools/list` and `prompts/list` compared with what
//! the rule says. (The command line's `search` and `pull` call these routes:
//! `crates/llmtool/tests/library.rs::the_cli_sees_what_its_member_sees`.)

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use crate::support;

use std::collections::BTreeSet;
use std::sync::Arc;

use llmtool_registry::{
    MemberEdit, NewMember, Publication, Role, SqlStore, Store, WorkspaceChange,
};
use llmtool_server::{Access, RateLimiter, ServerState, new_token, token_hash};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::json;

const TEAMS: [&str; 3] = ["sales", "support", "ops"];
const TOOLS: [&str; 3] = ["alpha", "beta", "gamma"];

/// A member's role and teams, each tool's tags, and whether members see the built-in tools.
#[derive(Debug, Clone)]
struct Case {
    role: Role,
    teams: Vec<String>,
    tags: Vec<Vec<String>>,
    built_ins: bool,
}

fn case() -> impl Strategy<Value = Case> {
    let names = |extra: &'static [&'static str]| {
        let pool: Vec<&'static str> = TEAMS.iter().chain(extra).copied().collect();
        prop::sample::subsequence(pool.clone(), 0..=pool.len())
            .prop_map(|names| names.into_iter().map(str::to_owned).collect::<Vec<_>>())
    };
    (
        prop::sample::select(Role::ALL.to_vec()),
        names(&[]),
        prop::collection::vec(names(&["all", "misc", "built-in"]), TOOLS.len()),
        any::<bool>(),
    )
        .prop_map(|(role, teams, tags, built_ins)| Case { role, teams, tags, built_ins })
}

/// The rule, as the issue states it: owners and admins see everything; anyone else the tools
/// tagged `all` or with one of their teams' names, unless they are built-in tools and those
/// are switched off.
fn expected(case: &Case, tags: &[String]) -> bool {
    let built_in_off = !case.built_ins && tags.iter().any(|tag| tag == "built-in");
    case.role >= Role::Admin
        || (tags.iter().any(|tag| tag == "all" || case.teams.contains(tag)) && !built_in_off)
}

/// A tool file named `name`.
fn tool(name: &str) -> Publication {
    let text = json!({
        "model_prompt": format!("{name} about {{{{topic}}}}."),
        "metadata": {"prompt_name": name, "description": "d", "timestamp": "2026-11-23T10:00:00Z",
            "variables": [{"name": "topic", "type": "text", "description": "What about."}]}
    });
    Publication::from_text(&text.to_string(), "t.json").unwrap()
}

/// The names `tools/list` gives, and those `prompts/list` gives.
type Lists = (BTreeSet<String>, BTreeSet<String>);

/// What `token` is shown over MCP, asked twice: before `notifications/initialized`, when the
/// session's worker answers, and after, when the quick answers do. The library may change
/// between the two while a change is still reaching the server, so the caller asks again until
/// both show what the rule says.
async fn mcp_lists(base: &str, token: &str) -> (Lists, Lists) {
    let hello = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let url = format!("{base}/mcp");
    let (_, _, session) = support::mcp_request(&url, Some(token), None, &hello).await;
    let by_worker = mcp_names(&url, token, session.as_deref()).await;
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    support::mcp_request(&url, Some(token), session.as_deref(), &initialized).await;
    let quick = mcp_names(&url, token, session.as_deref()).await;
    (by_worker, quick)
}

/// The names of `tools/list` and of `prompts/list` in `session`.
async fn mcp_names(url: &str, token: &str, session: Option<&str>) -> Lists {
    let mut names = Vec::new();
    for (list, field) in [("tools/list", "tools"), ("prompts/list", "prompts")] {
        let asked = json!({"jsonrpc": "2.0", "id": 2, "method": list});
        let (_, listed, _) = support::mcp_request(url, Some(token), session, &asked).await;
        let found = listed["result"][field].as_array().cloned().unwrap_or_default();
        names.push(found.iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect());
    }
    let prompts = names.pop().unwrap_or_default();
    (names.pop().unwrap_or_default(), prompts)
}

/// A run of `slug` as the server keeps it, for the usage figures.
fn run(slug: &str) -> llmtool_log::Record {
    serde_json::from_value(json!({"started_at": "2026-11-20T10:00:00.000Z", "origin": "server",
        "tool_name": slug, "tool_hash": "0".repeat(64), "variables_hash": "1".repeat(64),
        "provider": "mock", "model": "m", "input_tokens": 10, "output_tokens": 2,
        "cost_usd": 0.01, "repairs": 0, "outcome": "ok"}))
    .unwrap()
}

/// Sets the case in the library: the member's role and teams, each tool's tags.
async fn arrange(store: &dyn Store, case: &Case) {
    let edit = MemberEdit { role: Some(case.role), teams: Some(case.teams.clone()), name: None };
    store.edit_member("pat@example.org", &edit).await.unwrap();
    let change = WorkspaceChange { built_ins: Some(case.built_ins), ..WorkspaceChange::default() };
    store.change_workspace(&change).await.unwrap();
    for (slug, tags) in TOOLS.iter().zip(&case.tags) {
        let now = store.version(slug, &llmtool_registry::Selector::Latest).await.unwrap().tags;
        for tag in now.iter().filter(|tag| !tags.contains(tag)) {
            store.remove_tag(slug, tag).await.unwrap();
        }
        for tag in tags {
            store.add_tag(slug, tag).await.unwrap();
        }
    }
}

/// Every path, for one case: search, tags, usage, each tool's routes and page, and `/mcp`.
async fn check(
    store: &dyn Store,
    base: &str,
    token: &str,
    cookie: &str,
    case: &Case,
) -> Result<(), TestCaseError> {
    arrange(store, case).await;
    let client = reqwest::Client::new();
    let seen: BTreeSet<String> = TOOLS
        .iter()
        .zip(&case.tags)
        .filter(|(_, tags)| expected(case, tags))
        .map(|(slug, _)| (*slug).to_owned())
        .collect();
    let page =
        support::json_of(client.get(format!("{base}/api/v1/tools")).bearer_auth(token)).await;
    let found: BTreeSet<String> = page["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["slug"].as_str().unwrap().to_owned())
        .collect();
    prop_assert_eq!(&found, &seen, "search");
    // The studio's way in: the session cookie of the same token.
    let studio =
        support::json_of(client.get(format!("{base}/api/v1/tools")).header("cookie", cookie)).await;
    let found: BTreeSet<String> = studio["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["slug"].as_str().unwrap().to_owned())
        .collect();
    prop_assert_eq!(&found, &seen, "search with the studio's session");
    let tags = support::json_of(client.get(format!("{base}/api/v1/tags")).bearer_auth(token)).await;
    let counted: BTreeSet<String> =
        tags.as_array().unwrap().iter().map(|t| t["tag"].as_str().unwrap().to_owned()).collect();
    let carried: BTreeSet<String> = TOOLS
        .iter()
        .zip(&case.tags)
        .filter(|(slug, _)| seen.contains(**slug))
        .flat_map(|(_, tags)| tags.iter().cloned())
        .collect();
    prop_assert_eq!(&counted, &carried, "tag counts");
    let usage =
        support::json_of(client.get(format!("{base}/api/v1/usage")).bearer_auth(token)).await;
    let totalled: BTreeSet<String> =
        usage.as_array().unwrap().iter().map(|t| t["key"].as_str().unwrap().to_owned()).collect();
    prop_assert_eq!(&totalled, &seen, "usage by tool");
    for slug in TOOLS {
        let want = if seen.contains(slug) { 200 } else { 404 };
        for path in ["", "/versions", "/versions/1", "/diff?from=1"] {
            let got = client
                .get(format!("{base}/api/v1/tools/{slug}{path}"))
                .bearer_auth(token)
                .send()
                .await
                .unwrap();
            prop_assert_eq!(got.status().as_u16(), want, "GET {}{}", slug, path);
        }
        let rendered = client
            .post(format!("{base}/api/v1/tools/{slug}/render"))
            .bearer_auth(token)
            .json(&json!({"topic": "x"}))
            .send()
            .await
            .unwrap();
        prop_assert_eq!(rendered.status().as_u16(), want, "render {}", slug);
        let page =
            client.get(format!("{base}/t/{slug}")).header("cookie", cookie).send().await.unwrap();
        prop_assert_eq!(page.status().as_u16(), want, "the studio's page of {}", slug);
    }
    // The MCP lists follow the library a moment after it changes; then the session's worker
    // and the quick answers both list what the rule says.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let wanted = (seen.clone(), seen.clone());
    loop {
        let (by_worker, quick) = mcp_lists(base, token).await;
        if by_worker == wanted && quick == wanted {
            break;
        }
        prop_assert!(
            std::time::Instant::now() < deadline,
            "over mcp the session's worker lists (tools, prompts) {:?} and the quick answers \
             {:?}; the rule says {:?}",
            by_worker,
            quick,
            seen
        );
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    Ok(())
}

#[test]
fn every_path_shows_a_member_what_the_rule_says() {
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (store, base, token, cookie) = runtime.block_on(async {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let store: Arc<dyn Store> =
            Arc::new(SqlStore::open_sqlite(&dir.path().join("library.db")).await.unwrap());
        for team in TEAMS {
            store.create_team(team, false).await.unwrap();
        }
        let owner = NewMember {
            email: "pat@example.org".into(),
            name: "Pat".into(),
            role: Role::Owner,
            teams: vec![],
        };
        let keeper = NewMember {
            email: "kim@example.org".into(),
            name: "Kim".into(),
            role: Role::Owner,
            teams: vec![],
        };
        store.add_members(&[owner, keeper]).await.unwrap();
        for slug in TOOLS {
            store.publish(slug, &tool(slug), None, None).await.unwrap();
            store
                .log_run(
                    slug,
                    1,
                    Some("pat"),
                    &run(slug),
                    &llmtool_registry::Charge::default(),
                    None,
                )
                .await
                .unwrap();
        }
        // The token may do all its member may; what it sees follows the member's role.
        let token = new_token();
        store
            .create_token("pat", Role::Owner, &token_hash(&token), Some("pat@example.org"))
            .await
            .unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let state = ServerState::new(
            Arc::clone(&store),
            Access { public_read: false },
            Arc::new(RateLimiter::new(0)),
        )
        .with_mcp(Arc::new(support::Echo), llmtool_server::McpOptions::default())
        .await
        .unwrap();
        state.follow_changes().await.unwrap();
        tokio::spawn(async move {
            llmtool_server::serve(state, listener, std::future::pending()).await.unwrap()
        });
        // The studio's session, opened with the same token.
        let signed_in = reqwest::Client::new()
            .post(format!("{base}/api/v1/session"))
            .json(&json!({"token": token}))
            .send()
            .await
            .unwrap();
        let set = signed_in.headers()["set-cookie"].to_str().unwrap();
        let cookie = set.split(';').next().unwrap().to_owned();
        (store, base, token, cookie)
    });
    let mut runner = TestRunner::new(Config { cases: 24, ..Config::default() });
    runner
        .run(&case(), |case| runtime.block_on(check(store.as_ref(), &base, &token, &cookie, &case)))
        .unwrap();
}
