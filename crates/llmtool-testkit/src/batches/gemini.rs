//! Gemini batch mode of the mock: a batch created with its requests inline, its long-running
//! operation polled from `BATCH_STATE_PENDING` through `BATCH_STATE_RUNNING` to
//! `BATCH_STATE_SUCCEEDED` (its answers inline, in the requests' order, each with its
//! metadata), cancelled, or expired. Counts are int64 strings, as Google's JSON writes them.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::{Shared, Store, USAGE, answer, error, text_of};

/// `POST /v1beta/...`: a batch created (`models/M:batchGenerateContent`) or cancelled
/// (`batches/ID:cancel`).
pub(super) async fn post(
    State(store): Shared,
    headers: HeaderMap,
    Path(rest): Path<String>,
    body: axum::body::Bytes,
) -> Response {
    if !headers.contains_key("x-goog-api-key") {
        return error(StatusCode::UNAUTHORIZED, "API key not valid. Please pass a valid API key.");
    }
    if let Some(model) =
        rest.strip_prefix("models/").and_then(|r| r.strip_suffix(":batchGenerateContent"))
    {
        let Ok(body) = serde_json::from_slice::<Value>(&body) else {
            return error(StatusCode::BAD_REQUEST, "Invalid JSON payload received.");
        };
        return create(&mut store.lock().unwrap(), model, &body);
    }
    if let Some(id) = rest.strip_suffix(":cancel") {
        let mut store = store.lock().unwrap();
        let Some((operation, _)) = store.batches.get_mut(id) else {
            return error(StatusCode::NOT_FOUND, "Requested entity was not found.");
        };
        if operation["done"] != true {
            operation["metadata"]["state"] = json!("BATCH_STATE_CANCELLED");
            operation["done"] = json!(true);
            operation["error"] = json!({"code": 1, "message": "The batch was cancelled."});
        }
        return Json(json!({})).into_response();
    }
    error(StatusCode::NOT_FOUND, "no such method")
}

fn create(store: &mut Store, model: &str, body: &Value) -> Response {
    let batch = &body["batch"];
    let requests =
        batch["inputConfig"]["requests"]["requests"].as_array().cloned().unwrap_or_default();
    if !batch["displayName"].is_string() {
        return error(StatusCode::BAD_REQUEST, "batch.display_name is required");
    }
    if requests.is_empty() || requests.iter().any(|r| !r["request"]["contents"].is_array()) {
        return error(StatusCode::BAD_REQUEST, "batch.input_config: each request needs contents");
    }
    let id = store.id("batches/");
    let count = requests.len().to_string();
    let operation = json!({
        "name": id,
        "metadata": {
            "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch",
            "model": format!("models/{model}"), "displayName": batch["displayName"],
            "state": "BATCH_STATE_PENDING", "createTime": "2026-11-23T10:00:00Z",
            "updateTime": "2026-11-23T10:00:00Z",
            "batchStats": {"requestCount": count, "pendingRequestCount": count},
        },
        "done": false,
    });
    store.files.insert(id.clone(), serde_json::to_vec(&requests).unwrap());
    let polls = store.polls_per_stage;
    store.batches.insert(id, (operation.clone(), polls));
    Json(operation).into_response()
}

/// `GET /v1beta/batches/ID`: the batch's operation, one poll on.
pub(super) async fn get(State(store): Shared, Path(rest): Path<String>) -> Response {
    let mut store = store.lock().unwrap();
    if !store.batches.contains_key(&rest) {
        return error(StatusCode::NOT_FOUND, "Requested entity was not found.");
    }
    if store.advance(&rest) {
        next_stage(&mut store, &rest);
    }
    Json(store.batches[&rest].0.clone()).into_response()
}

fn next_stage(store: &mut Store, id: &str) {
    let mut operation = store.batches[id].0.clone();
    match operation["metadata"]["state"].as_str() {
        Some("BATCH_STATE_PENDING") => {
            operation["metadata"]["state"] = json!("BATCH_STATE_RUNNING");
        }
        Some("BATCH_STATE_RUNNING") if store.expire => {
            operation["metadata"]["state"] = json!("BATCH_STATE_EXPIRED");
            operation["done"] = json!(true);
        }
        Some("BATCH_STATE_RUNNING") => {
            let requests: Vec<Value> = serde_json::from_slice(&store.files[id]).unwrap_or_default();
            let (mut ok, mut failed) = (0, 0);
            let answers: Vec<Value> = requests
                .iter()
                .map(|item| {
                    let request = &item["request"];
                    let prompt = text_of(&request["contents"]);
                    match answer(&prompt) {
                        Ok(text) => {
                            ok += 1;
                            json!({"response": response(&text), "metadata": item["metadata"]})
                        }
                        Err(message) => {
                            failed += 1;
                            json!({"error": {"code": 3, "message": message}, "metadata": item["metadata"]})
                        }
                    }
                })
                .collect();
            let output = json!({"inlinedResponses": {"inlinedResponses": answers}});
            let metadata = &mut operation["metadata"];
            metadata["state"] = json!("BATCH_STATE_SUCCEEDED");
            metadata["endTime"] = json!("2026-11-23T11:00:00Z");
            metadata["batchStats"] = json!({"requestCount": requests.len().to_string(),
                "successfulRequestCount": ok.to_string(), "failedRequestCount": failed.to_string()});
            metadata["output"] = output.clone();
            operation["done"] = json!(true);
            let mut response = output;
            response["@type"] = json!(
                "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatchOutput"
            );
            operation["response"] = response;
        }
        _ => {}
    }
    if let Some(batch) = store.batches.get_mut(id) {
        batch.0 = operation;
    }
}

/// A `GenerateContentResponse` answering `text`.
fn response(text: &str) -> Value {
    json!({
        "candidates": [{"content": {"parts": [{"text": text}], "role": "model"},
                        "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": USAGE.0, "candidatesTokenCount": USAGE.1,
                          "totalTokenCount": USAGE.0 + USAGE.1},
        "modelVersion": "gemini-mock",
    })
}
