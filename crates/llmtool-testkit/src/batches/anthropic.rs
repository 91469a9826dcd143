//! Anthropic Message Batches of the mock: requests posted in one body and checked as the
//! service checks them (ids of at most 64 letters, digits, `_` or `-`, unique; a model, a
//! `max_tokens` and messages; no streaming), a batch `in_progress` until it has `ended`, its
//! results read as JSON Lines from its `results_url`, and cancelling.

use std::collections::HashSet;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::{Shared, Store, USAGE, answer, error, text_of};

/// Whether `id` is a custom id the service takes.
fn valid_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Why a batch's requests are refused, as the service words it (`requests.N.field: ...`).
fn check(requests: &[Value]) -> Result<(), String> {
    let mut ids = HashSet::new();
    for (index, request) in requests.iter().enumerate() {
        let id = request["custom_id"].as_str().unwrap_or_default();
        if !valid_id(id) {
            return Err(format!(
                "requests.{index}.custom_id: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
            ));
        }
        if !ids.insert(id) {
            return Err(format!("requests.{index}.custom_id: duplicate custom_id {id}"));
        }
        let params = &request["params"];
        if !params["model"].is_string()
            || params["max_tokens"].as_u64().is_none_or(|n| n < 1)
            || !params["messages"].is_array()
        {
            return Err(format!(
                "requests.{index}.params: model, max_tokens and messages are required"
            ));
        }
        if params["stream"] == true {
            return Err(format!("requests.{index}.params.stream: not allowed in a batch"));
        }
    }
    Ok(())
}

pub(super) async fn create(
    State(store): Shared,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    // A key as `x-api-key`, or (as the newest SDKs send it) as a bearer token.
    let keyed = headers.contains_key("x-api-key") || headers.contains_key("authorization");
    if !headers.contains_key("anthropic-version") || !keyed {
        return error(
            StatusCode::BAD_REQUEST,
            "the anthropic-version header and a key are required",
        );
    }
    let requests = body["requests"].as_array().cloned().unwrap_or_default();
    if requests.is_empty() {
        return error(StatusCode::BAD_REQUEST, "requests: at least one request is required");
    }
    if let Err(message) = check(&requests) {
        return error(StatusCode::BAD_REQUEST, &message);
    }
    let mut store = store.lock().unwrap();
    let id = store.id("msgbatch_");
    let object = json!({
        "id": id, "type": "message_batch", "processing_status": "in_progress",
        "request_counts": {"processing": requests.len(), "succeeded": 0, "errored": 0,
                           "canceled": 0, "expired": 0},
        "ended_at": null, "created_at": "2026-11-23T10:00:00Z", "expires_at": "2026-11-24T10:00:00Z",
        "archived_at": null, "cancel_initiated_at": null, "results_url": null,
    });
    let polls = store.polls_per_stage;
    store.files.insert(id.clone(), serde_json::to_vec(&requests).unwrap());
    store.batches.insert(id, (object.clone(), polls));
    Json(object).into_response()
}

pub(super) async fn poll(
    State(store): Shared,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let mut store = store.lock().unwrap();
    if !store.batches.contains_key(&id) {
        return error(StatusCode::NOT_FOUND, "no such message batch");
    }
    if store.advance(&id) {
        let host = headers.get("host").and_then(|h| h.to_str().ok()).unwrap_or("127.0.0.1");
        end(&mut store, &id, &format!("http://{host}"));
    }
    Json(store.batches[&id].0.clone()).into_response()
}

/// Ends batch `id`: every request answered, or (cancelled, or past its window) none.
fn end(store: &mut Store, id: &str, base: &str) {
    let mut object = store.batches[id].0.clone();
    if object["processing_status"] == "ended" {
        return;
    }
    let requests: Vec<Value> = serde_json::from_slice(&store.files[id]).unwrap_or_default();
    let cancelled = object["processing_status"] == "canceling";
    let mut counts =
        json!({"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0});
    let mut lines = String::new();
    for request in &requests {
        let params = &request["params"];
        let result = if cancelled {
            json!({"type": "canceled"})
        } else if store.expire {
            json!({"type": "expired"})
        } else {
            let prompt =
                text_of(&params["messages"]) + &text_of(&json!([{"content": params["system"]}]));
            match answer(&prompt) {
                Ok(text) => json!({"type": "succeeded", "message": message(params, &text)}),
                Err(reason) => json!({"type": "errored", "error": {"type": "error",
                    "error": {"type": "invalid_request_error", "message": reason}}}),
            }
        };
        let kind = match result["type"].as_str() {
            Some("canceled") => "canceled",
            Some(kind) => kind,
            None => "errored",
        };
        counts[kind] = json!(counts[kind].as_u64().unwrap_or(0) + 1);
        lines.push_str(&json!({"custom_id": request["custom_id"], "result": result}).to_string());
        lines.push('\n');
    }
    object["processing_status"] = json!("ended");
    object["request_counts"] = counts;
    object["ended_at"] = json!("2026-11-23T11:00:00Z");
    object["results_url"] = json!(format!("{base}/v1/messages/batches/{id}/results"));
    store.files.insert(format!("{id}/results"), lines.into_bytes());
    if let Some(batch) = store.batches.get_mut(id) {
        batch.0 = object;
    }
}

/// A Message answering `params` with `text` (in the answer tool when one is forced).
fn message(params: &Value, text: &str) -> Value {
    let content = if params["tool_choice"]["type"] == "tool" {
        json!([{"type": "tool_use", "id": "toolu_1", "name": params["tool_choice"]["name"],
                "input": {"answer": text}}])
    } else {
        json!([{"type": "text", "text": text}])
    };
    json!({"id": "msg_1", "type": "message", "role": "assistant", "model": params["model"],
           "content": content, "stop_reason": "end_turn", "stop_sequence": null,
           "usage": {"input_tokens": USAGE.0, "output_tokens": USAGE.1, "service_tier": "batch"}})
}

pub(super) async fn results(State(store): Shared, Path(id): Path<String>) -> Response {
    match store.lock().unwrap().files.get(&format!("{id}/results")) {
        Some(bytes) => bytes.clone().into_response(),
        None => error(StatusCode::NOT_FOUND, "the batch has not ended"),
    }
}

pub(super) async fn cancel(State(store): Shared, Path(id): Path<String>) -> Response {
    let mut store = store.lock().unwrap();
    let Some((object, _)) = store.batches.get_mut(&id) else {
        return error(StatusCode::NOT_FOUND, "no such message batch");
    };
    if object["processing_status"] == "in_progress" {
        object["processing_status"] = json!("canceling");
        object["cancel_initiated_at"] = json!("2026-11-23T10:30:00Z");
    }
    Json(object.clone()).into_response()
}
