//! LT908: the code reads a variable that is not declared.

use crate::declare_rule;
use crate::diagnostic::{Diagnostic, Edit};
use crate::rules::Context;
use crate::suggest::closest;

declare_rule! {
    /// A smart tool's `execute` reads `variables["name"]` for a name no variable declares: a
    /// run never fills it in, so the code fails with a `KeyError` (or gets its default from
    /// `.get`). Usually a typo; the closest declared name is suggested.
    ///
    /// ```json
    /// { "metadata": { "tool_name": "Count", "tool_code": "def execute(variables):\n    return variables['txt']", "variables": [{ "name": "text" }] } }
    /// ```
    pub static UNDECLARED_VARIABLE_READ = ("LT908", "undeclared-variable-read", Warning);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let Some(facts) = cx.code_facts() else { return };
    let declared: Vec<&str> = cx.tool.variables().iter().map(|v| v.name.value.trim()).collect();
    for (name, range) in &facts.reads {
        if declared.contains(&name.as_str()) {
            continue;
        }
        let span = cx.code_span(range.clone());
        let diagnostic = Diagnostic::new(
            &UNDECLARED_VARIABLE_READ,
            format!("`execute` reads `{name}`, which is not a declared variable"),
        )
        .at(span);
        out.push(match closest(name, declared.iter().copied()) {
            Some(near) => diagnostic.with_help(format!("did you mean `{near}`?")).with_suggestion(
                format!("read `{near}`"),
                vec![Edit::replace(span, format!("'{near}'"))],
            ),
            None => diagnostic.with_help(format!(
                "declare `{name}` in `metadata.variables` so a run asks for it"
            )),
        });
    }
}
