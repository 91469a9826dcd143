//! LT208: a select variable's default is not one of its choices.

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::model::{DefaultValue, Spanned};
use crate::rules::Context;
use crate::rules::names::Names;
use crate::suggest::{closest, one_of};

declare_rule! {
    /// The `default` of a select variable (or an item of a multi-select's default) is not in
    /// its `allowed_values`.
    ///
    /// A default must be a choice the user could have made. Matching is exact: case and spaces
    /// count.
    ///
    /// ```json
    /// { "name": "tone", "type": "single-select", "default": "Formal", "allowed_values": ["formal", "casual"] }
    /// ```
    pub static DEFAULT_NOT_ALLOWED = ("LT208", "default-not-allowed", Error);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    // A variable of an unknown type is left out: its type is reported once (LT204).
    for variable in cx.tool.variables().iter().filter(|v| !v.kind_unknown()) {
        let (Some(default), Some(allowed)) = (&variable.default, &variable.allowed_values) else {
            continue;
        };
        if !variable.kind().is_select() || allowed.value.is_empty() {
            continue;
        }
        let items: Vec<Spanned<&str>> = match &default.value {
            DefaultValue::Text(text) => vec![Spanned::new(default.span, text.as_str())],
            DefaultValue::List(items) => {
                items.iter().map(|i| Spanned::new(i.span, i.value.as_str())).collect()
            }
        };
        let allowed_set: Names<'_> = variable.allowed().collect();
        // Listed once per variable, however many of its defaults are wrong.
        let mut choices: Option<String> = None;
        for item in items {
            if allowed_set.contains(item.value) {
                continue;
            }
            let mut diagnostic = Diagnostic::new(
                &DEFAULT_NOT_ALLOWED,
                format!(
                    "default `{}` of `{}` is not an allowed value",
                    item.value, variable.name.value
                ),
            )
            .at(item.span)
            .with_secondary(allowed.span, "the allowed values");
            diagnostic = match closest(item.value, variable.allowed()) {
                Some(near) => diagnostic.with_help(format!("did you mean `{near}`?")),
                None => {
                    let choices = choices.get_or_insert_with(|| one_of(variable.allowed()));
                    diagnostic.with_help(format!("choose one of {choices}"))
                }
            };
            out.push(diagnostic);
        }
    }
}
