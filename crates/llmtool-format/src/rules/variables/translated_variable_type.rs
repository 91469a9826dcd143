//! LT205: a variable type written in Spanish or Korean.

use crate::declare_rule;
use crate::diagnostic::{Diagnostic, Edit};
use crate::model::VariableKind;
use crate::rules::Context;
use crate::syntax::quote;

declare_rule! {
    /// A variable type written as in the Spanish or Korean edition of the format (`texto`,
    /// `selección-única`, `selección-múltiple`; `텍스트`, `단일 선택`, `다중 선택`).
    ///
    /// Those editions translated the type names in their example. llmtool reads them, but other
    /// programs expect the English names; the fix writes the English name.
    ///
    /// ```json
    /// { "name": "tono", "type": "selección-única", "allowed_values": ["formal", "casual"] }
    /// ```
    pub static TRANSLATED_VARIABLE_TYPE = ("LT205", "translated-variable-type", Warning);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    for variable in cx.tool.variables() {
        let Some(written) = &variable.type_written else { continue };
        if let Some((kind, true)) = VariableKind::from_name(&written.value) {
            out.push(
                Diagnostic::new(
                    &TRANSLATED_VARIABLE_TYPE,
                    format!("variable type `{}` is a translation of `{kind}`", written.value),
                )
                .at(written.span)
                .with_help(
                    "type names are not translated: other programs only know the English names",
                )
                .with_fix(
                    format!("write `{kind}`"),
                    vec![Edit::replace(written.span, quote(kind.as_str()))],
                ),
            );
        }
    }
}
