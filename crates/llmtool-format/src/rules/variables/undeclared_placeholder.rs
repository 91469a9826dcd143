//! LT212: a `{{...}}` in the prompt that names no declared variable.

use crate::declare_rule;
use crate::diagnostic::{Diagnostic, Edit};
use crate::rules::Context;
use crate::suggest::closest;

declare_rule! {
    /// `model_prompt` has a `{{...}}` that is not a declared variable.
    ///
    /// When `metadata.variables` is present, only declared names are placeholders; anything
    /// else in double braces is kept as literal text. That is right for prompts that talk
    /// about Jinja, Handlebars or Vue code, but is more often a typo, so the closest declared
    /// name is suggested.
    ///
    /// ```json
    /// { "model_prompt": "Write about {{topik}}.", "metadata": { "variables": [{ "name": "topic", "type": "text" }] } }
    /// ```
    pub static UNDECLARED_PLACEHOLDER = ("LT212", "undeclared-placeholder", Warning);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    if !cx.tool.declares_variables() {
        return;
    }
    // In order, for the suggestions: the first closest wins.
    let declared = cx.declared_names();
    // The prompt is read again, for each placeholder's place, only when some name is stray.
    if cx.placeholder_names().names().all(|name| declared.contains(name)) {
        return;
    }
    for placeholder in cx.placeholders() {
        if declared.contains(placeholder.name) {
            continue;
        }
        let span = cx.prompt_span(placeholder.range.clone());
        let mut diagnostic = Diagnostic::new(
            &UNDECLARED_PLACEHOLDER,
            format!(
                "`{{{{{}}}}}` is not a declared variable; it is kept as literal text",
                placeholder.name
            ),
        )
        .at(span);
        diagnostic = match closest(placeholder.name, declared.names()) {
            Some(near) => {
                diagnostic.with_help(format!("did you mean `{{{{{near}}}}}`?")).with_suggestion(
                    format!("write `{{{{{near}}}}}`"),
                    vec![Edit::replace(span, format!("{{{{{near}}}}}"))],
                )
            }
            None => diagnostic.with_help(format!(
                "declare `{}` in `metadata.variables` if it should be filled in",
                placeholder.name
            )),
        };
        out.push(diagnostic);
    }
}
