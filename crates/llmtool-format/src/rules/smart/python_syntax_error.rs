//! LT901: `tool_code` is not valid Python.

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::rules::Context;

declare_rule! {
    /// A smart tool's `tool_code` is not valid Python: the error is shown at its line and
    /// column in the file, inside the string.
    ///
    /// Every error the parser finds is reported, not only the first.
    ///
    /// ```json
    /// { "metadata": { "tool_name": "Count", "tool_code": "def execute(variables)\n    return 1" } }
    /// ```
    pub static PYTHON_SYNTAX_ERROR = ("LT901", "python-syntax-error", Error);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let Some(facts) = cx.code_facts() else { return };
    for (range, message) in &facts.syntax_errors {
        out.push(
            Diagnostic::new(&PYTHON_SYNTAX_ERROR, format!("Python syntax error: {message}"))
                .at(cx.code_span(range.clone())),
        );
    }
}
