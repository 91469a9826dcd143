//! LT402: a `limited` expected output without allowed values.

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::rules::Context;

declare_rule! {
    /// `expected_output.type` is `limited` but `allowed_values` is missing or empty.
    ///
    /// A limited output is one of a fixed list of answers (a classifier's labels); the list is
    /// what the answer is checked against.
    ///
    /// ```json
    /// "expected_output": { "type": "limited" }
    /// ```
    pub static LIMITED_WITHOUT_VALUES = ("LT402", "limited-without-values", Error);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let Some(output) = cx.tool.metadata.as_ref().and_then(|m| m.expected_output.as_ref()) else {
        return;
    };
    let Some(kind) = output.kind.as_ref().filter(|k| k.value == "limited") else { return };
    let span = match &output.allowed_values {
        Some(list) if !list.value.is_empty() => return,
        Some(list) => list.span,
        None => kind.span,
    };
    out.push(
        Diagnostic::new(
            &LIMITED_WITHOUT_VALUES,
            "a `limited` expected output needs `allowed_values`",
        )
        .at(span)
        .with_help("list the answers the model may give: `\"allowed_values\": [\"yes\", \"no\"]`"),
    );
}
