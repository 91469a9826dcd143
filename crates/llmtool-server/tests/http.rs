//! The library's HTTP API on a real server (127.0.0.1, a random port) over each backend:
//! roles and public reading, publishing (201, the same content 200, a refused file 422 with
//! `check`'s diagnostics), versions, labels, tags, deletion, and problem documents.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use crate::support;

use std::sync::Arc;

use llmtool_registry::{NewMember, Publication, Role, SqlStore, Store};
use llmtool_server::{Access, ConnectionLimits, RateLimiter, ServerState, new_token, token_hash};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// A running server on `store`, and its base URL (`http://127.0.0.1:PORT/api/v1`); it trusts
/// a proxy on 127.0.0.1 to name its clients.
async fn start(store: Arc<dyn Store>, public_read: bool) -> String {
    let localhost = std::net::Ipv4Addr::LOCALHOST.into();
    let limits = ConnectionLimits { proxies: vec![localhost], ..ConnectionLimits::default() };
    start_with(store, public_read, 0, limits).await
}

/// The same, with `per_minute` requests a minute for each caller.
async fn start_limited(store: Arc<dyn Store>, public_read: bool, per_minute: u32) -> String {
    start_with(store, public_read, per_minute, ConnectionLimits::default()).await
}

/// The same, its connections within `limits`.
async fn start_with(
    store: Arc<dyn Store>,
    public_read: bool,
    per_minute: u32,
    limits: ConnectionLimits,
) -> String {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let limiter = Arc::new(RateLimiter::new(per_minute));
    let state =
        ServerState::new(store, Access { public_read }, limiter).with_connection_limits(limits);
    state.follow_changes().await.unwrap();
    tokio::spawn(async move { axum_serve(listener, state).await });
    format!("http://{address}/api/v1")
}

async fn axum_serve(listener: tokio::net::TcpListener, state: ServerState) {
    llmtool_server::serve(state, listener, std::future::pending()).await.unwrap();
}

/// A token of `role`, made in `store`.
async fn token(store: &dyn Store, name: &str, role: Role) -> String {
    let token = new_token();
    store.create_token(name, role, &token_hash(&token), None).await.unwrap();
    token
}

fn tool(name: &str, words: &str) -> String {
    json!({
        "model_prompt": format!("{words} about {{{{topic}}}}."),
        "metadata": {
            "prompt_name": name,
            "description": format!("Writes {words}."),
            "timestamp": "2026-11-23T10:00:00Z",
            "variables": [{"name": "topic", "type": "text", "description": "What about."}]
        }
    })
    .to_string()
}

async fn api(store: Arc<dyn Store>) {
    let editor = token(store.as_ref(), "ci", Role::Editor).await;
    let viewer = token(store.as_ref(), "reader", Role::Viewer).await;
    let admin = token(store.as_ref(), "ana", Role::Admin).await;
    let base = start(Arc::clone(&store), false).await;
    let client = reqwest::Client::new();
    let get = |path: &str, token: Option<&str>| {
        let request = client.get(format!("{base}{path}"));
        match token {
            Some(token) => request.bearer_auth(token),
            None => request,
        }
    };

    // Reading needs a token unless reading is public; a wrong token is refused.
    let anonymous = get("/tools", None).send().await.unwrap();
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(anonymous.headers()["content-type"], "application/problem+json");
    let problem: Value = anonymous.json().await.unwrap();
    assert_eq!(
        (problem["status"].as_u64(), problem["title"].as_str()),
        (Some(401), Some("Unauthorized"))
    );
    assert_eq!(
        get("/tools", Some("llmt_nope")).send().await.unwrap().status(),
        StatusCode::UNAUTHORIZED
    );

    // Publishing: editors only; 201, then 200 for the same content, 422 for errors.
    let publish = |body: String, token: &str, query: &str| {
        client.post(format!("{base}/tools{query}")).bearer_auth(token.to_owned()).body(body).send()
    };
    assert_eq!(
        publish(tool("Poet", "poems"), &viewer, "").await.unwrap().status(),
        StatusCode::FORBIDDEN
    );
    let created = publish(tool("Poet", "poems"), &editor, "?note=first").await.unwrap();
    assert_eq!(created.status(), StatusCode::CREATED);
    let created: Value = created.json().await.unwrap();
    assert_eq!((created["slug"].as_str(), created["version"].as_u64()), (Some("poet"), Some(1)));
    let same = publish(tool("Poet", "poems"), &editor, "").await.unwrap();
    assert_eq!(same.status(), StatusCode::OK);
    // Read (and kept in the read cache) before the next publish, which must not serve it again.
    let first: Value =
        get("/tools/poet", Some(&viewer)).send().await.unwrap().json().await.unwrap();
    assert_eq!(first["version"], 1);
    let second = publish(tool("Poet", "short poems"), &editor, "?slug=poet").await.unwrap();
    assert_eq!(second.json::<Value>().await.unwrap()["version"], 2);
    let refused =
        publish(r#"{"metadata": {"prompt_name": "x"}}"#.into(), &editor, "").await.unwrap();
    assert_eq!(refused.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let problem: Value = refused.json().await.unwrap();
    assert_eq!(problem["diagnostics"][0]["code"], "LT101", "{problem}");

    // Reading versions, labels and tags.
    let latest: Value =
        get("/tools/poet", Some(&viewer)).send().await.unwrap().json().await.unwrap();
    assert_eq!(latest["version"], 2);
    assert_eq!(latest["tool"]["model_prompt"], "short poems about {{topic}}.");
    let label = client
        .put(format!("{base}/tools/poet/labels/production"))
        .bearer_auth(&editor)
        .json(&json!({"version": 1}))
        .send()
        .await
        .unwrap();
    assert_eq!(label.status(), StatusCode::NO_CONTENT);
    let production: Value = get("/tools/poet?label=production", Some(&viewer))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        (production["version"].as_u64(), production["note"].as_str()),
        (Some(1), Some("first"))
    );
    // A search's page is kept, and a change (here, a tag) makes it stale at once.
    let search = || get("/tools?tag=poetry&q=short", Some(&viewer)).send();
    let untagged: Value = search().await.unwrap().json().await.unwrap();
    assert_eq!(untagged["tools"], json!([]));
    let again: Value = search().await.unwrap().json().await.unwrap();
    assert_eq!(again, untagged);
    let tagged = client
        .put(format!("{base}/tools/poet/tags/poetry"))
        .bearer_auth(&editor)
        .send()
        .await
        .unwrap();
    assert_eq!(tagged.status(), StatusCode::NO_CONTENT);
    let found: Value = search().await.unwrap().json().await.unwrap();
    assert_eq!(found["tools"][0]["slug"], "poet");
    let versions: Value =
        get("/tools/poet/versions", Some(&viewer)).send().await.unwrap().json().await.unwrap();
    assert_eq!(versions.as_array().unwrap().len(), 2);
    let one = get("/tools/poet/versions/1", Some(&viewer)).send().await.unwrap();
    assert_eq!(one.json::<Value>().await.unwrap()["labels"], json!(["production"]));
    let missing = get("/tools/poet/versions/9", Some(&viewer)).send().await.unwrap();
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);

    // Comparing two versions, and rendering one.
    let diff: Value =
        get("/tools/poet/diff?from=1", Some(&viewer)).send().await.unwrap().json().await.unwrap();
    let text = diff["diff"].as_str().unwrap();
    assert!(text.starts_with("--- poet@1\n+++ poet@2\n"), "{text}");
    assert!(
        text.contains("-  \"model_prompt\": \"poems about")
            && text.contains("+  \"model_prompt\": \"short poems about"),
        "{text}"
    );
    let render = |query: &str, values: Value| {
        client
            .post(format!("{base}/tools/poet/render{query}"))
            .bearer_auth(viewer.clone())
            .json(&values)
            .send()
    };
    let rendered: Value =
        render("", json!({"topic": "tides"})).await.unwrap().json().await.unwrap();
    assert_eq!(
        (rendered["version"].as_u64(), rendered["prompt"].as_str()),
        (Some(2), Some("short poems about tides."))
    );
    let labelled: Value =
        render("?label=production", json!({"topic": "tides"})).await.unwrap().json().await.unwrap();
    assert_eq!(labelled["prompt"], "poems about tides.");
    let missing_value = render("", json!({})).await.unwrap();
    assert_eq!(missing_value.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        missing_value.json::<Value>().await.unwrap()["detail"].as_str().unwrap().contains("topic")
    );

    // A tool carries at most 64 tags and 64 labels: past that, 422 (10,000 were accepted).
    let put = |path: String, body: Option<Value>| {
        let request = client.put(format!("{base}/tools/poet/{path}")).bearer_auth(&editor);
        match body {
            Some(body) => request.json(&body).send(),
            None => request.send(),
        }
    };
    for i in 1..64 {
        // The tool has its tag and `all` already.
        if i < 63 {
            assert_eq!(put(format!("tags/t{i}"), None).await.unwrap().status(), 204);
        }
        let label = put(format!("labels/l{i}"), Some(json!({"version": 1}))).await.unwrap();
        assert_eq!(label.status(), 204);
    }
    let over = put("tags/one-more".into(), None).await.unwrap();
    assert_eq!(over.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(over.text().await.unwrap().contains("64 tags"));
    let over = put("labels/one-more".into(), Some(json!({"version": 1}))).await.unwrap();
    assert_eq!(over.status(), StatusCode::UNPROCESSABLE_ENTITY);

    // Deleting needs an admin.
    let delete = |token: &str| {
        client.delete(format!("{base}/tools/poet")).bearer_auth(token.to_owned()).send()
    };
    assert_eq!(delete(&editor).await.unwrap().status(), StatusCode::FORBIDDEN);
    assert_eq!(delete(&admin).await.unwrap().status(), StatusCode::NO_CONTENT);
    assert_eq!(
        get("/tools/poet", Some(&viewer)).send().await.unwrap().status(),
        StatusCode::NOT_FOUND
    );

    // A body past the limit is refused before it is read whole.
    let huge = "x".repeat(llmtool_server::MAX_BODY + 1);
    assert_eq!(publish(huge, &editor, "").await.unwrap().status(), StatusCode::PAYLOAD_TOO_LARGE);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> =
        Arc::new(SqlStore::open_sqlite(&dir.path().join("library.db")).await.unwrap());
    api(Arc::clone(&store)).await;
    teams_see_their_tools(store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_on_postgres() {
    let Some(database) = llmtool_testkit::postgres::database().await else { return };
    let store: Arc<dyn Store> = Arc::new(SqlStore::connect_postgres(&database.url).await.unwrap());
    api(Arc::clone(&store)).await;
    teams_see_their_tools(store).await;
}

/// Tools curated for teams: a member of `sales` sees the `sales` and `all` tools, and every
/// path answers 404 for the `support` one, exactly as for a tool that does not exist (even
/// once an admin's read has put it in the read cache); an admin sees all three.
async fn teams_see_their_tools(store: Arc<dyn Store>) {
    store.create_team("sales", false).await.unwrap();
    store.create_team("support", false).await.unwrap();
    let people = [
        NewMember {
            email: "sam@example.org".into(),
            name: "Sam".into(),
            role: Role::Viewer,
            teams: vec!["sales".into()],
        },
        NewMember {
            email: "ana@example.org".into(),
            name: "Ana".into(),
            role: Role::Admin,
            teams: vec![],
        },
    ];
    store.add_members(&people).await.unwrap();
    for (slug, tag) in [("pitch", Some("sales")), ("helpdesk", Some("support")), ("everyone", None)]
    {
        store
            .publish(
                slug,
                &Publication::from_text(&tool(slug, "notes"), "t.json").unwrap(),
                None,
                None,
            )
            .await
            .unwrap();
        if let Some(tag) = tag {
            store.add_tag(slug, tag).await.unwrap();
            store.remove_tag(slug, "all").await.unwrap();
        }
    }
    let member_token = |name: &'static str, role: Role, email: &'static str| {
        let store = Arc::clone(&store);
        async move {
            let token = new_token();
            store.create_token(name, role, &token_hash(&token), Some(email)).await.unwrap();
            token
        }
    };
    let sam = member_token("sam-laptop", Role::Viewer, "sam@example.org").await;
    let editor = NewMember {
        email: "eve@example.org".into(),
        name: "Eve".into(),
        role: Role::Editor,
        teams: vec!["sales".into()],
    };
    store.add_members(&[editor]).await.unwrap();
    let eve = member_token("eve-laptop", Role::Editor, "eve@example.org").await;
    let ana = member_token("ana-laptop", Role::Admin, "ana@example.org").await;
    let base = start(Arc::clone(&store), false).await;
    let client = reqwest::Client::new();
    let slugs = |page: Value| -> Vec<String> {
        page["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["slug"].as_str().unwrap().to_owned())
            .collect()
    };
    let search =
        |token: &str| client.get(format!("{base}/tools")).bearer_auth(token.to_owned()).send();
    // Of these three (the library holds others, for everyone): all for the admin, the
    // member's team's and everyone's for the member.
    let ours = |found: Vec<String>| -> Vec<String> {
        found
            .into_iter()
            .filter(|slug| ["everyone", "helpdesk", "pitch"].contains(&slug.as_str()))
            .collect()
    };
    let found =
        |token| async move { ours(slugs(search(token).await.unwrap().json().await.unwrap())) };
    assert_eq!(found(&ana).await, ["everyone", "helpdesk", "pitch"]);
    assert_eq!(found(&sam).await, ["everyone", "pitch"]);

    // The admin reads the support tool first: it is in the read cache now.
    let read = client.get(format!("{base}/tools/helpdesk")).bearer_auth(&ana).send().await.unwrap();
    assert_eq!(read.status(), 200);
    let paths = [
        ("GET", "/tools/{}"),
        ("GET", "/tools/{}/versions"),
        ("GET", "/tools/{}/versions/1"),
        ("GET", "/tools/{}/diff?from=1"),
        ("POST", "/tools/{}/render"),
        ("GET", "/tools/{}/runs"),
        ("GET", "/tools/{}/avatar"),
    ];
    for (method, path) in paths {
        let ask = |slug: &str| {
            let url = format!("{base}{}", path.replace("{}", slug));
            let request = if method == "GET" {
                client.get(url)
            } else {
                client.post(url).json(&json!({"topic": "x"}))
            };
            request.bearer_auth(&sam).send()
        };
        let hidden = ask("helpdesk").await.unwrap();
        let missing = ask("nowhere").await.unwrap();
        assert_eq!(
            (hidden.status(), missing.status()),
            (StatusCode::NOT_FOUND, StatusCode::NOT_FOUND),
            "{method} {path}"
        );
        let hidden: Value = hidden.json().await.unwrap();
        let missing: Value = missing.json().await.unwrap();
        assert_eq!(
            hidden["detail"].as_str().unwrap().replace("helpdesk", "nowhere"),
            missing["detail"].as_str().unwrap(),
            "{method} {path}"
        );
        // The member's own team's tool is found (it has no avatar: that 404 says so).
        let seen = ask("pitch").await.unwrap().text().await.unwrap();
        assert!(!seen.contains("no tool"), "{method} {path}: {seen}");
    }
    // An editor writes to their team's tools, and finds no other to write to.
    let write = |path: String| client.put(format!("{base}{path}")).bearer_auth(&eve).send();
    assert_eq!(write("/tools/pitch/tags/q4".into()).await.unwrap().status(), 204);
    // ... and tags for their own team only.
    assert_eq!(write("/tools/pitch/tags/support".into()).await.unwrap().status(), 403);
    let untag = client.delete(format!("{base}/tools/pitch/tags/q4")).bearer_auth(&eve);
    assert_eq!(untag.send().await.unwrap().status(), 204);
    assert_eq!(write("/tools/helpdesk/tags/q4".into()).await.unwrap().status(), 404);
    let over = client.post(format!("{base}/tools?slug=helpdesk")).bearer_auth(&eve);
    let over = over.body(tool("helpdesk", "other notes")).send().await.unwrap();
    assert_eq!(over.status(), StatusCode::NOT_FOUND);
    // Nor over one deleted, which a publish would bring back with its tags.
    let gone = client.delete(format!("{base}/tools/helpdesk")).bearer_auth(&ana).send();
    assert_eq!(gone.await.unwrap().status(), 204);
    let revived = client.post(format!("{base}/tools?slug=helpdesk")).bearer_auth(&eve);
    let revived = revived.body(tool("helpdesk", "other notes")).send().await.unwrap();
    assert_eq!(revived.status(), StatusCode::NOT_FOUND);
    let back = client.post(format!("{base}/tools?slug=helpdesk")).bearer_auth(&ana);
    let back = back.body(tool("helpdesk", "notes")).send().await.unwrap();
    assert!(back.status().is_success(), "{}", back.status());

    people_over_the_api(&base, &ana, &sam).await;

    let tags = support::json_of(client.get(format!("{base}/tags")).bearer_auth(&sam)).await;
    let names: Vec<&str> =
        tags.as_array().unwrap().iter().map(|t| t["tag"].as_str().unwrap()).collect();
    assert!(names.contains(&"sales") && !names.contains(&"support"), "{names:?}");
}

/// `/members` and `/teams`: an admin manages them, a viewer is refused, an owner is an
/// owner's to make.
async fn people_over_the_api(base: &str, admin: &str, viewer: &str) {
    use reqwest::Method;
    let client = reqwest::Client::new();
    let send = |method: reqwest::Method, path: &str, token: &str, body: Option<Value>| {
        let request = client.request(method, format!("{base}{path}")).bearer_auth(token);
        let request = match body {
            Some(body) => request.json(&body),
            None => request,
        };
        async move { request.send().await.unwrap().status().as_u16() }
    };
    assert_eq!(send(Method::GET, "/members", viewer, None).await, 403);
    let listed = support::json_of(client.get(format!("{base}/members")).bearer_auth(admin)).await;
    assert!(listed.as_array().unwrap().iter().any(|m| m["email"] == "sam@example.org"), "{listed}");
    assert_eq!(send(Method::POST, "/teams", admin, Some(json!({"name": "ops"}))).await, 201);
    assert_eq!(send(Method::POST, "/teams", admin, Some(json!({"name": "all"}))).await, 400);
    let newcomer =
        json!({"email": "Zoe@Example.org", "name": "Zoe", "role": "editor", "teams": ["ops"]});
    assert_eq!(send(Method::POST, "/members", admin, Some(newcomer.clone())).await, 201);
    assert_eq!(send(Method::POST, "/members", admin, Some(newcomer)).await, 409);
    let owner = json!({"email": "own@example.org", "name": "Own", "role": "owner"});
    assert_eq!(send(Method::POST, "/members", admin, Some(owner)).await, 403);
    let ghost =
        json!({"email": "gus@example.org", "name": "Gus", "role": "viewer", "teams": ["nowhere"]});
    assert_eq!(send(Method::POST, "/members", admin, Some(ghost)).await, 404);
    let edit = json!({"role": "viewer", "teams": ["ops", "sales"]});
    assert_eq!(send(Method::PATCH, "/members/zoe@example.org", admin, Some(edit)).await, 200);
    let zoe =
        support::json_of(client.get(format!("{base}/members/ZOE@example.org")).bearer_auth(admin))
            .await;
    assert_eq!(
        (zoe["role"].as_str(), zoe["teams"].clone()),
        (Some("viewer"), json!(["ops", "sales"]))
    );
    assert_eq!(
        send(Method::PATCH, "/teams/ops", admin, Some(json!({"name": "operations"}))).await,
        204
    );
    let teams = support::json_of(client.get(format!("{base}/teams")).bearer_auth(admin)).await;
    assert!(teams.as_array().unwrap().iter().any(|t| t["name"] == "operations"), "{teams}");
    assert_eq!(send(Method::DELETE, "/teams/operations", admin, None).await, 204);
    assert_eq!(send(Method::DELETE, "/members/zoe@example.org", admin, None).await, 204);
    assert_eq!(send(Method::DELETE, "/members/zoe@example.org", admin, None).await, 404);

    // Each change is in the audit log, as its caller's, from its address (a proxy on this
    // machine names the client); only admins read it.
    let forwarded = client.post(format!("{base}/teams")).bearer_auth(admin);
    let forwarded = forwarded.header("x-forwarded-for", "198.51.100.1, 203.0.113.9");
    assert_eq!(forwarded.json(&json!({"name": "audited"})).send().await.unwrap().status(), 201);
    assert_eq!(send(Method::GET, "/audit", viewer, None).await, 403);
    assert_eq!(send(Method::GET, "/audit?cursor=nonsense", admin, None).await, 400);
    let log = |query: &str| {
        let request = client.get(format!("{base}/audit?{query}")).bearer_auth(admin);
        support::json_of(request)
    };
    let page = log("actor=ana-laptop&limit=500").await;
    let actions: Vec<(&str, &str)> = page["records"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .map(|r| (r["action"].as_str().unwrap(), r["target"].as_str().unwrap()))
        .collect();
    let people = [
        ("team.create", "ops"),
        ("member.add", "zoe@example.org"),
        ("member.edit", "zoe@example.org"),
        ("team.rename", "ops"),
        ("team.remove", "operations"),
        ("member.remove", "zoe@example.org"),
        ("team.create", "audited"),
    ];
    assert!(actions.ends_with(&people), "{actions:?}");
    let newest = &page["records"][0];
    assert_eq!(newest["address"], "203.0.113.9 via 127.0.0.1");
    assert_eq!(page["records"][1]["address"], "127.0.0.1");
    assert_eq!(page["records"][1]["before"]["role"], "viewer");
    // Filters and pages.
    let edits = log("action=member.edit&target=zoe@example.org").await;
    assert_eq!(edits["records"].as_array().unwrap().len(), 1);
    assert_eq!(edits["records"][0]["after"]["teams"], json!(["ops", "sales"]));
    let first = log("actor=ana-laptop&limit=2").await;
    let cursor = first["next"].as_str().unwrap();
    let second = log(&format!("actor=ana-laptop&limit=2&cursor={cursor}")).await;
    assert_eq!(second["records"][0]["id"], page["records"][2]["id"]);
    assert_eq!(
        log("since=2000-01-01&action=team.remove").await["records"][0]["target"],
        "operations"
    );
    assert_eq!(send(Method::GET, "/audit?since=yesterday-ish", admin, None).await, 400);
}

/// Two servers on one PostgreSQL database are one library: what is published on one is read
/// on the other, even after the other has served (and cached) the version before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_on_one_postgres_database() {
    let Some(database) = llmtool_testkit::postgres::database().await else { return };
    let one: Arc<dyn Store> = Arc::new(SqlStore::connect_postgres(&database.url).await.unwrap());
    let other: Arc<dyn Store> = Arc::new(SqlStore::connect_postgres(&database.url).await.unwrap());
    let editor = token(one.as_ref(), "ci", Role::Editor).await;
    let (first, second) = (start(one, true).await, start(other, true).await);
    let client = reqwest::Client::new();
    let publish = |words: &str| {
        client.post(format!("{first}/tools")).bearer_auth(&editor).body(tool("Poet", words)).send()
    };
    let latest = async || -> Value {
        client.get(format!("{second}/tools/poet")).send().await.unwrap().json().await.unwrap()
    };
    assert_eq!(publish("poems").await.unwrap().status(), StatusCode::CREATED);
    assert_eq!(latest().await["version"], 1);
    assert_eq!(publish("short poems").await.unwrap().status(), StatusCode::CREATED);
    // The other server hears of it through the database (LISTEN/NOTIFY), at once or nearly.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while latest().await["version"] != 2 {
        assert!(std::time::Instant::now() < deadline, "the other server still serves version 1");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// Answers with the prompt it was given, so a test sees what ran.
/// A JSON-RPC request to `/mcp` with `token`; the status and the body's one message.
async fn mcp(base: &str, token: Option<&str>, session: Option<&str>, body: Value) -> (u16, Value) {
    let url = base.replace("/api/v1", "/mcp");
    let (status, mut message, session_id) = support::mcp_request(&url, token, session, &body).await;
    if let Some(id) = session_id {
        message["session"] = Value::String(id);
    }
    (status, message)
}

/// `/mcp` serves the library's tools to holders of a token (public reading does not open it),
/// and follows what is published.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_library_over_mcp() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> =
        Arc::new(SqlStore::open_sqlite(&dir.path().join("library.db")).await.unwrap());
    let viewer = token(store.as_ref(), "reader", Role::Viewer).await;
    let editor = token(store.as_ref(), "ci", Role::Editor).await;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/api/v1", listener.local_addr().unwrap());
    let state = ServerState::new(
        Arc::clone(&store),
        Access { public_read: true },
        Arc::new(RateLimiter::new(0)),
    )
    .with_mcp(Arc::new(support::Echo), llmtool_server::McpOptions::default())
    .await
    .unwrap();
    state.follow_changes().await.unwrap();
    tokio::spawn(axum_serve(listener, state));

    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}});
    let (status, problem) = mcp(&base, None, None, initialize.clone()).await;
    assert_eq!((status, problem["status"].as_u64()), (401, Some(401)), "{problem}");
    let (status, welcome) = mcp(&base, Some(&viewer), None, initialize).await;
    assert_eq!(status, 200, "{welcome}");
    assert_eq!(welcome["result"]["capabilities"]["tools"]["listChanged"], true, "{welcome}");
    let session = welcome["session"].as_str().unwrap().to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(mcp(&base, Some(&viewer), Some(&session), initialized.clone()).await.0, 202);
    // The session is its opener's: another token holding its id finds none (it once could
    // act in it, and read what was streamed to it).
    let (status, problem) = mcp(&base, Some(&editor), Some(&session), initialized).await;
    assert_eq!(status, 404, "another token in the viewer's session: {problem}");

    let published = reqwest::Client::new()
        .post(format!("{base}/tools"))
        .bearer_auth(&editor)
        .body(tool("Poet", "poems"))
        .send()
        .await
        .unwrap();
    assert_eq!(published.status(), StatusCode::CREATED);
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let (_, listed) = mcp(&base, Some(&viewer), Some(&session), list.clone()).await;
        if listed["result"]["tools"][0]["name"] == "poet" {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "never listed: {listed}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "poet", "arguments": {"topic": "tides"}}});
    let (_, called) = mcp(&base, Some(&viewer), Some(&session), call).await;
    assert_eq!(called["result"]["content"][0]["text"], "echo: poems about tides.", "{called}");

    // A tool curated for a team is served to its members (and admins) only: to anyone else
    // it is not there, in the lists, for prompts and for calls.
    store.create_team("support", false).await.unwrap();
    let support = NewMember {
        email: "sue@example.org".into(),
        name: "Sue".into(),
        role: Role::Viewer,
        teams: vec!["support".into()],
    };
    store.add_members(&[support]).await.unwrap();
    let sue = new_token();
    store
        .create_token("sue", Role::Viewer, &token_hash(&sue), Some("sue@example.org"))
        .await
        .unwrap();
    let admin = token(store.as_ref(), "ana", Role::Admin).await;
    store
        .publish(
            "desk",
            &Publication::from_text(&tool("Desk", "answers"), "t.json").unwrap(),
            None,
            None,
        )
        .await
        .unwrap();
    store.add_tag("desk", "support").await.unwrap();
    store.remove_tag("desk", "all").await.unwrap();
    let names = |listed: &Value| -> Vec<String> {
        let tools = listed["result"]["tools"].as_array().cloned().unwrap_or_default();
        tools.iter().map(|t| t["name"].as_str().unwrap_or_default().to_owned()).collect()
    };
    let mut sessions = Vec::new();
    for who in [&viewer, &sue, &admin] {
        let hello = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
        let (_, welcome) = mcp(&base, Some(who), None, hello).await;
        sessions.push(welcome["session"].as_str().unwrap().to_owned());
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !names(&mcp(&base, Some(&admin), Some(&sessions[2]), list.clone()).await.1)
        .contains(&"desk".to_owned())
    {
        assert!(std::time::Instant::now() < deadline, "never listed for the admin");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let (_, listed) = mcp(&base, Some(&sue), Some(&sessions[1]), list.clone()).await;
    assert!(names(&listed).contains(&"desk".to_owned()), "{listed}");
    let (_, listed) = mcp(&base, Some(&viewer), Some(&sessions[0]), list.clone()).await;
    assert_eq!(names(&listed), ["poet"], "{listed}");
    let prompts = json!({"jsonrpc": "2.0", "id": 4, "method": "prompts/list"});
    let (_, prompted) = mcp(&base, Some(&viewer), Some(&sessions[0]), prompts).await;
    assert_eq!(prompted["result"]["prompts"].as_array().unwrap().len(), 1, "{prompted}");
    for (method, params) in [
        ("tools/call", json!({"name": "desk", "arguments": {"topic": "x"}})),
        ("prompts/get", json!({"name": "desk", "arguments": {"topic": "x"}})),
    ] {
        let asked = json!({"jsonrpc": "2.0", "id": 5, "method": method, "params": params});
        let (_, refused) = mcp(&base, Some(&viewer), Some(&sessions[0]), asked).await;
        let message = refused["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("unknown") && !message.contains("desk,") && message.contains("poet"),
            "{method}: {refused}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn public_reading_and_the_built_in_tools() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> =
        Arc::new(SqlStore::open_sqlite(&dir.path().join("library.db")).await.unwrap());
    assert_eq!(llmtool_server::seed_built_ins(store.as_ref()).await.unwrap(), 11);
    assert_eq!(
        llmtool_server::seed_built_ins(store.as_ref()).await.unwrap(),
        0,
        "only an empty library is seeded"
    );
    let base = start(store, true).await;
    let page: Value = reqwest::get(format!("{base}/tools?tag=built-in&limit=100"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(page["tools"].as_array().unwrap().len(), llmtool_server::BUILT_IN.len());
    // Writing is never public.
    let client = reqwest::Client::new();
    let post = client.post(format!("{base}/tools")).body(tool("X", "x")).send().await.unwrap();
    assert_eq!(post.status(), StatusCode::UNAUTHORIZED);
}

#[test]
fn the_built_in_tools_are_the_examples() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut examples: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        // Tools only: a test file (`NAME.tests.json`) beside them is not one.
        .filter(|name| {
            std::path::Path::new(name).extension().is_some_and(|e| e == "json")
                && !name.contains(".tests.")
        })
        .collect();
    examples.sort();
    let built_in: Vec<&str> = llmtool_server::BUILT_IN.iter().map(|(file, _)| *file).collect();
    assert_eq!(built_in, examples);
}

/// `docs/openapi.json` is the document the code makes (`LLMTOOL_BLESS=1` writes it), and the
/// server serves that same document.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_openapi_document_is_checked_in_and_served() {
    let made = llmtool_server::openapi_json();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/openapi.json");
    if std::env::var_os("LLMTOOL_BLESS").is_some() {
        std::fs::write(&path, &made).unwrap();
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == made,
        "docs/openapi.json is stale: regenerate it with LLMTOOL_BLESS=1 cargo nextest run -p llmtool-server openapi"
    );
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> =
        Arc::new(SqlStore::open_sqlite(&dir.path().join("library.db")).await.unwrap());
    let base = start(store, false).await;
    let served: Value =
        reqwest::get(format!("{base}/openapi.json")).await.unwrap().json().await.unwrap();
    assert_eq!(served, serde_json::from_str::<Value>(&made).unwrap());
    let paths = served["paths"].as_object().unwrap();
    for path in [
        "/tools",
        "/tools/{slug}",
        "/tools/{slug}/versions/{number}",
        "/tools/{slug}/render",
        "/tools/{slug}/diff",
    ] {
        assert!(paths.contains_key(path), "{path} is not in the document");
    }
    assert_eq!(served["components"]["securitySchemes"]["bearer"]["scheme"], "bearer");
}

/// `X-Forwarded-For` from a peer that is not a trusted proxy is the client's own word: it
/// neither names the client in the audit log nor gives it a fresh allowance (it did, from any
/// peer on loopback: a client rotated its rate limit and forged its audited address).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forwarded_address_is_believed_only_from_a_trusted_proxy() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> =
        Arc::new(SqlStore::open_sqlite(&dir.path().join("library.db")).await.unwrap());
    let admin = token(store.as_ref(), "admin", Role::Admin).await;
    let base = start_limited(Arc::clone(&store), true, 2).await;
    let client = reqwest::Client::new();
    let mut statuses = Vec::new();
    for n in 1..=3 {
        let request = client.get(format!("{base}/tools"));
        let forged = request.header("x-forwarded-for", format!("203.0.113.{n}"));
        statuses.push(forged.send().await.unwrap().status().as_u16());
    }
    assert_eq!(statuses, [200, 200, 429], "one address, one allowance, whatever it says");

    let made = client.post(format!("{base}/teams")).bearer_auth(&admin);
    let made = made.header("x-forwarded-for", "203.0.113.9").json(&json!({"name": "forged"}));
    assert_eq!(made.send().await.unwrap().status(), 201);
    let query = llmtool_registry::AuditQuery { limit: 1, ..Default::default() };
    let audit = store.audit(&query).await.unwrap();
    assert_eq!(audit.records[0].entry.address.as_deref(), Some("127.0.0.1"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_caller_has_a_rate_limit() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> =
        Arc::new(SqlStore::open_sqlite(&dir.path().join("library.db")).await.unwrap());
    let viewer = token(store.as_ref(), "reader", Role::Viewer).await;
    let other = token(store.as_ref(), "other", Role::Viewer).await;
    let base = start_limited(store, true, 3).await;
    let client = reqwest::Client::new();
    let get = |token: Option<&str>| {
        let request = client.get(format!("{base}/tools"));
        match token {
            Some(token) => request.bearer_auth(token.to_owned()).send(),
            None => request.send(),
        }
    };
    for _ in 0..3 {
        assert_eq!(get(Some(&viewer)).await.unwrap().status(), StatusCode::OK);
    }
    let limited = get(Some(&viewer)).await.unwrap();
    assert_eq!(limited.status(), StatusCode::TOO_MANY_REQUESTS);
    let wait: u64 = limited.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=21).contains(&wait), "{wait}");
    assert_eq!(limited.json::<Value>().await.unwrap()["status"], 429);
    // Another token, and requests without one (by address), have allowances of their own.
    assert_eq!(get(Some(&other)).await.unwrap().status(), StatusCode::OK);
    assert_eq!(get(None).await.unwrap().status(), StatusCode::OK);
    // A made-up token is refused, and its refusals spend its address's allowance for failed
    // sign-ins: 401 until it is spent, then 429 before any token is looked up (it was 401
    // forever, an unlimited guess at tokens).
    let guesses: Vec<StatusCode> = {
        let mut seen = Vec::new();
        for _ in 0..5 {
            seen.push(get(Some("llmt_made_up_0123456789")).await.unwrap().status());
        }
        seen
    };
    assert_eq!(guesses[..3], [StatusCode::UNAUTHORIZED; 3], "{guesses:?}");
    assert_eq!(guesses[3..], [StatusCode::TOO_MANY_REQUESTS; 2], "{guesses:?}");
    // A real token from that address is limited no more than before the guessing stopped.
    assert_eq!(get(Some(&other)).await.unwrap().status(), StatusCode::TOO_MANY_REQUESTS);
}

#[tokio::test]
async fn a_large_check_costs_its_caller_more_than_one_request() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> =
        Arc::new(SqlStore::open_sqlite(&dir.path().join("library.db")).await.unwrap());
    let base = start_limited(store, true, 10).await;
    let client = reqwest::Client::new();
    let check = |body: String| client.post(format!("{base}/check")).body(body).send();
    // A file just under 1 MiB counts as 16 requests, more than a bucket of 10 holds: it is
    // answered, and leaves a debt that the next request must wait off.
    let large = format!(r#"{{"model_prompt": "{}"}}"#, "x".repeat(1_000_000));
    assert_eq!(check(large).await.unwrap().status(), StatusCode::OK);
    let after = check("{}".into()).await.unwrap();
    assert_eq!(after.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(after.headers().contains_key("retry-after"));
}

#[tokio::test]
async fn the_bearer_scheme_is_case_insensitive() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> =
        Arc::new(SqlStore::open_sqlite(&dir.path().join("library.db")).await.unwrap());
    let viewer = token(store.as_ref(), "reader", Role::Viewer).await;
    let base = start(store, false).await;
    let client = reqwest::Client::new();
    for scheme in ["Bearer", "bearer", "BEARER", "bEaReR"] {
        let answer = client
            .get(format!("{base}/tools"))
            .header("authorization", format!("{scheme} {viewer}"))
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), StatusCode::OK, "{scheme}");
    }
    for header in [format!("Basic {viewer}"), format!("Bearer{viewer}"), "Bearer ".into()] {
        let answer =
            client.get(format!("{base}/tools")).header("authorization", &header).send().await;
        assert_eq!(answer.unwrap().status(), StatusCode::UNAUTHORIZED, "{header}");
    }
}

#[tokio::test]
async fn every_route_refuses_a_host_it_does_not_answer_to() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> =
        Arc::new(SqlStore::open_sqlite(&dir.path().join("library.db")).await.unwrap());
    let _ = rustls::crypto::ring::default_provider().install_default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let state =
        ServerState::new(store, Access { public_read: true }, Arc::new(RateLimiter::new(0)))
            .with_allowed_hosts(vec!["tools.example.org".into()]);
    tokio::spawn(axum_serve(listener, state));
    let client = reqwest::Client::new();
    let get = |path: &str, host: &str| {
        client.get(format!("http://{address}{path}")).header("host", host).send()
    };
    // A name rebound to this address by an attacker's DNS: every route, the studio's too.
    for path in ["/", "/signin", "/t/x", "/api/v1/tools", "/api/v1/session", "/api/v1/openapi.json"]
    {
        for host in ["evil.example", "evil.example:8080", "localhost.evil.example"] {
            let answer = get(path, host).await.unwrap();
            assert_eq!(answer.status(), StatusCode::FORBIDDEN, "{path} as {host}");
        }
    }
    // Loopback names from this machine, the address itself, and the names allowed.
    let port = address.port();
    for host in [
        "localhost".to_owned(),
        format!("localhost:{port}"),
        format!("127.0.0.1:{port}"),
        "tools.example.org".into(),
        format!("TOOLS.example.org:{port}"),
    ] {
        assert_eq!(get("/api/v1/tools", &host).await.unwrap().status(), StatusCode::OK, "{host}");
    }
}
