//! A standalone mock of the OpenAI Chat Completions API for benchmarks: every request gets the
//! same streamed answer. Prints its URL, then serves until killed.
//!
//! usage: mock-llm [ADDRESS=127.0.0.1:0] [CHUNKS=20]

use llmtool_testkit::{Mock, Reply};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut args = std::env::args().skip(1);
    let address = args.next().unwrap_or_else(|| "127.0.0.1:0".into());
    let chunks: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(20);
    let mut data: Vec<String> = (0..chunks)
        .map(|i| serde_json::json!({"choices": [{"delta": {"content": format!("token{i} ")}, "finish_reason": null}]}).to_string())
        .collect();
    data.push(r#"{"choices":[{"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":20}}"#.into());
    data.push("[DONE]".into());
    let reply = Reply::sse(&data.iter().map(String::as_str).collect::<Vec<_>>());
    let mock = Mock::repeating(&address, reply).await;
    println!("{}", mock.url);
    std::future::pending::<()>().await;
}
