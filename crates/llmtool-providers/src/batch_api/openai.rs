//! The OpenAI Batch API: the requests uploaded as a JSON Lines file, a batch created from it
//! and polled, then its output and error files downloaded. Servers that copy the API take the
//! same calls.

use serde_json::{Value, json};

use super::wire::{Body, Call};
use super::{Answer, BatchClient, BatchStatus, ItemResult, RESULTS_LIMIT, Results, count};
use crate::error::ProviderError;

/// The path every request of a batch names (the batch's endpoint).
const ENDPOINT: &str = "/v1/chat/completions";

pub(super) fn encode(custom_id: &str, body: &Value) -> String {
    json!({ "custom_id": custom_id, "method": "POST", "url": ENDPOINT, "body": body }).to_string()
}

pub(super) async fn submit(
    client: &BatchClient<'_>,
    encoded: &[String],
    label: &str,
) -> Result<String, ProviderError> {
    let headers = client.headers();
    let mut file = encoded.join("\n").into_bytes();
    file.push(b'\n');
    let form = Body::Form {
        fields: vec![("purpose", "batch".to_owned())],
        file_name: format!("{label}.jsonl"),
        file,
    };
    // An upload sent twice is only a spare file; the batch itself is created once.
    let upload = Call::post(client.endpoint.url("files"), &headers, form, true);
    let uploaded = client.send_json(&upload).await?;
    let file_id = id_of(client, &uploaded)?;
    let create = json!({
        "input_file_id": file_id,
        "endpoint": ENDPOINT,
        "completion_window": "24h",
        "metadata": { "llmtool_label": label },
    });
    let created = client
        .send_json(&Call::post(client.endpoint.url("batches"), &headers, Body::Json(create), false))
        .await?;
    id_of(client, &created)
}

fn id_of(client: &BatchClient<'_>, reply: &Value) -> Result<String, ProviderError> {
    reply["id"].as_str().map(str::to_owned).ok_or_else(|| {
        ProviderError::MalformedStream(format!(
            "{} answered without an id",
            client.endpoint.display
        ))
    })
}

pub(super) async fn status(
    client: &BatchClient<'_>,
    id: &str,
) -> Result<BatchStatus, ProviderError> {
    let url = client.endpoint.url(&format!("batches/{id}"));
    let batch =
        client.send_json(&Call::get(url, &client.headers(), super::wire::STATUS_LIMIT)).await?;
    Ok(parse_status(id, &batch))
}

/// A Batch object as a [`BatchStatus`].
pub(super) fn parse_status(id: &str, batch: &Value) -> BatchStatus {
    let status = batch["status"].as_str().unwrap_or("unknown").to_owned();
    let ended = matches!(status.as_str(), "completed" | "failed" | "expired" | "cancelled");
    let counts = &batch["request_counts"];
    let errors: Vec<String> = batch["errors"]["data"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| match e["line"].as_u64() {
            Some(line) => format!("line {line}: {}", e["message"].as_str().unwrap_or("invalid")),
            None => e["message"].as_str().unwrap_or("invalid").to_owned(),
        })
        .collect();
    let file = |key: &str| batch[key].as_str().map(str::to_owned);
    BatchStatus {
        id: id.to_owned(),
        ended,
        total: count(&counts["total"]),
        succeeded: count(&counts["completed"]),
        failed: count(&counts["failed"]),
        error: (!errors.is_empty()).then(|| errors.join("; ")),
        results: Results::Files { output: file("output_file_id"), errors: file("error_file_id") },
        status,
    }
}

pub(super) async fn download(
    client: &BatchClient<'_>,
    file: &str,
) -> Result<String, ProviderError> {
    let url = client.endpoint.url(&format!("files/{file}/content"));
    client.send(&Call::get(url, &client.headers(), RESULTS_LIMIT)).await
}

/// The lines of an output or error file.
pub(super) fn results(
    text: &str,
    decode: &dyn Fn(&Value) -> Result<Answer, String>,
) -> Vec<ItemResult> {
    let mut results = Vec::new();
    for line in text.lines().filter(|line| !line.trim().is_empty()) {
        let Ok(item) = serde_json::from_str::<Value>(line) else { continue };
        let Some(custom_id) = item["custom_id"].as_str() else { continue };
        let response = &item["response"];
        let answer = if response["status_code"].as_u64() == Some(200) {
            decode(&response["body"])
        } else if response.is_object() {
            let status = response["status_code"].as_u64().unwrap_or(0);
            let message = response["body"]["error"]["message"].as_str().unwrap_or("failed");
            Err(format!("the provider answered {status}: {message}"))
        } else {
            let code = item["error"]["code"].as_str().unwrap_or("error");
            let message = item["error"]["message"].as_str().unwrap_or("no answer");
            Err(format!("{code}: {message}"))
        };
        results.push(ItemResult { custom_id: custom_id.to_owned(), answer });
    }
    results
}

pub(super) async fn cancel(client: &BatchClient<'_>, id: &str) -> Result<(), ProviderError> {
    let url = client.endpoint.url(&format!("batches/{id}/cancel"));
    client.send(&Call::post(url, &client.headers(), Body::Empty, true)).await.map(|_| ())
}
