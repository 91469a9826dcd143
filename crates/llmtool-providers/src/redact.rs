//! Keeping secrets out of everything llmtool shows: the configured key values, and the
//! `user:password@` part of URLs, replaced wherever they appear in a message, a log line or
//! an output (a provider's error body may echo a key back, a base URL may carry a password).

use std::borrow::Cow;

/// What replaces a secret.
pub const REDACTED: &str = "[redacted]";

/// Values shorter than this are not treated as secrets: replacing every `a` of a message
/// because a test key is `a` would garble it, and no real key is that short.
pub const MIN_SECRET_LEN: usize = 8;

/// Replaces known secret values, and URL credentials, in text.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Redactor {
    /// Longest first, so that a secret containing another is replaced whole.
    secrets: Vec<String>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redactor").field("secrets", &self.secrets.len()).finish()
    }
}

impl Redactor {
    pub fn new(secrets: impl IntoIterator<Item = String>) -> Self {
        let mut secrets: Vec<String> = secrets
            .into_iter()
            .map(|s| s.trim().to_owned())
            .filter(|s| s.len() >= MIN_SECRET_LEN)
            .collect();
        secrets.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        secrets.dedup();
        Self { secrets }
    }

    /// This redactor, also hiding `secrets`.
    #[must_use]
    pub fn with_all(&self, secrets: &[String]) -> Self {
        Self::new(self.secrets.iter().chain(secrets).cloned())
    }

    /// `text` with every secret and every URL's credentials replaced by [`REDACTED`].
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut text = Cow::Borrowed(text);
        for secret in &self.secrets {
            if text.contains(secret.as_str()) {
                text = Cow::Owned(text.replace(secret.as_str(), REDACTED));
            }
        }
        match redact_userinfo(&text) {
            Cow::Borrowed(_) => text,
            Cow::Owned(clean) => Cow::Owned(clean),
        }
    }
}

/// Every `scheme://user:password@host` in `text` written `scheme://[redacted]@host`.
pub fn redact_userinfo(text: &str) -> Cow<'_, str> {
    if !text.contains("://") || !text.contains('@') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (before, after) = rest.split_at(at + 3);
        out.push_str(before);
        let authority_end = after
            .find(|c: char| {
                matches!(c, '/' | '?' | '#' | '"' | '\'' | '<' | '>' | '`' | ')')
                    || c.is_whitespace()
            })
            .unwrap_or(after.len());
        let authority = &after[..authority_end];
        match authority.rfind('@') {
            Some(userinfo_end) => {
                out.push_str(REDACTED);
                out.push_str(&authority[userinfo_end..]);
            }
            None => out.push_str(authority),
        }
        rest = &after[authority_end..];
    }
    out.push_str(rest);
    if out == text { Cow::Borrowed(text) } else { Cow::Owned(out) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_and_credentials_are_replaced_wherever_they_appear() {
        let redactor = Redactor::new(["sk-live-0123456789".into(), "short".into()]);
        assert_eq!(
            redactor.redact("bad key sk-live-0123456789 (sk-live-0123456789)"),
            "bad key [redacted] ([redacted])"
        );
        assert_eq!(redactor.redact("a short word"), "a short word", "too short to be a key");
        assert_eq!(
            redactor.redact("cannot reach https://bob:pa55@proxy.example:8080/v1 or http://x/y"),
            "cannot reach https://[redacted]@proxy.example:8080/v1 or http://x/y"
        );
        assert_eq!(
            redact_userinfo("mail me@example.org at https://e.org/@me"),
            "mail me@example.org at https://e.org/@me"
        );
        assert!(matches!(redactor.redact("nothing here"), Cow::Borrowed(_)));
    }
}
