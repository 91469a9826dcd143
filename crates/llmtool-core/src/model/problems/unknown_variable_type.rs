//! LT204: a variable type that is not text, single-select or multi-select.

use crate::declare_rule;
use crate::diagnostic::{Diagnostic, Edit};
use crate::model::{Spanned, VariableKind};
use crate::suggest::{closest, one_of};
use crate::syntax::quote;

declare_rule! {
    /// A variable's `type` is not one of `text`, `single-select` or `multi-select`.
    ///
    /// The variable is treated as `text` so the rest of the file can be checked, but a tool
    /// editor would not know how to ask for its value.
    ///
    /// ```json
    /// { "name": "tone", "type": "dropdown" }
    /// ```
    pub static UNKNOWN_VARIABLE_TYPE = ("LT204", "unknown-variable-type", Error);
}

pub(crate) fn diagnostic(written: &Spanned<String>) -> Diagnostic {
    let names = VariableKind::ALL.map(VariableKind::as_str);
    let mut diagnostic = Diagnostic::new(
        &UNKNOWN_VARIABLE_TYPE,
        format!("unknown variable type `{}`", written.value),
    )
    .at(written.span)
    .with_help(format!("the types are {}", one_of(names)));
    if let Some(suggestion) = closest(&written.value, names) {
        diagnostic = diagnostic.with_suggestion(
            format!("write `{suggestion}`"),
            vec![Edit::replace(written.span, quote(suggestion))],
        );
    }
    diagnostic
}
