//! LT203: a variable name contains `{{` or `}}`.

use crate::declare_rule;
use crate::diagnostic::{Diagnostic, Edit};
use crate::rules::Context;
use crate::syntax::quote;

declare_rule! {
    /// A variable name contains `{{` or `}}`.
    ///
    /// Names are written without the braces; the braces belong in the prompt. A name with them
    /// could never be matched by a placeholder. The fix removes them.
    ///
    /// ```json
    /// { "name": "{{topic}}", "type": "text" }
    /// ```
    pub static BRACES_IN_VARIABLE_NAME = ("LT203", "braces-in-variable-name", Error);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    for variable in cx.tool.variables() {
        let name = &variable.name.value;
        if crate::template::holds_braces(name) {
            let bare = name.replace("{{", "").replace("}}", "").trim().to_owned();
            let mut diagnostic = Diagnostic::new(
                &BRACES_IN_VARIABLE_NAME,
                format!("variable name `{name}` contains braces"),
            )
            .at(variable.name.span)
            .with_help("write the name bare; `{{name}}` is how the prompt refers to it");
            if !bare.is_empty() {
                diagnostic = diagnostic.with_fix(
                    format!("rename to `{bare}`"),
                    vec![Edit::replace(variable.name.span, quote(&bare))],
                );
            }
            out.push(diagnostic);
        }
    }
}
