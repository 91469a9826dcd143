//! The load generator of the MCP benchmark (`bench/mcp.sh`): CLIENTS concurrent clients, each
//! with its own `initialize` session over Streamable HTTP, send `prompts/get` back to back for
//! SECONDS; prints the throughput and the p50/p99 latency as JSON. The same program loads both
//! servers, so they are measured alike.
//!
//! Usage: `mcp_load URL CLIENTS SECONDS PROMPT ARGUMENTS_JSON`
//!
//! Each client holds one HTTP/1.1 connection of its own (hyper's client connection, no pool)
//! and every client runs on one thread: on a machine with two cores, the load generator should
//! take as little of them as it can, so that what is measured is the server. (Built on reqwest,
//! with its shared pool and a worker thread per core, it took 31 µs of CPU a request: three
//! quarters of what the server it measured took.)

use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper::Request;
use hyper::client::conn::http1::SendRequest;
use serde_json::{Value, json};

const ACCEPT: &str = "application/json, text/event-stream";
const VERSION: &str = "2025-11-25";

type Error = Box<dyn std::error::Error + Send + Sync>;

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().collect();
    let [_, url, clients, seconds, prompt, arguments] = args.as_slice() else {
        return Err("usage: mcp_load URL CLIENTS SECONDS PROMPT ARGUMENTS_JSON".into());
    };
    let target: hyper::Uri = url.parse()?;
    let clients: usize = clients.parse()?;
    let duration = Duration::from_secs(seconds.parse()?);
    let arguments: Value = serde_json::from_str(arguments)?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let (elapsed, mut latencies, errors) = runtime.block_on(async {
        let deadline = Instant::now() + duration;
        let mut tasks = tokio::task::JoinSet::new();
        for _ in 0..clients {
            let (target, prompt, arguments) = (target.clone(), prompt.clone(), arguments.clone());
            tasks.spawn(async move { client(&target, &prompt, &arguments, deadline).await });
        }
        let started = Instant::now();
        let mut latencies = Vec::new();
        let mut errors = 0u64;
        while let Some(finished) = tasks.join_next().await {
            let (mut times, failed) = finished??;
            latencies.append(&mut times);
            errors += failed;
        }
        Ok::<_, Error>((started.elapsed().as_secs_f64(), latencies, errors))
    })?;
    latencies.sort_unstable();
    let percentile = |p: f64| {
        let at = ((latencies.len() as f64 - 1.0) * p).round() as usize;
        latencies.get(at).map_or(0.0, |d| d.as_secs_f64() * 1000.0)
    };
    let report = json!({
        "url": url,
        "clients": clients,
        "seconds": elapsed,
        "requests": latencies.len(),
        "errors": errors,
        "throughput_per_s": latencies.len() as f64 / elapsed,
        "p50_ms": percentile(0.50),
        "p99_ms": percentile(0.99),
    });
    println!("{report}");
    Ok(())
}

/// One client's connection, and what every request it sends carries.
struct Connection {
    sender: SendRequest<Full<Bytes>>,
    target: hyper::Uri,
    session: Option<String>,
}

impl Connection {
    async fn open(target: &hyper::Uri) -> Result<Self, Error> {
        let authority = target.authority().ok_or("the URL names no host")?;
        let stream = tokio::net::TcpStream::connect(authority.as_str()).await?;
        stream.set_nodelay(true)?;
        let (sender, connection) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await?;
        tokio::spawn(connection);
        Ok(Self { sender, target: target.clone(), session: None })
    }

    /// Ends the session (`DELETE`), as a client that is done does; its answer does not matter.
    async fn close(mut self) {
        let Some(session) = self.session.take() else { return };
        let authority = self.target.authority().map_or("", |a| a.as_str()).to_owned();
        let request = Request::delete(self.target.path())
            .header("host", authority)
            .header("mcp-session-id", session)
            .body(Full::new(Bytes::new()));
        if let (Ok(request), Ok(())) = (request, self.sender.ready().await) {
            let _ = self.sender.send_request(request).await;
        }
    }

    /// POSTs `message`; the response's status, session header and body.
    async fn post(&mut self, message: &Value) -> Result<(u16, Option<String>, Bytes), Error> {
        let authority = self.target.authority().ok_or("the URL names no host")?.as_str();
        let mut request = Request::post(self.target.path())
            .header("host", authority)
            .header("accept", ACCEPT)
            .header("content-type", "application/json");
        if let Some(session) = &self.session {
            request =
                request.header("mcp-session-id", session).header("mcp-protocol-version", VERSION);
        }
        let request = request.body(Full::new(Bytes::from(serde_json::to_vec(message)?)))?;
        self.sender.ready().await?;
        let response = self.sender.send_request(request).await?;
        let status = response.status().as_u16();
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        let body = response.into_body().collect().await?.to_bytes();
        Ok((status, session, body))
    }
}

/// One client: an `initialize` session, then `prompts/get` until the deadline. A response
/// that is not a rendered prompt counts as an error.
async fn client(
    target: &hyper::Uri,
    prompt: &str,
    arguments: &Value,
    deadline: Instant,
) -> Result<(Vec<Duration>, u64), Error> {
    let mut connection = Connection::open(target).await?;
    let initialize = json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": VERSION,
            "capabilities": {},
            "clientInfo": { "name": "mcp_load", "version": "1" },
        },
    });
    let (_, session, _) = connection.post(&initialize).await?;
    connection.session = Some(session.ok_or("the server opened no session")?);
    connection.post(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })).await?;
    let mut latencies = Vec::new();
    let mut errors = 0;
    let mut id = 1u64;
    while Instant::now() < deadline {
        let request = json!({
            "jsonrpc": "2.0", "id": id, "method": "prompts/get",
            "params": { "name": prompt, "arguments": arguments },
        });
        id += 1;
        let sent = Instant::now();
        let ok = match connection.post(&request).await {
            Ok((status, _, body)) => {
                (200..300).contains(&status) && contains(&body, b"\"messages\"")
            }
            Err(_) => false,
        };
        if ok {
            latencies.push(sent.elapsed());
        } else {
            errors += 1;
        }
    }
    connection.close().await;
    Ok((latencies, errors))
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|window| window == needle)
}
