//! What the server's test files share: a runner that echoes the prompt, MCP requests over
//! HTTP, and a library server running its tools against the mock provider.

#![allow(dead_code, reason = "each test file uses what it needs")]

pub(crate) mod slack;

use std::sync::Arc;

use llmtool_config::{Config, Env};
use llmtool_mcp::RunLimits;
use llmtool_providers::resolve::Providers;
use llmtool_registry::{Publication, Role, SqlStore, Store};
use llmtool_runtime::{Runtime, RuntimeOptions};
use llmtool_server::{Access, RateLimiter, ServerState, new_token, token_hash};
use llmtool_testkit::Mock;
use serde_json::{Value, json};

/// Runs a tool by answering its prompt back: `echo: PROMPT`.
pub(crate) struct Echo;

impl llmtool_mcp::Runner for Echo {
    fn is_remote(&self, _tool: &llmtool_format::model::Tool) -> bool {
        false
    }
    fn answer(
        &self,
        _tool: llmtool_format::model::Tool,
        prompt: String,
        _subject: llmtool_runtime::Subject,
    ) -> llmtool_mcp::AnswerFuture {
        Box::pin(async move { Ok(format!("echo: {prompt}").into()) })
    }
}

/// A JSON-RPC request to the MCP endpoint `url` with `token`, in `session` if any: the status,
/// the answer's one message (read from its `data:` line when it is a stream), and the session
/// the answer names.
pub(crate) async fn mcp_request(
    url: &str,
    token: Option<&str>,
    session: Option<&str>,
    body: &Value,
) -> (u16, Value, Option<String>) {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .json(body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let session = response.headers().get("mcp-session-id").map(|v| v.to_str().unwrap().to_owned());
    let text = response.text().await.unwrap();
    let message = text
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .find_map(|data| serde_json::from_str(data.trim()).ok())
        .unwrap_or_else(|| serde_json::from_str(&text).unwrap_or(Value::Null));
    (status, message, session)
}

/// The JSON answer to `request`.
pub(crate) async fn json_of(request: reqwest::RequestBuilder) -> Value {
    request.send().await.unwrap().json().await.unwrap()
}

/// The events of an SSE body: (event name, data as JSON).
pub(crate) fn events(body: &str) -> Vec<(String, Value)> {
    body.split("\n\n")
        .filter_map(|block| {
            let name = block.lines().find_map(|l| l.strip_prefix("event: "))?;
            let data = block.lines().find_map(|l| l.strip_prefix("data: "))?;
            Some((name.to_owned(), serde_json::from_str(data).unwrap()))
        })
        .collect()
}

/// The `text` events' texts, joined.
pub(crate) fn streamed_text(events: &[(String, Value)]) -> String {
    events
        .iter()
        .filter(|(name, _)| name == "text")
        .map(|(_, data)| data["text"].as_str().unwrap())
        .collect()
}

pub(crate) fn chunk(text: &str) -> String {
    json!({"choices": [{"index": 0, "delta": {"content": text}}]}).to_string()
}

/// A streamed answer of `text`, priced at 1,000 prompt and 500 answer tokens.
pub(crate) fn answer(text: &str) -> llmtool_testkit::Reply {
    let usage = json!({"choices": [], "usage": {"prompt_tokens": 1000, "completion_tokens": 500}});
    llmtool_testkit::Reply::sse(&[&chunk(text), &usage.to_string(), "[DONE]"])
}

/// `Poet`, a tool on the mock's model that writes about its one value, `topic`.
pub(crate) fn poet() -> Value {
    json!({
        "model_prompt": "Write about {{topic}}.",
        "metadata": {"prompt_name": "Poet", "description": "Writes.", "model_version": ["mock/m"],
            "timestamp": "2026-11-23T10:00:00Z",
            "variables": [{"name": "topic", "type": "text", "description": "What about."}]}
    })
}

/// A library server on a loopback port (its API and `/mcp`), running its tools against `mock`
/// one at a time with none waiting; `viewer` is a token that may run them.
pub(crate) struct Library {
    pub(crate) base: String,
    pub(crate) viewer: String,
    pub(crate) state: ServerState,
    _folder: tempfile::TempDir,
}

/// How a test library answers Slack.
pub(crate) enum SlackSetup {
    /// `serve`'s own app (`--slack-signing-secret-file` and the rest).
    Files(llmtool_server::SlackOptions),
    /// The app an admin adds in the Control Center, whose Web API is at this address.
    ControlCenter(String),
}

/// The studio's public address in a library that adds Slack from the Control Center.
pub(crate) const PUBLIC_URL: &str = "https://tools.example.test";

impl Library {
    /// A new member `email` (named as their address) in `teams`, and a token of theirs.
    pub(crate) async fn member(&self, email: &str, role: Role, teams: &[&str]) -> String {
        let store = &self.state.store;
        let teams = teams.iter().map(|team| (*team).to_owned()).collect();
        let member =
            llmtool_registry::NewMember { email: email.into(), name: email.into(), role, teams };
        store.add_members(&[member]).await.unwrap();
        let token = new_token();
        store.create_token(email, role, &token_hash(&token), Some(email)).await.unwrap();
        token
    }

    /// Sends `method` to the API's `path` with `token`, and `body` as JSON.
    pub(crate) async fn call(
        &self,
        method: reqwest::Method,
        path: String,
        token: &str,
        body: Option<Value>,
    ) -> reqwest::Response {
        let request = reqwest::Client::new().request(method, format!("{}{path}", self.base));
        let request = request.bearer_auth(token);
        let request = match body {
            Some(body) => request.json(&body),
            None => request,
        };
        request.send().await.unwrap()
    }

    /// A new token named `name`, of no member, with `role`.
    pub(crate) async fn token(&self, name: &str, role: Role) -> String {
        let token = new_token();
        self.state.store.create_token(name, role, &token_hash(&token), None).await.unwrap();
        token
    }

    pub(crate) async fn start(mock: &Mock, tools: &[(&str, Value)]) -> Library {
        Library::start_with(mock, tools, RuntimeOptions::default(), &[]).await
    }

    /// [`Library::start`], its runtime set up with `options` (only configured models run), and
    /// each tool `curated` names tagged for its team alone (not `all`).
    pub(crate) async fn start_with(
        mock: &Mock,
        tools: &[(&str, Value)],
        options: RuntimeOptions,
        curated: &[(&str, &str)],
    ) -> Library {
        Library::serve(mock, tools, options, curated, None).await
    }

    /// [`Library::start_with`], answering Slack's requests as the app `slack` describes.
    pub(crate) async fn start_with_slack(
        mock: &Mock,
        tools: &[(&str, Value)],
        curated: &[(&str, &str)],
        slack: SlackSetup,
    ) -> Library {
        Library::serve(mock, tools, RuntimeOptions::default(), curated, Some(slack)).await
    }

    /// A library serving `tools` against `mock`, its runtime with `options`, each tool
    /// `curated` names tagged for that team alone, answering Slack as `slack` says.
    pub(crate) async fn serve(
        mock: &Mock,
        tools: &[(&str, Value)],
        options: RuntimeOptions,
        curated: &[(&str, &str)],
        slack: Option<SlackSetup>,
    ) -> Library {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let config = format!(
            "[providers.mock]\napi = \"openai\"\nbase_url = \"{}/v1\"\napi_key_env = \"MOCK_KEY\"\n\n[prices.\"mock/m\"]\ninput = 1.0\noutput = 2.0\n",
            mock.url
        );
        let providers = Providers::new(
            Config::parse(&config).unwrap(),
            Env::from_pairs([("MOCK_KEY", "mock-secret-key-5150")]),
        );
        let options = RuntimeOptions { only_configured: true, ..options };
        let runtime = Runtime::new(providers, options).unwrap();
        let folder = tempfile::tempdir().unwrap();
        let store: Arc<dyn Store> =
            Arc::new(SqlStore::open_sqlite(&folder.path().join("library.db")).await.unwrap());
        let viewer = new_token();
        store.create_token("reader", Role::Viewer, &token_hash(&viewer), None).await.unwrap();
        for (slug, tool) in tools {
            let publication = Publication::from_text(&tool.to_string(), "tool.json").unwrap();
            store.publish(slug, &publication, None, None).await.unwrap();
        }
        for (slug, team) in curated {
            store.remove_tag(slug, "all").await.unwrap();
            store.add_tag(slug, team).await.unwrap();
        }
        let limits = RunLimits { concurrent: 1, queued: 0 };
        let state = ServerState::new(
            Arc::clone(&store),
            Access { public_read: true },
            Arc::new(RateLimiter::new(0)),
        )
        .with_keyring(llmtool_server::Keyring::parse(&llmtool_server::Keyring::new_key()).unwrap())
        .with_runtime(runtime, limits);
        let slack_on = slack.is_some();
        let state = match slack {
            Some(SlackSetup::Files(options)) => state.with_slack(options).unwrap(),
            Some(SlackSetup::ControlCenter(api_url)) => state
                .with_slack_api(Some(api_url))
                .unwrap()
                .with_sign_in(llmtool_server::SignInSetup {
                    public_url: Some(PUBLIC_URL.into()),
                    mailer: None,
                    sso: None,
                }),
            None => state,
        };
        if slack_on {
            state.start_slack();
        }
        let runner = state.library_runner().unwrap();
        let state = state.with_mcp(runner, llmtool_server::McpOptions::default()).await.unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}/api/v1", listener.local_addr().unwrap());
        tokio::spawn(llmtool_server::serve(state.clone(), listener, std::future::pending()));
        Library { base, viewer, state, _folder: folder }
    }
}
