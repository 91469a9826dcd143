//! LT105: a field every shared tool should have is missing from `metadata`.

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::model::ToolKind;
use crate::rules::Context;
use crate::span::Span;

declare_rule! {
    /// `metadata` lacks `prompt_name`, `description`, `model_version` or `timestamp` (a smart
    /// tool's name is its `tool_name`).
    ///
    /// These fields are what a person browsing a library of tools reads first, and what tells
    /// which model the prompt was written for and when. A tool without them still renders and
    /// runs; `--strict` (for CI and publishing) makes this an error.
    ///
    /// ```json
    /// { "model_prompt": "Hi", "metadata": { "description": "Greets" } }
    /// ```
    pub static MISSING_RECOMMENDED = ("LT105", "missing-recommended-field", Warning);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let Some(meta) = &cx.tool.metadata else { return };
    let (name_field, has_name) = match cx.tool.kind() {
        ToolKind::Prompt => ("prompt_name", meta.prompt_name.is_some()),
        ToolKind::Smart => ("tool_name", meta.tool_name.is_some() || meta.prompt_name.is_some()),
    };
    let missing = [
        (name_field, !has_name, "a short name for the tool"),
        ("description", meta.description.is_none(), "what the tool does, in a sentence"),
        ("model_version", meta.model_version.is_none(), "the models the prompt was written for"),
        ("timestamp", meta.timestamp.is_none(), "when it was last changed, in ISO 8601"),
    ];
    for (field, is_missing, what) in missing {
        if is_missing {
            out.push(
                Diagnostic::new(&MISSING_RECOMMENDED, format!("`metadata` has no `{field}`"))
                    .at_labelled(Span::new(meta.span.start, meta.span.start + 1), "in this object")
                    .with_help(format!("add `{field}`: {what}")),
            );
        }
    }
}
