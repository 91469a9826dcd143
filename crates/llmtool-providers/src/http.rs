//! An HTTP request as data: built by a provider, sent by the transport, or printed by
//! `--dry-run` with every secret redacted.

use std::fmt::Write as _;

use serde::Serialize;

use crate::redact::{Redactor, redact_userinfo};

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
    /// Who paces it (the provider's short name) and how many tokens it may use (the prompt,
    /// estimated, and the output limit): see [`crate::pace`].
    #[serde(skip)]
    pub pace: (String, u64),
}

impl HttpRequest {
    pub fn post(provider: &str, url: impl Into<String>, body: serde_json::Value) -> Self {
        Self {
            provider: provider.to_owned(),
            method: "POST",
            url: url.into(),
            headers: vec![header("content-type", "application/json")],
            body,
            pace: (provider.to_owned(), 0),
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

impl HttpRequest {
    /// `text` (an error body, say) with this request's secrets replaced: its secret header
    /// values, the `key=` of its URL, and any URL credentials.
    pub fn scrub(&self, text: &str) -> String {
        let headers = self.headers.iter().filter_map(|h| match &h.value {
            HeaderValue::Secret { secret, .. } => Some(secret.clone()),
            HeaderValue::Plain(_) => None,
        });
        let url_key = self
            .url
            .split_once('?')
            .into_iter()
            .flat_map(|(_, query)| query.split('&'))
            .filter_map(|part| part.strip_prefix("key="))
            .map(str::to_owned);
        Redactor::new(headers.chain(url_key)).redact(text).into_owned()
    }
}

/// Removes a `key=` query parameter and any `user:password@` from a URL (some APIs accept keys
/// in the query; a base URL may carry credentials).
pub fn redact_url(url: &str) -> String {
    let url = redact_userinfo(url);
    let Some((base, query)) = url.split_once('?') else { return url.into_owned() };
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
        assert_eq!(request.scrub("invalid key sk-secret"), "invalid key [redacted]");
        let request = HttpRequest::post(
            "Example",
            "https://u:pw@api.example/v1?key=gemini-key-123",
            serde_json::json!({}),
        )
        .with_header(
            "x-api-key",
            HeaderValue::Secret { prefix: "", secret: "sk-ant-0123456789".into() },
        );
        assert_eq!(
            request.scrub("got sk-ant-0123456789 and gemini-key-123"),
            "got [redacted] and [redacted]"
        );
        assert!(
            request
                .display_redacted()
                .starts_with("POST https://[redacted]@api.example/v1?key=[redacted]")
        );
    }
}
