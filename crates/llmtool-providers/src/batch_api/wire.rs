//! The plain API calls of the batch engines (upload, create, poll, download, cancel): sent
//! with the transport's client and its timeouts, retried with backoff when that is safe, and
//! read up to a limit.

use std::time::Duration;

use futures_util::StreamExt as _;
use reqwest::Method;

use crate::error::{ProviderError, TimeoutKind};
use crate::http::{Header, HeaderValue};
use crate::redact::Redactor;
use crate::transport::{Transport, connection_message, parse_retry_after, read_bounded};

/// What a call sends.
pub(crate) enum Body {
    Empty,
    Json(serde_json::Value),
    /// JSON already encoded (a batch of requests, joined without parsing them again).
    Encoded(String),
    /// A `multipart/form-data` form: text fields, then one file (field `file`).
    Form {
        fields: Vec<(&'static str, String)>,
        file_name: String,
        file: Vec<u8>,
    },
}

/// One call to a batch API.
pub(crate) struct Call {
    pub method: Method,
    pub url: String,
    pub headers: Vec<Header>,
    pub body: Body,
    /// Whether sending it twice does no harm (a read, a cancel). A call that creates
    /// something is sent again only when the server surely did not take it (no connection,
    /// or a 429), so a batch is never submitted twice by a retry.
    pub repeatable: bool,
    /// The most bytes of the reply that are read.
    pub limit: u64,
}

impl Call {
    pub(crate) fn get(url: String, headers: &[Header], limit: u64) -> Self {
        Call {
            method: Method::GET,
            url,
            headers: headers.to_vec(),
            body: Body::Empty,
            repeatable: true,
            limit,
        }
    }

    pub(crate) fn post(url: String, headers: &[Header], body: Body, repeatable: bool) -> Self {
        Call {
            method: Method::POST,
            url,
            headers: headers.to_vec(),
            body,
            repeatable,
            limit: STATUS_LIMIT,
        }
    }
}

/// The most bytes of a status or creation reply that are read.
pub(crate) const STATUS_LIMIT: u64 = 4 * 1024 * 1024;

/// Sends `call` on `transport`, as `provider`, and reads its reply: retried as the transport's
/// retry policy says when the call is repeatable (or surely not taken).
pub(crate) async fn send(
    transport: &Transport,
    provider: &str,
    call: &Call,
) -> Result<String, ProviderError> {
    let policy = transport.retry;
    let mut attempt = 0;
    loop {
        let error = match once(transport, provider, call).await {
            Ok(body) => return Ok(body),
            Err(error) => error,
        };
        let untaken = matches!(error, ProviderError::RateLimited { .. })
            || matches!(&error, ProviderError::Connection(m) if m.starts_with(NOT_CONNECTED));
        let again = error.is_retryable() && (call.repeatable || untaken);
        let limit = if matches!(error, ProviderError::RateLimited { .. }) {
            policy.max_rate_limit_retries
        } else {
            policy.max_retries
        };
        if !again || attempt >= limit {
            return Err(error);
        }
        attempt += 1;
        tokio::time::sleep(policy.delay(attempt, error.retry_after())).await;
    }
}

/// How a connection error that never reached the server starts its message.
const NOT_CONNECTED: &str = "not connected: ";

async fn once(transport: &Transport, provider: &str, call: &Call) -> Result<String, ProviderError> {
    let timeouts = transport.timeouts;
    let mut builder = transport.http().request(call.method.clone(), &call.url);
    for header in &call.headers {
        builder = builder.header(&header.name, header.value.expose());
    }
    builder = match &call.body {
        Body::Empty => builder,
        Body::Json(value) => {
            builder.header("content-type", "application/json").body(value.to_string())
        }
        Body::Encoded(text) => {
            builder.header("content-type", "application/json").body(text.clone())
        }
        Body::Form { fields, file_name, file } => {
            let mut form = reqwest::multipart::Form::new();
            for (name, value) in fields {
                form = form.text(*name, value.clone());
            }
            let part = reqwest::multipart::Part::bytes(file.clone())
                .file_name(file_name.clone())
                .mime_str("application/jsonl")
                .map_err(|e| ProviderError::Connection(connection_message(e)))?;
            builder.multipart(form.part("file", part))
        }
    };
    let response = match tokio::time::timeout(timeouts.first_byte, builder.send()).await {
        Err(_) => return Err(ProviderError::Timeout(TimeoutKind::FirstByte)),
        Ok(Err(error)) if error.is_connect() => {
            return Err(ProviderError::Connection(format!(
                "{NOT_CONNECTED}{}",
                connection_message(error)
            )));
        }
        Ok(Err(error)) => return Err(ProviderError::Connection(connection_message(error))),
        Ok(Ok(response)) => response,
    };
    let status = response.status();
    let scrub = |text: &str| secrets(&call.headers).redact(text).into_owned();
    if !status.is_success() {
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(parse_retry_after);
        let body =
            tokio::time::timeout(timeouts.idle, read_bounded(response)).await.unwrap_or_default();
        return Err(ProviderError::from_status(
            provider,
            status.as_u16(),
            &scrub(&body),
            retry_after,
        ));
    }
    if response.content_length().is_some_and(|length| length > call.limit) {
        return Err(ProviderError::TooLarge { limit: call.limit });
    }
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    loop {
        let next = tokio::time::timeout(timeouts.idle, stream.next());
        let Some(chunk) = next.await.map_err(|_| ProviderError::Timeout(TimeoutKind::Idle))? else {
            break;
        };
        let chunk = chunk.map_err(|e| ProviderError::Connection(connection_message(e)))?;
        if (body.len() + chunk.len()) as u64 > call.limit {
            return Err(ProviderError::TooLarge { limit: call.limit });
        }
        body.extend_from_slice(&chunk);
    }
    String::from_utf8(body).map_err(|_| {
        ProviderError::MalformedStream(format!("{provider} sent a reply that is not UTF-8"))
    })
}

/// A redactor of the secret header values of a call.
fn secrets(headers: &[Header]) -> Redactor {
    Redactor::new(headers.iter().filter_map(|h| match &h.value {
        HeaderValue::Secret { secret, .. } => Some(secret.clone()),
        HeaderValue::Plain(_) => None,
    }))
}

/// The wait before poll number `polls` (from 0): `first`, doubled each poll up to `longest`,
/// with a little jitter so that many batches do not poll in step.
pub fn poll_delay(first: Duration, longest: Duration, polls: u32) -> Duration {
    let grown = first.saturating_mul(1 << polls.min(20)).min(longest.max(first));
    grown.mul_f64(0.9 + fastrand::f64() * 0.2)
}
