//! Gemini batch mode: the requests sent inline with the batch (one call of under 20 MB), the
//! batch's operation polled until it is done, then its answers read from the operation (or
//! from the responses file it names).

use serde_json::{Value, json};

use super::wire::{Body, Call};
use super::{Answer, BatchClient, BatchStatus, ItemResult, RESULTS_LIMIT, Results, count};
use crate::error::ProviderError;

pub(super) fn encode(custom_id: &str, body: &Value) -> String {
    json!({ "request": body, "metadata": { "key": custom_id } }).to_string()
}

pub(super) async fn submit(
    client: &BatchClient<'_>,
    encoded: &[String],
    model: &str,
    label: &str,
) -> Result<String, ProviderError> {
    let body = format!(
        "{{\"batch\":{{\"displayName\":{},\"inputConfig\":{{\"requests\":{{\"requests\":[{}]}}}}}}}}",
        json!(label),
        encoded.join(",")
    );
    let url = client.endpoint.url(&format!("v1beta/models/{model}:batchGenerateContent"));
    let created =
        client.send_json(&Call::post(url, &client.headers(), Body::Encoded(body), false)).await?;
    created["name"].as_str().map(str::to_owned).ok_or_else(|| {
        ProviderError::MalformedStream(format!(
            "{} answered without the batch's name",
            client.endpoint.display
        ))
    })
}

/// A batch's name is `batches/ID`; its id alone is taken too.
fn name_of(id: &str) -> String {
    if id.starts_with("batches/") { id.to_owned() } else { format!("batches/{id}") }
}

pub(super) async fn status(
    client: &BatchClient<'_>,
    id: &str,
) -> Result<BatchStatus, ProviderError> {
    let url = client.endpoint.url(&format!("v1beta/{}", name_of(id)));
    let operation = client.send_json(&Call::get(url, &client.headers(), RESULTS_LIMIT)).await?;
    Ok(parse_status(&name_of(id), &operation))
}

/// A batch's Operation as a [`BatchStatus`].
pub(super) fn parse_status(id: &str, operation: &Value) -> BatchStatus {
    let metadata = &operation["metadata"];
    let state = metadata["state"].as_str().unwrap_or("BATCH_STATE_UNSPECIFIED").to_owned();
    // The SDKs say JOB_STATE_ for the same states; both are taken.
    let plain = state.trim_start_matches("BATCH_STATE_").trim_start_matches("JOB_STATE_");
    let ended = operation["done"].as_bool() == Some(true)
        || matches!(plain, "SUCCEEDED" | "FAILED" | "CANCELLED" | "EXPIRED");
    let batch_stats = &metadata["batchStats"];
    let output =
        if metadata["output"].is_object() { &metadata["output"] } else { &operation["response"] };
    let inline = &output["inlinedResponses"];
    let results = if let Some(items) = inline["inlinedResponses"].as_array().or(inline.as_array()) {
        Results::Inline(items.clone())
    } else if let Some(file) = output["responsesFile"].as_str() {
        Results::File(file.to_owned())
    } else {
        Results::None
    };
    BatchStatus {
        id: id.to_owned(),
        ended,
        total: count(&batch_stats["requestCount"]),
        succeeded: count(&batch_stats["successfulRequestCount"]),
        failed: count(&batch_stats["failedRequestCount"]),
        error: operation["error"]["message"].as_str().map(str::to_owned),
        results,
        status: state,
    }
}

pub(super) async fn download(
    client: &BatchClient<'_>,
    file: &str,
) -> Result<String, ProviderError> {
    let url = client.endpoint.url(&format!("v1beta/{file}:download?alt=media"));
    client.send(&Call::get(url, &client.headers(), RESULTS_LIMIT)).await
}

/// The answers, inline or a file's lines: each `{"metadata": {"key": ...}, "response": ...}`
/// (inline) or `{"key": ..., "response": ...}` (file), or an `error` in place of the
/// response.
pub(super) fn results<'v>(
    items: impl Iterator<Item = &'v Value>,
    decode: &dyn Fn(&Value) -> Result<Answer, String>,
) -> Vec<ItemResult> {
    let mut results = Vec::new();
    for item in items {
        let Some(key) = item["metadata"]["key"].as_str().or(item["key"].as_str()) else {
            continue;
        };
        let answer = if item["response"].is_object() {
            decode(&item["response"])
        } else {
            let error = &item["error"];
            let code = error["code"].as_i64().unwrap_or(0);
            Err(format!("{code}: {}", error["message"].as_str().unwrap_or("no answer")))
        };
        results.push(ItemResult { custom_id: key.to_owned(), answer });
    }
    results
}

pub(super) async fn cancel(client: &BatchClient<'_>, id: &str) -> Result<(), ProviderError> {
    let url = client.endpoint.url(&format!("v1beta/{}:cancel", name_of(id)));
    client.send(&Call::post(url, &client.headers(), Body::Empty, true)).await.map(|_| ())
}
