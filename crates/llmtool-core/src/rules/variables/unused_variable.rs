//! LT211: a declared variable that the prompt never uses.

use std::collections::HashSet;

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::rules::Context;

declare_rule! {
    /// A variable is declared but `model_prompt` has no `{{name}}` for it.
    ///
    /// Its value would be asked for and then thrown away. Usually the placeholder is misspelled
    /// (see LT212) or the variable is left over from an older prompt.
    ///
    /// ```json
    /// { "model_prompt": "Summarize the text.", "metadata": { "variables": [{ "name": "text", "type": "text" }] } }
    /// ```
    pub static UNUSED_VARIABLE = ("LT211", "unused-variable", Warning);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    if cx.tool.model_prompt.is_none() {
        return;
    }
    let used: HashSet<&str> = cx.placeholders().map(|p| p.name).collect();
    for variable in cx.tool.variables() {
        let name = variable.name.value.trim();
        // An empty name or one with braces has its own, clearer diagnostic (LT201, LT203).
        let unusable = name.is_empty() || name.contains("{{") || name.contains("}}");
        if !unusable && !used.contains(&name) {
            out.push(
                Diagnostic::new(&UNUSED_VARIABLE, format!("variable `{name}` is never used in `model_prompt`"))
                    .at(variable.name.span)
                    .with_help(format!("add `{{{{{name}}}}}` to the prompt where its value belongs, or remove the variable")),
            );
        }
    }
}
