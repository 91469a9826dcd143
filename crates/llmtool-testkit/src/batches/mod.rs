//! Mocks of the providers' batch engines on 127.0.0.1, written from their published
//! references (see `docs/design/provider-batch-apis.md`): the OpenAI Batch API, Anthropic
//! Message Batches and Gemini batch mode, all three served by one [`BatchMock`]. A batch moves
//! through its stages one stage every `polls_per_stage` polls, as the services move them over
//! hours.
//!
//! Every request is answered by one rule, whatever the API: a prompt containing `FAIL` gets an
//! error for that request alone; a prompt with `<<text>>` in it is answered `text`; any other
//! prompt is answered `A line.`. Each answer reports 1,000 input and 500 output tokens. For
//! fault injection, [`BatchMock::fail_next`] makes the next calls fail with a 500, and
//! [`BatchMock::expire`] makes batches end before answering, as a batch past its window does.

mod anthropic;
mod gemini;
mod openai;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

/// The mock's state, shared by the three APIs.
#[derive(Debug, Default)]
struct Store {
    /// Uploaded and result files by id.
    files: HashMap<String, Vec<u8>>,
    /// Batches by id: the provider's object, and polls left before its next stage.
    batches: HashMap<String, (Value, u32)>,
    next: u64,
    polls_per_stage: u32,
    /// Calls still to fail with a 500, and what their `METHOD path` contains (any, if empty).
    faults: u32,
    faulty: String,
    /// Batches end without answering (expired).
    expire: bool,
    /// Calls received (`METHOD path`), in order.
    seen: Vec<String>,
}

impl Store {
    fn id(&mut self, prefix: &str) -> String {
        self.next += 1;
        format!("{prefix}{}", self.next)
    }

    /// Counts a poll of `id`: whether the batch moves to its next stage now.
    fn advance(&mut self, id: &str) -> bool {
        let polls = self.polls_per_stage;
        match self.batches.get_mut(id) {
            Some((_, 0)) => {
                if let Some(batch) = self.batches.get_mut(id) {
                    batch.1 = polls;
                }
                true
            }
            Some((_, left)) => {
                *left -= 1;
                false
            }
            None => false,
        }
    }
}

type Shared = State<Arc<Mutex<Store>>>;

/// A running mock of the three batch engines.
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
            .route("/v1/files", post(openai::upload))
            .route("/v1/files/{id}/content", get(openai::content))
            .route("/v1/batches", post(openai::create))
            .route("/v1/batches/{id}", get(openai::poll))
            .route("/v1/batches/{id}/cancel", post(openai::cancel))
            .route("/v1/messages/batches", post(anthropic::create))
            .route("/v1/messages/batches/{id}", get(anthropic::poll))
            .route("/v1/messages/batches/{id}/results", get(anthropic::results))
            .route("/v1/messages/batches/{id}/cancel", post(anthropic::cancel))
            // Gemini's paths end in `:method`, which a route cannot match: one route takes them.
            .route("/v1beta/{*rest}", get(gemini::get).post(gemini::post))
            .layer(axum::middleware::from_fn_with_state(Arc::clone(&store), record))
            .with_state(Arc::clone(&store));
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        BatchMock { url, store }
    }

    /// The calls received so far (`METHOD path`), in order.
    pub fn seen(&self) -> Vec<String> {
        self.store.lock().unwrap().seen.clone()
    }

    /// Makes the next `calls` calls fail with a 500, as a service does now and then.
    pub fn fail_next(&self, calls: u32) {
        self.fail_next_to("", calls);
    }

    /// Makes the next `calls` calls whose `METHOD path` contains `call` fail with a 500.
    pub fn fail_next_to(&self, call: &str, calls: u32) {
        let mut store = self.store.lock().unwrap();
        store.faults = calls;
        call.clone_into(&mut store.faulty);
    }

    /// Makes every batch end (from now on) with no answers: expired, as a batch is when its
    /// window runs out.
    pub fn expire(&self) {
        self.store.lock().unwrap().expire = true;
    }
}

/// Records each call, and fails it with a 500 while faults are due.
async fn record(State(store): Shared, request: Request, next: Next) -> Response {
    {
        let mut store = store.lock().unwrap();
        let call = format!("{} {}", request.method(), request.uri().path());
        let faulty = store.faults > 0 && call.contains(&store.faulty);
        store.seen.push(call);
        if faulty {
            store.faults -= 1;
            return error(StatusCode::INTERNAL_SERVER_ERROR, "an injected fault");
        }
    }
    next.run(request).await
}

fn error(status: StatusCode, message: &str) -> Response {
    let body = json!({"error": {"message": message, "type": "api_error", "code": status.as_u16()}});
    (status, Json(body)).into_response()
}

/// The one rule every request is answered by: its answer, or why it fails.
fn answer(prompt: &str) -> Result<String, String> {
    if prompt.contains("FAIL") {
        return Err("the prompt asked to fail".to_owned());
    }
    let said = prompt.split_once("<<").and_then(|(_, rest)| rest.split_once(">>"));
    Ok(said.map_or_else(|| "A line.".to_owned(), |(text, _)| text.to_owned()))
}

/// The text of a list of messages, whatever shape their content has (a string, or parts
/// with `text`).
fn text_of(messages: &Value) -> String {
    let mut text = String::new();
    for message in messages.as_array().into_iter().flatten() {
        for part in [&message["content"], &message["parts"]] {
            match part {
                Value::String(s) => text.push_str(s),
                Value::Array(parts) => {
                    for part in parts {
                        text.push_str(part["text"].as_str().unwrap_or_default());
                    }
                }
                _ => {}
            }
        }
        text.push('\n');
    }
    text
}

/// Input and output tokens each answer reports.
const USAGE: (u64, u64) = (1000, 500);
