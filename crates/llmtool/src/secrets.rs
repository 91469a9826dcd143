//! The secrets of this process (the configured keys, the MCP token), kept out of everything it
//! prints: errors, logs at every level, JSON reports, dry runs and tool errors sent to clients.

use std::borrow::Cow;
use std::sync::{LazyLock, RwLock};

use llmtool_providers::Redactor;
use llmtool_providers::resolve::Providers;

static REDACTOR: LazyLock<RwLock<Secrets>> = LazyLock::new(RwLock::default);

/// What is hidden: the providers' keys, plus secrets added one by one (a token from a file).
#[derive(Default)]
struct Secrets {
    from_providers: Redactor,
    added: Vec<String>,
    redactor: Redactor,
}

impl Secrets {
    fn rebuild(&mut self) {
        self.redactor = self.from_providers.with_all(&self.added);
    }
}

/// Hides the secrets `providers` knows of from now on (with those of the environment alone
/// before a config file is read), besides every secret [`add`]ed.
pub(crate) fn learn(providers: &Providers) {
    let mut secrets = REDACTOR.write().unwrap_or_else(std::sync::PoisonError::into_inner);
    secrets.from_providers = providers.redactor();
    secrets.rebuild();
}

/// Also hides `secret` (a token read from a file, say), whatever is learnt later.
pub(crate) fn add(secret: &str) {
    let mut secrets = REDACTOR.write().unwrap_or_else(std::sync::PoisonError::into_inner);
    secrets.added.push(secret.to_owned());
    secrets.rebuild();
}

/// `text` with every known secret, and every URL's credentials, replaced.
pub(crate) fn redact(text: &str) -> Cow<'_, str> {
    let secrets = REDACTOR.read().unwrap_or_else(std::sync::PoisonError::into_inner);
    match secrets.redactor.redact(text) {
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

#[cfg(test)]
mod tests {
    use llmtool_config::{Config, Env};

    use super::*;

    #[test]
    fn an_added_secret_survives_learning_the_providers_again() {
        add("token-from-a-file-0123");
        learn(&Providers::new(
            Config::default(),
            Env::from_pairs([("OPENAI_API_KEY", "sk-env-key-4567")]),
        ));
        assert_eq!(
            redact("a token-from-a-file-0123 b sk-env-key-4567"),
            "a [redacted] b [redacted]"
        );
    }
}
