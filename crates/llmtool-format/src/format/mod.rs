//! The canonical form of a tool file, and applying fixes.

mod canonical;
mod fix;

pub use canonical::canonical;
pub use fix::apply_safe_fixes;

use crate::diagnostic::Diagnostic;
use crate::document::Document;
use crate::syntax::codes;

/// How many rounds of fixes `fmt --fix` applies at most (each round re-checks the file).
const MAX_FIX_ROUNDS: usize = 8;

/// The result of formatting one file.
#[derive(Debug, Clone)]
pub struct Formatted {
    /// The canonical text.
    pub text: String,
    /// How many fixes were applied before formatting.
    pub fixes_applied: usize,
    /// The diagnostics of the (fixed) file.
    pub diagnostics: Vec<Diagnostic>,
}

/// Why a file could not be formatted.
#[derive(Debug, Clone, thiserror::Error)]
#[error("the file is not valid JSON (fix the errors first, or try `--fix`)")]
pub struct NotFormattable {
    /// The syntax diagnostics that block formatting.
    pub diagnostics: Vec<Diagnostic>,
    /// The text after any fixes that were applied.
    pub text: String,
}

/// Formats a tool file's source text into its canonical form. With `fix`, safe fixes are
/// applied first. Any syntax problem left (a comment included, which the canonical form cannot
/// hold) makes the file not formattable, and nothing is lost.
pub fn format_source(text: &str, fix: bool) -> Result<Formatted, NotFormattable> {
    let mut document = Document::from_text(text.to_owned());
    let mut fixes_applied = 0;
    if fix {
        for _ in 0..MAX_FIX_ROUNDS {
            let (fixed, applied) = apply_safe_fixes(&document.text, &document.diagnostics);
            if applied == 0 {
                break;
            }
            fixes_applied += applied;
            document = Document::from_text(fixed);
        }
    }
    match canonical_text(&document) {
        Some(text) => Ok(Formatted { text, fixes_applied, diagnostics: document.diagnostics }),
        None => {
            let blocking =
                document.diagnostics.iter().filter(|d| codes::is_syntax(d.rule)).cloned().collect();
            Err(NotFormattable { diagnostics: blocking, text: document.text })
        }
    }
}

/// The canonical form of a checked document, or `None` when a syntax problem (a comment
/// included, which the canonical form cannot hold) leaves it without one.
pub fn canonical_text(document: &Document) -> Option<String> {
    if document.diagnostics.iter().any(|d| codes::is_syntax(d.rule)) {
        return None;
    }
    let tree = crate::syntax::parse(&document.text);
    let root = tree.root.as_ref().filter(|r| r.as_object().is_some() && !r.has_error())?;
    Some(canonical(root))
}
