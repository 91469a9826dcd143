//! What a model's answer stream is made of, whatever the API.

use serde::Serialize;

/// Token counts, as the provider reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Usage {
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
}

impl Usage {
    /// Combines counts reported in several events (later values win).
    pub fn merge(&mut self, other: Usage) {
        self.input_tokens = other.input_tokens.or(self.input_tokens);
        self.output_tokens = other.output_tokens.or(self.output_tokens);
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEvent {
    /// A piece of the answer's text.
    Text(String),
    /// Why the model stopped (`stop`, `length`, `end_turn`, ...).
    Finish(String),
    Usage(Usage),
}

/// Turns one API's stream (SSE events) or whole response into [`StreamEvent`]s.
pub trait Decoder: Send {
    /// One server-sent event: its `event:` name (empty when none) and its `data:`.
    fn event(&mut self, name: &str, data: &str) -> Result<Vec<StreamEvent>, crate::ProviderError>;

    /// The stream ended; anything buffered is flushed. Errors if the stream ended too early.
    fn finish(&mut self) -> Result<Vec<StreamEvent>, crate::ProviderError>;

    /// A whole (non-streaming) response body.
    fn response(&mut self, body: &str) -> Result<Vec<StreamEvent>, crate::ProviderError>;
}
