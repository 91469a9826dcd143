//! LT403: a `code` expected output without a language.

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::rules::Context;

declare_rule! {
    /// `expected_output.type` is `code` but no `language` is given.
    ///
    /// The language tells which fenced block of the answer is the code.
    ///
    /// ```json
    /// "expected_output": { "type": "code" }
    /// ```
    pub static CODE_WITHOUT_LANGUAGE = ("LT403", "code-without-language", Warning);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let Some(output) = cx.tool.metadata.as_ref().and_then(|m| m.expected_output.as_ref()) else {
        return;
    };
    if let Some(kind) = output.kind.as_ref().filter(|k| k.value == "code")
        && output.language.is_none()
    {
        out.push(
            Diagnostic::new(&CODE_WITHOUT_LANGUAGE, "a `code` expected output has no `language`")
                .at(kind.span)
                .with_help("add `\"language\": \"Python\"` (or the language the code is in)"),
        );
    }
}
