//! A mock of the OpenAI Batch API on 127.0.0.1, written from its published reference (see
//! `docs/design/provider-batch-apis.md`): files uploaded as multipart, batches created from a
//! JSON Lines file, polled through `validating`, `in_progress` and `finalizing` to
//! `completed`, cancelled, and their output and error files downloaded. Each request line is
//! answered as Chat Completions would answer it; a line whose prompt contains `FAIL` gets a 400
//! in the error file, and an input line that is not a request fails the whole batch at
//! validation, as the service does.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::extract::{Multipart, Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

/// The mock's state: files by id, batches by id, and how many polls a batch takes per stage.
#[derive(Debug, Default)]
struct Store {
    files: HashMap<String, Vec<u8>>,
    batches: HashMap<String, Batch>,
    next: u64,
    polls_per_stage: u32,
    /// Requests received, by path (for tests to see what was sent).
    seen: Vec<String>,
}

#[derive(Debug, Clone)]
struct Batch {
    object: Value,
    /// Polls left before the next stage.
    polls_left: u32,
}

/// A running mock of the Batch API.
#[derive(Debug, Clone)]
pub struct BatchMock {
    pub url: String,
    store: Arc<Mutex<Store>>,
}

impl BatchMock {
    /// Starts the mock; each stage of a batch lasts `polls_per_stage` polls.
    pub async fn start(polls_per_stage: u32) -> BatchMock {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let store = Arc::new(Mutex::new(Store { polls_per_stage, ..Store::default() }));
        let app = axum::Router::new()
            .route("/v1/files", post(upload))
            .route("/v1/files/{id}/content", get(content))
            .route("/v1/batches", post(create))
            .route("/v1/batches/{id}", get(poll))
            .route("/v1/batches/{id}/cancel", post(cancel))
            .with_state(Arc::clone(&store));
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        BatchMock { url, store }
    }

    /// The paths requested so far, in order.
    pub fn seen(&self) -> Vec<String> {
        self.store.lock().unwrap().seen.clone()
    }
}

type Shared = State<Arc<Mutex<Store>>>;

fn error(status: StatusCode, message: &str) -> Response {
    let body = json!({"error": {"message": message, "type": "invalid_request_error"}});
    (status, Json(body)).into_response()
}

async fn upload(State(store): Shared, mut form: Multipart) -> Response {
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
    store.seen.push("POST /v1/files".into());
    store.next += 1;
    let id = format!("file-{}", store.next);
    let size = bytes.len();
    store.files.insert(id.clone(), bytes.to_vec());
    Json(json!({"id": id, "object": "file", "bytes": size, "created_at": 1_700_000_000,
                "filename": filename, "purpose": "batch"}))
    .into_response()
}

async fn content(State(store): Shared, Path(id): Path<String>) -> Response {
    let mut store = store.lock().unwrap();
    store.seen.push(format!("GET /v1/files/{id}/content"));
    match store.files.get(&id) {
        Some(bytes) => bytes.clone().into_response(),
        None => error(StatusCode::NOT_FOUND, "no such file"),
    }
}

async fn create(State(store): Shared, Json(body): Json<Value>) -> Response {
    let mut store = store.lock().unwrap();
    store.seen.push("POST /v1/batches".into());
    let input = body["input_file_id"].as_str().unwrap_or_default().to_owned();
    if !store.files.contains_key(&input) {
        return error(StatusCode::BAD_REQUEST, "input_file_id is not a file");
    }
    if body["endpoint"] != "/v1/chat/completions" || body["completion_window"] != "24h" {
        return error(StatusCode::BAD_REQUEST, "endpoint and completion_window are required");
    }
    store.next += 1;
    let id = format!("batch_{}", store.next);
    let object = json!({
        "id": id, "object": "batch", "endpoint": body["endpoint"], "input_file_id": input,
        "completion_window": "24h", "status": "validating", "output_file_id": null,
        "error_file_id": null, "errors": null, "created_at": 1_700_000_000,
        "request_counts": {"total": 0, "completed": 0, "failed": 0}, "metadata": body["metadata"],
    });
    let polls_left = store.polls_per_stage;
    store.batches.insert(id, Batch { object: object.clone(), polls_left });
    Json(object).into_response()
}

async fn poll(State(store): Shared, Path(id): Path<String>) -> Response {
    let mut store = store.lock().unwrap();
    store.seen.push(format!("GET /v1/batches/{id}"));
    let Some(mut batch) = store.batches.get(&id).cloned() else {
        return error(StatusCode::NOT_FOUND, "no such batch");
    };
    if batch.polls_left > 0 {
        batch.polls_left -= 1;
    } else {
        let next = match batch.object["status"].as_str() {
            Some("validating") => "in_progress",
            Some("in_progress") => "finalizing",
            Some("finalizing") => "completed",
            Some("cancelling") => "cancelled",
            _ => "",
        };
        if next == "in_progress" {
            let input = batch.object["input_file_id"].as_str().unwrap_or_default();
            let lines = store.files.get(input).cloned().unwrap_or_default();
            match answer_all(&lines) {
                Ok((outputs, errors, counts)) => {
                    batch.object["request_counts"] = counts;
                    for (key, lines) in [("output_file_id", outputs), ("error_file_id", errors)] {
                        if !lines.is_empty() {
                            store.next += 1;
                            let file = format!("file-{}", store.next);
                            store.files.insert(file.clone(), lines.into_bytes());
                            batch.object[key] = json!(file);
                        }
                    }
                    batch.object["status"] = json!("in_progress");
                }
                Err((line, message)) => {
                    batch.object["status"] = json!("failed");
                    batch.object["errors"] = json!({"object": "list",
                        "data": [{"code": "invalid_request", "message": message, "line": line}]});
                }
            }
        } else if !next.is_empty() {
            batch.object["status"] = json!(next);
        }
        batch.polls_left = store.polls_per_stage;
    }
    store.batches.insert(id, batch.clone());
    Json(batch.object).into_response()
}

async fn cancel(State(store): Shared, Path(id): Path<String>) -> Response {
    let mut store = store.lock().unwrap();
    store.seen.push(format!("POST /v1/batches/{id}/cancel"));
    let Some(batch) = store.batches.get_mut(&id) else {
        return error(StatusCode::NOT_FOUND, "no such batch");
    };
    if matches!(batch.object["status"].as_str(), Some("validating" | "in_progress" | "finalizing"))
    {
        batch.object["status"] = json!("cancelling");
    }
    Json(batch.object.clone()).into_response()
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
        let prompt = body["messages"].to_string();
        let response = if prompt.contains("FAIL") {
            failed += 1;
            json!({"status_code": 400, "request_id": format!("req_{index}"),
                   "body": {"error": {"message": "the prompt asked to fail", "type": "invalid_request_error"}}})
        } else {
            json!({"status_code": 200, "request_id": format!("req_{index}"), "body": {
                "id": format!("chatcmpl-{index}"), "object": "chat.completion", "model": body["model"],
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "A line."}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 1000, "completion_tokens": 500, "total_tokens": 1500}}})
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
