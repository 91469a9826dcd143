//! Operating `llmtool serve` through the binary: `/healthz`, `/readyz`, `/metrics`, a JSON log
//! line per request with its id, and SIGTERM while runs are in flight (none lost, none kept
//! twice, exit 0).

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::path::Path;
use std::process::{Child, Command};
use std::time::Duration;

use crate::support::{llmtool, serve, text};

/// A library, a tool `poet` on the mock provider at `mock_url` to publish to it, an editor's
/// and a viewer's token: the data folder, the config file, the tool and the tokens.
struct Library {
    data: std::path::PathBuf,
    config: std::path::PathBuf,
    tool: std::path::PathBuf,
    editor: String,
    viewer: String,
}

fn library(dir: &Path, mock_url: &str) -> Library {
    let data = dir.join("data");
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[providers.mock]\napi = \"openai\"\nbase_url = \"{mock_url}/v1\"\napi_key_env = \"MOCK_KEY\"\n\n[prices.\"mock/m\"]\ninput = 1.0\noutput = 2.0\n"
        ),
    )
    .unwrap();
    let tool = dir.join("poet.json");
    let poet = serde_json::json!({"model_prompt": "A poem about {{topic}}.",
        "metadata": {"prompt_name": "Poet", "description": "Writes poems.", "model_version": ["mock/m"],
            "timestamp": "2026-11-23T10:00:00Z",
            "variables": [{"name": "topic", "type": "text", "description": "What about."}]}});
    std::fs::write(&tool, poet.to_string()).unwrap();
    let token = |role: &str| {
        let made = llmtool(&data, &["token", "create", role, "--role", role], &[]);
        text(&made.stdout).trim().to_owned()
    };
    let (editor, viewer) = (token("editor"), token("viewer"));
    Library { data, config, tool, editor, viewer }
}

impl Library {
    /// Publishes the tool to the library served at `url`.
    fn publish(&self, url: &str) {
        let env = [("LLMTOOL_REGISTRY", url), ("LLMTOOL_TOKEN", self.editor.as_str())];
        let published = llmtool(&self.data, &["publish", self.tool.to_str().unwrap()], &env);
        assert_eq!(published.status.code(), Some(0), "{}", text(&published.stderr));
    }
}

/// The value of the sample `name` (with its labels as written) in `metrics`, if there is one.
fn sample<T: std::str::FromStr>(metrics: &str, name: &str) -> Option<T> {
    metrics.lines().find_map(|line| line.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
}

fn terminate(child: &Child) {
    let status = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(status.success());
}

fn streaming_mock_reply() -> llmtool_testkit::Reply {
    let text_chunk =
        serde_json::json!({"choices": [{"index": 0, "delta": {"content": "A poem."}}]});
    let usage = serde_json::json!({"choices": [], "usage": {"prompt_tokens": 1000, "completion_tokens": 500}});
    llmtool_testkit::Reply::sse(&[&text_chunk.to_string(), &usage.to_string(), "[DONE]"])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_readiness_metrics_and_a_json_line_per_request() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mock = llmtool_testkit::Mock::repeating("127.0.0.1:0", streaming_mock_reply()).await;
    let dir = tempfile::tempdir().unwrap();
    let library = library(dir.path(), &mock.url);
    let (data, viewer) = (&library.data, &library.viewer);
    let (mut server, url, lines) = serve(data, &["--config", library.config.to_str().unwrap()]);
    library.publish(&url);
    let client = reqwest::Client::new();

    let alive = client.get(format!("{url}/healthz")).send().await.unwrap();
    assert_eq!(alive.status(), 200);
    let ready = client.get(format!("{url}/readyz")).send().await.unwrap();
    assert_eq!((ready.status().as_u16(), ready.text().await.unwrap().as_str()), (200, "ready\n"));

    // A run, its request id given by the client; and one the server names.
    let ran = client
        .post(format!("{url}/api/v1/tools/poet/run"))
        .header("x-request-id", "test-run-0001")
        .bearer_auth(viewer)
        .json(&serde_json::json!({"values": {"topic": "tides"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(ran.headers()["x-request-id"], "test-run-0001");
    assert!(ran.text().await.unwrap().contains("event: done"));
    let read = client.get(format!("{url}/api/v1/tools/poet")).bearer_auth(viewer).send().await;
    let read = read.unwrap();
    let named = read.headers()["x-request-id"].to_str().unwrap().to_owned();
    assert_eq!(named.len(), 26, "a ULID: {named}");
    // A forged id is not taken.
    let forged = client
        .get(format!("{url}/healthz"))
        .header("x-request-id", "x\"}{\"level\":\"ERROR")
        .send()
        .await
        .unwrap();
    assert_ne!(forged.headers()["x-request-id"], "x\"}{\"level\":\"ERROR");

    // A studio session, counted at the next scrape.
    let signed =
        client.post(format!("{url}/api/v1/session")).json(&serde_json::json!({"token": viewer}));
    assert_eq!(signed.send().await.unwrap().status(), 200);
    let metrics = client.get(format!("{url}/metrics")).send().await.unwrap();
    assert_eq!(metrics.headers()["content-type"], "text/plain; version=0.0.4; charset=utf-8");
    let metrics = metrics.text().await.unwrap();
    let runs = r#"llmtool_runs_total{model="m",outcome="ok",provider="mock",tool="poet"}"#;
    assert_eq!(sample::<u64>(&metrics, runs), Some(1), "{metrics}");
    let tokens = r#"llmtool_run_tokens_total{direction="output",model="m",provider="mock"}"#;
    assert_eq!(sample::<u64>(&metrics, tokens), Some(500));
    let cost = r#"llmtool_run_cost_usd_total{model="m",provider="mock"}"#;
    assert!((sample::<f64>(&metrics, cost).unwrap() - 0.002).abs() < 1e-12, "{metrics}");
    let read =
        r#"llmtool_http_requests_total{method="GET",route="/api/v1/tools/{slug}",status="200"}"#;
    assert_eq!(sample::<u64>(&metrics, read), Some(1));
    assert_eq!(
        sample::<u64>(&metrics, r#"llmtool_read_cache_requests_total{result="miss"}"#),
        Some(1)
    );
    assert_eq!(sample::<u64>(&metrics, "llmtool_studio_sessions"), Some(1));
    // A page on another site, its name rebound to this machine, reads nothing (it did).
    let rebound = client.get(format!("{url}/metrics")).header("host", "rebound.example");
    assert_eq!(rebound.send().await.unwrap().status(), 403);
    // A tool not every member sees is counted, unnamed.
    let made = llmtool(data, &["token", "create", "admin", "--role", "admin"], &[]);
    let admin = text(&made.stdout).trim().to_owned();
    let untagged = client.delete(format!("{url}/api/v1/tools/poet/tags/all")).bearer_auth(&admin);
    assert!(untagged.send().await.unwrap().status().is_success());
    let ran = client.post(format!("{url}/api/v1/tools/poet/run")).bearer_auth(&admin);
    let ran = ran.json(&serde_json::json!({"values": {"topic": "reefs"}})).send().await.unwrap();
    assert!(ran.text().await.unwrap().contains("event: done"));
    let metrics = client.get(format!("{url}/metrics")).send().await.unwrap().text().await.unwrap();
    let private = r#"llmtool_runs_total{model="m",outcome="ok",provider="mock",tool="private"}"#;
    assert_eq!(sample::<u64>(&metrics, private), Some(1), "{metrics}");
    assert_eq!(sample::<u64>(&metrics, runs), Some(1), "{metrics}");
    // Through a proxy (a forwarded request), or from afar, the metrics need an admin.
    let proxied = client.get(format!("{url}/metrics")).header("x-forwarded-for", "203.0.113.9");
    assert_eq!(proxied.send().await.unwrap().status(), 401);
    let as_viewer = client.get(format!("{url}/metrics")).bearer_auth(viewer);
    let as_viewer = as_viewer.header("x-forwarded-for", "203.0.113.9").send().await.unwrap();
    assert_eq!(as_viewer.status(), 403);

    terminate(&server);
    assert_eq!(server.wait().unwrap().code(), Some(0));
    let logged: Vec<serde_json::Value> =
        lines.iter().filter_map(|line| serde_json::from_str(&line).ok()).collect();
    let of = |id: &str| {
        logged.iter().find(|line| line["request_id"] == id).cloned().unwrap_or_else(|| {
            panic!("no line for {id} in {logged:#?}");
        })
    };
    let run_line = of("test-run-0001");
    assert_eq!(
        (&run_line["route"], &run_line["status"], &run_line["method"], &run_line["level"]),
        (&"/api/v1/tools/{slug}/run".into(), &200.into(), &"POST".into(), &"INFO".into())
    );
    assert!(run_line["duration_ms"].as_f64().is_some() && run_line["timestamp"].is_string());
    assert_eq!(of(&named)["route"], "/api/v1/tools/{slug}");
    // Nothing secret in the log: not the token, not the provider's key, not the values.
    let all = logged.iter().map(ToString::to_string).collect::<String>();
    for secret in [viewer.as_str(), admin.as_str(), "mock-secret-key-5150", "tides", "reefs"] {
        assert!(!all.contains(secret), "`{secret}` logged: {all}");
    }
}

/// An MCP session's standalone stream (`GET /mcp`), open: a task that reads it to its end.
async fn mcp_stream(
    client: &reqwest::Client,
    url: &str,
    token: &str,
) -> tokio::task::JoinHandle<Result<String, String>> {
    let post = |body: serde_json::Value, session: Option<&str>| {
        let mut request = client
            .post(format!("{url}/mcp"))
            .bearer_auth(token)
            .header("accept", "application/json, text/event-stream")
            .json(&body);
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request.send()
    };
    let initialize = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "test", "version": "1"}}});
    let initialized = post(initialize, None).await.unwrap();
    assert_eq!(initialized.status(), 200);
    let session = initialized.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let _ = initialized.text().await;
    let notice = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(post(notice, Some(&session)).await.unwrap().status(), 202);
    let stream = client
        .get(format!("{url}/mcp"))
        .bearer_auth(token)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    tokio::spawn(async move { stream.text().await.map_err(|e| e.to_string()) })
}

/// SIGTERM with twenty runs in flight (four running, sixteen waiting their turn): every run
/// streams to its `done`, each is kept once, an MCP client's open stream is closed, and the
/// server exits 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_lets_the_runs_in_flight_finish_and_loses_none() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let capacity = llmtool_testkit::Capacity {
        capacity: 100,
        latency: Duration::from_millis(300),
        retry_after: "1".into(),
    };
    let mock = llmtool_testkit::Mock::limited(streaming_mock_reply(), capacity).await;
    let dir = tempfile::tempdir().unwrap();
    let library = library(dir.path(), &mock.url);
    let (data, viewer) = (&library.data, &library.viewer);
    let extra = ["--config", library.config.to_str().unwrap(), "--max-runs", "4"];
    let (mut server, url, _lines) = serve(data, &extra);
    library.publish(&url);
    let client = reqwest::Client::new();
    let runs: Vec<_> = (0..20)
        .map(|n| {
            let request = client
                .post(format!("{url}/api/v1/tools/poet/run"))
                .bearer_auth(viewer)
                .json(&serde_json::json!({"values": {"topic": format!("tide {n}")}}))
                .timeout(Duration::from_mins(1));
            tokio::spawn(async move {
                let response = request.send().await.unwrap();
                (response.status().as_u16(), response.text().await.unwrap_or_default())
            })
        })
        .collect();
    // All twenty are in: four running, the rest waiting.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let metrics = client.get(format!("{url}/metrics")).send().await.unwrap();
        let metrics = metrics.text().await.unwrap();
        let active = sample::<u64>(&metrics, "llmtool_runs_active").unwrap_or(0);
        let waiting = sample::<u64>(&metrics, "llmtool_runs_waiting").unwrap_or(0);
        if active + waiting >= 20 {
            assert_eq!(active, 4, "{metrics}");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the runs never all came in: {metrics}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mcp_stream = mcp_stream(&client, &url, viewer).await;
    terminate(&server);
    let mut finished = 0;
    for run in runs {
        let (status, body) = run.await.unwrap();
        assert_eq!(status, 200, "{body}");
        assert!(body.contains("event: done") && body.contains(r#""outcome":"ok""#), "{body}");
        finished += 1;
    }
    assert_eq!(finished, 20);
    // The MCP client's stream was closed, not cut (its body ends without an error).
    let streamed = mcp_stream.await.unwrap();
    assert!(streamed.is_ok(), "{streamed:?}");
    assert_eq!(server.wait().unwrap().code(), Some(0));
    // Nothing new is taken while it stops, and once stopped it answers nothing.
    assert!(client.get(format!("{url}/healthz")).send().await.is_err());

    // The library kept each run once.
    let (mut again, url, _lines) = serve(data, &[]);
    let env = [("LLMTOOL_REGISTRY", url.as_str()), ("LLMTOOL_TOKEN", viewer.as_str())];
    let usage = llmtool(data, &["usage", "--library", "--by", "origin", "--format", "json"], &env);
    assert_eq!(usage.status.code(), Some(0), "{}", text(&usage.stderr));
    let usage: serde_json::Value = serde_json::from_slice(&usage.stdout).unwrap();
    assert_eq!(usage["totals"][0]["runs"], 20, "{usage}");
    terminate(&again);
    assert_eq!(again.wait().unwrap().code(), Some(0));
}

/// Runs of `poet` made one after another until `stop`, by `token` on the server at `url`:
/// the task, and how many were acknowledged (their `done` received) so far.
fn load(
    url: &str,
    token: &str,
    stop: &std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> (tokio::task::JoinHandle<()>, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::Ordering;
    let acked = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (url, token, stop, counted) = (
        url.to_owned(),
        token.to_owned(),
        std::sync::Arc::clone(stop),
        std::sync::Arc::clone(&acked),
    );
    let task = tokio::spawn(async move {
        let client = reqwest::Client::new();
        let mut n = 0;
        while !stop.load(Ordering::SeqCst) {
            n += 1;
            let ran = client
                .post(format!("{url}/api/v1/tools/poet/run"))
                .bearer_auth(&token)
                .json(&serde_json::json!({"values": {"topic": format!("load {n}")}}))
                .send()
                .await
                .unwrap();
            if ran.text().await.unwrap().contains(r#""outcome":"ok""#) {
                counted.fetch_add(1, Ordering::SeqCst);
            }
        }
    });
    (task, acked)
}

/// The runs a library holds, as `usage --library` totals them through a server on `database`.
fn runs_kept(data: &Path, database: &str, viewer: &str) -> u64 {
    let (mut server, url, _lines) = serve(data, &["--db", database]);
    let env = [("LLMTOOL_REGISTRY", url.as_str()), ("LLMTOOL_TOKEN", viewer)];
    let usage = llmtool(data, &["usage", "--library", "--format", "json"], &env);
    assert_eq!(usage.status.code(), Some(0), "{}", text(&usage.stderr));
    terminate(&server);
    assert_eq!(server.wait().unwrap().code(), Some(0));
    let usage: serde_json::Value = serde_json::from_slice(&usage.stdout).unwrap();
    usage["totals"].as_array().unwrap().iter().map(|t| t["runs"].as_u64().unwrap()).sum()
}

fn admin(data: &Path, args: &[&str]) -> std::process::Output {
    let done = llmtool(data, &[&["admin"], args].concat(), &[]);
    assert_eq!(done.status.code(), Some(0), "admin {args:?}: {}", text(&done.stderr));
    done
}

/// A backup of a SQLite library taken under load restores to the same rows, holding every run
/// acknowledged before it began; the library moves to PostgreSQL whole (versions, tags,
/// labels, tokens, members, teams, runs) and serves from there; a `pg_dump` backup taken
/// under load there restores too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backups_under_load_restore_whole_and_the_library_moves_to_postgres() {
    use std::sync::atomic::Ordering;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let Some(postgres) = llmtool_testkit::postgres::database().await else { return };
    let Some(second) = llmtool_testkit::postgres::database().await else { return };
    let mock = llmtool_testkit::Mock::repeating("127.0.0.1:0", streaming_mock_reply()).await;
    let dir = tempfile::tempdir().unwrap();
    let library = library(dir.path(), &mock.url);
    let (data, viewer) = (&library.data, library.viewer.as_str());
    let live = data.join("library.db");
    let live = live.to_str().unwrap();
    llmtool(data, &["team", "create", "writers"], &[]);
    let added = llmtool(
        data,
        &["member", "add", "ann@example.com", "--role", "editor", "--team", "writers"],
        &[],
    );
    assert_eq!(added.status.code(), Some(0), "{}", text(&added.stderr));

    let config = library.config.to_str().unwrap();
    let (mut server, url, _lines) = serve(data, &["--config", config]);
    library.publish(&url);
    let client = reqwest::Client::new();
    let editor = library.editor.as_str();
    // A team's tag is an admin's to give.
    let admin_token = llmtool(data, &["token", "create", "admin", "--role", "admin"], &[]);
    let admin_token = text(&admin_token.stdout).trim().to_owned();
    let tagged =
        client.put(format!("{url}/api/v1/tools/poet/tags/writers")).bearer_auth(&admin_token);
    assert_eq!(tagged.send().await.unwrap().status(), 204);
    let label =
        client.put(format!("{url}/api/v1/tools/poet/labels/production")).bearer_auth(editor);
    let label = label.json(&serde_json::json!({"version": 1})).send().await.unwrap();
    assert_eq!(label.status(), 204);

    // Under load: runs one after another while the backup is taken.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (task, acked) = load(&url, viewer, &stop);
    while acked.load(Ordering::SeqCst) < 5 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let before_backup = acked.load(Ordering::SeqCst) as u64;
    let backup = dir.path().join("backup.db");
    admin(data, &["backup", backup.to_str().unwrap()]);
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&backup).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600, "a backup is its owner's alone");
    while acked.load(Ordering::SeqCst) < before_backup as usize + 5 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    stop.store(true, Ordering::SeqCst);
    task.await.unwrap();
    terminate(&server);
    assert_eq!(server.wait().unwrap().code(), Some(0));
    let all_runs = acked.load(Ordering::SeqCst) as u64;

    // The backup restores to the same rows, with every run acknowledged before it began.
    let restored = dir.path().join("restored.db");
    let restored = restored.to_str().unwrap();
    admin(data, &["restore", backup.to_str().unwrap(), "--db", restored]);
    admin(data, &["compare", backup.to_str().unwrap(), restored]);
    let in_backup = runs_kept(data, restored, viewer);
    assert!(
        before_backup <= in_backup && in_backup <= all_runs,
        "{before_backup} <= {in_backup} <= {all_runs}"
    );
    // The live library holds every run, and is not the backup.
    assert_eq!(runs_kept(data, live, viewer), all_runs);
    let differ = llmtool(data, &["admin", "compare", live, restored], &[]);
    assert_eq!(differ.status.code(), Some(1), "{}", text(&differ.stdout));

    // To PostgreSQL, whole: the command compares the two itself, and so does `compare`.
    let migrated = admin(data, &["migrate", "--to", &postgres.url]);
    assert!(text(&migrated.stdout).contains("versions"));
    admin(data, &["compare", live, &postgres.url]);
    // Into a library that holds something, never.
    let again = llmtool(data, &["admin", "migrate", "--to", &postgres.url], &[]);
    assert_eq!(again.status.code(), Some(2));
    assert!(text(&again.stderr).contains("not empty"), "{}", text(&again.stderr));

    // The library serves from PostgreSQL: its tokens, versions, labels, members and runs.
    assert_eq!(runs_kept(data, &postgres.url, viewer), all_runs);
    let (mut server, url, _lines) = serve(data, &["--db", &postgres.url, "--config", config]);
    let production =
        client.get(format!("{url}/api/v1/tools/poet?label=production")).bearer_auth(viewer);
    let production: serde_json::Value = production.send().await.unwrap().json().await.unwrap();
    assert_eq!(
        (production["version"].as_u64(), &production["tags"]),
        (Some(1), &serde_json::json!(["all", "writers"]))
    );
    let members =
        llmtool(data, &["member", "list", "--db", &postgres.url, "--format", "json"], &[]);
    assert!(text(&members.stdout).contains("ann@example.com"), "{}", text(&members.stdout));
    // A run there gets a new id after the copied ones (the sequences moved on).
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (task, acked) = load(&url, viewer, &stop);
    while acked.load(Ordering::SeqCst) < 3 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // A pg_dump backup under load, restored into another database.
    let dump = dir.path().join("library.dump");
    admin(data, &["backup", dump.to_str().unwrap(), "--db", &postgres.url]);
    stop.store(true, Ordering::SeqCst);
    task.await.unwrap();
    terminate(&server);
    assert_eq!(server.wait().unwrap().code(), Some(0));
    admin(data, &["restore", dump.to_str().unwrap(), "--db", &second.url]);
    let in_dump = runs_kept(data, &second.url, viewer);
    assert!(all_runs + 3 <= in_dump, "{in_dump}");
    // A backup of the quiet library restores to the same rows, over a library that holds
    // something: the one there is kept first, beside the backup.
    let quiet = dir.path().join("quiet.dump");
    admin(data, &["backup", quiet.to_str().unwrap(), "--db", &postgres.url]);
    admin(data, &["restore", quiet.to_str().unwrap(), "--db", &second.url]);
    admin(data, &["compare", &second.url, &postgres.url]);
    let kept: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| name.starts_with("quiet-before-restore-"))
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
}
