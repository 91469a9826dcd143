//! The Batch API mock as a client of the real API would meet it: a file uploaded, a batch
//! created and polled to its end, its output and error files downloaded; a malformed input
//! fails the batch at validation; a batch is cancelled.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use llmtool_testkit::batches::BatchMock;
use serde_json::{Value, json};

/// A client as llmtool builds one (rustls with ring).
fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

async fn upload(client: &reqwest::Client, mock: &BatchMock, lines: &str) -> String {
    let form = reqwest::multipart::Form::new().text("purpose", "batch").part(
        "file",
        reqwest::multipart::Part::bytes(lines.as_bytes().to_vec()).file_name("in.jsonl"),
    );
    let file: Value = client
        .post(format!("{}/v1/files", mock.url))
        .multipart(form)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    file["id"].as_str().unwrap().to_owned()
}

async fn create(client: &reqwest::Client, mock: &BatchMock, file: &str) -> Value {
    let body = json!({"input_file_id": file, "endpoint": "/v1/chat/completions", "completion_window": "24h"});
    client
        .post(format!("{}/v1/batches", mock.url))
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

async fn poll_to_end(client: &reqwest::Client, mock: &BatchMock, id: &str) -> Value {
    for _ in 0..50 {
        let batch: Value = client
            .get(format!("{}/v1/batches/{id}", mock.url))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if matches!(
            batch["status"].as_str(),
            Some("completed" | "failed" | "cancelled" | "expired")
        ) {
            return batch;
        }
    }
    panic!("the batch never ended");
}

fn line(id: &str, prompt: &str) -> String {
    json!({"custom_id": id, "method": "POST", "url": "/v1/chat/completions",
           "body": {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": prompt}]}})
    .to_string()
}

#[tokio::test]
async fn a_batch_runs_to_its_end_with_outputs_and_errors_by_custom_id() {
    let mock = BatchMock::start(1).await;
    let client = client();
    let lines = [line("a", "hello"), line("b", "please FAIL"), line("c", "again")].join("\n");
    let file = upload(&client, &mock, &lines).await;
    let batch = create(&client, &mock, &file).await;
    assert_eq!(batch["status"], "validating");
    let done = poll_to_end(&client, &mock, batch["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "completed");
    assert_eq!(done["request_counts"], json!({"total": 3, "completed": 2, "failed": 1}));
    let download = |key: &str| {
        let url = format!("{}/v1/files/{}/content", mock.url, done[key].as_str().unwrap());
        let client = client.clone();
        async move { client.get(url).send().await.unwrap().text().await.unwrap() }
    };
    let outputs: Vec<Value> = download("output_file_id")
        .await
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ids: Vec<&str> = outputs.iter().map(|o| o["custom_id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["a", "c"]);
    assert_eq!(outputs[0]["response"]["body"]["usage"]["prompt_tokens"], 1000);
    let errors: Value = serde_json::from_str(download("error_file_id").await.trim()).unwrap();
    assert_eq!(
        (errors["custom_id"].as_str(), errors["response"]["status_code"].as_u64()),
        (Some("b"), Some(400))
    );
}

#[tokio::test]
async fn a_malformed_input_fails_at_validation_and_a_batch_can_be_cancelled() {
    let mock = BatchMock::start(0).await;
    let client = client();
    let file = upload(&client, &mock, &format!("{}\nnot json", line("a", "x"))).await;
    let batch = create(&client, &mock, &file).await;
    let done = poll_to_end(&client, &mock, batch["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "failed");
    assert_eq!(done["errors"]["data"][0]["line"], 2);

    let mock = BatchMock::start(5).await;
    let file = upload(&client, &mock, &line("a", "x")).await;
    let batch = create(&client, &mock, &file).await;
    let id = batch["id"].as_str().unwrap();
    let cancelled: Value = client
        .post(format!("{}/v1/batches/{id}/cancel", mock.url))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(cancelled["status"], "cancelling");
    assert_eq!(poll_to_end(&client, &mock, id).await["status"], "cancelled");
    assert!(mock.seen().contains(&format!("POST /v1/batches/{id}/cancel")));
}
