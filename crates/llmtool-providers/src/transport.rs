//! Sending a request and reading its answer: timeouts at every stage, retries with exponential
//! backoff and jitter (honouring `Retry-After`), and no retry once output has been shown.

use std::time::{Duration, Instant};

use eventsource_stream::Eventsource as _;
use futures_util::StreamExt as _;

use std::sync::Arc;

use crate::error::{ProviderError, TimeoutKind};
use crate::event::{Decoder, StreamEvent, Usage};
use crate::http::HttpRequest;
use crate::pace::{self, Pacer};

/// How long each stage may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    pub connect: Duration,
    /// From sending the request to the response headers.
    pub first_byte: Duration,
    /// Between two pieces of a streamed answer.
    pub idle: Duration,
    /// The whole attempt.
    pub total: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            connect: Duration::from_secs(10),
            first_byte: Duration::from_mins(2),
            idle: Duration::from_mins(1),
            total: Duration::from_mins(10),
        }
    }
}

/// When and how often to try again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    pub max_retries: u32,
    /// Retries of a request the provider refused with a 429 (rate limited), counted apart: a
    /// batch, which slows down on them, sets more than a single run.
    pub max_rate_limit_retries: u32,
    pub base_delay: Duration,
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 3,
            max_rate_limit_retries: 3,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// The wait before retry `attempt` (1-based): the server's `Retry-After` if it gave one (up
    /// to five minutes), else `base * 2^(attempt-1)` with jitter, capped at `max_delay`.
    pub fn delay(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(wait) = retry_after {
            return wait.min(Duration::from_mins(5));
        }
        let exponential = self.base_delay.saturating_mul(1 << attempt.saturating_sub(1).min(16));
        let capped = exponential.min(self.max_delay);
        capped.mul_f64(0.5 + fastrand::f64() * 0.5)
    }
}

/// What an answer came with, besides its text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Completion {
    pub usage: Usage,
    pub finish_reason: Option<String>,
    /// From sending the (last) request to the first piece of text.
    pub time_to_first_token: Option<Duration>,
    pub retries: u32,
    /// Figures an in-process engine reports (load time, speed, memory).
    pub engine_stats: Option<serde_json::Value>,
    /// The functions the model called, for the run loop to answer.
    pub calls: Vec<crate::functions::FunctionCall>,
}

/// What one attempt's answer held besides its text.
#[derive(Debug, Default)]
struct Attempted {
    usage: Usage,
    finish_reason: Option<String>,
    calls: Vec<crate::functions::FunctionCall>,
}

/// How answer text reaches the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// Each piece as it arrives (shown to the user as it streams). Once a piece is out, a
    /// failure is not retried, since the retry would show the answer again.
    Live,
    /// The whole answer at once, after an attempt succeeds; any failure may be retried.
    Whole,
}

/// Sends requests with one shared connection pool, each provider at its own pace.
#[derive(Debug, Clone)]
pub struct Transport {
    client: reqwest::Client,
    pub timeouts: Timeouts,
    pub retry: RetryPolicy,
    pacer: Arc<Pacer>,
}

impl Transport {
    /// The transport of model APIs: it carries keys, so it follows a redirect only within
    /// the same origin.
    pub fn new(timeouts: Timeouts, retry: RetryPolicy) -> Result<Self, ProviderError> {
        let client = client(timeouts, same_origin_redirects())?;
        Ok(Self { client, timeouts, retry, pacer: Arc::default() })
    }

    /// The same, with requests paced by `pacer` (see [`crate::pace`]).
    #[must_use]
    pub fn with_pacer(self, pacer: Pacer) -> Self {
        Self { pacer: Arc::new(pacer), ..self }
    }

    /// The HTTP client underneath (its redirect policy and timeouts), for calls that are not
    /// a model's answer (see [`crate::batch_api`]).
    pub(crate) fn http(&self) -> &reqwest::Client {
        &self.client
    }

    /// The pace keeper of this transport's requests.
    pub fn pacer(&self) -> &Pacer {
        &self.pacer
    }

    /// The transport of [`Transport::download`]: a download carries no key, so it follows
    /// redirects to other origins (model hosts serve their files from a CDN).
    pub fn for_downloads(timeouts: Timeouts) -> Result<Self, ProviderError> {
        let client = client(timeouts, reqwest::redirect::Policy::limited(10))?;
        Ok(Self { client, timeouts, retry: RetryPolicy::default(), pacer: Arc::default() })
    }

    /// Sends `request` and passes the answer text to `on_text` as `delivery` says. A fresh
    /// decoder comes from `decoder` for every attempt.
    pub async fn send(
        &self,
        request: &HttpRequest,
        stream: bool,
        delivery: Delivery,
        decoder: &(dyn Fn() -> Box<dyn Decoder> + Send + Sync),
        on_text: &mut (dyn FnMut(&str) + Send),
    ) -> Result<Completion, ProviderError> {
        let (mut retries, mut rate_limit_retries) = (0, 0);
        loop {
            let mut output_started = false;
            let mut time_to_first_token = None;
            let mut buffered = String::new();
            let started = Instant::now();
            let mut fresh = decoder();
            let result = {
                let mut forward = |text: &str| {
                    if time_to_first_token.is_none() {
                        time_to_first_token = Some(started.elapsed());
                    }
                    match delivery {
                        Delivery::Live => {
                            output_started = true;
                            on_text(text);
                        }
                        Delivery::Whole => buffered.push_str(text),
                    }
                };
                let (provider, tokens) = &request.pace;
                let permit = self.pacer.acquire(provider, *tokens).await;
                let attempt = self.attempt(request, stream, fresh.as_mut(), &mut forward);
                let result = match tokio::time::timeout(self.timeouts.total, attempt).await {
                    Ok(result) => result,
                    Err(_) => Err(ProviderError::Timeout(TimeoutKind::Total)),
                };
                permit.settle(match &result {
                    Ok(_) => pace::Outcome::Success,
                    Err(error @ ProviderError::RateLimited { .. }) => {
                        pace::Outcome::RateLimited(error.retry_after())
                    }
                    Err(_) => pace::Outcome::Other,
                });
                result
            };
            let mut completion = Completion {
                time_to_first_token,
                retries: retries + rate_limit_retries,
                ..Completion::default()
            };
            match result {
                Ok(Attempted { usage, finish_reason, calls }) => {
                    if !buffered.is_empty() {
                        on_text(&buffered);
                    }
                    completion.usage = usage;
                    completion.finish_reason = finish_reason;
                    completion.calls = calls;
                    return Ok(completion);
                }
                Err(error) if output_started => {
                    return Err(ProviderError::InterruptedAfterOutput(Box::new(error)));
                }
                Err(error @ ProviderError::RateLimited { .. })
                    if rate_limit_retries < self.retry.max_rate_limit_retries =>
                {
                    rate_limit_retries += 1;
                    // A `Retry-After` holds back every request to the provider (the pace);
                    // without one, this request backs off on its own too.
                    if error.retry_after().is_none() {
                        tokio::time::sleep(self.retry.delay(rate_limit_retries, None)).await;
                    }
                }
                // A server answers a request that is not streamed once its work is done: no
                // first byte in time may mean work still under way, and billed, which asking
                // again would pay for twice (an image model takes minutes for many pictures).
                Err(ProviderError::Timeout(TimeoutKind::FirstByte)) if !stream => {
                    return Err(ProviderError::Timeout(TimeoutKind::FirstByte));
                }
                Err(error)
                    if error.is_retryable()
                        && !matches!(error, ProviderError::RateLimited { .. })
                        && retries < self.retry.max_retries =>
                {
                    retries += 1;
                    tokio::time::sleep(self.retry.delay(retries, error.retry_after())).await;
                }
                Err(error) => return Err(error),
            }
        }
    }

    /// Fetches `url` (a model file) with the same client, passing each piece to `on_chunk`
    /// with the size the server announced (or `limit`). More than `limit` bytes is an error,
    /// and so is a pause longer than the idle timeout; `on_chunk` answering `false` stops the
    /// download as cancelled.
    pub async fn download(
        &self,
        url: &str,
        limit: u64,
        on_chunk: &mut (dyn FnMut(&[u8], u64) -> bool + Send),
    ) -> Result<(), ProviderError> {
        let connection = |e: reqwest::Error| ProviderError::Connection(connection_message(e));
        let sent = tokio::time::timeout(self.timeouts.first_byte, self.client.get(url).send());
        let response = sent.await.map_err(|_| ProviderError::Timeout(TimeoutKind::FirstByte))?;
        let response = response.map_err(connection)?;
        let status = response.status();
        if !status.is_success() {
            let host = response.url().host_str().unwrap_or("the server").to_owned();
            let message = status.canonical_reason().unwrap_or("failed").to_owned();
            return Err(ProviderError::Http { provider: host, status: status.as_u16(), message });
        }
        let total = response.content_length().unwrap_or(limit);
        if total > limit {
            return Err(ProviderError::TooLarge { limit });
        }
        let mut received = 0u64;
        let mut stream = response.bytes_stream();
        loop {
            let next = tokio::time::timeout(self.timeouts.idle, stream.next());
            let Some(chunk) = next.await.map_err(|_| ProviderError::Timeout(TimeoutKind::Idle))?
            else {
                return Ok(());
            };
            let chunk = chunk.map_err(connection)?;
            received += chunk.len() as u64;
            if received > limit {
                return Err(ProviderError::TooLarge { limit });
            }
            if !on_chunk(&chunk, total) {
                return Err(ProviderError::Cancelled);
            }
        }
    }

    async fn attempt(
        &self,
        request: &HttpRequest,
        stream: bool,
        decoder: &mut dyn Decoder,
        on_text: &mut (dyn FnMut(&str) + Send),
    ) -> Result<Attempted, ProviderError> {
        let mut builder = self.client.post(&request.url).body(request.body.to_string());
        // The trace goes on at the provider (W3C `traceparent`), when traces are kept.
        builder = builder.headers(crate::trace::trace_headers());
        for header in &request.headers {
            builder = builder.header(&header.name, header.value.expose());
        }
        let response = match tokio::time::timeout(self.timeouts.first_byte, builder.send()).await {
            Err(_) => return Err(ProviderError::Timeout(TimeoutKind::FirstByte)),
            Ok(Err(error)) if error.is_connect() => return Err(not_connected(request, &error)),
            Ok(Err(error)) if error.is_timeout() => {
                return Err(ProviderError::Timeout(TimeoutKind::Connect));
            }
            Ok(Err(error)) => return Err(ProviderError::Connection(connection_message(error))),
            Ok(Ok(response)) => response,
        };
        let status = response.status();
        if status.is_redirection() {
            let to = origin_of(response.headers().get("location"));
            let here = reqwest::Url::parse(&request.url).map(|u| u.origin().ascii_serialization());
            let message = if here.is_ok_and(|here| to == format!("`{here}`")) {
                "redirected too many times within the same origin".to_owned()
            } else {
                format!(
                    "redirected to {to}, another origin; not followed, so that the key is not sent there (set the provider's base URL to where it should go)"
                )
            };
            return Err(ProviderError::Http {
                provider: request.provider.clone(),
                status: status.as_u16(),
                message,
            });
        }
        if !status.is_success() {
            let retry_after = response
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .and_then(parse_retry_after);
            let body = tokio::time::timeout(self.timeouts.idle, read_bounded(response))
                .await
                .unwrap_or_default();
            return Err(ProviderError::from_status(
                &request.provider,
                status.as_u16(),
                &request.scrub(&body),
                retry_after,
            ));
        }
        let mut attempted = Attempted::default();
        let mut handle = |events: Vec<StreamEvent>, attempted: &mut Attempted| {
            for event in events {
                match event {
                    StreamEvent::Text(text) => on_text(&text),
                    StreamEvent::Finish(reason) => attempted.finish_reason = Some(reason),
                    StreamEvent::Usage(more) => attempted.usage.merge(more),
                    StreamEvent::Call(call) => attempted.calls.push(call),
                }
            }
        };
        if !stream {
            let body = read_whole(response, self.timeouts.idle).await?;
            handle(decoder.response(&body)?, &mut attempted);
            return Ok(attempted);
        }
        let mut events = response.bytes_stream().eventsource();
        loop {
            match tokio::time::timeout(self.timeouts.idle, events.next()).await {
                Err(_) => return Err(ProviderError::Timeout(TimeoutKind::Idle)),
                Ok(None) => break,
                Ok(Some(Err(error))) => return Err(stream_error(error)),
                Ok(Some(Ok(event))) => {
                    handle(decoder.event(&event.event, &event.data)?, &mut attempted);
                }
            }
        }
        handle(decoder.finish()?, &mut attempted);
        Ok(attempted)
    }
}

/// Follows a redirect only to the same scheme, host and port (at most five times): a key
/// header (`Authorization`, `x-api-key`, `x-goog-api-key`, or any other) must never reach
/// another origin, and reqwest strips only some of them.
fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let from = attempt.previous().last();
        let same = from.is_some_and(|from| from.origin() == attempt.url().origin());
        if same && attempt.previous().len() <= 5 { attempt.follow() } else { attempt.stop() }
    })
}

/// The origin a `Location` header points at, for a message (never its path or query, which
/// may carry a key).
fn origin_of(location: Option<&reqwest::header::HeaderValue>) -> String {
    location.and_then(|v| v.to_str().ok()).and_then(|v| reqwest::Url::parse(v).ok()).map_or_else(
        || "an unknown place".to_owned(),
        |url| format!("`{}`", url.origin().ascii_serialization()),
    )
}

/// The most of an error body that is read (and then shortened further for the message).
pub const MAX_ERROR_BODY: usize = 16 * 1024;

/// The most a whole (non-streamed) answer may hold: room for ten large pictures in base64.
pub const MAX_WHOLE_BODY: usize = 256 << 20;

/// A whole answer's body, refused past [`MAX_WHOLE_BODY`] bytes (a server cannot make llmtool
/// hold more than that). A pause longer than `idle` between two pieces is a timeout; a large
/// body that keeps coming takes as long as it takes, within the run's total timeout.
async fn read_whole(response: reqwest::Response, idle: Duration) -> Result<String, ProviderError> {
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    loop {
        let next = tokio::time::timeout(idle, stream.next()).await;
        let Some(chunk) = next.map_err(|_| ProviderError::Timeout(TimeoutKind::Idle))? else {
            break;
        };
        let chunk = chunk.map_err(|error| ProviderError::Connection(connection_message(error)))?;
        if body.len() + chunk.len() > MAX_WHOLE_BODY {
            return Err(ProviderError::TooLarge { limit: MAX_WHOLE_BODY as u64 });
        }
        body.extend_from_slice(&chunk);
    }
    String::from_utf8(body)
        .map_err(|_| ProviderError::MalformedStream("the answer is not UTF-8 text".into()))
}

/// An error body, at most [`MAX_ERROR_BODY`] bytes of it.
pub(crate) async fn read_bounded(response: reqwest::Response) -> String {
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(Ok(chunk)) = stream.next().await {
        let room = MAX_ERROR_BODY - body.len();
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if body.len() >= MAX_ERROR_BODY {
            break;
        }
    }
    String::from_utf8_lossy(&body).into_owned()
}

/// A client of another HTTP API than a provider's (the tool library's), with the one setup of
/// every request llmtool sends: rustls, the connect timeout, the user agent, and redirects
/// followed only within the origin.
pub fn api_client(timeouts: Timeouts) -> Result<reqwest::Client, ProviderError> {
    client(timeouts, same_origin_redirects())
}

/// The one HTTP client setup of llmtool: rustls, the connect timeout and our user agent.
fn client(
    timeouts: Timeouts,
    redirects: reqwest::redirect::Policy,
) -> Result<reqwest::Client, ProviderError> {
    // rustls needs a process-wide crypto provider; installing it twice is harmless.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .connect_timeout(timeouts.connect)
        .user_agent(concat!("llmtool/", env!("CARGO_PKG_VERSION")))
        .redirect(redirects)
        .build()
        .map_err(|e| ProviderError::Connection(e.to_string()))
}

/// A reqwest error with its causes, without the URL (which may carry a key or a password).
pub fn connection_message(error: reqwest::Error) -> String {
    let error = error.without_url();
    let mut message = error.to_string();
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        message = format!("{message}: {cause}");
        source = cause.source();
    }
    message
}

/// A request that never connected, said with the provider, where it went (the origin only: a
/// path or query may hold a key) and the innermost reason (`Connection refused`).
fn not_connected(request: &HttpRequest, error: &reqwest::Error) -> ProviderError {
    let mut reason = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        reason = cause.to_string();
        source = cause.source();
    }
    let url = reqwest::Url::parse(&request.url).ok();
    let origin =
        url.as_ref().map_or_else(|| "its URL".to_owned(), |u| u.origin().ascii_serialization());
    let local = url.as_ref().and_then(reqwest::Url::host_str).is_some_and(|host| {
        host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
    });
    let hint = if local {
        "; is the server running on this machine? (`llmtool providers` shows each provider's URL)"
    } else {
        ""
    };
    ProviderError::Connection(format!("{} at {origin}: {reason}{hint}", request.provider))
}

fn stream_error(error: eventsource_stream::EventStreamError<reqwest::Error>) -> ProviderError {
    match error {
        eventsource_stream::EventStreamError::Transport(cause) => ProviderError::Connection(
            format!("the connection broke during the answer: {}", connection_message(cause)),
        ),
        other => ProviderError::MalformedStream(other.to_string()),
    }
}

/// `Retry-After` as seconds or as an HTTP date.
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    if let Ok(seconds) = value.trim().parse::<f64>() {
        return Duration::try_from_secs_f64(seconds).ok();
    }
    let when = jiff::fmt::rfc2822::parse(value.trim()).ok()?.timestamp();
    let wait = when.duration_since(jiff::Timestamp::now());
    Some(Duration::try_from(wait).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_forms() {
        assert_eq!(parse_retry_after("2"), Some(Duration::from_secs(2)));
        assert_eq!(parse_retry_after("0.5"), Some(Duration::from_millis(500)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("soon"), None);
    }

    #[test]
    fn backoff_grows_is_capped_and_jittered() {
        let policy = RetryPolicy {
            max_retries: 5,
            max_rate_limit_retries: 5,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(1),
        };
        for attempt in 1..=6 {
            let delay = policy.delay(attempt, None);
            let full = (100u64 << (attempt - 1)).min(1000);
            assert!(
                delay >= Duration::from_millis(full / 2) && delay <= Duration::from_millis(full),
                "{attempt}: {delay:?}"
            );
        }
        assert_eq!(policy.delay(1, Some(Duration::from_secs(3))), Duration::from_secs(3));
    }
}
