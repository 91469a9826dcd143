//! The tool library end to end through the binary: `llmtool token`, `llmtool serve`, then
//! `publish`, `search`, `pull` and `run registry:` against it, and the cache when it is down.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::io::{BufRead as _, BufReader};
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

use crate::support::{llmtool, text};

/// `llmtool serve` on a free loopback port: the child and its URL.
fn serve(data: &Path) -> (Child, String) {
    serve_with(data, &[], &[])
}

/// `llmtool serve` with `extra` arguments and environment.
fn serve_with(data: &Path, extra: &[&str], env: &[(&str, &str)]) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_llmtool"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .args(extra)
        .envs(env.iter().copied())
        .env("LLMTOOL_DATA_DIR", data)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let mut lines = stderr.lines().map(Result::unwrap);
    let url = lines
        .by_ref()
        .find_map(|line| {
            let url = line.strip_prefix("llmtool serve: http://")?.split_once('/')?.0.to_owned();
            Some(format!("http://{url}"))
        })
        .unwrap();
    // The studio's address is said too, next.
    let studio = lines.next().unwrap();
    assert_eq!(studio.split(" (").next().unwrap(), format!("llmtool serve: the studio at {url}/"));
    (child, url)
}

#[test]
fn publish_search_pull_and_run_from_the_library() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let made = llmtool(&data, &["token", "create", "ci", "--role", "editor"], &[]);
    assert_eq!(made.status.code(), Some(0), "{}", text(&made.stderr));
    let token = text(&made.stdout).trim().to_owned();
    assert!(token.starts_with("llmt_") && token.len() == 69, "{token}");
    let listed = llmtool(&data, &["token", "list", "--format", "json"], &[]);
    assert!(!text(&listed.stdout).contains(&token), "a token is shown once, never listed");

    let (mut server, url) = serve(&data);
    let env = [("LLMTOOL_REGISTRY", url.as_str()), ("LLMTOOL_TOKEN", token.as_str())];
    let tool = dir.path().join("poet.json");
    let write = |prompt: &str| {
        let body = serde_json::json!({
            "model_prompt": prompt,
            "metadata": {"prompt_name": "Poet", "description": "Writes poems.", "timestamp": "2026-11-23T10:00:00Z",
                         "variables": [{"name": "topic", "type": "text", "description": "What about."}]}
        });
        std::fs::write(&tool, body.to_string()).unwrap();
    };
    write("A poem about {{topic}}.");
    let tool_arg = tool.to_str().unwrap();
    let published =
        llmtool(&data, &["publish", tool_arg, "--tag", "poetry", "--label", "production"], &env);
    assert_eq!(published.status.code(), Some(0), "{}", text(&published.stderr));
    assert!(
        text(&published.stdout).contains("poet@1 (a new version)"),
        "{}",
        text(&published.stdout)
    );
    write("A short poem about {{topic}}.");
    let second = llmtool(&data, &["publish", tool_arg, "--note", "shorter"], &env);
    assert!(text(&second.stdout).contains("poet@2 (a new version)"), "{}", text(&second.stdout));
    // A file with errors: exit 1, the diagnostics, nothing published.
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, r#"{"metadata": {"prompt_name": "Bad"}}"#).unwrap();
    let refused = llmtool(&data, &["publish", bad.to_str().unwrap()], &env);
    assert_eq!(refused.status.code(), Some(1));
    assert!(text(&refused.stderr).contains("error[LT101]"), "{}", text(&refused.stderr));
    // Without a token, publishing is refused.
    let anonymous = llmtool(&data, &["publish", tool_arg], &[("LLMTOOL_REGISTRY", url.as_str())]);
    assert_eq!(anonymous.status.code(), Some(2));
    assert!(text(&anonymous.stderr).contains("Unauthorized"), "{}", text(&anonymous.stderr));

    let found = llmtool(&data, &["search", "poem", "--tag", "poetry", "--format", "json"], &env);
    let page: serde_json::Value = serde_json::from_slice(&found.stdout).unwrap();
    assert_eq!(
        (page["tools"][0]["slug"].as_str(), page["tools"][0]["version"].as_u64()),
        (Some("poet"), Some(2))
    );

    let pulled = llmtool(&data, &["pull", "poet:production"], &env);
    let file: serde_json::Value = serde_json::from_slice(&pulled.stdout).unwrap();
    assert_eq!(file["model_prompt"], "A poem about {{topic}}.");
    let rendered = llmtool(&data, &["render", "registry:poet@2", "--var", "topic=tides"], &env);
    assert_eq!(text(&rendered.stdout), "A short poem about tides.");
    // A test file may test a library tool; the MCP server serves one.
    let tests = dir.path().join("library.tests.json");
    let case = serde_json::json!({"tool": "registry:poet@2", "cases": [
        {"name": "tides", "vars": {"topic": "tides"}, "assert": [{"type": "contains", "value": "tide"}]}]});
    std::fs::write(&tests, case.to_string()).unwrap();
    let checked = llmtool(&data, &["check", tests.to_str().unwrap()], &env);
    assert_eq!(checked.status.code(), Some(0), "{}", text(&checked.stderr));
    let wrong = case.to_string().replace("topic", "subject");
    std::fs::write(&tests, wrong).unwrap();
    let checked = llmtool(&data, &["check", tests.to_str().unwrap()], &env);
    assert_eq!(checked.status.code(), Some(1), "checked against the library's tool");
    let said = text(&checked.stdout) + &text(&checked.stderr);
    assert!(said.contains("subject") && said.contains("poet"), "{said}");
    let listed = mcp_tools(&data, "registry:poet@2", &env);
    assert_eq!(listed["result"]["tools"][0]["name"], "poet", "{listed}");
    // `call` takes a library name: the arguments are checked against the library's tool, and
    // an export names it so for `llmtool call` later.
    let called = llmtool(&data, &["call", "registry:poet:production", r#"{"subject": "x"}"#], &env);
    assert_eq!(called.status.code(), Some(1), "{}", text(&called.stderr));
    assert!(
        text(&called.stderr).contains("its parameters are `topic`"),
        "{}",
        text(&called.stderr)
    );
    let exported = llmtool(&data, &["export", "registry:poet:production", "--to", "gptel"], &env);
    assert!(
        text(&exported.stdout).contains(r#"(list program "call" "registry:poet:production" "-")"#),
        "{}",
        text(&exported.stdout)
    );

    // The library goes down: the pulled versions still serve, with a warning.
    server.kill().unwrap();
    server.wait().unwrap();
    let cached =
        llmtool(&data, &["render", "registry:poet:production", "--var", "topic=tides"], &env);
    assert_eq!(text(&cached.stdout), "A poem about tides.");
    assert!(
        text(&cached.stderr).contains("cannot be reached; using the cached poet@1"),
        "{}",
        text(&cached.stderr)
    );
    // A numbered version is immutable: any cached copy serves.
    let numbered = llmtool(&data, &["pull", "poet@1"], &env);
    assert_eq!(numbered.status.code(), Some(0), "{}", text(&numbered.stderr));
    let never_pulled = llmtool(&data, &["pull", "poet@7"], &env);
    assert_eq!(never_pulled.status.code(), Some(2), "nothing cached for it");
    assert!(
        text(&never_pulled.stderr).contains("cannot be reached"),
        "{}",
        text(&never_pulled.stderr)
    );
}

/// `llmtool mcp TOOL` over standard input: its answer to `tools/list`.
#[test]
fn a_langfuse_export_comes_in_with_its_versions_notes_labels_and_tags() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let made = llmtool(&data, &["token", "create", "ci", "--role", "editor"], &[]);
    let token = text(&made.stdout).trim().to_owned();
    let (mut server, url) = serve(&data);
    let env = [("LLMTOOL_REGISTRY", url.as_str()), ("LLMTOOL_TOKEN", token.as_str())];
    // Langfuse's export: every version, sorted by name and version; the newest of a prompt
    // carries `latest`, and a label is on one version at a time.
    let version = |number: u32, prompt: &str, labels: &[&str], note: Option<&str>| {
        serde_json::json!({
            "name": "movie-critic", "version": number, "type": "text", "prompt": prompt,
            "config": {"model": "gpt-4o", "temperature": 0.5}, "tags": ["movies"],
            "labels": labels, "commitMessage": note,
        })
    };
    let export = serde_json::json!([
        {"name": "greeter", "version": 1, "type": "chat", "config": {}, "tags": [], "labels": ["production", "latest"],
         "commitMessage": null,
         "prompt": [{"role": "system", "content": "Be warm."}, {"type": "placeholder", "name": "history"},
                    {"role": "user", "content": "Greet {{ name }}."}]},
        version(1, "As a critic, rate {{movie}}.", &[], None),
        version(2, "As a {{criticlevel}} critic, rate {{movie}}.", &["production"], Some("levels of critics")),
        version(3, "As a {{criticlevel}} critic, rate {{movie}} out of ten.", &["staging", "latest"], None),
        version(4, "As a critic, {{movie", &["broken"], None),
    ]);
    let file = dir.path().join("langfuse-prompts-all-2026-11-27.json");
    std::fs::write(&file, serde_json::to_string_pretty(&export).unwrap()).unwrap();
    let published =
        llmtool(&data, &["publish", "--from", "langfuse", file.to_str().unwrap()], &env);
    let said = text(&published.stdout);
    assert_eq!(published.status.code(), Some(0), "{said}{}", text(&published.stderr));
    for line in [
        "greeter v1: greeter@1 (a new version)",
        "movie-critic v1: movie-critic@1",
        "movie-critic v3: movie-critic@3",
    ] {
        assert!(said.contains(line), "{line}: {said}");
    }
    // `{{movie` is literal text to Langfuse too: v4 is a version of its own.
    assert!(said.contains("movie-critic v4: movie-critic@4"), "{said}");
    let pulled = |reference: &str| {
        let out = llmtool(&data, &["pull", reference], &env);
        assert_eq!(out.status.code(), Some(0), "{reference}: {}", text(&out.stderr));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    assert_eq!(
        pulled("movie-critic:production")["model_prompt"],
        "As a {{criticlevel}} critic, rate {{movie}}."
    );
    assert_eq!(
        pulled("movie-critic:staging")["model_prompt"],
        "As a {{criticlevel}} critic, rate {{movie}} out of ten."
    );
    assert_eq!(pulled("movie-critic:broken")["model_prompt"], "As a critic, {{movie");
    assert_eq!(pulled("movie-critic@1")["metadata"]["parameters"]["temperature"], 0.5);
    let greeter = pulled("greeter:production");
    assert_eq!(greeter["model_prompt"], "system:\nBe warm.\n\nuser:\nGreet {{name}}.");
    // The commit messages are the versions' notes; the tags, the prompt's.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let versions_of = |slug: &str| -> serde_json::Value {
        runtime.block_on(async {
            let request = reqwest::Client::new().get(format!("{url}/api/v1/tools/{slug}/versions"));
            request.bearer_auth(&token).send().await.unwrap().json().await.unwrap()
        })
    };
    let versions = versions_of("movie-critic");
    let notes: Vec<&str> =
        versions.as_array().unwrap().iter().filter_map(|v| v["note"].as_str()).collect();
    assert_eq!(notes, ["levels of critics"], "{versions}");
    // The same export again: every version is one the library holds, so nothing is published
    // twice and the labels stay where they are.
    let again = llmtool(&data, &["publish", "--from", "langfuse", file.to_str().unwrap()], &env);
    let said_again = text(&again.stdout);
    assert_eq!(again.status.code(), Some(0), "{said_again}{}", text(&again.stderr));
    assert!(!said_again.contains("a new version"), "{said_again}");
    assert!(said_again.contains("movie-critic v3: movie-critic@3 (already in the library)"));
    let versions_again = versions_of("movie-critic");
    assert_eq!(versions_again.as_array().unwrap().len(), 4, "{versions_again}");
    assert_eq!(
        pulled("movie-critic:production")["model_prompt"],
        "As a {{criticlevel}} critic, rate {{movie}}."
    );
    // Out again as Langfuse's export, every version with the library's labels (and `latest`),
    // written privately; brought back in, it is the versions the library has.
    let out = dir.path().join("back-to-langfuse.json");
    let args = ["pull", "movie-critic", "greeter", "--to", "langfuse", "-o", out.to_str().unwrap()];
    let pulled_out = llmtool(&data, &args, &env);
    assert_eq!(pulled_out.status.code(), Some(0), "{}", text(&pulled_out.stderr));
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&out).unwrap().permissions())
            & 0o777,
        0o600
    );
    let list: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let summary: Vec<String> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|p| format!("{} v{} {}", p["name"].as_str().unwrap(), p["version"], p["labels"]))
        .collect();
    assert_eq!(
        summary,
        [
            "movie-critic v1 []",
            "movie-critic v2 [\"production\"]",
            "movie-critic v3 [\"staging\"]",
            "movie-critic v4 [\"broken\",\"latest\"]",
            "greeter v1 [\"production\",\"latest\"]",
        ]
    );
    assert_eq!(list[1]["commitMessage"], "levels of critics");
    assert!(list[0]["tags"].as_array().unwrap().contains(&serde_json::json!("movies")));
    assert_eq!(list[4]["type"], "chat");
    let back = llmtool(&data, &["publish", "--from", "langfuse", out.to_str().unwrap()], &env);
    let said_back = text(&back.stdout);
    assert_eq!(back.status.code(), Some(0), "{said_back}{}", text(&back.stderr));
    assert!(!said_back.contains("a new version"), "{said_back}");
    assert!(said_back.contains("greeter v1: greeter@1 (already in the library)"), "{said_back}");
    let not_a_slug = llmtool(&data, &["pull", "movie-critic@2", "--to", "langfuse"], &env);
    assert_eq!(not_a_slug.status.code(), Some(2));
    assert!(text(&not_a_slug.stderr).contains("takes every version"));
    // A prompt that went back to an earlier text keeps its own later version on a second
    // import, and the label on it with it.
    let reverted = dir.path().join("reverted.json");
    let echo = |number: u32, prompt: &str, labels: &[&str]| serde_json::json!({"name": "echo", "version": number, "type": "text", "prompt": prompt, "labels": labels});
    let export = serde_json::json!([
        echo(1, "A {{x}}", &[]),
        echo(2, "B {{x}}", &[]),
        echo(3, "A {{x}}", &["production", "latest"])
    ]);
    std::fs::write(&reverted, export.to_string()).unwrap();
    for round in ["first", "second"] {
        let out =
            llmtool(&data, &["publish", "--from", "langfuse", reverted.to_str().unwrap()], &env);
        assert_eq!(out.status.code(), Some(0), "{round}: {}", text(&out.stderr));
        assert!(text(&out.stdout).contains("echo v3: echo@3"), "{round}: {}", text(&out.stdout));
    }
    let echo_versions = versions_of("echo");
    let mut labelled: Vec<(u64, &serde_json::Value)> = echo_versions
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["version"].as_u64().unwrap(), &v["labels"]))
        .collect();
    labelled.sort_by_key(|(number, _)| *number);
    assert_eq!(labelled.len(), 3, "{echo_versions}");
    assert_eq!(labelled[2], (3, &serde_json::json!(["production"])), "{echo_versions}");
    let found = llmtool(&data, &["search", "--tag", "movies", "--format", "json"], &env);
    let page: serde_json::Value = serde_json::from_slice(&found.stdout).unwrap();
    assert_eq!(page["tools"][0]["slug"], "movie-critic", "{page}");
    // Two names that make one slug: refused before anything is published.
    let clash = dir.path().join("clash.json");
    let prompt = |name: &str| serde_json::json!({"name": name, "version": 1, "type": "text", "prompt": "Hi {{x}}", "labels": []});
    std::fs::write(
        &clash,
        serde_json::json!([prompt("Support Reply"), prompt("support-reply")]).to_string(),
    )
    .unwrap();
    let refused = llmtool(&data, &["publish", "--from", "langfuse", clash.to_str().unwrap()], &env);
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused.stderr));
    assert!(
        text(&refused.stderr).contains("would both be `support-reply`"),
        "{}",
        text(&refused.stderr)
    );
    assert_eq!(
        llmtool(&data, &["pull", "support-reply"], &env).status.code(),
        Some(2),
        "nothing published"
    );
    // A file that is not Langfuse's: exit 1, nothing published.
    let other = dir.path().join("other.json");
    std::fs::write(&other, r#"[{"name": "x", "parameters": {}}]"#).unwrap();
    let refused = llmtool(&data, &["publish", "--from", "langfuse", other.to_str().unwrap()], &env);
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused.stderr));
    assert!(
        text(&refused.stderr).contains("`[0]` is not a Langfuse prompt"),
        "{}",
        text(&refused.stderr)
    );
    server.kill().unwrap();
    server.wait().unwrap();
}

fn mcp_tools(data: &Path, tool: &str, env: &[(&str, &str)]) -> serde_json::Value {
    use std::io::Write as _;
    let mut child = Command::new(env!("CARGO_BIN_EXE_llmtool"))
        .args(["mcp", "--log-level", "error", tool])
        .env("LLMTOOL_DATA_DIR", data)
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let messages = [
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ];
    for message in messages {
        writeln!(stdin, "{message}").unwrap();
    }
    let lines = BufReader::new(child.stdout.take().unwrap()).lines().map(Result::unwrap);
    let answers = lines.map(|line| serde_json::from_str::<serde_json::Value>(&line).unwrap());
    let listed = answers.take(2).last().unwrap();
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    listed
}

/// A tool file whose prompt says `n`.
fn numbered_tool(n: usize) -> String {
    serde_json::json!({
        "model_prompt": format!("Draft {n} about {{{{topic}}}}."),
        "metadata": {"prompt_name": "Busy", "description": "Drafts.", "timestamp": "2026-11-23T10:00:00Z",
                     "variables": [{"name": "topic", "type": "text", "description": "What about."}]}
    })
    .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_during_publishes_loses_no_acknowledged_version() {
    use sqlx::Connection as _;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let made = llmtool(&data, &["token", "create", "ci", "--role", "editor"], &[]);
    let token = text(&made.stdout).trim().to_owned();
    let (mut server, url) = serve(&data);
    let client = reqwest::Client::new();
    // Publish until the server is killed, from another task; keep what was acknowledged.
    let publisher = {
        let (client, url, token) = (client.clone(), url.clone(), token.clone());
        tokio::spawn(async move {
            let mut acknowledged = Vec::new();
            for n in 0.. {
                let sent = client
                    .post(format!("{url}/api/v1/tools?slug=busy"))
                    .bearer_auth(&token)
                    .body(numbered_tool(n))
                    .send()
                    .await;
                match sent {
                    Ok(answer) if answer.status() == reqwest::StatusCode::CREATED => {
                        let body: serde_json::Value = answer.json().await.unwrap();
                        acknowledged.push((
                            body["version"].as_u64().unwrap(),
                            body["content_hash"].as_str().unwrap().to_owned(),
                        ));
                    }
                    _ => return acknowledged,
                }
            }
            acknowledged
        })
    };
    tokio::time::sleep(std::time::Duration::from_millis(400)).await;
    server.kill().unwrap(); // SIGKILL
    server.wait().unwrap();
    let acknowledged = publisher.await.unwrap();
    assert!(acknowledged.len() >= 2, "the loop ran: {}", acknowledged.len());

    // The database is whole, and every acknowledged version is there as acknowledged.
    let options = sqlx::sqlite::SqliteConnectOptions::new().filename(data.join("library.db"));
    let mut connection = sqlx::SqliteConnection::connect_with(&options).await.unwrap();
    let check: String =
        sqlx::query_scalar("PRAGMA integrity_check").fetch_one(&mut connection).await.unwrap();
    assert_eq!(check, "ok");
    drop(connection);
    let (mut server, url) = serve(&data);
    let versions: serde_json::Value = client
        .get(format!("{url}/api/v1/tools/busy/versions"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let kept: Vec<(u64, String)> = versions
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["version"].as_u64().unwrap(), v["content_hash"].as_str().unwrap().to_owned()))
        .collect();
    for version in &acknowledged {
        assert!(kept.contains(version), "acknowledged {version:?} is lost");
    }
    // Consecutive from 1: at most the one publish in flight went through unacknowledged.
    let numbers: Vec<u64> = kept.iter().rev().map(|(n, _)| *n).collect();
    assert_eq!(numbers, (1..=numbers.len() as u64).collect::<Vec<_>>());
    assert!(numbers.len() <= acknowledged.len() + 1);
    server.kill().unwrap();
    server.wait().unwrap();
}

#[test]
fn serving_beyond_loopback_needs_a_token_first() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let refused = llmtool(&data, &["serve", "--listen", "0.0.0.0:0"], &[]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        text(&refused.stderr).contains("is not a loopback address: make a token first"),
        "{}",
        text(&refused.stderr)
    );
}

/// A mock provider that answers "A poem." with 1,000 tokens in and 500 out, whatever it is
/// asked, as a stream (`streamed`: the server streams the runs of its API) or as one JSON
/// answer (the runs of its MCP); a temporary folder, and a config file in it naming the mock
/// as `mock` with `mock/m`'s price (its key: `MOCK_KEY`).
async fn poem_provider(
    streamed: bool,
) -> (llmtool_testkit::Mock, tempfile::TempDir, std::path::PathBuf) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let reply = if streamed {
        let text_chunk =
            serde_json::json!({"choices": [{"index": 0, "delta": {"content": "A poem."}}]});
        let usage = serde_json::json!({"choices": [], "usage": {"prompt_tokens": 1000, "completion_tokens": 500}});
        llmtool_testkit::Reply::sse(&[&text_chunk.to_string(), &usage.to_string(), "[DONE]"])
    } else {
        let answer = serde_json::json!({"id": "c1", "object": "chat.completion", "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "A poem."}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1000, "completion_tokens": 500}});
        llmtool_testkit::Reply::json(200, answer.to_string())
    };
    let mock = llmtool_testkit::Mock::repeating("127.0.0.1:0", reply).await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[providers.mock]\napi = \"openai\"\nbase_url = \"{}/v1\"\napi_key_env = \"MOCK_KEY\"\n\n[prices.\"mock/m\"]\ninput = 1.0\noutput = 2.0\n",
            mock.url
        ),
    )
    .unwrap();
    (mock, dir, config)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_library_totals_the_runs_made_through_the_library() {
    let (_mock, dir, config) = poem_provider(true).await;
    let data = dir.path().join("data");
    let token = |role: &str| {
        let made = llmtool(&data, &["token", "create", role, "--role", role], &[]);
        text(&made.stdout).trim().to_owned()
    };
    let (editor, viewer) = (token("editor"), token("viewer"));
    let tool = dir.path().join("poet.json");
    let poet = serde_json::json!({"model_prompt": "A poem about {{topic}}.",
        "metadata": {"prompt_name": "Poet", "description": "Writes poems.", "model_version": ["mock/m"],
            "timestamp": "2026-11-23T10:00:00Z",
            "variables": [{"name": "topic", "type": "text", "description": "What about."}]}});
    std::fs::write(&tool, poet.to_string()).unwrap();
    let config_arg = config.to_str().unwrap();
    let key = [("MOCK_KEY", "mock-secret-key-5150")];
    let (mut server, url) = serve_with(&data, &["--config", config_arg], &key);
    let publish_env = [("LLMTOOL_REGISTRY", url.as_str()), ("LLMTOOL_TOKEN", editor.as_str())];
    let published = llmtool(&data, &["publish", tool.to_str().unwrap()], &publish_env);
    assert_eq!(published.status.code(), Some(0), "{}", text(&published.stderr));

    let ran = reqwest::Client::new()
        .post(format!("{url}/api/v1/tools/poet/run"))
        .timeout(std::time::Duration::from_secs(20))
        .bearer_auth(&viewer)
        .json(&serde_json::json!({"values": {"topic": "tides"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(ran.status(), 200);
    let streamed = ran.text().await.unwrap_or_else(|e| format!("no body: {e}"));
    assert!(streamed.contains("A poem."), "{streamed}");

    let env = [("LLMTOOL_REGISTRY", url.as_str()), ("LLMTOOL_TOKEN", viewer.as_str())];
    let args = ["usage", "--library", "--by", "origin", "--format", "json"];
    let usage = llmtool(&data, &args, &env);
    assert_eq!(usage.status.code(), Some(0), "{}", text(&usage.stderr));
    let usage: serde_json::Value = serde_json::from_slice(&usage.stdout).unwrap();
    let server_runs = &usage["totals"][0];
    assert_eq!(
        (server_runs["key"].as_str(), server_runs["runs"].as_u64()),
        (Some("server"), Some(1))
    );
    assert!((server_runs["cost_usd"].as_f64().unwrap() - 0.002).abs() < 1e-12, "{usage}");
    // The table says the same, with the cost per day.
    let table = llmtool(&data, &["usage", "--library"], &env);
    assert!(text(&table.stdout).contains("mock/m") && text(&table.stdout).contains("cost per day"));
    // Without a token the library refuses, and says so.
    let refused = llmtool(&data, &["usage", "--library"], &env[..1]);
    assert_eq!(refused.status.code(), Some(2));
    server.kill().unwrap();
    server.wait().unwrap();
}

/// `llmtool ARGS` with `input` on standard input and the config folder `config`.
fn with_input(data: &Path, config: &Path, args: &[&str], input: &str) -> Output {
    use std::io::Write as _;
    let mut child = Command::new(env!("CARGO_BIN_EXE_llmtool"))
        .args(args)
        .env("LLMTOOL_DATA_DIR", data)
        .env("XDG_CONFIG_HOME", config)
        .env("LLMTOOL_NO_LOG", "1")
        .env_remove("LLMTOOL_REGISTRY")
        .env_remove("LLMTOOL_TOKEN")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_saves_the_library_privately_and_its_token_goes_nowhere_else() {
    let dir = tempfile::tempdir().unwrap();
    let (data, config) = (dir.path().join("data"), dir.path().join("config"));
    let config_env = [("XDG_CONFIG_HOME", config.to_str().unwrap())];
    // With no library named, the one `llmtool serve` starts by default is tried, and said.
    let out = llmtool(&data, &["search"], &config_env);
    if out.status.code() == Some(2) {
        let said = text(&out.stderr);
        assert!(
            said.contains("http://127.0.0.1:8080") && said.contains("llmtool login URL"),
            "{said}"
        );
    }
    let made = llmtool(&data, &["token", "create", "ana", "--role", "editor"], &[]);
    let token = text(&made.stdout).trim().to_owned();
    let (mut server, url) = serve(&data);

    let login = with_input(&data, &config, &["login", &url, "--token"], &format!("{token}\n"));
    assert_eq!(login.status.code(), Some(0), "{}", text(&login.stderr));
    let said = text(&login.stderr);
    assert!(said.contains("as ana@tokens.invalid (editor; no team), token `ana`"), "{said}");
    let file = config.join("llmtool").join("config.toml");
    let saved = std::fs::read_to_string(&file).unwrap();
    assert!(saved.contains(&format!("registry = \"{url}\"")) && saved.contains(&token), "{saved}");
    assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
    assert!(!text(&login.stderr).contains(&token), "the token is never shown");
    // A wrong token is refused, and nothing is saved.
    let wrong = with_input(&data, &config, &["login", &url, "--token"], "llmt_wrong\n");
    assert_eq!(wrong.status.code(), Some(2));
    assert!(text(&wrong.stderr).contains("does not know this token"), "{}", text(&wrong.stderr));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), saved);

    // The saved library and token serve every command with no flag.
    let tool = dir.path().join("poet.json");
    let poet = serde_json::json!({"model_prompt": "A poem about {{topic}}.",
        "metadata": {"prompt_name": "Poet", "description": "Writes poems.", "timestamp": "2026-11-23T10:00:00Z",
            "variables": [{"name": "topic", "type": "text", "description": "What about."}]}});
    std::fs::write(&tool, poet.to_string()).unwrap();
    let tool = tool.to_str().unwrap();
    let dry = llmtool(&data, &["publish", tool, "--tag", "poetry", "--dry-run"], &config_env);
    assert_eq!(dry.status.code(), Some(0), "{}", text(&dry.stderr));
    assert!(text(&dry.stdout).contains("would publish poet@1 (a new tool), tagged poetry"));
    let published = llmtool(&data, &["publish", tool], &config_env);
    assert_eq!(published.status.code(), Some(0), "{}", text(&published.stderr));
    assert!(text(&published.stdout).contains("poet@1 (a new version)"), "the dry run sent nothing");
    assert!(text(&published.stdout).contains("seen by every member (tagged all)"));
    // Tags put on and taken off from the command line.
    for (verb, said) in
        [("add", "poet is tagged `poetry`"), ("remove", "poet is no longer tagged `poetry`")]
    {
        let tagged = llmtool(&data, &["tag", verb, "poet", "poetry"], &config_env);
        assert_eq!(tagged.status.code(), Some(0), "{}", text(&tagged.stderr));
        assert!(text(&tagged.stderr).contains(said), "{}", text(&tagged.stderr));
    }
    let again = llmtool(&data, &["publish", tool, "--dry-run"], &config_env);
    assert!(text(&again.stdout).contains("would publish unchanged: poet@1 has this content"));
    // An unknown slug gets the nearest one.
    let typo = llmtool(&data, &["pull", "peot"], &config_env);
    assert_eq!(typo.status.code(), Some(2));
    assert!(text(&typo.stderr).contains("did you mean `poet`?"), "{}", text(&typo.stderr));

    // Another library is never sent the saved token.
    let mock = llmtool_testkit::Mock::start(vec![]).await;
    let elsewhere = llmtool(&data, &["search", "--registry", &mock.url], &config_env);
    assert_eq!(elsewhere.status.code(), Some(2));
    let seen = mock.requests();
    assert_eq!(seen.len(), 1);
    assert!(seen[0].headers.get("authorization").is_none(), "{:?}", seen[0].headers);

    // After logout, publishing says how to get a token.
    let logout = llmtool(&data, &["logout"], &config_env);
    assert_eq!(logout.status.code(), Some(0), "{}", text(&logout.stderr));
    assert!(!std::fs::read_to_string(&file).unwrap().contains(&token));
    let refused = llmtool(&data, &["publish", tool], &config_env);
    assert_eq!(refused.status.code(), Some(2));
    let said = text(&refused.stderr);
    assert!(said.contains("LLMTOOL_TOKEN") && said.contains("llmtool token create"), "{said}");
    server.kill().unwrap();
    server.wait().unwrap();
}

/// `llmtool login URL` by the browser: the terminal shows a code, a signed-in member allows it
/// (here through the API the `/device` page calls), and the terminal is handed a new token of
/// theirs, with their role and teams, which `whoami` shows and `logout` revokes on the library.
/// A member's own tokens are theirs alone, and `token create --member` takes the member's role.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_by_the_browser_hands_over_a_token_of_the_members_which_logout_revokes() {
    let dir = tempfile::tempdir().unwrap();
    let (data, config) = (dir.path().join("data"), dir.path().join("config"));
    let config_env = [("XDG_CONFIG_HOME", config.to_str().unwrap())];
    for args in [
        &["team", "create", "sales"][..],
        &["member", "add", "sam@example.test", "--role", "editor", "--team", "sales"],
        &["member", "add", "pat@example.test"],
    ] {
        let out = llmtool(&data, args, &[]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
    // Made on the command line for a member, a token takes the member's role.
    let made =
        llmtool(&data, &["token", "create", "sam-browser", "--member", "sam@example.test"], &[]);
    assert_eq!(made.status.code(), Some(0), "{}", text(&made.stderr));
    let sams = text(&made.stdout).trim().to_owned();
    let listed = llmtool(&data, &["token", "list", "--format", "json"], &[]);
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    let browser = listed.as_array().unwrap().iter().find(|t| t["name"] == "sam-browser").unwrap();
    assert_eq!(
        (browser["role"].as_str(), &browser["expires_at"]),
        (Some("editor"), &serde_json::Value::Null)
    );
    let (mut server, url) = serve(&data);

    let mut login = Command::new(env!("CARGO_BIN_EXE_llmtool"))
        .args(["login", &url, "--no-browser"])
        .env("LLMTOOL_DATA_DIR", &data)
        .env("XDG_CONFIG_HOME", &config)
        .env("LLMTOOL_NO_LOG", "1")
        .env_remove("LLMTOOL_REGISTRY")
        .env_remove("LLMTOOL_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut said = BufReader::new(login.stderr.take().unwrap()).lines().map(Result::unwrap);
    let page = said.next().unwrap();
    let page = page.strip_prefix("To sign in, open ").unwrap().to_owned();
    let code = page.split_once("/device?code=").unwrap().1.to_owned();
    assert_eq!(page, format!("{url}/device?code={code}"));
    assert!(said.next().unwrap().contains(&format!("allow the code {code} there")));

    // The member sees which terminal asks, and allows it.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::new();
    let api = format!("{url}/api/v1");
    let grant: serde_json::Value = http
        .get(format!("{api}/device/{}", code.to_lowercase()))
        .bearer_auth(&sams)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(grant["client"].as_str().unwrap().starts_with("llmtool on "), "{grant}");
    let allowed = http
        .post(format!("{api}/device/{code}"))
        .bearer_auth(&sams)
        .json(&serde_json::json!({"allow": true}))
        .send()
        .await
        .unwrap();
    assert_eq!(allowed.status(), 204);
    let rest: Vec<String> = said.collect();
    assert_eq!(login.wait().unwrap().code(), Some(0), "{rest:?}");
    let rest = rest.join("\n");
    assert!(
        rest.contains("signed in to") && rest.contains("as sam@example.test (editor; teams sales)"),
        "{rest}"
    );
    let file = config.join("llmtool").join("config.toml");
    assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);

    let who = llmtool(&data, &["whoami", "--format", "json"], &config_env);
    assert_eq!(who.status.code(), Some(0), "{}", text(&who.stderr));
    let who: serde_json::Value = serde_json::from_slice(&who.stdout).unwrap();
    assert_eq!(
        (who["member"].as_str(), who["role"].as_str()),
        (Some("sam@example.test"), Some("editor"))
    );
    assert_eq!(who["teams"], serde_json::json!(["sales"]));
    let login_token = who["token"].as_str().unwrap().to_owned();

    // Sam's tokens are Sam's: Pat's list has none of them, and Pat cannot revoke one.
    let pats = llmtool(&data, &["token", "create", "pat-ci", "--member", "pat@example.test"], &[]);
    let pats = text(&pats.stdout).trim().to_owned();
    let mine: Vec<serde_json::Value> = http
        .get(format!("{api}/tokens"))
        .bearer_auth(&sams)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let names: Vec<&str> = mine.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, [login_token.as_str(), "sam-browser"]);
    assert!(mine[0]["expires_at"].is_string() && mine[0]["last_used_at"].is_string(), "{mine:?}");
    let theirs: Vec<serde_json::Value> = http
        .get(format!("{api}/tokens"))
        .bearer_auth(&pats)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(theirs.len(), 1);
    let everyone =
        http.get(format!("{api}/tokens?all=true")).bearer_auth(&pats).send().await.unwrap();
    assert_eq!(everyone.status(), 403);
    let steal =
        http.delete(format!("{api}/tokens/sam-browser")).bearer_auth(&pats).send().await.unwrap();
    assert_eq!(steal.status(), 404);
    // A member makes a token of their own, never above their role, and it works at once.
    let above = http
        .post(format!("{api}/tokens"))
        .bearer_auth(&pats)
        .json(&serde_json::json!({"name": "pat-admin", "role": "admin"}))
        .send()
        .await
        .unwrap();
    assert_eq!(above.status(), 400);
    let own: serde_json::Value = http
        .post(format!("{api}/tokens"))
        .bearer_auth(&pats)
        .json(&serde_json::json!({"name": "pat-laptop", "days": 7}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(own["role"], "viewer");
    let works = http
        .get(format!("{api}/session"))
        .bearer_auth(own["token"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(works.status(), 200);

    // Logging out revokes the login's token on the library: it is refused from then on.
    let logout = llmtool(&data, &["logout"], &config_env);
    assert_eq!(logout.status.code(), Some(0), "{}", text(&logout.stderr));
    assert!(
        text(&logout.stderr).contains(&format!("the token `{login_token}` is revoked")),
        "{}",
        text(&logout.stderr)
    );
    let whoami = llmtool(&data, &["whoami"], &config_env);
    assert_ne!(whoami.status.code(), Some(0));
    let ops = llmtool(&data, &["token", "create", "ops", "--role", "admin"], &[]);
    let ops = text(&ops.stdout).trim().to_owned();
    let audit = http.get(format!("{api}/audit")).bearer_auth(&ops).send().await.unwrap();
    let audit = audit.text().await.unwrap();
    assert!(audit.contains("device.answer") && audit.contains("\"via\":\"login\""), "{audit}");
    server.kill().unwrap();
    server.wait().unwrap();
}

/// Signed in, `llmtool run registry:SLUG` runs on the library's server: with its Control
/// Center integration (here pointing at the mock), counted in the member's spend, in their studio sidebar, and refused (exit
/// 1, in the library's words) by the member's hard budget; `--local` runs it here, and the
/// library sees none of it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signed_in_run_of_a_library_tool_is_the_servers() {
    let (mock, dir, config) = poem_provider(true).await;
    let data = dir.path().join("data");
    for args in [
        &["team", "create", "sales"][..],
        &["member", "add", "sam@example.test", "--team", "sales"],
    ] {
        let out = llmtool(&data, args, &[]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
    let token = |args: &[&str]| text(&llmtool(&data, args, &[]).stdout).trim().to_owned();
    let sam = token(&["token", "create", "sam-cli", "--member", "sam@example.test"]);
    let admin = token(&["token", "create", "ops", "--role", "admin"]);
    let tool = dir.path().join("poet.json");
    let poet = serde_json::json!({"model_prompt": "A poem about {{topic}}.",
        "metadata": {"prompt_name": "Poet", "description": "Writes poems.", "model_version": ["mock/m"],
            "timestamp": "2026-11-23T10:00:00Z",
            "variables": [{"name": "topic", "type": "text", "description": "What about."}]}});
    std::fs::write(&tool, poet.to_string()).unwrap();
    let key = [("MOCK_KEY", "mock-secret-key-5150")];
    // The server's model is the Control Center's: an integration pointing at the mock, sealed,
    // with the admins' price of its model.
    let (mut server, url) = serve(&data);
    let as_admin = [("LLMTOOL_REGISTRY", url.as_str()), ("LLMTOOL_TOKEN", admin.as_str())];
    let base_url = format!("{}/v1", mock.url);
    let add = [
        "integration",
        "add",
        "mock",
        "--api",
        "openai",
        "--base-url",
        &base_url,
        "--key-env",
        "MOCK_KEY",
        "--model",
        "m",
    ];
    let added = llmtool(&data, &add, &[as_admin[0], as_admin[1], key[0]]);
    assert_eq!(added.status.code(), Some(0), "{}", text(&added.stderr));
    let priced = reqwest::Client::new()
        .put(format!("{url}/api/v1/prices"))
        .bearer_auth(&admin)
        .json(&serde_json::json!({"model": "mock/m", "input": 1.0, "output": 2.0}))
        .send()
        .await
        .unwrap();
    assert!(priced.status().is_success(), "{}", priced.text().await.unwrap());
    let published = llmtool(&data, &["publish", tool.to_str().unwrap()], &as_admin);
    assert_eq!(published.status.code(), Some(0), "{}", text(&published.stderr));

    // Sam's run is the server's: streamed back, in Sam's spend and sidebar.
    let as_sam = [("LLMTOOL_REGISTRY", url.as_str()), ("LLMTOOL_TOKEN", sam.as_str())];
    let ran = llmtool(&data, &["run", "registry:poet", "--var", "topic=tides"], &as_sam);
    assert_eq!(ran.status.code(), Some(0), "{}", text(&ran.stderr));
    assert_eq!(text(&ran.stdout).trim(), "A poem.");
    assert!(
        text(&ran.stderr).contains(&format!("run by the library at {url}")),
        "{}",
        text(&ran.stderr)
    );
    let http = reqwest::Client::new();
    let api = format!("{url}/api/v1");
    let get = |path: &str, token: &str| {
        let request = http.get(format!("{api}{path}")).bearer_auth(token);
        async move { request.send().await.unwrap().json::<serde_json::Value>().await.unwrap() }
    };
    let spend = get("/spend?member=sam@example.test", &admin).await;
    assert_eq!(spend["totals"]["runs"], 1, "{spend}");
    assert!((spend["totals"]["cost_usd"].as_f64().unwrap() - 0.002).abs() < 1e-12, "{spend}");
    let sidebar = get("/conversations", &sam).await;
    let listed = sidebar.as_array().unwrap();
    assert_eq!((listed.len(), listed[0]["slug"].as_str()), (1, Some("poet")), "{sidebar}");

    // `llmtool call` of a library tool runs there too.
    let called = llmtool(&data, &["call", "registry:poet", r#"{"topic": "moon"}"#], &as_sam);
    assert_eq!(called.status.code(), Some(0), "{}", text(&called.stderr));
    assert_eq!(text(&called.stdout).trim(), "A poem.");
    assert_eq!(get("/spend?member=sam@example.test", &admin).await["totals"]["runs"], 2);

    // `llmtool conversations` lists it, and shows it turn by turn.
    let table = llmtool(&data, &["conversations"], &as_sam);
    assert_eq!(table.status.code(), Some(0), "{}", text(&table.stderr));
    assert!(text(&table.stdout).contains("Poet: tides") && text(&table.stdout).contains("poet@1"));
    let listed = llmtool(&data, &["conversations", "--format", "json"], &as_sam);
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    let tides = listed.as_array().unwrap().iter().find(|c| c["title"] == "Poet: tides").unwrap();
    let id = tides["id"].as_str().unwrap().to_owned();
    let shown = llmtool(&data, &["conversations", "show", &id], &as_sam);
    assert_eq!(shown.status.code(), Some(0), "{}", text(&shown.stderr));
    let transcript = text(&shown.stdout);
    assert!(
        transcript.starts_with("# Poet: tides") && transcript.contains("A poem."),
        "{transcript}"
    );

    // `reply` goes on with the conversation last asked on the library (the call's), and
    // `reply --cid` with any of the member's there.
    let replied = llmtool(&data, &["reply", "Shorter, please."], &as_sam);
    assert_eq!(replied.status.code(), Some(0), "{}", text(&replied.stderr));
    assert_eq!(text(&replied.stdout).trim(), "A poem.");
    let again = llmtool(&data, &["reply", "--cid", &id, "Once more."], &as_sam);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again.stderr));
    let listed = llmtool(&data, &["conversations", "--format", "json"], &as_sam);
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    let turns: Vec<(String, u64)> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["title"].as_str().unwrap().to_owned(), c["turns"].as_u64().unwrap()))
        .collect();
    assert!(
        turns.contains(&("Poet: moon".into(), 2)) && turns.contains(&("Poet: tides".into(), 2)),
        "{turns:?}"
    );
    assert_eq!(get("/spend?member=sam@example.test", &admin).await["totals"]["runs"], 4);

    // `chat` runs the tool there, then asks each line typed as the next turn.
    let chatted = with_stdin(
        &data,
        &["chat", "registry:poet", "--var", "topic=sun"],
        &as_sam,
        "Shorter.\n/exit\n",
    );
    assert_eq!(chatted.status.code(), Some(0), "{}", text(&chatted.stderr));
    assert_eq!(text(&chatted.stdout).matches("A poem.").count(), 2, "{}", text(&chatted.stdout));
    let listed = llmtool(&data, &["conversations", "--format", "json"], &as_sam);
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    let sun = listed.as_array().unwrap().iter().find(|c| c["title"] == "Poet: sun").unwrap();
    assert_eq!(sun["turns"], 2, "{sun}");
    assert_eq!(get("/spend?member=sam@example.test", &admin).await["totals"]["runs"], 6);

    // `--local` runs here, on the config's provider, and the library hears nothing of it.
    let local_env = [as_sam[0], as_sam[1], key[0]];
    let args = [
        "run",
        "registry:poet",
        "--local",
        "--var",
        "topic=sea",
        "--config",
        config.to_str().unwrap(),
    ];
    let here = llmtool(&data, &args, &local_env);
    assert_eq!(here.status.code(), Some(0), "{}", text(&here.stderr));
    assert!(!text(&here.stderr).contains("run by the library"), "{}", text(&here.stderr));
    assert!(text(&here.stderr).contains("running poet here (--local)"), "{}", text(&here.stderr));
    assert_eq!(get("/spend?member=sam@example.test", &admin).await["totals"]["runs"], 6);

    // A hard budget of Sam's refuses the next run, in the library's words, exit 1.
    let budget = http
        .put(format!("{api}/budgets/member/sam@example.test"))
        .bearer_auth(&admin)
        .json(&serde_json::json!({"limit_usd": 0.001, "hard": true}))
        .send()
        .await
        .unwrap();
    assert!(budget.status().is_success(), "{}", budget.text().await.unwrap());
    let refused = llmtool(&data, &["run", "registry:poet", "--var", "topic=stars"], &as_sam);
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused.stderr));
    let said = text(&refused.stderr);
    assert!(said.contains("refused the run") && said.contains("budget"), "{said}");
    assert_eq!(get("/spend?member=sam@example.test", &admin).await["totals"]["runs"], 6);
    server.kill().unwrap();
    server.wait().unwrap();
}

/// `llmtool mcp --registry URL` relays an editor's MCP to the library as the signed-in member:
/// the tools they see (another team's tool is not listed), each run on the library and counted
/// in their spend.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_through_the_library_lists_what_the_member_sees_and_runs_there() {
    let (_mock, dir, config) = poem_provider(false).await;
    let data = dir.path().join("data");
    for args in [
        &["team", "create", "sales"][..],
        &["team", "create", "support"],
        &["member", "add", "sam@example.test", "--team", "sales"],
        &["member", "add", "sue@example.test", "--team", "support"],
    ] {
        let out = llmtool(&data, args, &[]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
    let token = |args: &[&str]| text(&llmtool(&data, args, &[]).stdout).trim().to_owned();
    let sam = token(&["token", "create", "sam-mcp", "--member", "sam@example.test"]);
    let sue = token(&["token", "create", "sue-mcp", "--member", "sue@example.test"]);
    let admin = token(&["token", "create", "ops", "--role", "admin"]);
    let key = [("MOCK_KEY", "mock-secret-key-5150")];
    let (mut server, url) = serve_with(&data, &["--config", config.to_str().unwrap()], &key);
    let as_admin = [("LLMTOOL_REGISTRY", url.as_str()), ("LLMTOOL_TOKEN", admin.as_str())];
    for (name, tags) in [("Poet", &[][..]), ("Deal Poet", &["--tag", "sales"][..])] {
        let file = dir.path().join(format!("{}.json", name.replace(' ', "-")));
        let tool = serde_json::json!({"model_prompt": "A poem about {{topic}}.",
            "metadata": {"prompt_name": name, "description": "Writes poems.", "model_version": ["mock/m"],
                "timestamp": "2026-11-23T10:00:00Z",
                "variables": [{"name": "topic", "type": "text", "description": "What about."}]}});
        std::fs::write(&file, tool.to_string()).unwrap();
        let mut args = vec!["publish", file.to_str().unwrap()];
        args.extend_from_slice(tags);
        let published = llmtool(&data, &args, &as_admin);
        assert_eq!(published.status.code(), Some(0), "{}", text(&published.stderr));
    }
    let relay = |token: &str, asked: &serde_json::Value| {
        let hello = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "editor", "version": "1"}}});
        let ready = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let input = format!("{hello}\n{ready}\n{asked}\n");
        let out =
            with_stdin(&data, &["mcp", "--registry", &url], &[("LLMTOOL_TOKEN", token)], &input);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let answers: Vec<serde_json::Value> =
            text(&out.stdout).lines().map(|line| serde_json::from_str(line).unwrap()).collect();
        answers
            .into_iter()
            .find(|answer| answer["id"] == 2)
            .unwrap_or_else(|| panic!("{}", text(&out.stdout)))
    };
    let list = serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let names = |listed: &serde_json::Value| -> Vec<String> {
        listed["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_lowercase())
            .collect()
    };
    let sues = names(&relay(&sue, &list));
    assert!(
        sues.iter().any(|name| name == "poet") && !sues.iter().any(|name| name.contains("deal")),
        "{sues:?}"
    );
    let sams = names(&relay(&sam, &list));
    assert!(sams.iter().any(|name| name.contains("deal")), "{sams:?}");

    let call = serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "poet", "arguments": {"topic": "tides"}}});
    let called = relay(&sam, &call);
    assert!(called["result"].to_string().contains("A poem."), "{called}");
    let spend = reqwest::Client::new()
        .get(format!("{url}/api/v1/spend?member=sam@example.test"))
        .bearer_auth(&admin)
        .send()
        .await
        .unwrap()
        .json::<serde_json::Value>()
        .await
        .unwrap();
    assert_eq!(spend["totals"]["runs"], 1, "{spend}");
    // A token the library does not take: the request is answered with the library's words.
    let refused = relay("llmt_not-a-token", &list);
    assert!(refused["error"]["message"].as_str().is_some(), "{refused}");
    server.kill().unwrap();
    server.wait().unwrap();
}

/// `llmtool ARGS` with `input` on standard input, the environment `env` added.
fn with_stdin(data: &Path, args: &[&str], env: &[(&str, &str)], input: &str) -> Output {
    use std::io::Write as _;
    let mut child = Command::new(env!("CARGO_BIN_EXE_llmtool"))
        .args(args)
        .env_remove("LLMTOOL_REGISTRY")
        .envs(env.iter().copied())
        .env("LLMTOOL_DATA_DIR", data)
        .env("LLMTOOL_NO_LOG", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn members_and_teams_are_managed_and_a_csv_with_a_bad_row_imports_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let ok = |args: &[&str]| {
        let out = llmtool(&data, args, &[]);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", text(&out.stderr));
        text(&out.stdout)
    };
    ok(&["team", "create", "sales"]);
    ok(&["member", "add", "Olga@Example.org", "--role", "owner"]);
    let csv = dir.path().join("people.csv");
    std::fs::write(
        &csv,
        "email,name,role,teams\nana@example.org,Ana,editor,sales\nnot-an-address,X,viewer,\nbo@example.org,Bo,viewer,ops\n",
    )
    .unwrap();
    let refused = llmtool(&data, &["member", "import", csv.to_str().unwrap()], &[]);
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused.stderr));
    let said = text(&refused.stderr);
    assert!(said.contains("people.csv:3: `not-an-address` is not an e-mail address"), "{said}");
    assert!(said.contains("people.csv:4: no team `ops`"), "{said}");
    assert!(said.contains("nothing imported (2 problems)"), "{said}");
    let listed: serde_json::Value =
        serde_json::from_str(&ok(&["member", "list", "--format", "json"])).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 1, "nothing imported: {listed}");

    std::fs::write(&csv, "email,name,role,teams\nana@example.org,Ana,editor,sales\n").unwrap();
    ok(&["member", "import", csv.to_str().unwrap(), "--dry-run"]);
    assert_eq!(ok(&["member", "list"]).matches("@example.org").count(), 1, "a dry run adds nobody");
    ok(&["member", "import", csv.to_str().unwrap()]);
    let listed = ok(&["member", "list"]);
    assert!(listed.contains("ana@example.org") && listed.contains("sales"), "{listed}");

    // The last owner stays one; a token stays within its member's rights.
    let demoted = llmtool(&data, &["member", "edit", "olga@example.org", "--role", "admin"], &[]);
    assert_eq!(demoted.status.code(), Some(2), "{}", text(&demoted.stderr));
    assert!(text(&demoted.stderr).contains("last owner"), "{}", text(&demoted.stderr));
    let above = ["token", "create", "ana-ci", "--role", "admin", "--member", "ana@example.org"];
    assert_eq!(llmtool(&data, &above, &[]).status.code(), Some(2));
    ok(&["token", "create", "ana-ci", "--role", "editor", "--member", "ana@example.org"]);
    assert!(ok(&["token", "list"]).contains("ana@example.org"));

    ok(&["team", "rename", "sales", "revenue"]);
    assert!(ok(&["member", "list"]).contains("revenue"));
    ok(&["member", "remove", "ana@example.org"]);
    assert!(ok(&["token", "list"]).contains("revoked"));
    assert!(ok(&["team", "list"]).contains("revenue"));
}

/// The command line sees what its token's member sees: with a token of a member of `sales`,
/// `llmtool search` lists the `sales` and `all` tools and `llmtool pull` of the `support` one
/// fails as for a tool that does not exist; an admin's token finds all three.
#[tokio::test(flavor = "multi_thread")]
async fn the_cli_sees_what_its_member_sees() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let ok = |args: &[&str]| {
        let out = llmtool(&data, args, &[]);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", text(&out.stderr));
        text(&out.stdout).trim().to_owned()
    };
    let admin = ok(&["token", "create", "ops", "--role", "admin"]);
    ok(&["team", "create", "sales"]);
    ok(&["team", "create", "support"]);
    ok(&["member", "add", "sam@example.org", "--team", "sales"]);
    let sam = ok(&["token", "create", "sam-cli", "--member", "sam@example.org"]);
    let (mut server, url) = serve(&data);
    let client = reqwest::Client::new();
    for (slug, tag) in [
        ("sales-pitch", Some("sales")),
        ("support-triage", Some("support")),
        ("for-everyone", None),
    ] {
        let body = serde_json::json!({"model_prompt": "About {{topic}}.",
            "metadata": {"prompt_name": slug, "description": "A curated tool.", "timestamp": "2026-11-23T10:00:00Z",
                "variables": [{"name": "topic", "type": "text", "description": "What about."}]}});
        let publish = client.post(format!("{url}/api/v1/tools?slug={slug}")).bearer_auth(&admin);
        assert!(publish.body(body.to_string()).send().await.unwrap().status().is_success());
        if let Some(tag) = tag {
            let tags = format!("{url}/api/v1/tools/{slug}/tags");
            let put = client.put(format!("{tags}/{tag}")).bearer_auth(&admin).send().await.unwrap();
            assert!(put.status().is_success());
            let off =
                client.delete(format!("{tags}/all")).bearer_auth(&admin).send().await.unwrap();
            assert!(off.status().is_success());
        }
    }
    let found = |token: &str| {
        let env = [("LLMTOOL_REGISTRY", url.as_str()), ("LLMTOOL_TOKEN", token)];
        let out = llmtool(&data, &["search", "curated", "--format", "json"], &env);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let page: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let slugs = page["tools"].as_array().unwrap().iter();
        slugs.map(|tool| tool["slug"].as_str().unwrap().to_owned()).collect::<Vec<_>>()
    };
    assert_eq!(found(&sam), ["for-everyone", "sales-pitch"]);
    assert_eq!(found(&admin), ["for-everyone", "sales-pitch", "support-triage"]);
    let pull = |token: &str, slug: &str| {
        let env = [("LLMTOOL_REGISTRY", url.as_str()), ("LLMTOOL_TOKEN", token)];
        llmtool(&data, &["pull", slug], &env)
    };
    let hidden = pull(&sam, "support-triage");
    let missing = pull(&sam, "no-such-tool");
    assert_eq!((hidden.status.code(), missing.status.code()), (Some(2), Some(2)));
    let said = text(&hidden.stderr);
    assert!(said.contains("support-triage") && said.contains("Not Found"), "{said}");
    assert_eq!(
        said.replace("support-triage", "X"),
        text(&missing.stderr).replace("no-such-tool", "X")
    );
    assert_eq!(pull(&sam, "sales-pitch").status.code(), Some(0));
    assert_eq!(pull(&admin, "support-triage").status.code(), Some(0));

    // `llmtool audit`: what the CLI changed on the database is the user's (`cli:USER`), what
    // went through the API is its token's; a viewer may not read it.
    let audit = |token: &str, args: &[&str]| {
        let env =
            [("LLMTOOL_REGISTRY", url.as_str()), ("LLMTOOL_TOKEN", token), ("USER", "ops-user")];
        llmtool(&data, &[&["audit"], args].concat(), &env)
    };
    let out = audit(&admin, &["--all", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let records: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let seen: Vec<String> = records
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .map(|r| {
            format!(
                "{} {} {}",
                r["actor"].as_str().unwrap(),
                r["action"].as_str().unwrap(),
                r["target"].as_str().unwrap()
            )
        })
        .collect();
    let user = std::env::var("USER").unwrap_or_else(|_| "unknown".into());
    for expected in [
        format!("cli:{user} token.create ops"),
        format!("cli:{user} team.create sales"),
        format!("cli:{user} member.add sam@example.org"),
        "ops tool.publish sales-pitch".to_owned(),
        "ops tag.add sales-pitch".to_owned(),
        "ops tag.remove sales-pitch".to_owned(),
    ] {
        assert!(seen.contains(&expected), "{expected} not in {seen:?}");
    }
    let table = audit(&admin, &["--action", "tag.add", "--limit", "1"]);
    let table = text(&table.stdout);
    assert!(
        table.contains("tag.add")
            && table.contains("support-triage")
            && !table.contains("sales-pitch"),
        "{table}"
    );
    let refused = audit(&sam, &[]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(text(&refused.stderr).contains("admin"), "{}", text(&refused.stderr));
    server.kill().unwrap();
    server.wait().unwrap();
}

/// `llmtool integration`: an admin adds one (its key read from a variable, never shown again),
/// lists it, tests it against the mock provider, removes it; the server made its integration
/// keys privately on first start and keeps them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn integrations_are_added_tested_and_removed_from_the_command_line() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let answer = serde_json::json!({
        "choices": [{"message": {"role": "assistant", "content": "pong"}, "finish_reason": "stop"}],
    });
    let mock =
        llmtool_testkit::Mock::start(vec![llmtool_testkit::Reply::json(200, answer.to_string())])
            .await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let admin = llmtool(&data, &["token", "create", "ops", "--role", "admin"], &[]);
    let admin = text(&admin.stdout).trim().to_owned();
    let (mut server, url) = serve(&data);
    let keys = data.join("integration-keys");
    assert_eq!(std::fs::metadata(&keys).unwrap().permissions().mode() & 0o777, 0o600);
    let made = std::fs::read_to_string(&keys).unwrap();
    let key = "sk-mock-from-the-environment-0042";
    let env =
        [("LLMTOOL_REGISTRY", url.as_str()), ("LLMTOOL_TOKEN", admin.as_str()), ("MOCK_KEY", key)];
    let base_url = format!("{}/v1", mock.url);
    let add = [
        "integration",
        "add",
        "mock",
        "--api",
        "openai",
        "--base-url",
        &base_url,
        "--key-env",
        "MOCK_KEY",
        "--model",
        "m",
    ];
    let added = llmtool(&data, &add, &env);
    assert_eq!(added.status.code(), Some(0), "{}", text(&added.stderr));
    assert!(text(&added.stderr).contains("...0042"), "{}", text(&added.stderr));
    let listed = llmtool(&data, &["integration", "list", "--format", "json"], &env);
    let listed = text(&listed.stdout);
    assert!(listed.contains("\"key_hint\": \"0042\"") && !listed.contains(key), "{listed}");
    let tested = llmtool(&data, &["integration", "test", "mock"], &env);
    assert_eq!(tested.status.code(), Some(0), "{}", text(&tested.stderr));
    assert!(text(&tested.stdout).starts_with("ok: mock (m): pong"), "{}", text(&tested.stdout));
    assert_eq!(mock.requests()[0].headers["authorization"], format!("Bearer {key}").as_str());
    // A second test finds the mock answering 500 (its one reply is spent): exit 1.
    let failed = llmtool(&data, &["integration", "test", "mock"], &env);
    assert_eq!(failed.status.code(), Some(1), "{}", text(&failed.stderr));
    assert!(!text(&failed.stderr).contains(key));
    let removed = llmtool(&data, &["integration", "remove", "mock"], &env);
    assert_eq!(removed.status.code(), Some(0), "{}", text(&removed.stderr));
    let none = llmtool(&data, &["integration", "list"], &env);
    assert_eq!(text(&none.stdout), "no integrations\n");
    let audit = llmtool(&data, &["audit", "--target", "mock", "--format", "json"], &env);
    let audit = text(&audit.stdout);
    assert!(
        audit.contains("integration.add")
            && audit.contains("integration.remove")
            && !audit.contains(key),
        "{audit}"
    );
    server.kill().unwrap();
    server.wait().unwrap();
    // The next start keeps the keys it made.
    let (mut again, _) = serve(&data);
    assert_eq!(std::fs::read_to_string(&keys).unwrap(), made);
    again.kill().unwrap();
    again.wait().unwrap();
    let generated = llmtool(&data, &["integration", "keygen"], &[]);
    assert_eq!(text(&generated.stdout).trim().len(), 44, "32 bytes in base64");
}
