//! The whole check of one tool file in one call: decode, parse, lower, run the rules.

use crate::diagnostic::{self, Diagnostic, Severity, Summary};
use crate::model::{Tool, lower};
use crate::rules::{Context, run_checks};
use crate::syntax::{self, codes};
use crate::template::ToolTemplate;

/// A checked tool file: its text, typed model and every diagnostic, sorted by position. (The
/// syntax tree is not kept: formatting parses the text again.)
#[derive(Debug, Clone)]
pub struct Document {
    /// The source text (invalid UTF-8 bytes replaced by `?`, so offsets match the file).
    pub text: String,
    /// The lowered tool; `None` when the file holds no JSON object at all.
    pub tool: Option<Tool>,
    pub diagnostics: Vec<Diagnostic>,
}

impl Document {
    /// Checks raw file bytes.
    pub fn from_bytes(bytes: &[u8]) -> Self {
        let (text, mut diagnostics) = syntax::decode_utf8(bytes);
        let mut document = Self::from_text(text.into_owned());
        document.diagnostics.append(&mut diagnostics);
        diagnostic::sort(&mut document.diagnostics);
        document
    }

    /// Checks raw file bytes it may keep: valid UTF-8 becomes the text without a copy.
    pub fn from_vec(bytes: Vec<u8>) -> Self {
        match syntax::utf8_string(bytes) {
            Ok(text) => Self::from_text(text),
            Err(bytes) => Self::from_bytes(&bytes),
        }
    }

    /// Checks source text.
    pub fn from_text(text: String) -> Self {
        let mut tree = syntax::parse(&text);
        let mut diagnostics = std::mem::take(&mut tree.diagnostics);
        // Lowering takes the strings out of the tree, which is dropped before the rules run:
        // a large file is held about twice (its text and its tool), not four times.
        let lowered = tree.root.as_mut().filter(|root| root.as_object().is_some()).map(lower);
        drop(tree);
        let tool = lowered.map(|(tool, mut found)| {
            diagnostics.append(&mut found);
            diagnostics.extend(run_checks(&Context::new(&text, &tool)));
            tool
        });
        diagnostic::sort(&mut diagnostics);
        Self { text, tool, diagnostics }
    }

    pub fn summary(&self) -> Summary {
        Summary::of(&self.diagnostics)
    }

    /// Whether the file is not valid JSON (beyond what `fmt --fix` could still read).
    pub fn has_syntax_errors(&self) -> bool {
        self.diagnostics.iter().any(|d| d.severity == Severity::Error && codes::is_syntax(d.rule))
    }

    /// The tool ready to render, when the file has no errors.
    pub fn template(&self) -> Option<ToolTemplate> {
        if self.summary().errors > 0 {
            return None;
        }
        self.tool.as_ref().map(ToolTemplate::new)
    }

    /// Raises warnings to errors, as `--strict` does.
    pub fn make_strict(&mut self) {
        for diagnostic in &mut self.diagnostics {
            if diagnostic.severity == Severity::Warning {
                diagnostic.severity = Severity::Error;
            }
        }
    }
}
