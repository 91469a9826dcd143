//! The OpenAI Batch API of the mock: files uploaded as multipart, batches created from a JSON
//! Lines file, polled through `validating`, `in_progress` and `finalizing` to `completed`,
//! cancelled, and their output and error files downloaded. An input line that is not a
//! request fails the whole batch at validation, as the service does.

use axum::Json;
use axum::extract::{Multipart, Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::{Shared, Store, USAGE, answer, error, text_of};

pub(super) async fn upload(State(store): Shared, mut form: Multipart) -> Response {
    let (mut purpose, mut bytes, mut filename) = (None, None, String::new());
    while let Ok(Some(field)) = form.next_field().await {
        match field.name() {
            Some("purpose") => purpose = field.text().await.ok(),
            Some("file") => {
                filename = field.file_name().unwrap_or("upload.jsonl").to_owned();
                bytes = field.bytes().await.ok();
            }
            _ => {}
        }
    }
    let (Some(purpose), Some(bytes)) = (purpose, bytes) else {
        return error(StatusCode::BAD_REQUEST, "purpose and file are required");
    };
    if purpose != "batch" {
        return error(StatusCode::BAD_REQUEST, "purpose must be batch here");
    }
    let mut store = store.lock().unwrap();
    let id = store.id("file-");
    let size = bytes.len();
    store.files.insert(id.clone(), bytes.to_vec());
    Json(json!({"id": id, "object": "file", "bytes": size, "created_at": 1_700_000_000,
                "filename": filename, "purpose": "batch"}))
    .into_response()
}

pub(super) async fn content(State(store): Shared, Path(id): Path<String>) -> Response {
    match store.lock().unwrap().files.get(&id) {
        Some(bytes) => bytes.clone().into_response(),
        None => error(StatusCode::NOT_FOUND, "no such file"),
    }
}

pub(super) async fn create(State(store): Shared, Json(body): Json<Value>) -> Response {
    let mut store = store.lock().unwrap();
    let input = body["input_file_id"].as_str().unwrap_or_default().to_owned();
    if !store.files.contains_key(&input) {
        return error(StatusCode::BAD_REQUEST, "input_file_id is not a file");
    }
    if body["endpoint"] != "/v1/chat/completions" || body["completion_window"] != "24h" {
        return error(StatusCode::BAD_REQUEST, "endpoint and completion_window are required");
    }
    let id = store.id("batch_");
    let object = json!({
        "id": id, "object": "batch", "endpoint": body["endpoint"], "input_file_id": input,
        "completion_window": "24h", "status": "validating", "output_file_id": null,
        "error_file_id": null, "errors": null, "created_at": 1_700_000_000,
        "request_counts": {"total": 0, "completed": 0, "failed": 0}, "metadata": body["metadata"],
    });
    let polls = store.polls_per_stage;
    store.batches.insert(id, (object.clone(), polls));
    Json(object).into_response()
}

pub(super) async fn poll(State(store): Shared, Path(id): Path<String>) -> Response {
    let mut store = store.lock().unwrap();
    if !store.batches.contains_key(&id) {
        return error(StatusCode::NOT_FOUND, "no such batch");
    }
    if store.advance(&id) {
        next_stage(&mut store, &id);
    }
    Json(store.batches[&id].0.clone()).into_response()
}

/// Moves batch `id` on: validation runs every request at once (the files are ready when it
/// is `in_progress`); a cancelled or expired batch keeps no answers.
fn next_stage(store: &mut Store, id: &str) {
    let mut object = store.batches[id].0.clone();
    let next = match object["status"].as_str() {
        Some("validating") => "in_progress",
        Some("in_progress") if store.expire => "expired",
        Some("in_progress") => "finalizing",
        Some("finalizing") => "completed",
        Some("cancelling") => "cancelled",
        _ => return,
    };
    object["status"] = json!(next);
    if next == "in_progress" {
        let input = object["input_file_id"].as_str().unwrap_or_default();
        let lines = store.files.get(input).cloned().unwrap_or_default();
        match answer_all(&lines) {
            Ok((outputs, errors, counts)) => {
                object["request_counts"] = counts;
                for (key, lines) in [("output_file_id", outputs), ("error_file_id", errors)] {
                    if !lines.is_empty() {
                        let file = store.id("file-");
                        store.files.insert(file.clone(), lines.into_bytes());
                        object[key] = json!(file);
                    }
                }
            }
            Err((line, message)) => {
                object["status"] = json!("failed");
                object["errors"] = json!({"object": "list",
                    "data": [{"code": "invalid_request", "message": message, "line": line}]});
            }
        }
    }
    if matches!(next, "expired" | "cancelled") {
        let total = object["request_counts"]["total"].clone();
        object["output_file_id"] = Value::Null;
        object["error_file_id"] = Value::Null;
        object["request_counts"] = json!({"total": total, "completed": 0, "failed": total});
    }
    if let Some(batch) = store.batches.get_mut(id) {
        batch.0 = object;
    }
}

pub(super) async fn cancel(State(store): Shared, Path(id): Path<String>) -> Response {
    let mut store = store.lock().unwrap();
    let Some((object, _)) = store.batches.get_mut(&id) else {
        return error(StatusCode::NOT_FOUND, "no such batch");
    };
    if matches!(object["status"].as_str(), Some("validating" | "in_progress" | "finalizing")) {
        object["status"] = json!("cancelling");
    }
    Json(object.clone()).into_response()
}

/// The output and error files of `input`'s requests, and their counts; or the line (from 1)
/// that is not a request, and why.
fn answer_all(input: &[u8]) -> Result<(String, String, Value), (usize, String)> {
    let (mut outputs, mut errors, mut total, mut failed) = (String::new(), String::new(), 0, 0);
    let text = String::from_utf8_lossy(input);
    for (index, line) in text.lines().enumerate() {
        let request: Value = serde_json::from_str(line)
            .map_err(|e| (index + 1, format!("line {} is not JSON: {e}", index + 1)))?;
        let custom_id = request["custom_id"].as_str().unwrap_or_default();
        let body = &request["body"];
        if custom_id.is_empty()
            || request["method"] != "POST"
            || request["url"] != "/v1/chat/completions"
            || !body["model"].is_string()
            || !body["messages"].is_array()
        {
            return Err((index + 1, "a request needs custom_id, method, url and body".into()));
        }
        total += 1;
        let response = match answer(&text_of(&body["messages"])) {
            Err(message) => {
                failed += 1;
                json!({"status_code": 400, "request_id": format!("req_{index}"),
                       "body": {"error": {"message": message, "type": "invalid_request_error"}}})
            }
            Ok(text) => {
                // Structured output of one of a set: the answer comes wrapped, as OpenAI's does.
                let wrapped = body["response_format"]["json_schema"]["name"] == "answer";
                let text = if wrapped { json!({"answer": text}).to_string() } else { text };
                json!({"status_code": 200, "request_id": format!("req_{index}"), "body": {
                "id": format!("chatcmpl-{index}"), "object": "chat.completion", "created": 1_700_000_000,
                "model": body["model"],
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": USAGE.0, "completion_tokens": USAGE.1,
                          "total_tokens": USAGE.0 + USAGE.1}}})
            }
        };
        let target = if response["status_code"] == 200 { &mut outputs } else { &mut errors };
        let record = json!({"id": format!("batch_req_{index}"), "custom_id": custom_id,
                            "response": response, "error": null});
        target.push_str(&record.to_string());
        target.push('\n');
    }
    let counts = json!({"total": total, "completed": total - failed, "failed": failed});
    Ok((outputs, errors, counts))
}
