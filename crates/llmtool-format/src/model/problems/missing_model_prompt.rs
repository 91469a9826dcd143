//! LT101: the file has no `model_prompt`.

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::span::Span;

declare_rule! {
    /// The file has no `model_prompt`, the one field every tool needs.
    ///
    /// `model_prompt` is the prompt template itself; without it there is nothing to render or
    /// run. Everything else in the format is optional.
    ///
    /// ```json
    /// { "metadata": { "prompt_name": "Summarizer" } }
    /// ```
    pub static MISSING_MODEL_PROMPT = ("LT101", "missing-model-prompt", Error);
}

pub(crate) fn diagnostic(root: Span) -> Diagnostic {
    Diagnostic::new(&MISSING_MODEL_PROMPT, "the tool has no `model_prompt`")
        .at_labelled(Span::new(root.start, (root.start + 1).min(root.end)), "in this object")
        .with_help("add `\"model_prompt\": \"...\"` with the prompt text and its {{variables}}")
}
