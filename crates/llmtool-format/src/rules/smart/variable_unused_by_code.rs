//! LT907: a declared variable that the code never reads.

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::rules::Context;

declare_rule! {
    /// A smart tool declares a variable that its `execute` never reads (by a literal key, as
    /// `variables["name"]` or `variables.get("name")`). Its value would be asked for and
    /// thrown away. Not reported when the code uses the variables some other way (passes the
    /// dict on, iterates it), as what it reads cannot be known then.
    ///
    /// ```json
    /// { "metadata": { "tool_name": "Count", "tool_code": "def execute(variables):\n    return str(len(variables['text']))", "variables": [{ "name": "text" }, { "name": "tone" }] } }
    /// ```
    pub static VARIABLE_UNUSED_BY_CODE = ("LT907", "variable-unused-by-code", Warning);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let Some(facts) = cx.code_facts() else { return };
    if facts.execute.is_none() || facts.reads_unknown || !facts.syntax_errors.is_empty() {
        return;
    }
    for variable in cx.tool.variables() {
        let name = variable.name.value.trim();
        if !name.is_empty() && !facts.reads.iter().any(|(read, _)| read == name) {
            out.push(
                Diagnostic::new(
                    &VARIABLE_UNUSED_BY_CODE,
                    format!("variable `{name}` is never read by `execute`"),
                )
                .at(variable.name.span)
                .with_help(format!("read it as `variables[\"{name}\"]`, or remove the variable")),
            );
        }
    }
}
