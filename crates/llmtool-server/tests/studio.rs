//! What the web studio needs from the server, on a real server over each backend: its pages
//! with a Content Security Policy, signing in with a token for a session cookie (`HttpOnly`,
//! `SameSite=Strict`), CSRF on every write made with the cookie, roles enforced on the server,
//! signing out, and the check, format, tags, avatar and search fields the pages show.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::sync::Arc;

use llmtool_registry::{Role, SqlStore, Store, TokensOf};
use llmtool_server::{Access, RateLimiter, ServerState, new_token, token_hash};
use reqwest::StatusCode;
use serde_json::{Value, json};

async fn start(store: Arc<dyn Store>) -> String {
    let _ = rustls::crypto::ring::default_provider().install_default();
    llmtool_server::seed_built_ins(store.as_ref()).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let state =
        ServerState::new(store, Access { public_read: true }, Arc::new(RateLimiter::new(0)));
    state.follow_changes().await.unwrap();
    tokio::spawn(llmtool_server::serve(state, listener, std::future::pending()));
    base
}

/// Signs in with `token`; the session cookie and the CSRF token.
async fn sign_in(base: &str, token: &str) -> (String, String) {
    let answer = reqwest::Client::new()
        .post(format!("{base}/api/v1/session"))
        .json(&json!({"token": token}))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), StatusCode::OK);
    let set = answer.headers()["set-cookie"].to_str().unwrap().to_owned();
    for attribute in ["HttpOnly", "SameSite=Strict", "Path=/"] {
        assert!(set.contains(attribute), "{set}");
    }
    let cookie = set.split(';').next().unwrap().to_owned();
    let body: Value = answer.json().await.unwrap();
    (cookie, body["csrf"].as_str().unwrap().to_owned())
}

async fn studio(store: Arc<dyn Store>) {
    let editor = new_token();
    store.create_token("ana", Role::Editor, &token_hash(&editor), None).await.unwrap();
    let viewer = new_token();
    store.create_token("vic", Role::Viewer, &token_hash(&viewer), None).await.unwrap();
    let base = start(Arc::clone(&store)).await;
    let client = reqwest::Client::new();

    // The pages and their files, each with a policy that loads only from this server.
    for (path, kind) in [
        ("/", "text/html"),
        ("/t/teach-me-anything", "text/html"),
        ("/t/x/edit", "text/html"),
        ("/assets/gallery.js", "text/javascript"),
        ("/assets/studio.css", "text/css"),
    ] {
        let page = client.get(format!("{base}{path}")).send().await.unwrap();
        assert_eq!(page.status(), StatusCode::OK, "{path}");
        assert!(page.headers()["content-type"].to_str().unwrap().starts_with(kind), "{path}");
        let policy = page.headers()["content-security-policy"].to_str().unwrap();
        assert!(policy.contains("script-src 'self'") && policy.contains("frame-ancestors 'none'"));
        assert_eq!(page.headers()["x-content-type-options"], "nosniff");
    }
    assert_eq!(client.get(format!("{base}/assets/nothing.js")).send().await.unwrap().status(), 404);

    // Sent compressed as embedded to a client that takes gzip, inflated for one that does not.
    let compressed = client
        .get(format!("{base}/assets/studio.css"))
        .header("accept-encoding", "br, gzip;q=0.8")
        .send()
        .await
        .unwrap();
    assert_eq!(compressed.headers()["content-encoding"], "gzip");
    assert_eq!(compressed.headers()["vary"], "Accept-Encoding");
    assert!(compressed.bytes().await.unwrap().starts_with(b"\x1f\x8b"));
    for refusing in [None, Some("identity"), Some("gzip;q=0")] {
        let request = client.get(format!("{base}/signin"));
        let request = match refusing {
            Some(value) => request.header("accept-encoding", value),
            None => request,
        };
        let plain = request.send().await.unwrap();
        assert!(plain.headers().get("content-encoding").is_none(), "{refusing:?}");
        assert!(plain.text().await.unwrap().starts_with("<!doctype html>"), "{refusing:?}");
    }

    // The admins' pages: only an admin gets them; a member gets the same "admins only" 404,
    // and nothing of the page; someone signed out is sent to sign in.
    let admin = new_token();
    store.create_token("ada", Role::Admin, &token_hash(&admin), None).await.unwrap();
    let no_redirects =
        reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let (admin_cookie, _) = sign_in(&base, &admin).await;
    let (viewer_cookie, _) = sign_in(&base, &viewer).await;
    for path in ["/people", "/teams", "/control/integrations", "/control/audit"] {
        let get = |cookie: Option<&str>| {
            let request = no_redirects.get(format!("{base}{path}"));
            let request = match cookie {
                Some(cookie) => request.header("cookie", cookie),
                None => request,
            };
            async move { request.send().await.unwrap() }
        };
        let page = get(Some(&admin_cookie)).await;
        assert_eq!(page.status(), StatusCode::OK, "{path}");
        let own = page.text().await.unwrap();
        let member = get(Some(&viewer_cookie)).await;
        assert_eq!(member.status(), StatusCode::NOT_FOUND, "{path}");
        let shown = member.text().await.unwrap();
        assert!(shown.contains("Admins only") && shown != own, "{path}: {shown}");
        let signed_out = get(None).await;
        assert_eq!(signed_out.status(), StatusCode::SEE_OTHER, "{path}");
        assert_eq!(signed_out.headers()["location"], format!("/signin?next={path}"));
    }
    for path in ["/control/spend", "/control/budgets", "/control/prices"] {
        let page = no_redirects.get(format!("{base}{path}")).header("cookie", &viewer_cookie);
        assert_eq!(page.send().await.unwrap().status(), StatusCode::OK, "members read {path}");
    }

    // Signing in: a wrong token is refused; a right one gives a session.
    let wrong =
        client.post(format!("{base}/api/v1/session")).json(&json!({"token": "llmt_nope"})).send();
    assert_eq!(wrong.await.unwrap().status(), StatusCode::UNAUTHORIZED);
    let (cookie, csrf) = sign_in(&base, &editor).await;
    let who: Value = client
        .get(format!("{base}/api/v1/session"))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        (who["name"].as_str(), who["role"].as_str(), who["csrf"].as_str()),
        (Some("ana"), Some("editor"), Some(csrf.as_str()))
    );

    // A write with the cookie needs the CSRF token; with it, the role decides.
    let tool = json!({"model_prompt": "Say {{word}}.", "metadata": {"prompt_name": "Sayer",
        "description": "Says.", "creator": {"name": "Ana"}, "timestamp": "2026-11-23T10:00:00Z",
        "variables": [{"name": "word", "type": "text", "description": "What."}]}})
    .to_string();
    let publish = |cookie: &str, csrf: Option<&str>| {
        let mut request =
            client.post(format!("{base}/api/v1/tools")).header("cookie", cookie).body(tool.clone());
        if let Some(csrf) = csrf {
            request = request.header("x-csrf-token", csrf);
        }
        request.send()
    };
    let forged = publish(&cookie, None).await.unwrap();
    assert_eq!(forged.status(), StatusCode::FORBIDDEN);
    assert!(forged.text().await.unwrap().contains("CSRF"));
    assert_eq!(
        publish(&cookie, Some("0".repeat(64).as_str())).await.unwrap().status(),
        StatusCode::FORBIDDEN
    );
    assert_eq!(publish(&cookie, Some(&csrf)).await.unwrap().status(), StatusCode::CREATED);
    // A file edited from version 1 is refused once version 2 is out: nobody's work is lost.
    let edited = tool.replace("Say {{word}}.", "Say {{word}} twice.");
    let from_v1 = |text: String| {
        client
            .post(format!("{base}/api/v1/tools?slug=sayer&base=1"))
            .header("cookie", &cookie)
            .header("x-csrf-token", &csrf)
            .body(text)
            .send()
    };
    assert_eq!(from_v1(edited.clone()).await.unwrap().status(), StatusCode::CREATED);
    let stale = from_v1(edited.replace("twice", "thrice")).await.unwrap();
    assert_eq!(stale.status(), StatusCode::CONFLICT);
    assert!(stale.text().await.unwrap().contains("version 2"));
    // Two session cookies in one request (one could be planted by a sibling site) are nobody.
    let doubled = client
        .get(format!("{base}/api/v1/session"))
        .header("cookie", format!("{cookie}; {cookie}"))
        .send()
        .await
        .unwrap();
    assert_eq!(doubled.status(), StatusCode::UNAUTHORIZED);
    // Over HTTPS (a proxy says so), the cookie is `Secure` and `__Host-`, and only that name
    // is read: a plain one, which a sibling subdomain could plant, is nobody.
    let https = client
        .post(format!("{base}/api/v1/session"))
        .header("x-forwarded-proto", "https")
        .json(&json!({"token": viewer}))
        .send()
        .await
        .unwrap();
    let set = https.headers()["set-cookie"].to_str().unwrap().to_owned();
    assert!(set.starts_with("__Host-llmtool_session=") && set.contains("; Secure"), "{set}");
    let value = set.split(';').next().unwrap().split_once('=').unwrap().1.to_owned();
    let who = |cookie: String| {
        client
            .get(format!("{base}/api/v1/session"))
            .header("x-forwarded-proto", "https")
            .header("cookie", cookie)
            .send()
    };
    assert_eq!(who(format!("__Host-llmtool_session={value}")).await.unwrap().status(), 200);
    let planted = who(format!("llmtool_session={value}")).await.unwrap();
    assert_eq!(planted.status(), StatusCode::UNAUTHORIZED);
    // A version carries its variables as llmtool reads them: a type written in the Korean or
    // Spanish edition's words comes out in its canonical name.
    let translated = json!({"model_prompt": "{{a}} {{b}}", "metadata": {"prompt_name": "Translated",
        "description": "d", "variables": [
            {"name": "a", "type": "다중 선택", "description": "d", "allowed_values": ["x", "y"]},
            {"name": "b", "type": "selección-única", "description": "d", "allowed_values": ["p", "q"]}]}});
    let publication =
        llmtool_registry::Publication::from_text(&translated.to_string(), "t.json").unwrap();
    store.publish("translated", &publication, None, None).await.unwrap();
    let read: Value = client
        .get(format!("{base}/api/v1/tools/translated"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let types: Vec<&str> =
        read["variables"].as_array().unwrap().iter().map(|v| v["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["multi-select", "single-select"]);
    assert_eq!(
        read["tool"]["metadata"]["variables"][0]["type"], "다중 선택",
        "the file is kept as written"
    );
    let (viewer_cookie, viewer_csrf) = sign_in(&base, &viewer).await;
    let refused = publish(&viewer_cookie, Some(&viewer_csrf)).await.unwrap();
    assert_eq!(
        refused.status(),
        StatusCode::FORBIDDEN,
        "a viewer cannot publish, whatever the page does"
    );

    // Avatars the route can serve, and only those, are listed as held: an SVG with no size is
    // still an image (it was listed and then 404), a percent-encoded data URL is not served.
    let svg = "PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciPjxjaXJjbGUgY3g9IjgiIGN5PSI4IiByPSI4Ii8+PC9zdmc+";
    for (slug, avatar) in [
        ("dot", format!("data:image/svg+xml;base64,{svg}")),
        (
            "encoded",
            "data:image/svg+xml,%3Csvg%20xmlns%3D%22http%3A%2F%2Fwww.w3.org%2F2000%2Fsvg%22%2F%3E"
                .into(),
        ),
    ] {
        let file = json!({"model_prompt": "Hi", "metadata": {"prompt_name": slug,
            "description": "d", "avatar": avatar}});
        let publication =
            llmtool_registry::Publication::from_text(&file.to_string(), "t.json").unwrap();
        store.publish(slug, &publication, None, None).await.unwrap();
    }

    // The search shows creators and which tools hold their avatar; tags are counted.
    let found: Value = client
        .get(format!("{base}/api/v1/tools?limit=200"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let by_slug = |slug: &str| {
        found["tools"].as_array().unwrap().iter().find(|t| t["slug"] == slug).unwrap().clone()
    };
    assert_eq!(by_slug("sayer")["creator"], "Ana");
    assert_eq!(by_slug("pair-programmer")["has_avatar"], true);
    assert_eq!(by_slug("sql-assistant")["has_avatar"], false, "a URL avatar is never fetched");
    let avatar =
        client.get(format!("{base}/api/v1/tools/pair-programmer/avatar")).send().await.unwrap();
    assert_eq!(
        (avatar.status(), avatar.headers()["content-type"].to_str().unwrap()),
        (StatusCode::OK, "image/png")
    );
    assert!(avatar.bytes().await.unwrap().starts_with(b"\x89PNG"));
    assert_eq!(by_slug("dot")["has_avatar"], true);
    let dot = client.get(format!("{base}/api/v1/tools/dot/avatar")).send().await.unwrap();
    assert_eq!(
        (dot.status(), dot.headers()["content-type"].to_str().unwrap()),
        (StatusCode::OK, "image/svg+xml")
    );
    assert!(dot.headers()["content-security-policy"].to_str().unwrap().contains("sandbox"));
    assert_eq!(by_slug("encoded")["has_avatar"], false);
    assert_eq!(
        client
            .get(format!("{base}/api/v1/tools/sql-assistant/avatar"))
            .send()
            .await
            .unwrap()
            .status(),
        404
    );
    let tags: Value =
        client.get(format!("{base}/api/v1/tags")).send().await.unwrap().json().await.unwrap();
    // Every tool reaches everyone until it is curated: `all` first, then the built-in ones.
    assert_eq!((tags[0]["tag"].as_str(), tags[1]["tag"].as_str()), (Some("all"), Some("built-in")));

    // Check and format, as the editor calls them while typing.
    let check: Value = client
        .post(format!("{base}/api/v1/check"))
        .body(r#"{"model_prompt": "Hi {{nme}}", "metadata": {"prompt_name": "X", "variables": [{"name": "name", "type": "text", "description": "d"}]}}"#)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let undeclared = check.as_array().unwrap().iter().find(|d| d["code"] == "LT212").unwrap();
    assert_eq!(undeclared["fix"]["edits"][0]["replacement"], "{{name}}");
    // A file of 23,000 unused variables (and one error, last) answers 1,000 diagnostics, the
    // error among them, and counts the rest (the answer was 23 MB).
    let variables: Vec<Value> = (0..23_000)
        .map(|i| json!({"name": format!("v{i}"), "type": "text"}))
        .chain([json!({"name": "bad", "type": "no-such-type"})])
        .collect();
    let many = json!({"model_prompt": "Hi", "metadata": {"prompt_name": "X", "description": "d",
        "variables": variables}});
    let many = many.to_string();
    assert!(many.len() < llmtool_server::MAX_BODY, "{}", many.len());
    let answer = client.post(format!("{base}/api/v1/check")).body(many).send().await.unwrap();
    let omitted: usize =
        answer.headers()["x-diagnostics-omitted"].to_str().unwrap().parse().unwrap();
    let found: Vec<Value> = answer.json().await.unwrap();
    assert_eq!(found.len(), llmtool_registry::MAX_DIAGNOSTICS);
    assert!(omitted >= 45_000, "{omitted}");
    assert!(found.iter().any(|d| d["severity"] == "error"), "errors come first");
    let formatted: Value = client
        .post(format!("{base}/api/v1/format"))
        .body(tool.clone())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(formatted["text"].as_str().unwrap().starts_with("{\n"));
    let broken = client
        .post(format!("{base}/api/v1/format"))
        .body("{\"model_prompt\": ")
        .send()
        .await
        .unwrap();
    assert_eq!(broken.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(broken.json::<Value>().await.unwrap()["diagnostics"][0]["code"].is_string());

    // Signing out needs the CSRF token too, and ends the session.
    let out = client
        .delete(format!("{base}/api/v1/session"))
        .header("cookie", &cookie)
        .header("x-csrf-token", &csrf)
        .send()
        .await
        .unwrap();
    assert_eq!(out.status(), StatusCode::NO_CONTENT);
    assert!(out.headers()["set-cookie"].to_str().unwrap().contains("Max-Age=0"));
    let after = client
        .get(format!("{base}/api/v1/session"))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(after.status(), StatusCode::UNAUTHORIZED);
    // A revoked token ends its sessions at once.
    store.revoke_token("vic", TokensOf::Everyone).await.unwrap();
    let revoked = client
        .get(format!("{base}/api/v1/session"))
        .header("cookie", &viewer_cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(revoked.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_studio_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    studio(Arc::new(SqlStore::open_sqlite(&dir.path().join("library.db")).await.unwrap())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_studio_on_postgres() {
    let Some(database) = llmtool_testkit::postgres::database().await else { return };
    studio(Arc::new(SqlStore::connect_postgres(&database.url).await.unwrap())).await;
}
