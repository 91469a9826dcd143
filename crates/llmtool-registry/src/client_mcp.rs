//! [`LibraryClient`]'s side of the library's MCP endpoint (`/mcp`, Streamable HTTP): one
//! JSON-RPC message posted, the messages of its answer read back (a JSON body, or the events
//! of a stream), for `llmtool mcp --registry URL` to relay between an editor and the library.

use std::time::Duration;

use reqwest::Method;
use reqwest::header::{ACCEPT, CONTENT_TYPE};

use crate::client::{ClientError, LibraryClient};
use crate::client_runs::{event_end, parse_event};

/// The longest one message's answer may take (a tool run on the server among them).
const MCP_TIMEOUT: Duration = Duration::from_mins(15);
/// The most bytes an answer may hold.
const MAX_ANSWER_BYTES: usize = 32 * 1024 * 1024;

/// What the library answered one message with.
#[derive(Debug, Default)]
pub struct McpAnswer {
    /// The session the library named (`Mcp-Session-Id`), if it named one.
    pub session: Option<String>,
    /// The messages of the answer, in order (none for a notification or a response).
    pub messages: Vec<serde_json::Value>,
}

impl LibraryClient {
    /// Posts `message` to the library's `/mcp` in `session` (with the `protocol` version the
    /// session agreed on, once it has).
    pub async fn mcp_post(
        &self,
        message: &serde_json::Value,
        session: Option<&str>,
        protocol: Option<&str>,
    ) -> Result<McpAnswer, ClientError> {
        let url = format!("{}/mcp", self.url().trim_end_matches("/api/v1"));
        let mut request = self
            .request_to(Method::POST, &url)
            .timeout(MCP_TIMEOUT)
            .header(ACCEPT, "application/json, text/event-stream")
            .json(message);
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        if let Some(protocol) = protocol {
            request = request.header("mcp-protocol-version", protocol);
        }
        let answer = request.send().await.map_err(|error| self.unreachable(error))?;
        if !answer.status().is_success() {
            return Err(self.refusal(answer).await);
        }
        let session = answer
            .headers()
            .get("mcp-session-id")
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        let streamed = answer
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|kind| kind.starts_with("text/event-stream"));
        let mut answer = answer;
        let mut body: Vec<u8> = Vec::new();
        let mut messages = Vec::new();
        while let Some(chunk) = answer.chunk().await.map_err(|error| self.unreachable(error))? {
            body.extend_from_slice(&chunk);
            if streamed {
                while let Some(end) = event_end(&body) {
                    let block: Vec<u8> = body.drain(..end).collect();
                    messages.extend(parse_event(&block).map(|event| event.data));
                }
            }
            if body.len() > MAX_ANSWER_BYTES {
                return Err(ClientError::Unexpected("an MCP answer of over 32 MiB".into()));
            }
        }
        if !streamed && !body.is_empty() {
            let message = serde_json::from_slice(&body)
                .map_err(|error| ClientError::Unexpected(format!("an MCP answer: {error}")))?;
            messages.push(message);
        }
        Ok(McpAnswer { session, messages })
    }
}
