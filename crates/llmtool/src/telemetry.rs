//! Traces over OTLP, off unless the standard variables name where they go
//! (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`; not with
//! `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`). HTTP/protobuf by default, gRPC with
//! `OTEL_EXPORTER_OTLP_PROTOCOL=grpc` (or `..._TRACES_PROTOCOL`); the exporter reads the
//! endpoint, headers and timeout variables itself, and the resource `OTEL_SERVICE_NAME`
//! (default `llmtool`) and `OTEL_RESOURCE_ATTRIBUTES`. The W3C trace context is taken from
//! requests and passed on to providers.
//!
//! Spans go out in batches from a thread of the SDK's own; gRPC's client runs on a small
//! runtime of its own, so that it outlives any command's. [`Telemetry`] sends what is left
//! when it is dropped, at the command's end.

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, SpanExporter, WithExportConfig as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};

/// The exporter of traces, while a command runs.
pub(crate) struct Telemetry {
    provider: SdkTracerProvider,
    /// gRPC's runtime, when the traces go over gRPC.
    runtime: Option<tokio::runtime::Runtime>,
}

impl Telemetry {
    /// The tracer spans are exported with.
    pub(crate) fn tracer(&self) -> SdkTracer {
        self.provider.tracer("llmtool")
    }
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        if let Err(error) = self.provider.shutdown() {
            eprintln!("llmtool: the last traces were not sent: {error}");
        }
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// Whether the environment asks for traces.
fn wanted() -> bool {
    let set = |name: &str| std::env::var(name).is_ok_and(|value| !value.trim().is_empty());
    let is = |name: &str, value: &str| {
        std::env::var(name).is_ok_and(|given| given.trim().eq_ignore_ascii_case(value))
    };
    (set("OTEL_EXPORTER_OTLP_ENDPOINT") || set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
        && !is("OTEL_SDK_DISABLED", "true")
        && !is("OTEL_TRACES_EXPORTER", "none")
}

/// Whether the traces go over gRPC rather than HTTP/protobuf.
fn over_grpc() -> bool {
    ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"]
        .iter()
        .find_map(|name| std::env::var(name).ok().filter(|value| !value.trim().is_empty()))
        .is_some_and(|value| value.trim().eq_ignore_ascii_case("grpc"))
}

/// Starts exporting traces if the environment asks for them: `None` when it does not, an
/// error when it asks for something that cannot be set up (a malformed endpoint, say).
pub(crate) fn start() -> anyhow::Result<Option<Telemetry>> {
    if !wanted() {
        return Ok(None);
    }
    // The exporters' HTTP clients take TLS from the process's provider.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let (exporter, runtime) = if over_grpc() {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("otlp-grpc")
            .enable_all()
            .build()?;
        let exporter = {
            let _entered = runtime.enter();
            SpanExporter::builder().with_tonic().build()?
        };
        (exporter, Some(runtime))
    } else {
        let exporter =
            SpanExporter::builder().with_http().with_protocol(Protocol::HttpBinary).build()?;
        (exporter, None)
    };
    let mut resource = Resource::builder();
    if std::env::var_os("OTEL_SERVICE_NAME").is_none() {
        resource = resource.with_service_name("llmtool");
    }
    let provider = SdkTracerProvider::builder()
        .with_resource(resource.build())
        .with_batch_exporter(exporter)
        .build();
    // The library server makes its request spans with the global provider (llmtool-server).
    opentelemetry::global::set_tracer_provider(provider.clone());
    opentelemetry::global::set_text_map_propagator(
        opentelemetry_sdk::propagation::TraceContextPropagator::new(),
    );
    Ok(Some(Telemetry { provider, runtime }))
}
