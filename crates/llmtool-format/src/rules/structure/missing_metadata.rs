//! LT104: the file has no `metadata`.

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::rules::Context;
use crate::span::Span;

declare_rule! {
    /// The file has no `metadata` object.
    ///
    /// The tool still renders and runs, but has no name, description, variables or parameters
    /// for a tool editor, an MCP client or a library to show.
    ///
    /// ```json
    /// { "model_prompt": "Summarize {{text}}" }
    /// ```
    pub static MISSING_METADATA = ("LT104", "missing-metadata", Warning);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let tool = cx.tool;
    if tool.metadata.is_none() && tool.model_prompt.is_some() {
        out.push(
            Diagnostic::new(&MISSING_METADATA, "the tool has no `metadata`")
                .at_labelled(Span::new(tool.span.start, tool.span.start + 1), "in this object")
                .with_help("add `metadata` with at least `prompt_name` and `description`"),
        );
    }
}
