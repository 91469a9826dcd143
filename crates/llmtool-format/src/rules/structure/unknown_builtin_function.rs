//! LT113: a `metadata.functions` entry names a built-in function llmtool does not have.

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::model::keys::BUILTIN_FUNCTIONS;
use crate::rules::Context;
use crate::suggest::closest;

declare_rule! {
    /// A `{"builtin": ...}` entry of `metadata.functions` is not one of `fetch_url`,
    /// `web_search` or `query_database`.
    ///
    /// A run offers the model only the functions the tool names, and refuses a tool whose
    /// function it does not have, rather than run without it.
    ///
    /// ```json
    /// { "model_prompt": "Summarize {{url}}", "metadata": { "functions": [{ "builtin": "fetch" }] } }
    /// ```
    pub static UNKNOWN_BUILTIN_FUNCTION = ("LT113", "unknown-builtin-function", Error);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let Some(functions) = cx.tool.metadata.as_ref().and_then(|m| m.functions.as_ref()) else {
        return;
    };
    for builtin in functions.value.iter().filter_map(|entry| entry.builtin.as_ref()) {
        if BUILTIN_FUNCTIONS.contains(&builtin.as_str()) {
            continue;
        }
        let known = BUILTIN_FUNCTIONS.join(", ");
        let help = match closest(builtin.as_str(), BUILTIN_FUNCTIONS.iter().copied()) {
            Some(near) => format!("did you mean `{near}`? The built-in functions are {known}"),
            None => format!("the built-in functions are {known}"),
        };
        out.push(
            Diagnostic::new(
                &UNKNOWN_BUILTIN_FUNCTION,
                format!("`{}` is not a built-in function", builtin.value),
            )
            .at(builtin.span)
            .with_help(help),
        );
    }
}
