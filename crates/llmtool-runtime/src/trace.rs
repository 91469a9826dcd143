//! The span of a run, as OpenTelemetry's GenAI conventions name a tool's execution:
//! `execute_tool TOOL`, with the system and model it ran on, the tokens it used, and
//! llmtool's own outcome, cost and repairs. Each model call inside it is a `chat` span of its
//! own (llmtool-providers). The values and the prompt are never attributes.

use llmtool_providers::run::{RunReport, RunRequest};
use llmtool_providers::trace::{count, system};
use tracing::field::Empty;

use crate::RunError;
use crate::log::Subject;

/// The span of a run of `request`, for `subject` when there is one.
pub(crate) fn run_span(request: &RunRequest, subject: Option<&Subject>) -> tracing::Span {
    let tool = subject
        .and_then(|subject| subject.tool_name.as_deref().or(subject.tool_path.as_deref()))
        .unwrap_or("tool");
    let endpoint = &request.target.endpoint;
    tracing::info_span!(
        "run",
        otel.name = %format!("execute_tool {tool}"),
        otel.kind = "internal",
        otel.status_code = Empty,
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = %tool,
        gen_ai.system = system(endpoint.api),
        gen_ai.provider.name = %endpoint.provider,
        gen_ai.request.model = %request.target.model,
        gen_ai.response.model = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        llmtool.origin = subject.map_or("", |subject| subject.origin),
        llmtool.tool.path = subject.and_then(|s| s.tool_path.as_deref()).unwrap_or(""),
        llmtool.outcome = Empty,
        llmtool.cost_usd = Empty,
        llmtool.repairs = Empty,
    )
}

/// Records how the run ended on its span.
pub(crate) fn record_run(span: &tracing::Span, result: &Result<RunReport, RunError>) {
    if span.is_disabled() {
        return;
    }
    match result {
        Ok(report) => {
            span.record("gen_ai.response.model", report.model.as_str());
            if let Some(input) = report.usage.input_tokens {
                span.record("gen_ai.usage.input_tokens", count(input));
            }
            if let Some(output) = report.usage.output_tokens {
                span.record("gen_ai.usage.output_tokens", count(output));
            }
            if let Some(cost) = report.cost {
                span.record("llmtool.cost_usd", cost);
            }
            span.record("llmtool.repairs", i64::from(report.repairs));
            let outcome = if report.output.is_some() { "ok" } else { "rejected" };
            span.record("llmtool.outcome", outcome);
        }
        Err(RunError::Provider(llmtool_providers::ProviderError::Cancelled)) => {
            span.record("llmtool.outcome", "cancelled");
        }
        Err(_) => {
            span.record("llmtool.outcome", "failed");
            span.record("otel.status_code", "error");
        }
    }
}
