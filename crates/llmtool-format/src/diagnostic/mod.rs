//! Diagnostics as data: a code, a severity, a message, labelled spans, a help line and a fix.
//!
//! Producing a diagnostic never prints anything; the renderers in [`crate::report`] turn a list of
//! them into human, JSON or GitHub output.

use serde::Serialize;

mod rule;

pub use rule::Rule;

use crate::span::Span;

/// How serious a diagnostic is. Ordered from least to most serious.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Style and information: nothing is wrong.
    Info,
    /// Something a good tool file should have, or something unusual but usable.
    Warning,
    /// A value that is present but wrong, or input that is not a tool file.
    Error,
}

impl Severity {
    pub const fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl std::fmt::Display for Severity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A span with an optional short message shown next to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Label {
    pub span: Span,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl Label {
    pub fn new(span: Span) -> Self {
        Self { span, message: None }
    }

    pub fn with_message(span: Span, message: impl Into<String>) -> Self {
        Self { span, message: Some(message.into()) }
    }
}

/// One text replacement: the bytes of `span` become `replacement`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Edit {
    pub span: Span,
    pub replacement: String,
}

impl Edit {
    pub fn replace(span: Span, replacement: impl Into<String>) -> Self {
        Self { span, replacement: replacement.into() }
    }

    pub fn insert(offset: usize, text: impl Into<String>) -> Self {
        Self { span: Span::empty(offset), replacement: text.into() }
    }

    pub fn delete(span: Span) -> Self {
        Self { span, replacement: String::new() }
    }
}

/// A repair: a description and the edits that make it.
///
/// A safe fix keeps the meaning the author evidently intended (deleting a trailing comma) and
/// is applied by `llmtool fmt --fix`; an unsafe one is a guess (renaming a misspelled key to the
/// closest known one) and is only shown as a suggestion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fix {
    pub message: String,
    pub edits: Vec<Edit>,
    pub safe: bool,
}

/// One finding about a tool file or about the values given to it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diagnostic {
    #[serde(serialize_with = "serialize_rule_code")]
    pub rule: &'static Rule,
    pub severity: Severity,
    pub message: String,
    /// Where the problem is; `None` for problems that are not in the file (a value given on the
    /// command line for a variable that does not exist, say).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub primary: Option<Label>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub secondary: Vec<Label>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<Fix>,
}

#[allow(clippy::trivially_copy_pass_by_ref, reason = "serde passes fields by reference")]
fn serialize_rule_code<S: serde::Serializer>(rule: &&Rule, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(rule.code)
}

impl Diagnostic {
    /// A diagnostic of `rule` at its default severity.
    pub fn new(rule: &'static Rule, message: impl Into<String>) -> Self {
        Self {
            rule,
            severity: rule.severity,
            message: message.into(),
            primary: None,
            secondary: Vec::new(),
            help: None,
            fix: None,
        }
    }

    /// This diagnostic with every span moved `by` bytes later (for text that was read after
    /// a prefix of its file, such as a byte-order mark, was set aside).
    #[must_use]
    pub fn shifted(mut self, by: usize) -> Self {
        let shift = |span: &mut Span| *span = Span::new(span.start + by, span.end + by);
        let labels = self.primary.iter_mut().chain(self.secondary.iter_mut());
        labels.for_each(|label| shift(&mut label.span));
        for edit in self.fix.iter_mut().flat_map(|fix| fix.edits.iter_mut()) {
            shift(&mut edit.span);
        }
        self
    }

    #[must_use]
    pub fn at(mut self, span: Span) -> Self {
        self.primary = Some(Label::new(span));
        self
    }

    #[must_use]
    pub fn at_labelled(mut self, span: Span, message: impl Into<String>) -> Self {
        self.primary = Some(Label::with_message(span, message));
        self
    }

    #[must_use]
    pub fn with_secondary(mut self, span: Span, message: impl Into<String>) -> Self {
        self.secondary.push(Label::with_message(span, message));
        self
    }

    #[must_use]
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Adds a safe fix, applied by `fmt --fix`.
    #[must_use]
    pub fn with_fix(mut self, message: impl Into<String>, edits: Vec<Edit>) -> Self {
        self.fix = Some(Fix { message: message.into(), edits, safe: true });
        self
    }

    /// Adds an unsafe fix: a likely repair that is shown but never applied automatically.
    #[must_use]
    pub fn with_suggestion(mut self, message: impl Into<String>, edits: Vec<Edit>) -> Self {
        self.fix = Some(Fix { message: message.into(), edits, safe: false });
        self
    }

    pub fn code(&self) -> &'static str {
        self.rule.code
    }

    /// The byte offset the diagnostic is sorted by: its primary span, or the start of the file.
    pub fn offset(&self) -> usize {
        self.primary.as_ref().map_or(0, |label| label.span.start)
    }
}

/// Sort diagnostics by position, then code, the order every renderer shows them in.
pub fn sort(diagnostics: &mut [Diagnostic]) {
    diagnostics
        .sort_by(|a, b| a.offset().cmp(&b.offset()).then_with(|| a.rule.code.cmp(b.rule.code)));
}

/// Counts of diagnostics by severity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub errors: usize,
    pub warnings: usize,
    pub infos: usize,
}

impl Summary {
    pub fn of<'a>(diagnostics: impl IntoIterator<Item = &'a Diagnostic>) -> Self {
        let mut summary = Summary::default();
        for diagnostic in diagnostics {
            summary.add(diagnostic.severity);
        }
        summary
    }

    pub fn add(&mut self, severity: Severity) {
        match severity {
            Severity::Error => self.errors += 1,
            Severity::Warning => self.warnings += 1,
            Severity::Info => self.infos += 1,
        }
    }

    /// Whether these findings fail a check: any error, or any warning under `--strict`.
    pub const fn fails(&self, strict: bool) -> bool {
        self.errors > 0 || (strict && self.warnings > 0)
    }
}
