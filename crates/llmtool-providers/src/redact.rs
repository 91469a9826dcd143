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

    /// A redactor of this one's secrets and `other`'s.
    #[must_use]
    pub fn merged(&self, other: &Redactor) -> Self {
        self.with_all(&other.secrets)
    }

    /// `text` with every secret and every URL's credentials replaced by [`REDACTED`].
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let text = self.hide_secrets(text);
        match redact_userinfo(&text) {
            Cow::Borrowed(_) => text,
            Cow::Owned(clean) => Cow::Owned(clean),
        }
    }

    /// `text` with every configured secret replaced by [`REDACTED`], and nothing else changed:
    /// for a model's answer, which may echo a key back but whose example URLs are its own.
    pub fn hide_secrets<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut text = Cow::Borrowed(text);
        for secret in &self.secrets {
            if text.contains(secret.as_str()) {
                text = Cow::Owned(text.replace(secret.as_str(), REDACTED));
            }
        }
        text
    }

    /// A hider of this redactor's secrets in a stream of text (see [`SecretStream`]).
    pub fn stream(&self) -> SecretStream<'_> {
        SecretStream { redactor: self, pending: String::new() }
    }

    /// How many bytes at the end of `text` begin some secret without completing it.
    fn partial_tail(&self, text: &str) -> usize {
        self.secrets
            .iter()
            .filter_map(|secret| {
                (1..secret.len().min(text.len() + 1))
                    .rev()
                    .find(|&k| secret.is_char_boundary(k) && text.ends_with(&secret[..k]))
            })
            .max()
            .unwrap_or(0)
    }
}

/// Hides secrets in text that arrives in pieces (an answer streamed chunk by chunk): text is
/// passed on once no secret can span it and what comes next, so a key the provider echoes
/// back is hidden even when its chunks cut it in two. What is held back is shorter than the
/// longest secret.
#[derive(Debug)]
pub struct SecretStream<'r> {
    redactor: &'r Redactor,
    pending: String,
}

impl SecretStream<'_> {
    /// The text that can be shown now, `chunk` included.
    pub fn push(&mut self, chunk: &str) -> String {
        if self.redactor.secrets.is_empty() {
            return chunk.to_owned();
        }
        self.pending.push_str(chunk);
        let clean = self.redactor.hide_secrets(&self.pending).into_owned();
        let ready = clean.len() - self.redactor.partial_tail(&clean);
        clean[ready..].clone_into(&mut self.pending);
        let mut shown = clean;
        shown.truncate(ready);
        shown
    }

    /// What was held back, at the end of the stream.
    pub fn finish(&mut self) -> String {
        std::mem::take(&mut self.pending)
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
    fn a_stream_hides_a_secret_cut_at_any_byte() {
        let key = "sk-live-0123456789abcdef";
        let redactor = Redactor::new([key.to_owned(), "another-secret-value".to_owned()]);
        let answer = format!("your key is {key}, and {key}. sk-live-0 is not one.");
        let whole = redactor.hide_secrets(&answer).into_owned();
        assert!(!whole.contains("0123456789"), "{whole}");
        for cut in 0..=answer.len() {
            for second in cut..=answer.len() {
                let mut stream = redactor.stream();
                let mut shown = stream.push(&answer[..cut]);
                shown += &stream.push(&answer[cut..second]);
                shown += &stream.push(&answer[second..]);
                shown += &stream.finish();
                assert_eq!(shown, whole, "cut at {cut} and {second}");
            }
        }
    }

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
