//! Dispatch on the API an endpoint speaks: build its HTTP request, make its decoder.

use crate::anthropic::{self, AnthropicDecoder};
use crate::endpoint::{ApiKind, Endpoint};
use crate::event::Decoder;
use crate::gemini::{self, GeminiDecoder};
use crate::http::HttpRequest;
use crate::openai::{self, OpenAiDecoder};
use crate::request::ChatRequest;

/// The HTTP request for `request` on `endpoint`, and what had to be dropped or changed.
pub fn build_request(endpoint: &Endpoint, request: &ChatRequest) -> (HttpRequest, Vec<String>) {
    let mut warnings = Vec::new();
    let http = match endpoint.api {
        ApiKind::OpenAi => openai::build(endpoint, request, &mut warnings),
        ApiKind::Anthropic => anthropic::build(endpoint, request, &mut warnings),
        ApiKind::Gemini | ApiKind::Vertex | ApiKind::Local => {
            gemini::build(endpoint, request, &mut warnings)
        }
    };
    let prompt: usize = request.messages.iter().map(|m| m.content.chars().count()).sum();
    let tokens = prompt.div_ceil(crate::run::CHARACTERS_PER_TOKEN) as u64
        + request.params.max_tokens.unwrap_or(0);
    let http = HttpRequest { pace: (endpoint.provider.clone(), tokens), ..http };
    (http, warnings)
}

/// A fresh decoder for each attempt of `request` on `endpoint`.
pub fn decoder_factory(
    endpoint: &Endpoint,
    request: &ChatRequest,
) -> Box<dyn Fn() -> Box<dyn Decoder> + Send + Sync> {
    match endpoint.api {
        ApiKind::OpenAi => {
            let display = endpoint.display.clone();
            let wrapped = openai::wraps_answer(endpoint, request);
            Box::new(move || Box::new(OpenAiDecoder::new(&display, wrapped)))
        }
        ApiKind::Anthropic => Box::new(|| Box::new(AnthropicDecoder::new())),
        ApiKind::Gemini | ApiKind::Vertex | ApiKind::Local => {
            Box::new(|| Box::new(GeminiDecoder::new()))
        }
    }
}
