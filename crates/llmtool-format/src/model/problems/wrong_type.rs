//! LT102: a field holds a JSON value of the wrong type.

use crate::declare_rule;
use crate::diagnostic::{Diagnostic, Edit};
use crate::syntax::Node;

declare_rule! {
    /// A field holds a value of the wrong JSON type.
    ///
    /// Each field of the format has one type: `model_prompt` is a string, `metadata` an object,
    /// `allowed_values` a list of strings, a parameter a number. A number where a string is due
    /// (a `version` of `1.5`, a `prompt_name` of `42`) gets a fix that quotes it.
    ///
    /// ```json
    /// { "model_prompt": ["Summarize", "{{text}}"] }
    /// ```
    pub static WRONG_TYPE = ("LT102", "wrong-type", Error);
}

pub(crate) fn diagnostic(node: &Node, path: impl std::fmt::Display, expected: &str) -> Diagnostic {
    Diagnostic::new(&WRONG_TYPE, format!("`{path}` must be {expected}, found {}", node.kind_name()))
        .at(node.span)
}

/// A number where a string is due: offers to quote it.
pub(crate) fn quotable(
    node: &Node,
    path: impl std::fmt::Display,
    expected: &str,
    raw: &str,
) -> Diagnostic {
    diagnostic(node, path, expected).with_fix(
        format!("write `\"{raw}\"`"),
        vec![Edit::replace(node.span, format!("\"{raw}\""))],
    )
}
