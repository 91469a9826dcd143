//! Where the long-running commands (`mcp`, `serve`) log: standard error, every known secret
//! hidden, as text for a person or as one JSON object a line for a log collector.

use tracing::level_filters::LevelFilter;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

use crate::cli::{LogFormat, LogLevel};

/// Logs at `level` and above to standard error, in `format`. The MCP library's own messages
/// (sessions opened and closed, each error answered) show from `debug` on, and its errors
/// from `error`.
pub(crate) fn init(level: LogLevel, format: LogFormat) {
    let (ours, library) = match level {
        LogLevel::Error => (LevelFilter::ERROR, LevelFilter::ERROR),
        LogLevel::Warn => (LevelFilter::WARN, LevelFilter::ERROR),
        LogLevel::Info => (LevelFilter::INFO, LevelFilter::ERROR),
        LogLevel::Debug => (LevelFilter::DEBUG, LevelFilter::INFO),
        LogLevel::Trace => (LevelFilter::TRACE, LevelFilter::TRACE),
    };
    let filter =
        tracing_subscriber::filter::Targets::new().with_target("rmcp", library).with_default(ours);
    let registry = tracing_subscriber::registry().with(filter);
    let _ = match format {
        LogFormat::Text => registry
            .with(
                tracing_subscriber::fmt::layer()
                    .with_writer(crate::secrets::RedactedStderrMaker)
                    .with_ansi(crate::io::stderr_is_terminal())
                    .with_target(false),
            )
            .try_init(),
        LogFormat::Json => registry
            .with(
                tracing_subscriber::fmt::layer()
                    .json()
                    .flatten_event(true)
                    .with_current_span(true)
                    .with_span_list(false)
                    .with_writer(crate::secrets::RedactedStderrMaker),
            )
            .try_init(),
    };
}
