//! The secrets of this process (the configured keys, the MCP token), kept out of everything it
//! prints: errors, logs at every level, JSON reports, dry runs and tool errors sent to clients.

use std::borrow::Cow;
use std::sync::{LazyLock, RwLock};

use llmtool_providers::Redactor;
use llmtool_providers::resolve::Providers;

static REDACTOR: LazyLock<RwLock<Redactor>> = LazyLock::new(RwLock::default);

/// Hides the secrets `providers` knows of from now on (with those of the environment alone
/// before a config file is read).
pub(crate) fn learn(providers: &Providers) {
    let redactor = providers.redactor();
    match REDACTOR.write() {
        Ok(mut current) => *current = redactor,
        Err(poisoned) => *poisoned.into_inner() = redactor,
    }
}

/// Also hides `secret` (a token read from a file, say).
pub(crate) fn add(secret: &str) {
    let mut current = REDACTOR.write().unwrap_or_else(std::sync::PoisonError::into_inner);
    *current = current.with(secret);
}

/// `text` with every known secret, and every URL's credentials, replaced.
pub(crate) fn redact(text: &str) -> Cow<'_, str> {
    let redactor = REDACTOR.read().unwrap_or_else(std::sync::PoisonError::into_inner);
    match redactor.redact(text) {
        Cow::Borrowed(_) => Cow::Borrowed(text),
        Cow::Owned(clean) => Cow::Owned(clean),
    }
}

/// Standard error for log lines, each redacted before it is written (a line is written whole
/// when the logger drops the writer, once per event).
pub(crate) struct RedactedStderr {
    line: Vec<u8>,
}

impl std::io::Write for RedactedStderr {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.line.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let text = String::from_utf8_lossy(&self.line).into_owned();
        self.line.clear();
        std::io::stderr().lock().write_all(redact(&text).as_bytes())
    }
}

impl Drop for RedactedStderr {
    fn drop(&mut self) {
        let _ = std::io::Write::flush(self);
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for RedactedStderrMaker {
    type Writer = RedactedStderr;

    fn make_writer(&'a self) -> Self::Writer {
        RedactedStderr { line: Vec::new() }
    }
}

/// Makes a [`RedactedStderr`] for each log event.
pub(crate) struct RedactedStderrMaker;
