//! LT201: a variable has no name.

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::rules::Context;

declare_rule! {
    /// A variable's `name` is missing, empty or only whitespace.
    ///
    /// The name is what `{{name}}` in the prompt refers to and what a user fills in.
    ///
    /// ```json
    /// { "name": " ", "type": "text" }
    /// ```
    pub static EMPTY_VARIABLE_NAME = ("LT201", "empty-variable-name", Error);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    for (i, variable) in cx.tool.variables().iter().enumerate() {
        if variable.name.value.trim().is_empty() {
            let message = if variable.name.span.is_empty() {
                format!("variable #{} has no `name`", i + 1)
            } else {
                format!("variable #{} has an empty `name`", i + 1)
            };
            out.push(
                Diagnostic::new(&EMPTY_VARIABLE_NAME, message)
                    .at(variable.name.span)
                    .with_help("name it after the `{{placeholder}}` it fills"),
            );
        }
    }
}
