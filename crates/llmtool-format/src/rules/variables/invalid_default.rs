//! LT209: a default of the wrong shape for its variable's type.

use crate::declare_rule;
use crate::diagnostic::{Diagnostic, Edit};
use crate::model::{DefaultValue, VariableKind};
use crate::rules::Context;
use crate::rules::names::NameMap;

declare_rule! {
    /// A default that does not fit its variable's type: a list for a `text` or `single-select`
    /// variable, a single string for a `multi-select`, or a multi-select default that repeats
    /// an item.
    ///
    /// A multi-select's default is a list even when it holds one item; the fix wraps a lone
    /// string in a list.
    ///
    /// ```json
    /// { "name": "tags", "type": "multi-select", "default": "news", "allowed_values": ["news", "sport"] }
    /// ```
    pub static INVALID_DEFAULT = ("LT209", "invalid-default", Error);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    // A variable of an unknown type is left out: its type is reported once (LT204).
    for variable in cx.tool.variables().iter().filter(|v| !v.kind_unknown()) {
        let Some(default) = &variable.default else { continue };
        let name = &variable.name.value;
        let kind = variable.kind();
        match (&default.value, kind) {
            (DefaultValue::Text(_), VariableKind::MultiSelect) => {
                let written = cx.text.get(default.span.range()).unwrap_or_default();
                out.push(
                    Diagnostic::new(
                        &INVALID_DEFAULT,
                        format!("the default of multi-select `{name}` must be a list"),
                    )
                    .at(default.span)
                    .with_fix(
                        "wrap it in a list",
                        vec![Edit::replace(default.span, format!("[{written}]"))],
                    ),
                );
            }
            (DefaultValue::List(_), VariableKind::Text | VariableKind::SingleSelect) => {
                out.push(
                    Diagnostic::new(
                        &INVALID_DEFAULT,
                        format!("the default of {kind} `{name}` must be one string, not a list"),
                    )
                    .at(default.span)
                    .with_help("only multi-select variables take a list"),
                );
            }
            (DefaultValue::List(items), VariableKind::MultiSelect) => {
                let mut first = NameMap::default();
                for item in items {
                    if let Some(&original) = first.get(item.value.as_str()) {
                        out.push(
                            Diagnostic::new(
                                &INVALID_DEFAULT,
                                format!(
                                    "`{}` appears twice in the default of `{name}`",
                                    item.value
                                ),
                            )
                            .at_labelled(item.span, "again here")
                            .with_secondary(original, "first here"),
                        );
                    } else {
                        first.insert(item.value.as_str(), item.span);
                    }
                }
            }
            (DefaultValue::Text(_), _) => {}
        }
    }
}
