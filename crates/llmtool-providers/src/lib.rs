//! Talking to LLM providers: one module per API, a transport with timeouts and retries, and the
//! run loop that renders a tool, sends it and enforces its expected output.

pub mod anthropic;
pub mod backend;
pub mod batch_api;
pub mod client;
pub mod endpoint;
pub mod error;
pub mod event;
pub mod functions;
pub mod gemini;
pub mod http;
pub mod images;
pub mod openai;
pub mod pace;
pub mod presets;
pub mod pricing;
pub mod redact;
pub mod request;
pub mod resolve;
pub mod run;
pub mod trace;
pub mod transport;

pub use endpoint::{ApiKind, Endpoint, Features};
pub use error::{ProviderError, TimeoutKind};
pub use event::{Decoder, StreamEvent, Usage};
pub use http::HttpRequest;
pub use redact::Redactor;
pub use request::{ChatRequest, Constraint, Message, Params, Role};
