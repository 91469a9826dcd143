//! MCP servers as the function sources of a run: a server the operator configured
//! (`[mcp_servers.NAME]`: a program over stdio, or a Streamable HTTP address), reached only
//! when a run of a tool that names one of its functions starts, never because a tool file
//! asked for a program. The functions' schemas come from the server's `tools/list`; each call
//! is its `tools/call`, the text of the answer given to the model.
//!
//! The client is the few messages a run needs (`initialize`, `tools/list`, `tools/call`),
//! written here rather than taken from `rmcp`'s client: that would build `rmcp`'s whole
//! service loop a second time, for the client's role and each transport, and the binary has
//! a size ceiling (docs/benchmarks.md). `llmtool mcp` (on `rmcp`) is the server the tests
//! reach it on, over both transports.

use std::collections::BTreeMap;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures_util::StreamExt as _;
use llmtool_providers::functions::{FunctionCall, FunctionSpec, Returned};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::sync::{Mutex, OnceCell};

/// How to reach a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reach {
    /// A program and its arguments, with its environment, spoken to over stdio.
    Command { argv: Vec<String>, env: BTreeMap<String, String> },
    /// A Streamable HTTP server, with a bearer token.
    Http { url: String, token: Option<String> },
}

/// How long a server has to answer `initialize`, and then `tools/list`.
const CONNECT_TIME: Duration = Duration::from_secs(30);

/// The most bytes one message from a server may take.
const MOST_MESSAGE_BYTES: u64 = 16 << 20;

/// The protocol version the client asks for.
const PROTOCOL: &str = "2025-06-18";

/// An MCP server a run may use: how to reach it, and, once reached, the session (shared by the
/// run's calls; a program is killed when the run's functions are dropped).
pub struct McpServer {
    pub name: String,
    reach: Reach,
    session: OnceCell<Session>,
    next_id: AtomicU64,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token.
        f.debug_struct("McpServer").field("name", &self.name).finish_non_exhaustive()
    }
}

/// A session with a server.
enum Session {
    Stdio {
        /// Kept so that the program is killed with the session (`kill_on_drop`).
        _program: tokio::process::Child,
        pipes: Box<Mutex<(tokio::process::ChildStdin, BufReader<tokio::process::ChildStdout>)>>,
    },
    Http {
        client: reqwest::Client,
        url: String,
        token: Option<String>,
        /// The `Mcp-Session-Id` the server gave at `initialize`, if any.
        id: Option<String>,
    },
}

impl McpServer {
    pub fn new(name: &str, reach: Reach) -> McpServer {
        McpServer {
            name: name.to_owned(),
            reach,
            session: OnceCell::new(),
            next_id: AtomicU64::new(1),
        }
    }

    /// A fresh server of the same reach, for one run (its own session).
    #[must_use]
    pub fn fresh(&self) -> McpServer {
        McpServer::new(&self.name, self.reach.clone())
    }

    fn said(&self, what: &dyn std::fmt::Display) -> String {
        format!("the MCP server `{}` cannot be reached: {what}", self.name)
    }

    async fn session(&self) -> Result<&Session, String> {
        self.session
            .get_or_try_init(|| async {
                let opened = tokio::time::timeout(CONNECT_TIME, self.open());
                opened.await.map_err(|_| self.said(&"it did not answer `initialize` in time"))?
            })
            .await
    }

    /// Starts or reaches the server, and initializes the session.
    async fn open(&self) -> Result<Session, String> {
        let hello = json!({ "protocolVersion": PROTOCOL, "capabilities": {},
            "clientInfo": { "name": "llmtool", "version": env!("CARGO_PKG_VERSION") } });
        let session = match &self.reach {
            Reach::Command { argv, env } => {
                let (program, arguments) =
                    argv.split_first().ok_or_else(|| self.said(&"no command is configured"))?;
                let mut command = tokio::process::Command::new(program);
                command
                    .args(arguments)
                    .env_clear()
                    .envs(std::env::var_os("PATH").map(|path| ("PATH", path)))
                    .envs(env)
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::null())
                    .kill_on_drop(true);
                let mut child = command.spawn().map_err(|e| self.said(&e))?;
                let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
                    return Err(self.said(&"no standard input or output"));
                };
                Session::Stdio {
                    _program: child,
                    pipes: Box::new(Mutex::new((stdin, BufReader::new(stdout)))),
                }
            }
            Reach::Http { url, token } => {
                let _ = rustls::crypto::ring::default_provider().install_default();
                let client = reqwest::Client::builder()
                    .connect_timeout(CONNECT_TIME)
                    .redirect(reqwest::redirect::Policy::none())
                    .build()
                    .map_err(|e| self.said(&e))?;
                let session =
                    Session::Http { client, url: url.clone(), token: token.clone(), id: None };
                let (_, id) = self.exchange(&session, "initialize", hello.clone(), true).await?;
                let Session::Http { client, url, token, .. } = session else { unreachable!() };
                let session = Session::Http { client, url, token, id };
                self.notify(&session, "notifications/initialized").await?;
                return Ok(session);
            }
        };
        self.exchange(&session, "initialize", hello, true).await?;
        self.notify(&session, "notifications/initialized").await?;
        Ok(session)
    }

    /// Sends the request `method` with `params` and waits for its answer (its `result`), and,
    /// over HTTP, the session id the answer names.
    async fn exchange(
        &self,
        session: &Session,
        method: &str,
        params: Value,
        expect_result: bool,
    ) -> Result<(Value, Option<String>), String> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let message = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        let (answer, session_id) = match session {
            Session::Stdio { pipes, .. } => {
                let mut pipes = pipes.lock().await;
                let (stdin, stdout) = &mut *pipes;
                let mut line = message.to_string();
                line.push('\n');
                stdin.write_all(line.as_bytes()).await.map_err(|e| self.said(&e))?;
                stdin.flush().await.map_err(|e| self.said(&e))?;
                loop {
                    let mut read = String::new();
                    let got = stdout
                        .take(MOST_MESSAGE_BYTES)
                        .read_line(&mut read)
                        .await
                        .map_err(|e| self.said(&e))?;
                    if got == 0 {
                        return Err(self.said(&"it closed its output"));
                    }
                    let Ok(value) = serde_json::from_str::<Value>(&read) else { continue };
                    // Its own requests and notifications are not answers to this one.
                    if value.get("id") == Some(&json!(id)) && value.get("method").is_none() {
                        break (value, None);
                    }
                }
            }
            Session::Http { .. } => {
                let response = posted(session, &message).send().await;
                let response = response.map_err(|e| self.said(&e.without_url()))?;
                let status = response.status();
                if !status.is_success() {
                    return Err(self.said(&format!("it answered {status}")));
                }
                let given = response
                    .headers()
                    .get("mcp-session-id")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                (self.answer_of(response, id).await?, given)
            }
        };
        if let Some(error) = answer.get("error") {
            let said = error.get("message").and_then(Value::as_str).unwrap_or("an error");
            return Err(format!("the MCP server `{}` refused `{method}`: {said}", self.name));
        }
        match answer.get("result") {
            Some(result) => Ok((result.clone(), session_id)),
            None if !expect_result => Ok((Value::Null, session_id)),
            None => {
                Err(format!("the MCP server `{}` answered `{method}` with no result", self.name))
            }
        }
    }

    /// The message answering `id` in an HTTP response: a JSON body, or one of the events of a
    /// stream; bounded in bytes.
    async fn answer_of(&self, response: reqwest::Response, id: u64) -> Result<Value, String> {
        let streamed = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|kind| kind.starts_with("text/event-stream"));
        let mut body = Vec::new();
        let mut chunks = response.bytes_stream();
        while let Some(chunk) = chunks.next().await {
            let chunk = chunk.map_err(|e| self.said(&e.without_url()))?;
            if (body.len() + chunk.len()) as u64 > MOST_MESSAGE_BYTES {
                return Err(self.said(&"its answer is too large"));
            }
            body.extend_from_slice(&chunk);
            if streamed && let Some(answer) = answer_in_events(&body, id) {
                return Ok(answer);
            }
        }
        if streamed {
            return answer_in_events(&body, id)
                .ok_or_else(|| self.said(&"its stream ended without an answer"));
        }
        serde_json::from_slice(&body)
            .map_err(|e| self.said(&format!("its answer is not JSON: {e}")))
    }

    /// Sends the notification `method`.
    async fn notify(&self, session: &Session, method: &str) -> Result<(), String> {
        let message = json!({ "jsonrpc": "2.0", "method": method });
        match session {
            Session::Stdio { pipes, .. } => {
                let mut pipes = pipes.lock().await;
                let mut line = message.to_string();
                line.push('\n');
                pipes.0.write_all(line.as_bytes()).await.map_err(|e| self.said(&e))?;
                pipes.0.flush().await.map_err(|e| self.said(&e))
            }
            Session::Http { .. } => {
                let response = posted(session, &message).send().await;
                let response = response.map_err(|e| self.said(&e.without_url()))?;
                if response.status().is_success() {
                    Ok(())
                } else {
                    Err(self.said(&format!("it answered {}", response.status())))
                }
            }
        }
    }

    /// The specs of the functions `names` of this server, from its `tools/list`; an error
    /// names one it does not have.
    pub async fn specs(&self, names: &[String]) -> Result<Vec<FunctionSpec>, String> {
        let listed = tokio::time::timeout(CONNECT_TIME, self.tools());
        let tools = listed.await.map_err(|_| {
            format!("the MCP server `{}` did not list its tools in time", self.name)
        })??;
        names
            .iter()
            .map(|name| {
                let tool = tools
                    .iter()
                    .find(|tool| tool.get("name").and_then(Value::as_str) == Some(name))
                    .ok_or_else(|| {
                        format!("the MCP server `{}` has no function `{name}`", self.name)
                    })?;
                Ok(FunctionSpec {
                    name: name.clone(),
                    description: tool
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned(),
                    parameters: tool
                        .get("inputSchema")
                        .cloned()
                        .unwrap_or_else(|| json!({ "type": "object" })),
                })
            })
            .collect()
    }

    /// Every tool the server lists, page by page (at most 100 pages).
    async fn tools(&self) -> Result<Vec<Value>, String> {
        let session = self.session().await?;
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..100 {
            let params = match &cursor {
                Some(cursor) => json!({ "cursor": cursor }),
                None => json!({}),
            };
            let (page, _) = self.exchange(session, "tools/list", params, true).await?;
            tools.extend(page.get("tools").and_then(Value::as_array).cloned().unwrap_or_default());
            cursor = page.get("nextCursor").and_then(Value::as_str).map(str::to_owned);
            if cursor.is_none() {
                break;
            }
        }
        Ok(tools)
    }

    /// `call` as this server's `tools/call`: the text of its answer, failed when the server
    /// says the call failed.
    pub async fn call(&self, call: &FunctionCall) -> Returned {
        let arguments = match call.arguments() {
            Ok(arguments) => arguments,
            Err(reason) => return Returned::failed(reason),
        };
        let session = match self.session().await {
            Ok(session) => session,
            Err(reason) => return Returned::failed(reason),
        };
        let params = json!({ "name": call.name, "arguments": arguments });
        match self.exchange(session, "tools/call", params, true).await {
            Ok((result, _)) => {
                let mut texts: Vec<String> = result
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|block| {
                        block.get("text").and_then(Value::as_str).map(str::to_owned)
                    })
                    .collect();
                if texts.is_empty()
                    && let Some(structured) = result.get("structuredContent")
                {
                    texts.push(structured.to_string());
                }
                let text = texts.join("\n");
                let failed = result.get("isError").and_then(Value::as_bool) == Some(true);
                if failed { Returned::failed(text) } else { Returned::ok(text) }
            }
            Err(reason) => Returned::failed(reason),
        }
    }
}

/// `message` as a POST to an HTTP session's server: its token, and its session once it has one.
fn posted(session: &Session, message: &Value) -> reqwest::RequestBuilder {
    let Session::Http { client, url, token, id } = session else {
        unreachable!("only an HTTP session posts");
    };
    let mut request = client
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", PROTOCOL)
        .json(message);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(id) = id {
        request = request.header("mcp-session-id", id);
    }
    request
}

/// The message answering `id` among the events of a stream read so far (`data:` lines).
fn answer_in_events(body: &[u8], id: u64) -> Option<Value> {
    let text = String::from_utf8_lossy(body);
    text.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .find(|message| message.get("id") == Some(&json!(id)) && message.get("method").is_none())
}
