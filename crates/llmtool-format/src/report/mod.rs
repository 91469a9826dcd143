//! Showing diagnostics: to people (rustc-style snippets), to programs (JSON) and to GitHub
//! Actions (workflow annotations). Each renderer is a pure function from diagnostics to text.

mod github;
mod human;
mod json;

pub use github::github;
pub use human::human;
pub use json::{JsonDiagnostic, json_records};

use crate::span::{LineColumn, LineIndex, Span};

/// A file's name and text, with the line index its diagnostics are located by.
#[derive(Debug)]
pub struct Source<'a> {
    pub path: &'a str,
    pub text: &'a str,
    lines: LineIndex,
}

impl<'a> Source<'a> {
    pub fn new(path: &'a str, text: &'a str) -> Self {
        Self { path, text, lines: LineIndex::new(text) }
    }

    pub fn line_column(&self, offset: usize) -> LineColumn {
        self.lines.line_column(self.text, offset)
    }

    /// The byte range of the line holding `offset`, without its line break.
    pub fn line_range(&self, offset: usize) -> std::ops::Range<usize> {
        self.lines.line_range(self.text, offset)
    }

    /// Start and end line:column of a span.
    pub fn locate(&self, span: Span) -> (LineColumn, LineColumn) {
        (self.line_column(span.start), self.line_column(span.end))
    }
}
