//! LT909: `tool_code` is given twice, at the top level and in `metadata`.

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::rules::Context;

declare_rule! {
    /// A smart tool has `tool_code` both at the top level and in `metadata`: only the
    /// top-level one runs.
    ///
    /// ```json
    /// { "tool_code": "def execute(v):\n    return 'a'", "metadata": { "tool_name": "Two", "tool_code": "def execute(v):\n    return 'b'" } }
    /// ```
    pub static TOOL_CODE_TWICE = ("LT909", "tool-code-twice", Error);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let nested = cx.tool.metadata.as_ref().and_then(|m| m.tool_code.as_ref());
    if let (Some(top), Some(nested)) = (&cx.tool.tool_code, nested) {
        out.push(
            Diagnostic::new(&TOOL_CODE_TWICE, "`tool_code` is given twice; the top-level one runs")
                .at(nested.span)
                .with_secondary(top.span, "this one runs")
                .with_help(
                    "keep one `tool_code`: in `metadata`, as the smart tools' format has it",
                ),
        );
    }
}
