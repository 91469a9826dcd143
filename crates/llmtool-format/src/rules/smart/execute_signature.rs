//! LT904: `execute` cannot be called the way a run calls it.

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::rules::Context;

declare_rule! {
    /// A smart tool's `execute` cannot be called with one argument, the dict of variables:
    /// it takes none, or requires more than one. An `async def execute` is refused too, as a
    /// run calls it as a plain function.
    ///
    /// ```json
    /// { "metadata": { "tool_name": "Count", "tool_code": "def execute(text, mode):\n    return text" } }
    /// ```
    pub static EXECUTE_SIGNATURE = ("LT904", "execute-signature", Error);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let Some(execute) = cx.code_facts().and_then(|facts| facts.execute.as_ref()) else { return };
    if execute.is_async {
        out.push(
            Diagnostic::new(
                &EXECUTE_SIGNATURE,
                "`execute` is `async`; a run calls it as a plain function",
            )
            .at(cx.code_span(execute.name.clone()))
            .with_help("write `def execute(variables):`, without `async`"),
        );
    } else if !execute.takes_one_argument {
        out.push(
            Diagnostic::new(
                &EXECUTE_SIGNATURE,
                "`execute` must take one argument: the dict of variables",
            )
            .at(cx.code_span(execute.parameters.clone()))
            .with_help(
                "write `def execute(variables):` and read each value as `variables[\"name\"]`",
            ),
        );
    }
}
