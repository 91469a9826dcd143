//! Everything that can go wrong talking to a model, each with its own clear message.

use std::time::Duration;

/// Which timeout expired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutKind {
    Connect,
    FirstByte,
    /// No stream data for too long.
    Idle,
    Total,
}

impl std::fmt::Display for TimeoutKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TimeoutKind::Connect => "connecting",
            TimeoutKind::FirstByte => "waiting for the first byte of the answer",
            TimeoutKind::Idle => "waiting for the stream to continue",
            TimeoutKind::Total => "the whole request took too long",
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderError {
    #[error("no API key for {provider}: set the environment variable `{variable}`")]
    MissingKey { provider: String, variable: String },
    #[error("unknown model `{model}`: {help}")]
    UnknownModel { model: String, help: String },
    #[error("no model to run: {0}")]
    NoModel(String),
    #[error("{provider} rejected the API key (401 Unauthorized): {message}")]
    Unauthorized { provider: String, message: String },
    #[error(
        "{provider} refused the request (403 Forbidden): {message}; the key may lack access to this model"
    )]
    Forbidden { provider: String, message: String },
    #[error("{provider} does not know this model or endpoint (404 Not Found): {message}")]
    NotFound { provider: String, message: String },
    #[error("the prompt is too long for the model's context window ({status}): {message}")]
    ContextTooLong { status: u16, message: String },
    #[error("{provider} filtered the content and gave no answer ({reason})")]
    ContentFiltered { provider: String, reason: String },
    #[error("{provider} is rate limiting requests (429): {message}")]
    RateLimited { provider: String, message: String, retry_after: Option<Duration> },
    #[error("{provider} had a server error ({status}): {message}")]
    Server { provider: String, status: u16, message: String },
    #[error("{provider} answered {status}: {message}")]
    Http { provider: String, status: u16, message: String },
    #[error("the answer stream is malformed: {0}")]
    MalformedStream(String),
    #[error("timed out {0}")]
    Timeout(TimeoutKind),
    #[error("cannot reach the provider: {0}")]
    Connection(String),
    #[error(
        "the answer stopped after output had started ({0}); not retried, because the output so far was already printed"
    )]
    InterruptedAfterOutput(Box<ProviderError>),
    #[error("the server sends more than the {limit} bytes expected; stopped")]
    TooLarge { limit: u64 },
    #[error("cancelled")]
    Cancelled,
    #[error("{0}")]
    Unsupported(String),
    /// An answer that came whole but cannot be used (a picture that is not one, a link instead
    /// of the bytes): not asked for again, since asking again is paid for again and the same
    /// server would answer the same.
    #[error("the answer cannot be used: {0}")]
    Unusable(String),
    /// The model's function calls passed a bound of the run (calls, time): it did not
    /// converge on an answer.
    #[error("{0}")]
    FunctionLoop(String),
    /// The functions the run offers could not all be found (an MCP server unreachable, or
    /// without a function the tool names): nothing was sent.
    #[error("the tool's functions cannot be offered: {0}")]
    FunctionsUnavailable(String),
}

impl ProviderError {
    /// Whether trying again may help (and nothing was printed yet).
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            ProviderError::RateLimited { .. }
                | ProviderError::Server { .. }
                | ProviderError::Connection(_)
                | ProviderError::Timeout(TimeoutKind::Connect | TimeoutKind::FirstByte)
                | ProviderError::MalformedStream(_)
        )
    }

    /// The delay the server asked for, if any.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ProviderError::RateLimited { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// Classifies an HTTP error status and body.
    pub fn from_status(
        provider: &str,
        status: u16,
        body: &str,
        retry_after: Option<Duration>,
    ) -> Self {
        let message = error_message(body);
        let lowered = message.to_lowercase();
        let provider = provider.to_owned();
        let too_long =
            ["context length", "context_length", "too long", "maximum context", "too many tokens"]
                .iter()
                .any(|needle| lowered.contains(needle));
        match status {
            413 => ProviderError::ContextTooLong { status, message },
            400 if too_long => ProviderError::ContextTooLong { status, message },
            401 => ProviderError::Unauthorized { provider, message },
            403 => ProviderError::Forbidden { provider, message },
            404 => ProviderError::NotFound { provider, message },
            429 => ProviderError::RateLimited { provider, message, retry_after },
            500..=599 => ProviderError::Server { provider, status, message },
            _ => ProviderError::Http { provider, status, message },
        }
    }
}

/// The human message inside an API error body (`{"error": {"message": ...}}` and the like),
/// or the body itself, shortened.
pub fn error_message(body: &str) -> String {
    let parsed: Option<serde_json::Value> = serde_json::from_str(body).ok();
    let found = parsed.as_ref().and_then(|json| {
        let error = json.get("error").unwrap_or(json);
        error.get("message").and_then(|m| m.as_str()).or_else(|| error.as_str()).map(str::to_owned)
    });
    let text = found.unwrap_or_else(|| body.trim().to_owned());
    let mut short: String = text.chars().take(300).collect();
    if short.len() < text.len() {
        short.push('…');
    }
    if short.is_empty() { "(no details)".to_owned() } else { short }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_are_classified() {
        let body = r#"{"error": {"message": "This model's maximum context length is 8192 tokens", "type": "invalid_request_error"}}"#;
        assert!(matches!(
            ProviderError::from_status("OpenAI", 400, body, None),
            ProviderError::ContextTooLong { .. }
        ));
        assert!(matches!(
            ProviderError::from_status("OpenAI", 401, "{}", None),
            ProviderError::Unauthorized { .. }
        ));
        assert!(ProviderError::from_status("OpenAI", 503, "busy", None).is_retryable());
        assert!(!ProviderError::from_status("OpenAI", 404, "", None).is_retryable());
        assert_eq!(
            error_message(
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
            ),
            "Overloaded"
        );
    }
}
