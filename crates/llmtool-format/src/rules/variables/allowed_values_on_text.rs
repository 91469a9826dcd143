//! LT210: `allowed_values` on a text variable.

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::rules::Context;

declare_rule! {
    /// A `text` variable has `allowed_values`.
    ///
    /// A text variable takes any text, so the list is ignored. If the value must be one of the
    /// list, make the variable a `single-select`.
    ///
    /// ```json
    /// { "name": "tone", "type": "text", "allowed_values": ["formal", "casual"] }
    /// ```
    pub static ALLOWED_VALUES_ON_TEXT = ("LT210", "allowed-values-on-text", Warning);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    // A variable of an unknown type is left out: its type is reported once (LT204).
    for variable in cx.tool.variables().iter().filter(|v| !v.kind_unknown()) {
        if let (Some(list), false) = (&variable.allowed_values, variable.kind().is_select()) {
            out.push(
                Diagnostic::new(
                    &ALLOWED_VALUES_ON_TEXT,
                    format!(
                        "text variable `{}` has `allowed_values`, which text ignores",
                        variable.name.value
                    ),
                )
                .at(list.span)
                .with_help("make it a `single-select` to restrict the value, or remove the list"),
            );
        }
    }
}
