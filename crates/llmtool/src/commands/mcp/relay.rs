//! `llmtool mcp --registry URL`: an MCP server on standard input and output for an editor
//! (Claude Desktop, Cursor, VS Code, Emacs) that relays each message to the library's own
//! `/mcp` as the signed-in member, so that the editor's agent lists the tools the member sees
//! and runs them on the library, under its integrations, budgets, data-loss policy and spend.
//! Messages go one per line each way; requests are relayed at once (at most 16 in flight),
//! `initialize` first and alone, since it opens the session the rest name.

use std::sync::Arc;

use llmtool_registry::client::LibraryClient;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};
use tokio::sync::{Mutex, Semaphore};

use crate::outcome::Outcome;
use crate::registry;

/// The most messages relayed at once.
const IN_FLIGHT: u32 = 16;
/// The longest line read from the editor.
const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// The session the library opened, and the protocol version it agreed on.
#[derive(Default)]
struct Session {
    id: Option<String>,
    protocol: Option<String>,
}

pub(crate) fn relay(url: &str) -> anyhow::Result<Outcome> {
    let client = registry::client(Some(url))?;
    anyhow::ensure!(
        client.has_token(),
        "no token for {url}: sign in with `llmtool login {url}`, or set LLMTOOL_TOKEN"
    );
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    runtime.block_on(run(Arc::new(client)))?;
    Ok(Outcome::Ok)
}

async fn run(client: Arc<LibraryClient>) -> anyhow::Result<()> {
    let out = Arc::new(Mutex::new(tokio::io::stdout()));
    let session = Arc::new(Mutex::new(Session::default()));
    let permits = Arc::new(Semaphore::new(IN_FLIGHT as usize));
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    while let Some(line) = lines.next_line().await? {
        if line.trim().is_empty() {
            continue;
        }
        if line.len() > MAX_LINE_BYTES {
            write(&out, &refused(&Value::Null, -32600, "a message of over 16 MiB")).await;
            continue;
        }
        let message: Value = match serde_json::from_str(&line) {
            Ok(message) => message,
            Err(error) => {
                write(&out, &refused(&Value::Null, -32700, &format!("not JSON: {error}"))).await;
                continue;
            }
        };
        if message["method"] == "initialize" {
            // The session is opened before anything else is relayed.
            forward(&client, &message, &session, &out, true).await;
            continue;
        }
        let permit = Arc::clone(&permits).acquire_owned().await?;
        let (client, session, out) = (Arc::clone(&client), Arc::clone(&session), Arc::clone(&out));
        tokio::spawn(async move {
            forward(&client, &message, &session, &out, false).await;
            drop(permit);
        });
    }
    // The editor closed its end: what is in flight finishes first.
    let _ = permits.acquire_many(IN_FLIGHT).await?;
    Ok(())
}

/// Relays `message` and writes the library's answer; a refusal of a request (a token the
/// library does not take, the library down) is answered as a JSON-RPC error in its words.
async fn forward(
    client: &LibraryClient,
    message: &Value,
    session: &Mutex<Session>,
    out: &Mutex<tokio::io::Stdout>,
    opening: bool,
) {
    let (id, protocol) = {
        let held = session.lock().await;
        (held.id.clone(), held.protocol.clone())
    };
    match client.mcp_post(message, id.as_deref(), protocol.as_deref()).await {
        Ok(answer) => {
            if opening {
                let mut held = session.lock().await;
                held.id.clone_from(&answer.session);
                held.protocol = answer
                    .messages
                    .iter()
                    .find_map(|reply| reply["result"]["protocolVersion"].as_str())
                    .map(str::to_owned);
            }
            for reply in &answer.messages {
                write(out, reply).await;
            }
        }
        Err(error) => {
            let words = registry::explained(error, client, "viewer").to_string();
            match message.get("id").filter(|_| message.get("method").is_some()) {
                Some(id) => write(out, &refused(id, -32603, &words)).await,
                None => eprintln!("llmtool mcp: the library refused a message: {words}"),
            }
        }
    }
}

/// A JSON-RPC error answering the request `id`.
fn refused(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// Writes `message` as one line to the editor.
async fn write(out: &Mutex<tokio::io::Stdout>, message: &Value) {
    let mut line = message.to_string();
    line.push('\n');
    let mut out = out.lock().await;
    if out.write_all(line.as_bytes()).await.is_ok() {
        let _ = out.flush().await;
    }
}
