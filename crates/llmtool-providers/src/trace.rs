//! The spans of model calls, as OpenTelemetry's GenAI conventions name them: `chat MODEL`, a
//! client span with `gen_ai.operation.name`, `gen_ai.system`, the model asked and answering,
//! the parameters and the tokens; and the W3C `traceparent` of the current span on every
//! request to a provider, so that its traces join ours. Prompts and answers go in a span only
//! when `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true` (the GenAI
//! instrumentations' switch); never otherwise.
//!
//! Without a tracing subscriber that exports, the spans are disabled (nothing is built) and no
//! header is added: the propagator is OpenTelemetry's no-op one until the program sets one.

use std::sync::OnceLock;

use tracing::field::Empty;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

use crate::endpoint::{ApiKind, Endpoint};
use crate::event::Usage;
use crate::request::ChatRequest;

/// The switch that lets prompts and answers into spans.
pub const CAPTURE_CONTENT: &str = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT";

/// Whether the operator let prompts and answers into spans.
pub fn capture_content() -> bool {
    static CAPTURE: OnceLock<bool> = OnceLock::new();
    *CAPTURE.get_or_init(|| {
        std::env::var(CAPTURE_CONTENT).is_ok_and(|value| value.trim().eq_ignore_ascii_case("true"))
    })
}

/// The `gen_ai.system` of an endpoint's protocol.
pub fn system(api: ApiKind) -> &'static str {
    match api {
        ApiKind::OpenAi => "openai",
        ApiKind::Anthropic => "anthropic",
        ApiKind::Gemini => "gcp.gemini",
        ApiKind::Vertex => "gcp.vertex_ai",
        ApiKind::Local => "llmtool.local",
    }
}

/// The span of one call of `request` to `endpoint`.
pub(crate) fn chat_span(endpoint: &Endpoint, request: &ChatRequest) -> tracing::Span {
    let span = tracing::info_span!(
        "chat",
        otel.name = %format!("chat {}", request.model),
        otel.kind = "client",
        otel.status_code = Empty,
        gen_ai.operation.name = "chat",
        gen_ai.system = system(endpoint.api),
        gen_ai.provider.name = %endpoint.provider,
        gen_ai.request.model = %request.model,
        gen_ai.request.temperature = Empty,
        gen_ai.request.max_tokens = Empty,
        gen_ai.response.model = Empty,
        gen_ai.response.finish_reasons = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        gen_ai.input.messages = Empty,
        gen_ai.output.messages = Empty,
    );
    if span.is_disabled() {
        return span;
    }
    if let Some(temperature) = request.params.temperature {
        span.record("gen_ai.request.temperature", temperature);
    }
    if let Some(max_tokens) = request.params.max_tokens {
        span.record("gen_ai.request.max_tokens", count(max_tokens));
    }
    if capture_content() {
        let messages = serde_json::to_string(&request.messages).unwrap_or_default();
        span.record("gen_ai.input.messages", messages.as_str());
    }
    span
}

/// Records what the call gave: the tokens, why it stopped, and the answer when allowed.
pub(crate) fn record_answer(
    span: &tracing::Span,
    model: &str,
    usage: &Usage,
    finish: Option<&str>,
    answer: &str,
) {
    if span.is_disabled() {
        return;
    }
    span.record("gen_ai.response.model", model);
    if let Some(input) = usage.input_tokens {
        span.record("gen_ai.usage.input_tokens", count(input));
    }
    if let Some(output) = usage.output_tokens {
        span.record("gen_ai.usage.output_tokens", count(output));
    }
    if let Some(finish) = finish {
        span.record("gen_ai.response.finish_reasons", finish);
    }
    if capture_content() {
        let message = serde_json::json!([{"role": "assistant", "content": answer}]);
        span.record("gen_ai.output.messages", message.to_string().as_str());
    }
}

/// Marks the span failed, with the error's kind (never its text: it may quote the prompt).
pub(crate) fn record_failure(span: &tracing::Span) {
    span.record("otel.status_code", "error");
}

/// A count as a span attribute (unsigned values would be exported as strings).
pub fn count(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// The W3C trace context of the current span, as headers for an outgoing request (none when
/// no propagator is set, or no span is being traced).
pub(crate) fn trace_headers() -> reqwest::header::HeaderMap {
    let mut headers = reqwest::header::HeaderMap::new();
    let context = tracing::Span::current().context();
    opentelemetry::global::get_text_map_propagator(|propagator| {
        propagator.inject_context(&context, &mut opentelemetry_http::HeaderInjector(&mut headers));
    });
    headers
}
