//! LT405: `allowed_values` on an expected output that is not `limited`.

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::rules::Context;

declare_rule! {
    /// `expected_output` has `allowed_values` but its type is not `limited`, so they are
    /// ignored.
    ///
    /// ```json
    /// "expected_output": { "type": "text", "allowed_values": ["yes", "no"] }
    /// ```
    pub static OUTPUT_VALUES_IGNORED = ("LT405", "output-values-ignored", Warning);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let Some(output) = cx.tool.metadata.as_ref().and_then(|m| m.expected_output.as_ref()) else {
        return;
    };
    let is_limited = output.kind.as_ref().is_some_and(|k| k.value == "limited");
    if let (Some(list), false) = (&output.allowed_values, is_limited) {
        out.push(
            Diagnostic::new(
                &OUTPUT_VALUES_IGNORED,
                "`allowed_values` is ignored unless the type is `limited`",
            )
            .at(list.span)
            .with_help("set `\"type\": \"limited\"` to restrict the answer to these values"),
        );
    }
}
