//! What the server's test files share: a runner that echoes the prompt, and MCP requests over
//! HTTP.

#![allow(dead_code, reason = "each test file uses what it needs")]

use serde_json::Value;

/// Runs a tool by answering its prompt back: `echo: PROMPT`.
pub(crate) struct Echo;

impl llmtool_mcp::Runner for Echo {
    fn is_remote(&self, _tool: &llmtool_core::model::Tool) -> bool {
        false
    }
    fn answer(
        &self,
        _tool: llmtool_core::model::Tool,
        prompt: String,
        _subject: llmtool_runtime::Subject,
    ) -> llmtool_mcp::AnswerFuture {
        Box::pin(async move { Ok(format!("echo: {prompt}")) })
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
