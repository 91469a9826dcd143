//! LT213: the prompt's placeholders are implicit text variables.

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::rules::Context;

declare_rule! {
    /// `metadata.variables` is absent, so every `{{name}}` in the prompt is a required `text`
    /// variable.
    ///
    /// The tool works, but gives no descriptions, defaults or choices. Declaring the variables
    /// makes it self-explaining.
    ///
    /// ```json
    /// { "model_prompt": "Translate {{text}} into {{language}}." }
    /// ```
    pub static IMPLICIT_VARIABLES = ("LT213", "implicit-variables", Info);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    if cx.tool.declares_variables() {
        return;
    }
    let names = cx.placeholder_names();
    let Some(prompt) = &cx.tool.model_prompt else { return };
    if !names.is_empty() {
        let listed: Vec<String> = names.names().map(|n| format!("`{n}`")).collect();
        out.push(
            Diagnostic::new(
                &IMPLICIT_VARIABLES,
                format!(
                    "no `metadata.variables`: {} read as required text variables",
                    listed.join(", ")
                ),
            )
            .at(prompt.span)
            .with_help(
                "declare them in `metadata.variables` to give descriptions, defaults or choices",
            ),
        );
    }
}
