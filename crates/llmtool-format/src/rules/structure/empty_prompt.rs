//! LT107: `model_prompt` is empty.

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::rules::Context;

declare_rule! {
    /// `model_prompt` is empty or only whitespace.
    ///
    /// The model would be sent nothing.
    ///
    /// ```json
    /// { "model_prompt": "  " }
    /// ```
    pub static EMPTY_PROMPT = ("LT107", "empty-prompt", Warning);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    if let Some(prompt) = &cx.tool.model_prompt
        && prompt.value.trim().is_empty()
    {
        out.push(Diagnostic::new(&EMPTY_PROMPT, "`model_prompt` is empty").at(prompt.span));
    }
}
