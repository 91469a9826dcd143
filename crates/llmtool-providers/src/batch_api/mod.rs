//! The providers' own batch engines: many requests sent as one batch, answered within a day
//! at half the price (OpenAI Batch API, Anthropic Message Batches, Gemini batch mode). A
//! [`BatchClient`] submits encoded requests, follows a batch, reads its answers back by each
//! request's id and cancels it. Wire formats: `docs/design/provider-batch-apis.md`.

mod anthropic;
mod gemini;
mod openai;
mod wire;

pub use wire::poll_delay;

use serde::Serialize;

use crate::client::{build_request, decoder_factory};
use crate::endpoint::{ApiKind, Endpoint};
use crate::error::ProviderError;
use crate::event::{Decoder, StreamEvent, Usage};
use crate::http::Header;
use crate::request::ChatRequest;
use crate::transport::Transport;

/// Where a batch is, as its provider reports it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BatchStatus {
    pub id: String,
    /// The provider's own word for it (`in_progress`, `ended`, `BATCH_STATE_RUNNING`, ...).
    pub status: String,
    /// Whether it is over (its answers, if any, can be read).
    pub ended: bool,
    pub total: Option<u64>,
    pub succeeded: Option<u64>,
    /// Requests that errored, expired or were cancelled (as far as the provider counts yet).
    pub failed: Option<u64>,
    /// Why the whole batch failed, when it did.
    pub error: Option<String>,
    /// Where its answers are.
    #[serde(skip)]
    results: Results,
}

/// Where a batch's answers are, in each provider's terms.
#[derive(Debug, Clone, Default, PartialEq)]
enum Results {
    #[default]
    None,
    /// OpenAI: the output and error files.
    Files { output: Option<String>, errors: Option<String> },
    /// Anthropic: the results' URL.
    Url(String),
    /// Gemini: the answers in the batch itself.
    Inline(Vec<serde_json::Value>),
    /// Gemini: a responses file.
    File(String),
}

/// The answer to one request of a batch.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemResult {
    pub custom_id: String,
    pub answer: Result<Answer, String>,
}

/// A model's answer, decoded as a request's own answer would be.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Answer {
    pub text: String,
    pub usage: Usage,
    pub finish_reason: Option<String>,
}

/// The most bytes of a batch's answers that are read.
pub const RESULTS_LIMIT: u64 = 1024 * 1024 * 1024;

/// Talks to one provider's batch engine.
#[derive(Debug, Clone, Copy)]
pub struct BatchClient<'a> {
    transport: &'a Transport,
    endpoint: &'a Endpoint,
}

impl<'a> BatchClient<'a> {
    /// A client of `endpoint`'s batch engine: OpenAI's protocol, Anthropic's or Gemini's (not
    /// Vertex AI's, whose batches read from and write to Cloud Storage, nor the local model).
    pub fn new(transport: &'a Transport, endpoint: &'a Endpoint) -> Result<Self, ProviderError> {
        match endpoint.api {
            ApiKind::OpenAi | ApiKind::Anthropic | ApiKind::Gemini => {
                Ok(BatchClient { transport, endpoint })
            }
            ApiKind::Vertex | ApiKind::Local => Err(ProviderError::Unsupported(format!(
                "{} has no batch engine llmtool can use (OpenAI, Anthropic and Gemini do); run the batch without --via provider-batch",
                endpoint.display
            ))),
        }
    }

    /// The most requests, and bytes of encoded requests, one batch may hold here (a little
    /// under each provider's published limits).
    pub fn limits(&self) -> (usize, usize) {
        match self.endpoint.api {
            ApiKind::Anthropic => (100_000, 200 * 1024 * 1024),
            // Sent inline, in one request of under 20 MB.
            ApiKind::Gemini | ApiKind::Vertex | ApiKind::Local => (50_000, 18 * 1024 * 1024),
            ApiKind::OpenAi => (50_000, 180 * 1024 * 1024),
        }
    }

    /// `request` as one request of a batch, identified by `custom_id` (letters, digits, `_`
    /// and `-`, at most 64: what all three providers accept).
    pub fn encode(&self, custom_id: &str, request: &ChatRequest) -> String {
        let request = ChatRequest { stream: false, ..request.clone() };
        let (http, _) = build_request(self.endpoint, &request);
        match self.endpoint.api {
            ApiKind::Anthropic => anthropic::encode(custom_id, &http.body),
            ApiKind::Gemini | ApiKind::Vertex | ApiKind::Local => {
                gemini::encode(custom_id, &http.body)
            }
            ApiKind::OpenAi => openai::encode(custom_id, &http.body),
        }
    }

    /// Submits the `encoded` requests as one batch named `label`: the batch's id.
    pub async fn submit(
        &self,
        encoded: &[String],
        model: &str,
        label: &str,
    ) -> Result<String, ProviderError> {
        match self.endpoint.api {
            ApiKind::Anthropic => anthropic::submit(self, encoded).await,
            ApiKind::Gemini | ApiKind::Vertex | ApiKind::Local => {
                gemini::submit(self, encoded, model, label).await
            }
            ApiKind::OpenAi => openai::submit(self, encoded, label).await,
        }
    }

    /// Where batch `id` is.
    pub async fn status(&self, id: &str) -> Result<BatchStatus, ProviderError> {
        match self.endpoint.api {
            ApiKind::Anthropic => anthropic::status(self, id).await,
            ApiKind::Gemini | ApiKind::Vertex | ApiKind::Local => gemini::status(self, id).await,
            ApiKind::OpenAi => openai::status(self, id).await,
        }
    }

    /// The answers of an ended batch, decoded as answers to `sample` (any of its requests:
    /// they share the model and the expected output).
    pub async fn results(
        &self,
        status: &BatchStatus,
        sample: &ChatRequest,
    ) -> Result<Vec<ItemResult>, ProviderError> {
        let decoder = decoder_factory(self.endpoint, sample);
        let decode = |body: &serde_json::Value| answer(&mut *decoder(), body);
        match &status.results {
            Results::None => Ok(Vec::new()),
            Results::Files { output, errors } => {
                let mut results = Vec::new();
                for file in [output, errors].into_iter().flatten() {
                    let text = openai::download(self, file).await?;
                    results.extend(openai::results(&text, &decode));
                }
                Ok(results)
            }
            Results::Url(url) => {
                let text = anthropic::download(self, url).await?;
                Ok(anthropic::results(&text, &decode))
            }
            Results::Inline(items) => Ok(gemini::results(items.iter(), &decode)),
            Results::File(file) => {
                let text = gemini::download(self, file).await?;
                let items: Vec<serde_json::Value> =
                    text.lines().filter_map(|line| serde_json::from_str(line).ok()).collect();
                Ok(gemini::results(items.iter(), &decode))
            }
        }
    }

    /// Asks the provider to stop batch `id` (requests already answered stay answered).
    pub async fn cancel(&self, id: &str) -> Result<(), ProviderError> {
        match self.endpoint.api {
            ApiKind::Anthropic => anthropic::cancel(self, id).await,
            ApiKind::Gemini | ApiKind::Vertex | ApiKind::Local => gemini::cancel(self, id).await,
            ApiKind::OpenAi => openai::cancel(self, id).await,
        }
    }

    /// The headers every call carries: the key, and the API version where one is asked for.
    fn headers(&self) -> Vec<Header> {
        let request = ChatRequest {
            model: String::new(),
            messages: Vec::new(),
            params: crate::request::Params::default(),
            constraint: crate::request::Constraint::None,
            stream: false,
            cache: false,
            cache_key: None,
            functions: Vec::new(),
        };
        // The chat request's own headers, so that a batch call is authorised exactly like a
        // request (the content type is set per call).
        let (http, _) = build_request(self.endpoint, &request);
        http.headers.into_iter().filter(|h| h.name != "content-type").collect()
    }

    async fn send(&self, call: &wire::Call) -> Result<String, ProviderError> {
        wire::send(self.transport, &self.endpoint.display, call).await
    }

    async fn send_json(&self, call: &wire::Call) -> Result<serde_json::Value, ProviderError> {
        let text = self.send(call).await?;
        serde_json::from_str(&text).map_err(|e| {
            ProviderError::MalformedStream(format!(
                "{} sent a batch reply that is not JSON: {e}",
                self.endpoint.display
            ))
        })
    }
}

/// A request's answer body, decoded as its own answer would be.
fn answer(decoder: &mut dyn Decoder, body: &serde_json::Value) -> Result<Answer, String> {
    let events = decoder.response(&body.to_string()).map_err(|e| e.to_string())?;
    let mut answer = Answer::default();
    for event in events {
        match event {
            StreamEvent::Text(text) => answer.text.push_str(&text),
            StreamEvent::Finish(reason) => answer.finish_reason = Some(reason),
            StreamEvent::Usage(usage) => answer.usage.merge(usage),
            // A batch offers no functions, so its answers call none.
            StreamEvent::Call(_) => {}
        }
    }
    Ok(answer)
}

/// A count that may come as a number or, for 64-bit counts in Google's JSON, a string.
fn count(value: &serde_json::Value) -> Option<u64> {
    value.as_u64().or_else(|| value.as_str().and_then(|s| s.parse().ok()))
}
