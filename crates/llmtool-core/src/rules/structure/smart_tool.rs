//! LT106: the file is a smart tool (it has `tool_code`).

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::rules::Context;

declare_rule! {
    /// The file has `tool_code`: it is a "smart tool", the sibling format whose Python code the
    /// host runs.
    ///
    /// llmtool reads its prompt and metadata like any tool, but never runs its code.
    pub static SMART_TOOL = ("LT106", "smart-tool", Info);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    if let Some(code) = &cx.tool.tool_code {
        out.push(
            Diagnostic::new(&SMART_TOOL, "this is a smart tool: its `tool_code` is not run")
                .at(code.span)
                .with_help(
                    "llmtool uses the prompt and metadata; the host application runs the code",
                ),
        );
    }
}
