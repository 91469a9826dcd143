//! The load generator of the MCP benchmark (`bench/mcp.sh`): CLIENTS concurrent clients, each
//! with its own `initialize` session over Streamable HTTP, send `prompts/get` back to back for
//! SECONDS; prints the throughput and the p50/p99 latency as JSON. The same program loads both
//! servers, so they are measured alike.
//!
//! Usage: `mcp_load URL CLIENTS SECONDS PROMPT ARGUMENTS_JSON`

use std::time::{Duration, Instant};

use serde_json::{Value, json};

const ACCEPT: &str = "application/json, text/event-stream";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, url, clients, seconds, prompt, arguments] = args.as_slice() else {
        return Err("usage: mcp_load URL CLIENTS SECONDS PROMPT ARGUMENTS_JSON".into());
    };
    let clients: usize = clients.parse()?;
    let duration = Duration::from_secs(seconds.parse()?);
    let arguments: Value = serde_json::from_str(arguments)?;
    // reqwest is built without a default TLS provider (the URL is plain HTTP anyway).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::builder().pool_max_idle_per_host(clients).build()?;
    let deadline = Instant::now() + duration;
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let (http, url, prompt, arguments) =
            (http.clone(), url.clone(), prompt.clone(), arguments.clone());
        tasks.push(tokio::spawn(async move {
            client(&http, &url, &prompt, &arguments, deadline).await
        }));
    }
    let started = Instant::now();
    let mut latencies = Vec::new();
    let mut errors = 0u64;
    for task in tasks {
        let (mut times, failed) = task.await??;
        latencies.append(&mut times);
        errors += failed;
    }
    let elapsed = started.elapsed().as_secs_f64();
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

type ClientResult = Result<(Vec<Duration>, u64), Box<dyn std::error::Error + Send + Sync>>;

/// One client: an `initialize` session, then `prompts/get` until the deadline. A response
/// that is not a rendered prompt counts as an error.
async fn client(
    http: &reqwest::Client,
    url: &str,
    prompt: &str,
    arguments: &Value,
    deadline: Instant,
) -> ClientResult {
    let initialize = json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": { "name": "mcp_load", "version": "1" },
        },
    });
    let response = http.post(url).header("accept", ACCEPT).json(&initialize).send().await?;
    let session = response
        .headers()
        .get("mcp-session-id")
        .ok_or("the server opened no session")?
        .to_str()?
        .to_owned();
    let version = "2025-11-25";
    response.bytes().await?;
    let initialized = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
    http.post(url)
        .header("accept", ACCEPT)
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", version)
        .json(&initialized)
        .send()
        .await?
        .bytes()
        .await?;
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
        let result = http
            .post(url)
            .header("accept", ACCEPT)
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", version)
            .json(&request)
            .send()
            .await;
        let ok = match result {
            Ok(response) if response.status().is_success() => {
                response.text().await.is_ok_and(|body| body.contains("\"messages\""))
            }
            _ => false,
        };
        if ok {
            latencies.push(sent.elapsed());
        } else {
            errors += 1;
        }
    }
    let _ = http.delete(url).header("mcp-session-id", &session).send().await;
    Ok((latencies, errors))
}
