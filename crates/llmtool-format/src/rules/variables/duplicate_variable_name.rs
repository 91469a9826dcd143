//! LT202: two variables share a name.

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::rules::Context;
use crate::rules::names::NameMap;

declare_rule! {
    /// Two variables have the same name (after trimming).
    ///
    /// A placeholder could not tell which of them it means, and their types or defaults may
    /// disagree.
    ///
    /// ```json
    /// "variables": [{ "name": "topic", "type": "text" }, { "name": "topic", "type": "text" }]
    /// ```
    pub static DUPLICATE_VARIABLE_NAME = ("LT202", "duplicate-variable-name", Error);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let mut first = NameMap::default();
    for variable in cx.tool.variables() {
        let name = variable.name.value.trim();
        if name.is_empty() {
            continue;
        }
        if let Some(&original) = first.get(name) {
            out.push(
                Diagnostic::new(
                    &DUPLICATE_VARIABLE_NAME,
                    format!("variable `{name}` is declared twice"),
                )
                .at_labelled(variable.name.span, "declared again here")
                .with_secondary(original, "first declared here")
                .with_help("rename one of them, or remove the copy"),
            );
        } else {
            first.insert(name, variable.name.span);
        }
    }
}
