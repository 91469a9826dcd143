//! Running the library's tools on the server, against the scripted mock provider: the answer
//! streamed as Server-Sent Events, each run kept with its cost and what ran it (the studio or
//! a program) and totalled by `GET /usage`,
//! bad values refused before anything is sent, running closed to callers without a token,
//! and a full server refusing more runs with 503 and `Retry-After`.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use crate::support;

use crate::support::{Library, chunk, events, streamed_text};
use llmtool_registry::{Budget, Period, PriceOverride, Role, Scope};
use llmtool_testkit::{End, Mock, Reply};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_stream_and_are_kept_with_their_cost() {
    let usage = json!({"choices": [], "usage": {"prompt_tokens": 1000, "completion_tokens": 500}});
    let mock = Mock::start(vec![
        Reply::sse(&[&chunk("Tides "), &chunk("turn."), &usage.to_string(), "[DONE]"]),
        Reply::sse(&[&chunk("Slowly")]).ending(End::Stall),
    ])
    .await;
    let library = Library::start(&mock, &[("poet", crate::support::poet())]).await;
    let (base, viewer) = (library.base.clone(), library.viewer.clone());
    let client = reqwest::Client::new();
    let run = |values: Value, token: Option<&str>| {
        let request =
            client.post(format!("{base}/tools/poet/run")).json(&json!({"values": values}));
        match token {
            Some(token) => request.bearer_auth(token.to_owned()).send(),
            None => request.send(),
        }
    };

    // Public reading does not let anyone run tools on the server's keys.
    assert_eq!(run(json!({"topic": "tides"}), None).await.unwrap().status(), 401);
    // A missing value is refused before anything is sent.
    let missing = run(json!({}), Some(&viewer)).await.unwrap();
    assert_eq!(missing.status(), 422);
    assert!(missing.text().await.unwrap().contains("topic"));

    // This run comes from the studio: a session signed in with the token, its CSRF token sent.
    let session = client
        .post(format!("{base}/session"))
        .json(&json!({"token": viewer}))
        .send()
        .await
        .unwrap();
    let cookie = session.headers()["set-cookie"].to_str().unwrap().split(';').next().unwrap();
    let cookie = cookie.to_owned();
    let csrf = session.json::<Value>().await.unwrap()["csrf"].as_str().unwrap().to_owned();
    let streamed = client
        .post(format!("{base}/tools/poet/run"))
        .header("cookie", cookie)
        .header("x-csrf-token", csrf)
        .json(&json!({"values": {"topic": "tides"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(streamed.status(), 200);
    assert_eq!(streamed.headers()["content-type"], "text/event-stream");
    let streamed = events(&streamed.text().await.unwrap());
    assert_eq!(streamed[0].0, "start");
    assert_eq!(
        (streamed[0].1["model"].as_str(), streamed[0].1["version"].as_u64()),
        (Some("m"), Some(1))
    );
    let text = streamed_text(&streamed);
    assert_eq!(text, "Tides turn.");
    let (name, done) = streamed.last().unwrap();
    assert_eq!(name, "done");
    assert_eq!(
        (done["outcome"].as_str(), done["answer"].as_str()),
        (Some("ok"), Some("Tides turn."))
    );
    assert!((done["cost_usd"].as_f64().unwrap() - 0.002).abs() < 1e-12, "{done}");
    assert_eq!(
        (done["input_tokens"].as_u64(), done["output_tokens"].as_u64()),
        (Some(1000), Some(500))
    );
    assert!(done["id"].as_i64().is_some());
    assert!(!done.to_string().contains("mock-secret-key"), "a key never shows");
    // What the provider was sent is the rendered prompt.
    let sent = &mock.requests()[0].body;
    assert_eq!(sent["messages"][0]["content"], "Write about tides.");

    // A client may choose among the models the server's operator configured, and nothing
    // else: not a model file, not a provider nobody set up (a local server on a loopback port),
    // not a model the config never names. Nothing is sent; the problem names what is allowed.
    let models: Value = client
        .get(format!("{base}/models"))
        .bearer_auth(&viewer)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let mut ids: Vec<&str> =
        models.as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap()).collect();
    // The embedded model is listed when it is installed on this machine (it sends nothing).
    ids.retain(|id| *id != "local/smollm2");
    assert_eq!(ids, ["mock/m"], "{models}");
    let sent = mock.requests().len();
    // The ports of the local-server presets, watched: a refused choice connects to none.
    let watched: Vec<std::net::TcpListener> = [11434, 8000, 8080, 1234]
        .into_iter()
        .filter_map(|port| std::net::TcpListener::bind(("127.0.0.1", port)).ok())
        .inspect(|listener| listener.set_nonblocking(true).unwrap())
        .collect();
    for choice in [
        json!({"model": "local/etc/model.gguf"}),
        json!({"model": "ollama/llama3"}),
        json!({"provider": "vllm"}),
        json!({"model": "llamacpp/x", "provider": "llamacpp"}),
        json!({"model": "mock/other"}),
        json!({"model": "openai/gpt-4o"}),
    ] {
        let mut body = choice.clone();
        body["values"] = json!({"topic": "tides"});
        let chosen = client
            .post(format!("{base}/tools/poet/run"))
            .bearer_auth(&viewer)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(chosen.status(), 422, "{choice}");
        let problem: Value = chosen.json().await.unwrap();
        let detail = problem["detail"].as_str().unwrap();
        assert!(
            detail.contains("is not a model this server runs") && detail.contains("mock/m"),
            "{choice}: {detail}"
        );
    }
    assert_eq!(mock.requests().len(), sent, "nothing was sent for a refused choice");
    // MCP's tool calls choose nothing, and a tool that names an unconfigured provider does
    // not reach it either: the watched ports saw no connection.
    let runner = library.state.library_runner().unwrap();
    let ollama: llmtool_format::model::Tool = llmtool_format::Document::from_text(
        json!({"model_prompt": "Hi", "metadata": {"prompt_name": "O", "description": "d",
            "model_version": ["ollama/llama3"], "timestamp": "2026-11-23T10:00:00Z"}})
        .to_string(),
    )
    .tool
    .unwrap();
    let inputs = llmtool_format::template::Inputs::default();
    let subject = llmtool_runtime::Subject::new("mcp", None, &ollama, &inputs);
    // It runs on what is configured instead (the embedded model, if installed here), or fails.
    let _ = runner.answer(ollama, "Hi".into(), subject).await;
    for listener in &watched {
        let port = listener.local_addr().unwrap().port();
        assert!(listener.accept().is_err(), "something connected to port {port}");
    }

    // One run at a time and none waiting: a second run while one stalls is refused.
    let stalled = run(json!({"topic": "sand"}), Some(&viewer)).await.unwrap();
    assert_eq!(stalled.status(), 200);
    let busy = run(json!({"topic": "sea"}), Some(&viewer)).await.unwrap();
    assert_eq!(busy.status(), 503);
    assert_eq!(busy.headers()["retry-after"], "1");
    // The client of the stalled run goes away: the run is cancelled, kept, and its turn freed.
    drop(stalled);

    let usage = async |query: &str| -> Value {
        let response = client.get(format!("{base}/usage{query}")).bearer_auth(&viewer).send();
        response.await.unwrap().json().await.unwrap()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while usage("").await[0]["runs"] != 2 {
        assert!(std::time::Instant::now() < deadline, "the cancelled run is not kept");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let by_tool = usage("?by=tool").await;
    assert_eq!(by_tool[0]["key"], "poet");
    assert!((by_tool[0]["cost_usd"].as_f64().unwrap() - 0.002).abs() < 1e-12, "{by_tool}");
    assert_eq!(usage("?by=model").await[0]["key"], "mock/m");
    // What ran them: the studio's session, and a program with a token.
    let by_origin = usage("?by=origin").await;
    let runs_of = |origin: &str| {
        let row = by_origin.as_array().unwrap().iter().find(|row| row["key"] == origin);
        row.map(|row| (row["runs"].as_u64().unwrap(), row["cost_usd"].as_f64().unwrap()))
    };
    let (studio_runs, studio_cost) = runs_of("studio").unwrap();
    assert!(studio_runs == 1 && (studio_cost - 0.002).abs() < 1e-12, "{by_origin}");
    assert_eq!(runs_of("server"), Some((1, 0.0)), "the cancelled run: {by_origin}");
    let bad = client.get(format!("{base}/usage?by=week")).bearer_auth(&viewer).send().await;
    assert_eq!(bad.unwrap().status(), 400);
    let bad = client.get(format!("{base}/usage?since=yesterday")).bearer_auth(&viewer).send();
    assert_eq!(bad.await.unwrap().status(), 400);
    // A time with an offset is compared in UTC: 2026-11-23T01:00+02:00 is the 22nd at 23:00.
    assert_eq!(usage("?since=2999-01-01").await, json!([]));
    assert_eq!(usage("?since=2000-01-01T01:00:00%2B02:00").await[0]["runs"], 2);
    assert_eq!(client.get(format!("{base}/usage")).send().await.unwrap().status(), 401);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tools_dlp_policy_redacts_and_restores_the_stream_or_blocks_the_run() {
    // The answer's placeholder is cut across two chunks.
    let mock = Mock::start(vec![
        Reply::sse(&[&chunk("Wrote to [EMA"), &chunk("IL_1]."), "[DONE]"]),
        Reply::sse(&[&chunk("Slowly")]).ending(End::Stall),
    ])
    .await;
    let tool = |policy: &str| {
        json!({
            "model_prompt": "Reply to {{mail}}",
            "x-dlp": policy,
            "metadata": {"prompt_name": "Reply", "description": "Replies.",
                "model_version": ["mock/m"], "timestamp": "2026-11-23T10:00:00Z",
                "variables": [{"name": "mail", "type": "text", "description": "The mail."}]}
        })
    };
    let library =
        Library::start(&mock, &[("reply", tool("redact")), ("guarded", tool("block"))]).await;
    let client = reqwest::Client::new();
    let run = |slug: &str| {
        client
            .post(format!("{}/tools/{slug}/run", library.base))
            .bearer_auth(&library.viewer)
            .json(&json!({"values": {"mail": "ann@example.com"}}))
            .send()
    };

    let streamed = events(&run("reply").await.unwrap().text().await.unwrap());
    let text = streamed_text(&streamed);
    assert_eq!(text, "Wrote to ann@example.com.");
    let (_, done) = streamed.last().unwrap();
    assert_eq!(done["answer"], "Wrote to ann@example.com.", "{done}");
    // The kept run has the placeholder and the count, never the value.
    assert_eq!(done["variables"]["mail"], "[EMAIL_1]", "{done}");
    assert_eq!(done["redactions"]["email"], 1, "{done}");
    assert_eq!(mock.requests()[0].body["messages"][0]["content"], "Reply to [EMAIL_1]");

    // The scan is work inside the run limit (one run, none waiting): while a run stalls, even
    // a prompt that would be blocked is not scanned, but refused as the server being busy.
    let stalled = run("reply").await.unwrap();
    assert_eq!(stalled.status(), 200);
    assert_eq!(run("guarded").await.unwrap().status(), 503);
    drop(stalled);

    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let blocked = loop {
        let response = run("guarded").await.unwrap();
        if response.status() != 503 {
            break response;
        }
        assert!(std::time::Instant::now() < deadline, "the stalled run's turn is not freed");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    assert_eq!(blocked.status(), 422);
    let said = blocked.text().await.unwrap();
    assert!(said.contains("an e-mail address") && !said.contains("ann@"), "{said}");
    assert_eq!(mock.requests().len(), 2, "a blocked run sends nothing");
}

/// A member with a token of theirs, on the library of `library`.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_tools_pictures_are_kept_with_its_run_for_its_owner_alone() {
    use base64::Engine as _;
    let picture = llmtool_testkit::pictures::png(64, 48);
    let answer = json!({"data": [{"b64_json": base64::engine::general_purpose::STANDARD.encode(&picture)}],
        "usage": {"input_tokens": 10, "output_tokens": 100}});
    let mock = Mock::start(vec![Reply::json(200, answer.to_string()); 2]).await;
    let tool = json!({
        "model_prompt": "A picture of {{subject}}.",
        "metadata": {"prompt_name": "Picture", "model_version": ["mock/gpt-image-1"],
            "variables": [{"name": "subject", "type": "text"}],
            "expected_output": {"type": "image", "format": "png", "size": "64x48"}}
    });
    let options = llmtool_runtime::RuntimeOptions {
        pictures: llmtool_runtime::pictures::Pictures::Returned,
        ..llmtool_runtime::RuntimeOptions::default()
    };
    let library =
        Library::start_with(&mock, &[("picture", tool)], options, &[("picture", "design")]).await;
    for team in ["design", "sales"] {
        library.state.store.create_team(team, true).await.unwrap();
    }
    let ana = library.member("ana@example.org", Role::Viewer, &["design"]).await;
    let bo = library.member("bo@example.org", Role::Viewer, &["design"]).await;
    let cy = library.member("cy@example.org", Role::Editor, &["sales"]).await;
    let dee = library.member("dee@example.org", Role::Admin, &[]).await;
    let client = reqwest::Client::new();
    let base = library.base.clone();

    let ran = client
        .post(format!("{base}/tools/picture/run"))
        .bearer_auth(&ana)
        .json(&json!({"values": {"subject": "a lighthouse"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(ran.status(), 200);
    let events = events(&ran.text().await.unwrap());
    let done = &events.last().unwrap().1;
    assert_eq!(done["outcome"], "ok", "{done}");
    let kept = &done["pictures"][0];
    let facts = (&kept["format"], &kept["width"], &kept["height"], &kept["bytes"]);
    assert_eq!(facts, (&json!("png"), &json!(64), &json!(48), &json!(picture.len())));
    assert_eq!(done["pictures"].as_array().unwrap().len(), 1);
    let url = kept["url"].as_str().unwrap();
    let conversation = done["conversation"].as_str().unwrap();
    assert!(url.starts_with(&format!("/api/v1/conversations/{conversation}/pictures/")), "{url}");
    let address = format!("{}{url}", base.trim_end_matches("/api/v1"));
    let fetch = |token: Option<&str>| {
        let request = client.get(&address);
        match token {
            Some(token) => request.bearer_auth(token.to_owned()),
            None => request,
        }
    };

    // Its owner gets the picture, as the image it is and nothing a browser could run.
    let got = fetch(Some(&ana)).send().await.unwrap();
    assert_eq!(got.status(), 200);
    let header = |name: &str| got.headers()[name].to_str().unwrap().to_owned();
    assert_eq!(header("content-type"), "image/png");
    assert_eq!(header("x-content-type-options"), "nosniff");
    assert_eq!(header("content-security-policy"), "default-src 'none'; sandbox");
    assert_eq!(header("cache-control"), "private, no-cache");
    let etag = header("etag");
    assert_eq!(got.bytes().await.unwrap(), picture);
    let again = fetch(Some(&ana)).header("if-none-match", &etag).send().await.unwrap();
    assert_eq!(again.status(), 304);
    assert!(again.bytes().await.unwrap().is_empty());
    // An admin may read it; a teammate, another team's member and nobody may not.
    assert_eq!(fetch(Some(&dee)).send().await.unwrap().status(), 200);
    for (who, token) in [("a teammate", Some(&bo)), ("another team's member", Some(&cy))] {
        let refused = fetch(token.map(String::as_str)).send().await.unwrap();
        assert_eq!(refused.status(), 404, "{who}");
        assert!(refused.text().await.unwrap().contains("no conversation"), "{who}");
    }
    assert_eq!(fetch(None).send().await.unwrap().status(), 401);
    let elsewhere = address
        .replace("/pictures/", "/pictures/9")
        .replace(conversation, "01JQNOTHERE0000000000000000");
    assert_eq!(client.get(&elsewhere).bearer_auth(&ana).send().await.unwrap().status(), 404);

    // The transcript and the run history show it to its owner, and to nobody else: a
    // teammate once saw who ran it and what it cost.
    let transcript = support::json_of(
        client.get(format!("{base}/conversations/{conversation}")).bearer_auth(&ana),
    )
    .await;
    assert_eq!(transcript["messages"][0]["pictures"][0]["url"], url);
    let history = |token: &str| {
        support::json_of(
            client.get(format!("{base}/tools/picture/runs")).bearer_auth(token.to_owned()),
        )
    };
    assert_eq!(history(&ana).await[0]["pictures"][0]["url"], url);
    let teammates = history(&bo).await;
    assert_eq!(teammates, json!([]), "a teammate sees none of ana's runs");

    // Shared, the snapshot shows its pictures to whoever may see the tool, and to nobody else.
    let link = client.post(format!("{base}/conversations/{conversation}/share")).bearer_auth(&ana);
    let link = support::json_of(link).await;
    let snapshot = link["api"].as_str().unwrap().trim_start_matches("/api/v1").to_owned();
    let shown = support::json_of(client.get(format!("{base}{snapshot}")).bearer_auth(&bo)).await;
    let shared_url = shown["messages"][0]["pictures"][0]["url"].as_str().unwrap();
    assert!(shared_url.starts_with("/api/v1/shared/"), "{shown}");
    let shared_address = format!("{}{shared_url}", base.trim_end_matches("/api/v1"));
    let got = client.get(&shared_address).bearer_auth(&bo).send().await.unwrap();
    assert_eq!(got.status(), 200);
    assert_eq!(got.headers()["content-type"], "image/png");
    assert_eq!(got.bytes().await.unwrap(), picture);
    let refused = client.get(&shared_address).bearer_auth(&cy).send().await.unwrap();
    assert_eq!(refused.status(), 404, "another team's member does not see the tool");
    let run = shown["messages"][0]["pictures"][0]["run"].as_i64().unwrap();
    let other_run = shared_address.replace(&format!("/{run}/1"), &format!("/{}/1", run + 1000));
    let refused = client.get(&other_run).bearer_auth(&bo).send().await.unwrap();
    assert_eq!(refused.status(), 404, "a run the snapshot does not show: {other_run}");

    // Over the server's MCP endpoint, the picture comes back as image content.
    let mcp = library.base.replace("/api/v1", "/mcp");
    let token = Some(ana.as_str());
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let (_, _, session) = support::mcp_request(&mcp, token, None, &initialize).await;
    let session = session.unwrap();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    support::mcp_request(&mcp, token, Some(&session), &initialized).await;
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "picture", "arguments": {"subject": "a lighthouse"}}});
    let (_, answer, _) = support::mcp_request(&mcp, token, Some(&session), &call).await;
    let content = &answer["result"]["content"][0];
    assert_eq!(
        (content["type"].as_str(), content["mimeType"].as_str()),
        (Some("image"), Some("image/png")),
        "{answer}"
    );
    let data = content["data"].as_str().unwrap();
    assert_eq!(base64::engine::general_purpose::STANDARD.decode(data).unwrap(), picture);
    assert_eq!(mock.requests().len(), 2);
    assert!(mock.requests().iter().all(|request| request.path == "/v1/images/generations"));
    // The MCP client got its picture: the library keeps its run, not the picture.
    let runs = history(&dee).await;
    assert_eq!(runs.as_array().unwrap().len(), 2);
    assert!(runs[0].get("pictures").is_none(), "{runs}");
    assert_eq!(runs[1]["pictures"][0]["url"], url);

    // Priced at $0.50 a picture, a run is held against the budgets at that before anything is
    // sent: past Ana's hard budget of $0.10, it is refused and the provider never hears of it.
    let store = &library.state.store;
    let price = PriceOverride {
        model: "mock/gpt-image-1".into(),
        input: None,
        cached_input: None,
        output: None,
        batch_input: None,
        batch_output: None,
        image_output: None,
        per_image: Some(0.5),
        markup_percent: None,
        note: None,
        updated_at: String::new(),
    };
    store.set_price_override(&price).await.unwrap();
    let budget = Budget {
        scope: Scope::Member,
        name: "ana@example.org".into(),
        period: Period::Month,
        limit_usd: 0.10,
        warn_at: 0.8,
        hard: true,
        updated_at: String::new(),
    };
    store.set_budget(&budget).await.unwrap();
    let refused = client
        .post(format!("{base}/tools/picture/run"))
        .bearer_auth(&ana)
        .json(&json!({"values": {"subject": "a lighthouse"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 402);
    assert!(refused.text().await.unwrap().contains("$0.50"));
    assert_eq!(mock.requests().len(), 2, "nothing more was sent");
}
