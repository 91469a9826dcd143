//! Where the long-running commands (`mcp`, `serve`) log: standard error, every known secret
//! hidden, as text for a person or as one JSON object a line for a log collector; and, when
//! traces are exported ([`crate::telemetry`]), llmtool's spans at `info` to OTLP, whatever the
//! log level.

use tracing::level_filters::LevelFilter;
use tracing_subscriber::Layer as _;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

use crate::cli::{LogFormat, LogLevel};
use crate::telemetry::Telemetry;

/// Logs at `level` and above to standard error, in `format`, and exports spans to
/// `telemetry`. The MCP library's own messages (sessions opened and closed, each error
/// answered) show from `debug` on, and its errors from `error`.
pub(crate) fn init(level: LogLevel, format: LogFormat, telemetry: Option<&Telemetry>) {
    let (ours, library) = match level {
        LogLevel::Error => (LevelFilter::ERROR, LevelFilter::ERROR),
        LogLevel::Warn => (LevelFilter::WARN, LevelFilter::ERROR),
        LogLevel::Info => (LevelFilter::INFO, LevelFilter::ERROR),
        LogLevel::Debug => (LevelFilter::DEBUG, LevelFilter::INFO),
        LogLevel::Trace => (LevelFilter::TRACE, LevelFilter::TRACE),
    };
    let logged = Targets::new()
        .with_target("rmcp", library)
        // The WebAssembly host's tracing carries the arguments of a smart tool's calls: its
        // standard output and error (prompts before data-loss prevention, results). None of
        // it is logged, at any level; the runtime's own errors are.
        .with_target("wasmtime", LevelFilter::WARN)
        .with_target("wasmtime_wasi", LevelFilter::OFF)
        .with_target("wasmtime_wasi_io", LevelFilter::OFF)
        .with_target("wiggle", LevelFilter::OFF)
        .with_default(ours);
    let registry = tracing_subscriber::registry().with(traces(telemetry));
    let _ = match format {
        LogFormat::Text => registry
            .with(
                tracing_subscriber::fmt::layer()
                    .with_writer(crate::secrets::RedactedStderrMaker)
                    .with_ansi(crate::io::stderr_is_terminal())
                    .with_target(false)
                    .with_filter(logged),
            )
            .try_init(),
        LogFormat::Json => registry
            .with(
                tracing_subscriber::fmt::layer()
                    .json()
                    .flatten_event(true)
                    .with_current_span(true)
                    .with_span_list(false)
                    .with_writer(crate::secrets::RedactedStderrMaker)
                    .with_filter(logged),
            )
            .try_init(),
    };
}

/// Only the traces, for the commands that log nothing else (`run`, `batch`, `test`).
pub(crate) fn init_traces(telemetry: &Telemetry) {
    let _ = tracing_subscriber::registry().with(traces(Some(telemetry))).try_init();
}

/// The layer that exports llmtool's spans (at `info`, none of its libraries') to `telemetry`.
fn traces<S>(telemetry: Option<&Telemetry>) -> Option<impl tracing_subscriber::Layer<S>>
where
    S: tracing::Subscriber + for<'span> tracing_subscriber::registry::LookupSpan<'span>,
{
    let telemetry = telemetry?;
    // The server's request spans are made with OpenTelemetry's tracer itself (llmtool-server's
    // `observe`): through here, each would be made twice; and the line logged for each request
    // says what its span already does.
    let ours = Targets::new()
        .with_target("llmtool", LevelFilter::INFO)
        .with_target("llmtool_server::observe", LevelFilter::OFF)
        .with_target("llmtool::http", LevelFilter::OFF);
    // Only the attributes the spans set: no source location, thread, target, or busy and idle
    // times (per-span clock reads and strings that cost a busy server a fifth of its
    // throughput, docs/benchmarks.md), and no OpenTelemetry context made current on every
    // poll (propagation reads the span's own).
    let layer = tracing_opentelemetry::layer()
        .with_tracer(telemetry.tracer())
        .with_location(false)
        .with_threads(false)
        .with_target(false)
        .with_tracked_inactivity(false)
        .with_context_activation(false);
    Some(layer.with_filter(ours))
}
