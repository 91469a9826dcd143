//! LT302: a numeric parameter written as a string.

use crate::declare_rule;
use crate::diagnostic::{Diagnostic, Edit};
use crate::syntax::Node;

declare_rule! {
    /// A model parameter is a number written as a string, such as `"0.7"`.
    ///
    /// The format's own example shows the types as strings (`"temperature": "float"`), so such
    /// files are common. llmtool reads the number; the fix (and `fmt`) writes it unquoted.
    ///
    /// ```json
    /// "parameters": { "temperature": "0.7" }
    /// ```
    pub static NUMBER_AS_STRING = ("LT302", "number-as-string", Warning);
}

pub(crate) fn diagnostic(node: &Node, path: impl std::fmt::Display, number: &str) -> Diagnostic {
    Diagnostic::new(&NUMBER_AS_STRING, format!("`{path}` is a number written as a string"))
        .at(node.span)
        .with_fix(format!("write `{number}`"), vec![Edit::replace(node.span, number)])
}
