//! Tools that reach out, end to end: the binary against the mock LLM server scripted to call
//! functions. The database-backed SQL Assistant answers from the rows of a real PostgreSQL
//! sample database, a `DELETE` it issues changes nothing and the model reads the refusal;
//! `fetch_url` reaches a local page only where the config allows its address, never the
//! metadata service; every call is in `llmtool logs`; `--dry-run` shows what is offered; a loop
//! that does not converge exits 1.

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use llmtool_testkit::{Mock, Reply};
use serde_json::{Value, json};
use sqlx::Connection as _;

const SHOP: &str = include_str!("../../../examples/data/shop.sql");
const SQL_ASSISTANT: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/sql-assistant-db.json");

async fn llmtool(args: &[&str], data_dir: &Path, config: &Path) -> Output {
    llmtool_with(args, data_dir, config, &[]).await
}

async fn llmtool_with(
    args: &[&str],
    data_dir: &Path,
    config: &Path,
    env: &[(&str, &str)],
) -> Output {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_llmtool"))
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .env("NO_COLOR", "1")
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .env("LLMTOOL_DATA_DIR", data_dir)
        .env("LLMTOOL_CONFIG", config)
        .env("MOCK_KEY", "sk-functions-test")
        .env_remove("LLMTOOL_NO_LOG")
        .env_remove("LLMTOOL_MODEL")
        .output()
        .await
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The config of the mock provider, with `extra` tables.
fn config(dir: &Path, mock: &Mock, extra: &str) -> PathBuf {
    let path = dir.join("config.toml");
    let text = format!(
        "default_model = \"mock/m\"\n\n[providers.mock]\napi = \"openai\"\nbase_url = \"{}/v1\"\napi_key_env = \"MOCK_KEY\"\n\n{extra}\n",
        mock.url
    );
    std::fs::write(&path, text).unwrap();
    path
}

fn sse(chunks: &[Value]) -> Reply {
    let mut data: Vec<String> = chunks.iter().map(Value::to_string).collect();
    data.push("[DONE]".to_owned());
    Reply::sse(&data.iter().map(String::as_str).collect::<Vec<_>>())
}

/// A streamed answer that calls `name` with `arguments`.
fn calling(id: &str, name: &str, arguments: &Value) -> Reply {
    let call = json!({ "index": 0, "id": id, "function": { "name": name, "arguments": arguments.to_string() } });
    sse(&[
        json!({ "choices": [{ "delta": { "tool_calls": [call] }, "finish_reason": null }] }),
        json!({ "choices": [{ "delta": {}, "finish_reason": "tool_calls" }], "usage": { "prompt_tokens": 50, "completion_tokens": 10 } }),
    ])
}

/// A streamed answer in words.
fn saying(answer: &str) -> Reply {
    sse(&[
        json!({ "choices": [{ "delta": { "content": answer }, "finish_reason": "stop" }], "usage": { "prompt_tokens": 80, "completion_tokens": 20 } }),
    ])
}

/// The content of the last message of the mock's `index`th request (a function's result).
fn last_result(mock: &Mock, index: usize) -> String {
    let requests = mock.requests();
    let messages = requests[index].body["messages"].as_array().unwrap().clone();
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "tool", "{last}");
    last["content"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn the_sql_assistant_answers_from_the_rows_and_a_delete_changes_nothing() {
    let Some(database) = llmtool_testkit::postgres::database().await else { return };
    let mut connection = sqlx::PgConnection::connect(&database.url).await.unwrap();
    sqlx::raw_sql(SHOP).execute(&mut connection).await.unwrap();
    // A role that may only read: query_database refuses the cluster's own superuser.
    let role = database.url.rsplit('/').next().unwrap().replace("llmtool_test", "reader");
    let grant =
        format!("CREATE ROLE {role} LOGIN; GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}");
    sqlx::raw_sql(&grant).execute(&mut connection).await.unwrap();
    let reader = database.url.replacen("llmtool@", &format!("{role}@"), 1);
    let top = "SELECT c.name, SUM(o.quantity * p.price) AS spent FROM orders o JOIN customers c ON c.id = o.customer_id JOIN products p ON p.id = o.product_id GROUP BY c.name ORDER BY spent DESC LIMIT 1";
    let answer = "Linus Torvalds spent the most: 446.90.\n\n```sql\nSELECT ...\n```";
    let mock = Mock::start(vec![
        calling("c1", "database_schema", &json!({ "database": "shop" })),
        calling("c2", "query_database", &json!({ "database": "shop", "sql": top })),
        calling(
            "c3",
            "query_database",
            &json!({ "database": "shop", "sql": "DELETE FROM orders" }),
        ),
        saying(answer),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let extra = format!("[databases.shop]\nurl = \"{reader}\"\n");
    let config = config(dir.path(), &mock, &extra);
    let args = ["run", SQL_ASSISTANT, "--var", "question=Who spent the most?"];
    let output = llmtool(&args, dir.path(), &config).await;
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(text(&output.stdout).trim_end(), answer);
    assert!(
        stderr.contains("→ query_database {\"database\":\"shop\",\"sql\":\"DELETE FROM orders\"}"),
        "{stderr}"
    );
    assert!(stderr.contains("← query_database failed in "), "{stderr}");

    let requests = mock.requests();
    let offered: Vec<&str> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(offered, ["query_database", "database_schema"], "only what the tool names");
    assert!(last_result(&mock, 1).contains("table public.orders:\n  id integer"));
    assert_eq!(last_result(&mock, 2), "name | spent\nLinus Torvalds | 446.90\n(1 row)");
    assert_eq!(
        last_result(&mock, 3),
        "PostgreSQL refused the statement: cannot execute DELETE in a read-only transaction"
    );
    let count: i64 =
        sqlx::query_scalar("SELECT count(*) FROM orders").fetch_one(&mut connection).await.unwrap();
    assert_eq!(count, 6, "the DELETE changed nothing");

    let logs = llmtool(&["logs", "--format", "json"], dir.path(), &config).await;
    let logged: Value = serde_json::from_slice(&logs.stdout).unwrap();
    let run = &logged[0];
    let calls: Vec<(&str, bool)> = run["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|call| (call["name"].as_str().unwrap(), call["failed"].as_bool().unwrap()))
        .collect();
    assert_eq!(
        calls,
        [("database_schema", false), ("query_database", false), ("query_database", true)]
    );
    assert_eq!(run["input_tokens"], 230, "the rounds' usage is summed: {run}");
    let listed = text(&llmtool(&["logs"], dir.path(), &config).await.stdout);
    assert!(listed.contains("3 function calls"), "{listed}");
    let id = run["id"].to_string();
    let shown = text(&llmtool(&["logs", "show", &id], dir.path(), &config).await.stdout);
    assert!(shown.contains("\nFunction calls\n    database_schema {"), "{shown}");
    assert!(shown.contains("    query_database {\"database\":\"shop\",\"sql\":\"DELETE FROM orders\"}\n      failed in "), "{shown}");
}

#[tokio::test]
async fn dry_run_shows_the_functions_offered_and_a_missing_database_is_a_clear_error() {
    let mock = Mock::start(vec![]).await;
    let dir = tempfile::tempdir().unwrap();
    let config_with =
        config(dir.path(), &mock, "[databases.shop]\nurl = \"sqlite:/nonexistent/shop.db\"\n");
    let args = ["run", SQL_ASSISTANT, "--var", "question=Who?", "--dry-run"];
    let output = llmtool(&args, dir.path(), &config_with).await;
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let shown = text(&output.stdout);
    assert!(shown.contains("\"name\": \"query_database\""), "{shown}");
    assert!(shown.contains("\"enum\": [\n"), "the databases are named: {shown}");
    assert!(mock.requests().is_empty(), "a dry run sends nothing");

    let other = tempfile::tempdir().unwrap();
    let config_without = config(other.path(), &mock, "");
    let output =
        llmtool(&["run", SQL_ASSISTANT, "--var", "question=Who?"], other.path(), &config_without)
            .await;
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("the tool queries database `shop`, which is not configured"),
        "{}",
        text(&output.stderr)
    );
    assert!(mock.requests().is_empty());
}

/// A tool that reads pages.
fn reader(dir: &Path) -> PathBuf {
    let path = dir.join("reader.json");
    let tool = json!({
        "model_prompt": "Summarize {{url}}",
        "metadata": {
            "prompt_name": "reader",
            "variables": [{ "name": "url", "type": "text" }],
            "functions": [{ "builtin": "fetch_url" }]
        }
    });
    std::fs::write(&path, tool.to_string()).unwrap();
    path
}

#[tokio::test]
async fn fetch_url_reaches_a_local_page_only_where_the_operator_allowed_it() {
    let page =
        Mock::start(vec![Reply::json(200, "<html><body><p>Lentil soup today.</p></body></html>")])
            .await;
    let url = format!("{}/menu.html", page.url);
    let metadata = "http://169.254.169.254/latest/meta-data/";
    let replies = || {
        vec![
            calling("c1", "fetch_url", &json!({ "url": url })),
            calling("c2", "fetch_url", &json!({ "url": metadata })),
            saying("Soup."),
        ]
    };
    let dir = tempfile::tempdir().unwrap();
    let tool = reader(dir.path());
    let tool = tool.to_str().unwrap();

    let allowed = Mock::start(replies()).await;
    let config_allowed = config(dir.path(), &allowed, "[fetch]\nallow = [\"127.0.0.1\"]\n");
    let output =
        llmtool(&["run", tool, "--var", "url=the menu"], dir.path(), &config_allowed).await;
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(last_result(&allowed, 1), "Lentil soup today.");
    assert_eq!(
        last_result(&allowed, 2),
        "`169.254.169.254` is a link-local address (169.254.169.254), which fetch_url may not reach unless the operator allows it"
    );
    assert_eq!(page.requests().len(), 1);

    let other = tempfile::tempdir().unwrap();
    let refused = Mock::start(replies()).await;
    let config_refused = config(other.path(), &refused, "");
    let output =
        llmtool(&["run", tool, "--var", "url=the menu"], other.path(), &config_refused).await;
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(last_result(&refused, 1).contains("is a loopback address (127.0.0.1)"));
    assert_eq!(page.requests().len(), 1, "the page was not asked again");
}

#[tokio::test]
async fn a_model_that_keeps_calling_stops_with_exit_1() {
    let forever = (0..17)
        .map(|i| {
            calling(&format!("c{i}"), "fetch_url", &json!({ "url": "http://169.254.169.254/" }))
        })
        .collect();
    let mock = Mock::start(forever).await;
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), &mock, "");
    let tool = reader(dir.path());
    let output =
        llmtool(&["run", tool.to_str().unwrap(), "--var", "url=x"], dir.path(), &config).await;
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    assert!(
        text(&output.stderr).contains(
            "error: the model asked for more than 16 function calls without answering; stopped"
        ),
        "{}",
        text(&output.stderr)
    );
    assert_eq!(mock.requests().len(), 17);
}

#[tokio::test]
async fn data_loss_prevention_screens_a_result_before_the_model_reads_it() {
    let page = "<html><body><p>Write to ann.lee@example.com for the menu.</p></body></html>";
    let site = Mock::start(vec![Reply::json(200, page); 2]).await;
    let url = format!("{}/contact.html", site.url);
    let dir = tempfile::tempdir().unwrap();
    let tool = reader(dir.path());
    let tool = tool.to_str().unwrap();
    let args = |policy: &'static str| ["run", tool, "--var", "url=the contact", "--dlp", policy];

    let mock = Mock::start(vec![
        calling("c1", "fetch_url", &json!({ "url": url })),
        saying("Write to [EMAIL_1]."),
    ])
    .await;
    let config_redact = config(dir.path(), &mock, "[fetch]\nallow = [\"127.0.0.1\"]\n");
    let output = llmtool(&args("redact"), dir.path(), &config_redact).await;
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(last_result(&mock, 1), "Write to [EMAIL_1] for the menu.");
    assert_eq!(text(&output.stdout).trim_end(), "Write to ann.lee@example.com.");
    let sent = serde_json::to_string(&mock.requests()[1].body).unwrap();
    assert!(!sent.contains("ann.lee@example.com"), "{sent}");

    let other = tempfile::tempdir().unwrap();
    let blocked =
        Mock::start(vec![calling("c1", "fetch_url", &json!({ "url": url })), saying("No.")]).await;
    let config_block = config(other.path(), &blocked, "[fetch]\nallow = [\"127.0.0.1\"]\n");
    let output = llmtool(&args("block"), other.path(), &config_block).await;
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(
        last_result(&blocked, 1),
        "result withheld by data-loss prevention: the result holds 1 sensitive value(s) (an e-mail address)"
    );
}

/// An answer given whole (a called tool's run is answered whole).
fn whole(answer: &str) -> Reply {
    let body = json!({ "choices": [{ "message": { "content": answer }, "finish_reason": "stop" }], "usage": { "prompt_tokens": 20, "completion_tokens": 5 } });
    Reply::json(200, body.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_here_calls_a_library_tool_its_member_sees_and_not_another_teams() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let no_config = dir.path().join("none.toml");
    std::fs::write(&no_config, "").unwrap();
    let mut tokens = Vec::new();
    for args in [
        &["token", "create", "ops", "--role", "admin"][..],
        &["team", "create", "red"],
        &["team", "create", "blue"],
        &["member", "add", "rae@example.org", "--team", "red"],
        &["token", "create", "rae-cli", "--member", "rae@example.org"],
    ] {
        let out = llmtool(args, &data, &no_config).await;
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", text(&out.stderr));
        tokens.push(text(&out.stdout).trim().to_owned());
    }
    let (admin, rae) = (tokens[0].clone(), tokens[4].clone());
    let (mut server, url, _lines) = crate::support::serve(&data, &[]);
    let client = reqwest::Client::new();
    for (slug, team, prompt) in
        [("summarize", "red", "Summarize: {{text}}"), ("secret", "blue", "Keep {{text}}")]
    {
        let body = json!({ "model_prompt": prompt, "metadata": { "prompt_name": slug, "description": "A team's tool.",
            "timestamp": "2026-12-04T10:00:00Z", "variables": [{ "name": "text", "type": "text", "description": "The text." }] } });
        let published =
            client.post(format!("{url}/api/v1/tools?slug={slug}&tags={team}")).bearer_auth(&admin);
        assert_eq!(published.body(body.to_string()).send().await.unwrap().status(), 201);
    }
    let mock = Mock::start(vec![
        calling("c1", "summarize", &json!({ "text": "Tides rise twice a day." })),
        whole("Twice daily."),
        saying("Brief: twice daily."),
    ])
    .await;
    let config = config(dir.path(), &mock, "");
    let caller = |name: &str, slug: &str| {
        let path = dir.path().join(format!("{name}.json"));
        let tool = json!({ "model_prompt": "Brief me on {{text}}", "metadata": { "prompt_name": name,
            "variables": [{ "name": "text", "type": "text" }], "functions": [{ "tool": format!("registry:{slug}") }] } });
        std::fs::write(&path, tool.to_string()).unwrap();
        path
    };
    let env = [("LLMTOOL_REGISTRY", url.as_str()), ("LLMTOOL_TOKEN", rae.as_str())];
    let brief = caller("brief", "summarize");
    let args = ["run", brief.to_str().unwrap(), "--var", "text=tides"];
    let output = llmtool_with(&args, &data, &config, &env).await;
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(text(&output.stdout).trim_end(), "Brief: twice daily.");
    let sent = mock.requests();
    assert_eq!(sent[1].body["messages"][0]["content"], "Summarize: Tides rise twice a day.");
    assert_eq!(last_result(&mock, 2), "Twice daily.");
    let logs = llmtool(&["logs", "--format", "json"], &data, &config).await;
    let logged: Value = serde_json::from_slice(&logs.stdout).unwrap();
    let origins: Vec<(&str, &str)> = logged
        .as_array()
        .unwrap()
        .iter()
        .map(|run| (run["origin"].as_str().unwrap(), run["tool_path"].as_str().unwrap_or("")))
        .collect();
    assert!(origins.contains(&("function", "registry:summarize@1")), "{origins:?}");

    // Another team's tool is not found: the run does not start, and nothing is sent.
    let peek = caller("peek", "secret");
    let args = ["run", peek.to_str().unwrap(), "--var", "text=tides"];
    let output = llmtool_with(&args, &data, &config, &env).await;
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("no tool `secret` in the library"),
        "{}",
        text(&output.stderr)
    );
    assert_eq!(mock.requests().len(), 3);
    server.kill().unwrap();
    server.wait().unwrap();
}

/// A folder holding `shout`, a tool an MCP server (`llmtool mcp`) serves: its path.
fn shout_served(dir: &Path) -> PathBuf {
    let served = dir.join("served");
    std::fs::create_dir(&served).unwrap();
    let shout = json!({ "model_prompt": "Shout {{text}}", "metadata": { "prompt_name": "shout",
        "description": "Says a text loudly.", "variables": [{ "name": "text", "type": "text", "description": "What to shout." }] } });
    std::fs::write(served.join("shout.json"), shout.to_string()).unwrap();
    served
}

/// `loud`, a tool that offers the MCP server `voices`'s `shout`.
fn loud(dir: &Path) -> PathBuf {
    let tool = dir.join("loud.json");
    let loud = json!({ "model_prompt": "Be loud about {{topic}}", "metadata": { "prompt_name": "loud",
        "variables": [{ "name": "topic", "type": "text" }], "functions": [{ "mcp": "voices", "name": "shout" }] } });
    std::fs::write(&tool, loud.to_string()).unwrap();
    tool
}

#[tokio::test]
async fn an_mcp_servers_function_is_offered_from_its_tools_list_and_called() {
    let dir = tempfile::tempdir().unwrap();
    let served = shout_served(dir.path());
    let mock = Mock::start(vec![
        calling("c1", "shout", &json!({ "text": "hello" })),
        // The MCP server's run of `shout` is answered whole.
        whole("HELLO!"),
        saying("It said HELLO!"),
    ])
    .await;
    let server_config = config(&served, &mock, "");
    let llmtool_binary = env!("CARGO_BIN_EXE_llmtool");
    let extra = format!(
        "[mcp_servers.voices]\ncommand = [{:?}, \"mcp\", {:?}]\nenv = {{ LLMTOOL_CONFIG = {:?}, LLMTOOL_DATA_DIR = {:?}, MOCK_KEY = \"sk-functions-test\", LLMTOOL_NO_LOG = \"1\" }}\n",
        llmtool_binary,
        served.join("shout.json").to_str().unwrap(),
        server_config.to_str().unwrap(),
        dir.path().join("server-data").to_str().unwrap(),
    );
    let config = config(dir.path(), &mock, &extra);
    let tool = loud(dir.path());
    let output =
        llmtool(&["run", tool.to_str().unwrap(), "--var", "topic=greetings"], dir.path(), &config)
            .await;
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(text(&output.stdout).trim_end(), "It said HELLO!");
    let requests = mock.requests();
    let offered = &requests[0].body["tools"][0]["function"];
    assert_eq!(offered["name"], "shout");
    assert_eq!(offered["description"], "Says a text loudly.", "from the server's tools/list");
    assert_eq!(offered["parameters"]["properties"]["text"]["type"], "string");
    assert_eq!(requests[1].body["messages"][0]["content"], "Shout hello");
    assert_eq!(last_result(&mock, 2), "HELLO!");

    // A server nobody configured is never started: the run does not begin.
    let stranger = dir.path().join("stranger.json");
    let unknown = json!({ "model_prompt": "Hi", "metadata": { "functions": [{ "mcp": "anything", "name": "run" }] } });
    std::fs::write(&stranger, unknown.to_string()).unwrap();
    let output = llmtool(&["run", stranger.to_str().unwrap()], dir.path(), &config).await;
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("the MCP server `anything`, which is not configured"),
        "{}",
        text(&output.stderr)
    );
    assert_eq!(mock.requests().len(), 3);
}

#[tokio::test]
async fn an_mcp_server_over_http_is_reached_with_its_token() {
    let dir = tempfile::tempdir().unwrap();
    let served = shout_served(dir.path());
    let mock = Mock::start(vec![
        calling("c1", "shout", &json!({ "text": "hi" })),
        whole("HI!"),
        saying("Loud: HI!"),
    ])
    .await;
    let server_config = config(&served, &mock, "");
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, "voices-token-0123456789abcdef").unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    let mut voices = tokio::process::Command::new(env!("CARGO_BIN_EXE_llmtool"))
        .args(["mcp", "--log-level", "error", "--http", &address.to_string(), "--token-file"])
        .arg(&token_file)
        .arg(served.join("shout.json"))
        .env("LLMTOOL_CONFIG", &server_config)
        .env("LLMTOOL_DATA_DIR", dir.path().join("server-data"))
        .env("MOCK_KEY", "sk-functions-test")
        .env("LLMTOOL_NO_LOG", "1")
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let url = format!("http://{address}/mcp");
    for _ in 0..100 {
        if tokio::net::TcpStream::connect(address).await.is_ok() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let extra = format!("[mcp_servers.voices]\nurl = {url:?}\ntoken_env = \"VOICES_TOKEN\"\n");
    let config = config(dir.path(), &mock, &extra);
    let tool = loud(dir.path());
    let args = ["run", tool.to_str().unwrap(), "--var", "topic=greetings"];
    let output = llmtool_with(
        &args,
        dir.path(),
        &config,
        &[("VOICES_TOKEN", "voices-token-0123456789abcdef")],
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(text(&output.stdout).trim_end(), "Loud: HI!");
    assert_eq!(last_result(&mock, 2), "HI!");

    // Without the token, the server refuses: the run stops before anything is sent.
    let sent = mock.requests().len();
    let output = llmtool_with(&args, dir.path(), &config, &[("VOICES_TOKEN", "wrong")]).await;
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
    assert!(text(&output.stderr).contains("the MCP server `voices`"), "{}", text(&output.stderr));
    assert_eq!(mock.requests().len(), sent);
    voices.kill().await.unwrap();
}

/// Posts `body` to the MCP endpoint `url` in `session`: the answer's JSON-RPC messages (a
/// stream's events, or one JSON body), and the session it names.
async fn mcp_post(
    url: &str,
    session: Option<&str>,
    token: &str,
    body: &Value,
) -> (Vec<Value>, Option<String>) {
    let mut request = reqwest::Client::new()
        .post(url)
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .json(body);
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    let response = request.send().await.unwrap();
    let session = response.headers().get("mcp-session-id").map(|v| v.to_str().unwrap().to_owned());
    let text = response.text().await.unwrap();
    let messages = text
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str(data.trim()).ok())
        .chain(serde_json::from_str(&text).ok())
        .collect();
    (messages, session)
}

#[tokio::test]
async fn an_mcp_client_that_asks_for_progress_hears_of_each_function_call() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir().unwrap();
    let mock = Mock::start(vec![
        // `tools/call` answers whole: so do these.
        {
            let body = json!({ "choices": [{ "message": { "content": null, "tool_calls": [{ "id": "c1", "type": "function",
                "function": { "name": "fetch_url", "arguments": "{\"url\":\"http://169.254.169.254/\"}" } }] }, "finish_reason": "tool_calls" }] });
            Reply::json(200, body.to_string())
        },
        whole("The page is out of reach."),
    ])
    .await;
    let served = dir.path().join("served");
    std::fs::create_dir(&served).unwrap();
    let tool = reader(&served);
    let server_config = config(&served, &mock, "");
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, "mcp-progress-token-0123456789").unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    let mut mcp = tokio::process::Command::new(env!("CARGO_BIN_EXE_llmtool"))
        .args(["mcp", "--log-level", "error", "--http", &address.to_string(), "--token-file"])
        .arg(&token_file)
        .arg(&tool)
        .env("LLMTOOL_CONFIG", &server_config)
        .env("LLMTOOL_DATA_DIR", dir.path().join("data"))
        .env("MOCK_KEY", "sk-functions-test")
        .env("LLMTOOL_NO_LOG", "1")
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    for _ in 0..100 {
        if tokio::net::TcpStream::connect(address).await.is_ok() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let url = format!("http://{address}/mcp");
    let token = "mcp-progress-token-0123456789";
    let hello = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "progress-test", "version": "1" } } });
    let (_, session) = mcp_post(&url, None, token, &hello).await;
    let session = session.expect("a session");
    let initialized = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
    mcp_post(&url, Some(&session), token, &initialized).await;
    let call = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "reader", "arguments": { "url": "the metadata" }, "_meta": { "progressToken": "p-1" } } });
    let (messages, _) = mcp_post(&url, Some(&session), token, &call).await;
    let progress: Vec<(f64, String)> = messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| {
            (
                m["params"]["progress"].as_f64().unwrap(),
                m["params"]["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(progress.len(), 2, "{messages:?}");
    assert_eq!(
        progress[0],
        (1.0, "calling fetch_url {\"url\":\"http://169.254.169.254/\"}".to_owned())
    );
    assert!(progress[1].1.starts_with("fetch_url failed in "), "{progress:?}");
    assert!(
        messages
            .iter()
            .all(|m| m["method"] != "notifications/progress"
                || m["params"]["progressToken"] == "p-1")
    );
    let result = messages.iter().find(|m| m["id"] == 2).unwrap();
    assert_eq!(result["result"]["content"][0]["text"], "The page is out of reach.", "{result}");
    mcp.kill().await.unwrap();
}
