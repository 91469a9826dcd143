//! An HTTP request as data: built by a provider, sent by the transport, or printed by
//! `--dry-run` with every secret redacted.

use std::fmt::Write as _;

use serde::Serialize;

/// A header; secret values (API keys) are never printed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Header {
    pub name: String,
    #[serde(serialize_with = "serialize_redacted")]
    pub value: HeaderValue,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderValue {
    Plain(String),
    /// A secret, with an optional prefix such as `Bearer `.
    Secret {
        prefix: &'static str,
        secret: String,
    },
}

impl HeaderValue {
    /// The value to send.
    pub fn expose(&self) -> String {
        match self {
            HeaderValue::Plain(value) => value.clone(),
            HeaderValue::Secret { prefix, secret } => format!("{prefix}{secret}"),
        }
    }

    /// The value to show: secrets replaced by `[redacted]`.
    pub fn redacted(&self) -> String {
        match self {
            HeaderValue::Plain(value) => value.clone(),
            HeaderValue::Secret { prefix, .. } => format!("{prefix}[redacted]"),
        }
    }
}

fn serialize_redacted<S: serde::Serializer>(value: &HeaderValue, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&value.redacted())
}

/// A POST request with a JSON body.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HttpRequest {
    /// The provider's name, for messages.
    #[serde(skip)]
    pub provider: String,
    pub method: &'static str,
    pub url: String,
    pub headers: Vec<Header>,
    pub body: serde_json::Value,
}

impl HttpRequest {
    pub fn post(provider: &str, url: impl Into<String>, body: serde_json::Value) -> Self {
        Self {
            provider: provider.to_owned(),
            method: "POST",
            url: url.into(),
            headers: vec![header("content-type", "application/json")],
            body,
        }
    }

    #[must_use]
    pub fn with_header(mut self, name: &str, value: HeaderValue) -> Self {
        self.headers.push(Header { name: name.to_owned(), value });
        self
    }

    /// The request as `--dry-run` prints it: method and URL, headers (secrets redacted), a blank
    /// line, and the pretty-printed body.
    pub fn display_redacted(&self) -> String {
        let mut out = format!("{} {}\n", self.method, redact_url(&self.url));
        for header in &self.headers {
            let _ = writeln!(out, "{}: {}", header.name, header.value.redacted());
        }
        out.push('\n');
        out.push_str(&serde_json::to_string_pretty(&self.body).unwrap_or_default());
        out.push('\n');
        out
    }
}

pub fn header(name: &str, value: &str) -> Header {
    Header { name: name.to_owned(), value: HeaderValue::Plain(value.to_owned()) }
}

/// Removes a `key=` query parameter from a URL (some APIs accept keys there).
pub fn redact_url(url: &str) -> String {
    let Some((base, query)) = url.split_once('?') else { return url.to_owned() };
    let parts: Vec<String> =
        query
            .split('&')
            .map(|part| {
                if part.starts_with("key=") { "key=[redacted]".to_owned() } else { part.to_owned() }
            })
            .collect();
    format!("{base}?{}", parts.join("&"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_show() {
        let request = HttpRequest::post(
            "Example",
            "https://api.example/v1?alt=sse&key=abc",
            serde_json::json!({"a": 1}),
        )
        .with_header(
            "authorization",
            HeaderValue::Secret { prefix: "Bearer ", secret: "sk-secret".into() },
        );
        let shown = request.display_redacted();
        assert!(!shown.contains("sk-secret") && !shown.contains("key=abc"), "{shown}");
        assert!(shown.contains("authorization: Bearer [redacted]"));
        assert!(!serde_json::to_string(&request).unwrap().contains("sk-secret"));
    }
}
