//! LT401: an expected-output type other than text, code or limited.

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::rules::Context;
use crate::suggest::closest;

declare_rule! {
    /// `expected_output.type` is not `text`, `code`, `limited` or `image`.
    ///
    /// Other types are kept, but nothing is enforced for them when the tool runs.
    ///
    /// ```json
    /// "expected_output": { "type": "markdown" }
    /// ```
    pub static UNKNOWN_OUTPUT_TYPE = ("LT401", "unknown-output-type", Warning);
}

pub const OUTPUT_TYPES: [&str; 4] = ["text", "code", "limited", "image"];

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let Some(kind) = cx
        .tool
        .metadata
        .as_ref()
        .and_then(|m| m.expected_output.as_ref())
        .and_then(|o| o.kind.as_ref())
    else {
        return;
    };
    if OUTPUT_TYPES.contains(&kind.value.as_str()) {
        return;
    }
    let diagnostic = Diagnostic::new(
        &UNKNOWN_OUTPUT_TYPE,
        format!("unknown expected-output type `{}`", kind.value),
    )
    .at(kind.span);
    out.push(match closest(&kind.value, OUTPUT_TYPES) {
        Some(near) => diagnostic.with_help(format!("did you mean `{near}`?")),
        None => diagnostic.with_help(
            "the types are `text`, `code`, `limited` and `image`; use `format` for JSON, XML or CSV",
        ),
    });
}
