//! LT106: a smart tool that also has a `model_prompt`, which its runs do not use.

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::rules::Context;

declare_rule! {
    /// The file has `tool_code`, so it is a "smart tool" (the sibling format whose Python
    /// `execute(variables)` gives the answer), and also a `model_prompt`. A run executes the
    /// code, in the sandbox and only when asked; the prompt is kept, converted and shown, but
    /// never sent. To send a prompt from the code, call `llm(prompt)` there.
    ///
    /// ```json
    /// { "model_prompt": "Weather in {{city}}", "tool_code": "def execute(variables):\n    return 'sunny'" }
    /// ```
    pub static SMART_TOOL = ("LT106", "smart-tool", Info);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    if let (Some(code), Some(prompt)) = (cx.tool.code(), &cx.tool.model_prompt) {
        out.push(
            Diagnostic::new(
                &SMART_TOOL,
                "this is a smart tool: a run executes its `tool_code`, not this prompt",
            )
            .at(prompt.span)
            .with_secondary(code.span, "this code runs")
            .with_help("to ask a model from the code, call `llm(prompt)` in `execute`"),
        );
    }
}
