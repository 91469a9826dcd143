//! LT206: a select variable without choices.

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::rules::Context;

declare_rule! {
    /// A `single-select` or `multi-select` variable has no `allowed_values`, or an empty list.
    ///
    /// A select offers a fixed list of choices; without them there is nothing to pick.
    ///
    /// ```json
    /// { "name": "tone", "type": "single-select", "default": "formal" }
    /// ```
    pub static MISSING_ALLOWED_VALUES = ("LT206", "missing-allowed-values", Error);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    // A variable of an unknown type is left out: its type is reported once (LT204).
    for variable in cx.tool.variables().iter().filter(|v| !v.kind_unknown()) {
        let kind = variable.kind();
        if !kind.is_select() {
            continue;
        }
        let (span, message) = match &variable.allowed_values {
            None => (
                variable.name.span,
                format!("{kind} variable `{}` has no `allowed_values`", variable.name.value),
            ),
            Some(list) if list.value.is_empty() => (
                list.span,
                format!("{kind} variable `{}` has an empty `allowed_values`", variable.name.value),
            ),
            Some(_) => continue,
        };
        out.push(
            Diagnostic::new(&MISSING_ALLOWED_VALUES, message)
                .at(span)
                .with_help("list the choices: `\"allowed_values\": [\"a\", \"b\"]`"),
        );
    }
}
