//! LT215: a variable without a `description`.

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::rules::Context;

declare_rule! {
    /// A variable has no `description`.
    ///
    /// The description is what a form, an MCP client or a model calling the tool shows to say
    /// what to fill in.
    ///
    /// ```json
    /// { "name": "topic", "type": "text" }
    /// ```
    pub static MISSING_VARIABLE_DESCRIPTION = ("LT215", "missing-variable-description", Warning);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    for variable in cx.tool.variables() {
        if variable.description.is_none() && !variable.name.value.trim().is_empty() {
            out.push(
                Diagnostic::new(
                    &MISSING_VARIABLE_DESCRIPTION,
                    format!("variable `{}` has no `description`", variable.name.value),
                )
                .at(variable.name.span)
                .with_help("say what to fill in, with an example"),
            );
        }
    }
}
