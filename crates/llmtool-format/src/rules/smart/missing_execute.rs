//! LT903: `tool_code` defines no `execute` function.

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::rules::Context;

declare_rule! {
    /// A smart tool's `tool_code` has no module-level `def execute(variables):`, the function
    /// a run calls with the variables and whose return value is the answer.
    ///
    /// ```json
    /// { "metadata": { "tool_name": "Count", "tool_code": "def run(variables):\n    return 'x'" } }
    /// ```
    pub static MISSING_EXECUTE = ("LT903", "missing-execute", Error);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let (Some(facts), Some(code)) = (cx.code_facts(), cx.tool.code()) else { return };
    // Code that does not parse has its own errors; `execute` may be hidden behind them.
    if facts.execute.is_none() && facts.syntax_errors.is_empty() {
        out.push(
            Diagnostic::new(&MISSING_EXECUTE, "`tool_code` defines no `execute` function")
                .at(code.span)
                .with_help("define `def execute(variables):` at the top level, returning the answer as a string"),
        );
    }
}
