//! The standalone `mock-llm` binary's images API: real PNGs of the asked size, and the faults a
//! prompt asks for.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::io::BufRead as _;
use std::process::{Child, Command, Stdio};

use base64::Engine as _;
use serde_json::{Value, json};

/// The running binary, killed when dropped.
struct Server(Child, String);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start() -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mock-llm"))
        .arg("127.0.0.1:0")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    Server(child, line.trim().to_owned())
}

async fn ask(server: &Server, body: Value) -> (u16, Value) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let response = reqwest::Client::new()
        .post(format!("{}/v1/images/generations", server.1))
        .json(&body)
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

#[tokio::test]
async fn the_images_api_answers_pngs_of_the_asked_size_and_faults_on_demand() {
    let server = start();
    let (status, answer) = ask(
        &server,
        json!({ "model": "gpt-image-1", "prompt": "a cat", "size": "300x200", "n": 2 }),
    )
    .await;
    assert_eq!(status, 200);
    let data = answer["data"].as_array().unwrap();
    assert_eq!(data.len(), 2);
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data[0]["b64_json"].as_str().unwrap())
        .unwrap();
    let mut reader = png::Decoder::new(std::io::Cursor::new(bytes)).read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let frame = reader.next_frame(&mut pixels).unwrap();
    assert_eq!((frame.width, frame.height), (300, 200));
    assert_eq!(answer["usage"]["output_tokens"], 544);

    let (status, _) = ask(&server, json!({ "prompt": "fault:500" })).await;
    assert_eq!(status, 500);
    let (status, _) = ask(&server, json!({ "prompt": "fault:429" })).await;
    assert_eq!(status, 429);
    let (_, answer) = ask(&server, json!({ "prompt": "fault:link" })).await;
    assert!(answer["data"][0]["url"].is_string() && answer["data"][0].get("b64_json").is_none());
    let (_, answer) = ask(&server, json!({ "prompt": "fault:garbage" })).await;
    assert_eq!(
        answer["data"][0]["b64_json"],
        base64::engine::general_purpose::STANDARD.encode(b"not a picture")
    );
}
