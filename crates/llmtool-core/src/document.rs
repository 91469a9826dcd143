//! The whole check of one tool file in one call: decode, parse, lower, run the rules.

use crate::diagnostic::{self, Diagnostic, Severity, Summary};
use crate::model::{Tool, lower};
use crate::rules::{Context, run_checks};
use crate::syntax::{self, SyntaxTree, codes};
use crate::template::ToolTemplate;

/// A checked tool file: its text, tree, typed model and every diagnostic, sorted by position.
#[derive(Debug, Clone)]
pub struct Document {
    /// The source text (invalid UTF-8 bytes replaced by `?`, so offsets match the file).
    pub text: String,
    pub tree: SyntaxTree,
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

    /// Checks source text.
    pub fn from_text(text: String) -> Self {
        let tree = syntax::parse(&text);
        let mut diagnostics = tree.diagnostics.clone();
        let tool = tree.root.as_ref().filter(|root| root.as_object().is_some()).map(|root| {
            let (tool, mut found) = lower(root);
            diagnostics.append(&mut found);
            diagnostics.extend(run_checks(&Context::new(&text, &tool)));
            tool
        });
        diagnostic::sort(&mut diagnostics);
        Self { text, tree, tool, diagnostics }
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
