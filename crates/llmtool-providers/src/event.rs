//! What a model's answer stream is made of, whatever the API.

use serde::Serialize;

/// Token counts, as the provider reports them, in common terms whatever the API:
/// `input_tokens` counts every input token (the cached ones and those written to the cache
/// included), `output_tokens` every output token (reasoning included).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Usage {
    pub input_tokens: Option<u64>,
    pub cached_input_tokens: Option<u64>,
    pub cache_write_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub reasoning_tokens: Option<u64>,
}

impl Usage {
    /// Combines counts reported in several events (later values win).
    pub fn merge(&mut self, other: Usage) {
        self.input_tokens = other.input_tokens.or(self.input_tokens);
        self.cached_input_tokens = other.cached_input_tokens.or(self.cached_input_tokens);
        self.cache_write_tokens = other.cache_write_tokens.or(self.cache_write_tokens);
        self.output_tokens = other.output_tokens.or(self.output_tokens);
        self.reasoning_tokens = other.reasoning_tokens.or(self.reasoning_tokens);
    }

    /// Adds the counts of another request (a repair) to these.
    pub fn add(&mut self, other: Usage) {
        let sum = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
        };
        self.input_tokens = sum(self.input_tokens, other.input_tokens);
        self.cached_input_tokens = sum(self.cached_input_tokens, other.cached_input_tokens);
        self.cache_write_tokens = sum(self.cache_write_tokens, other.cache_write_tokens);
        self.output_tokens = sum(self.output_tokens, other.output_tokens);
        self.reasoning_tokens = sum(self.reasoning_tokens, other.reasoning_tokens);
    }

    /// The counts by class for pricing, when the input and output are both known.
    pub fn tokens(&self) -> Option<crate::pricing::Tokens> {
        Some(crate::pricing::Tokens {
            input: self.input_tokens?,
            cached_input: self.cached_input_tokens.unwrap_or(0),
            cache_write: self.cache_write_tokens.unwrap_or(0),
            output: self.output_tokens?,
            reasoning: self.reasoning_tokens.unwrap_or(0),
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEvent {
    /// A piece of the answer's text.
    Text(String),
    /// Why the model stopped (`stop`, `length`, `end_turn`, ...).
    Finish(String),
    Usage(Usage),
    /// A function the model calls (given whole, once its arguments are complete).
    Call(crate::functions::FunctionCall),
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
