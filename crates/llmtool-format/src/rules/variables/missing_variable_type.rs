//! LT214: a variable without a `type`.

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::rules::Context;

declare_rule! {
    /// A variable has no `type`; it is read as `text`.
    ///
    /// ```json
    /// { "name": "topic", "description": "What to write about" }
    /// ```
    pub static MISSING_VARIABLE_TYPE = ("LT214", "missing-variable-type", Warning);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    // A smart tool's variables have no type in its format: each is a text value.
    if cx.tool.kind() == crate::model::ToolKind::Smart {
        return;
    }
    for variable in cx.tool.variables() {
        if variable.type_written.is_none() {
            out.push(
                Diagnostic::new(
                    &MISSING_VARIABLE_TYPE,
                    format!("variable `{}` has no `type`; read as `text`", variable.name.value),
                )
                .at(variable.name.span)
                .with_help("add `\"type\": \"text\"`, `\"single-select\"` or `\"multi-select\"`"),
            );
        }
    }
}
