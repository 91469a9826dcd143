//! LT115: two entries of `metadata.functions` offer the model the same function.

use std::collections::HashMap;

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::model::FunctionSource;
use crate::rules::Context;

declare_rule! {
    /// Two entries of `metadata.functions` give the model functions of the same name.
    ///
    /// A model calls a function by its name, so two of one name cannot both be reached; every
    /// API refuses the request. `query_database` entries are one function whose `database`
    /// argument picks among them, so they differ by their database.
    ///
    /// ```json
    /// { "model_prompt": "Research {{topic}}", "metadata": { "functions": [{ "builtin": "web_search" }, { "builtin": "web_search" }] } }
    /// ```
    pub static DUPLICATE_FUNCTION = ("LT115", "duplicate-function", Error);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let Some(functions) = cx.tool.metadata.as_ref().and_then(|m| m.functions.as_ref()) else {
        return;
    };
    let mut seen = HashMap::new();
    for entry in &functions.value {
        let Some(name) = entry.offered_name() else { continue };
        let key = match entry.source() {
            Some(FunctionSource::Builtin { database: Some(database), .. }) => {
                format!("{name}\u{0}{database}")
            }
            _ => name.clone(),
        };
        if let Some(first) = seen.insert(key, entry.span) {
            out.push(
                Diagnostic::new(
                    &DUPLICATE_FUNCTION,
                    format!("the function `{name}` is offered twice"),
                )
                .at(entry.span)
                .with_secondary(first, "first offered here")
                .with_help("remove one of the two entries"),
            );
        }
    }
}
