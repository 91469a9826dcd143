//! LT204: a variable type that is not text, single-select or multi-select.

use crate::declare_rule;
use crate::diagnostic::{Diagnostic, Edit};
use crate::model::{Spanned, VariableKind};
use crate::suggest::{closest, one_of};
use crate::syntax::quote;

declare_rule! {
    /// A variable's `type` is not one of `text`, `single-select` or `multi-select`.
    ///
    /// The rest of the file is checked as if the variable had the type it most likely means
    /// (`multiselect` is `multi-select`), so that one mistake gives one diagnostic; with no
    /// likely type, the checks that depend on the type are left out. Another spelling of a
    /// type (`multiselect`, `Single_Select`) has a safe fix, which `fmt --fix` applies; a
    /// closer guess (`mutli-select`) is a suggestion only.
    ///
    /// ```json
    /// { "name": "tone", "type": "dropdown" }
    /// ```
    pub static UNKNOWN_VARIABLE_TYPE = ("LT204", "unknown-variable-type", Error);
}

/// The type `written` most likely means, and whether it is only another spelling of it
/// (`multiselect`, `Multi_Select`: the same letters), which a fix may apply without asking.
pub(crate) fn meant(written: &str) -> Option<(VariableKind, bool)> {
    let names = VariableKind::ALL.map(VariableKind::as_str);
    let letters = |name: &str| -> String {
        name.chars().filter(char::is_ascii_alphanumeric).map(|c| c.to_ascii_lowercase()).collect()
    };
    if let Some(kind) =
        VariableKind::ALL.into_iter().find(|k| letters(k.as_str()) == letters(written))
    {
        return Some((kind, true));
    }
    let name = closest(written, names)?;
    VariableKind::from_name(name).map(|(kind, _)| (kind, false))
}

pub(crate) fn diagnostic(written: &Spanned<String>) -> Diagnostic {
    let names = VariableKind::ALL.map(VariableKind::as_str);
    let diagnostic = Diagnostic::new(
        &UNKNOWN_VARIABLE_TYPE,
        format!("unknown variable type `{}`", written.value),
    )
    .at(written.span)
    .with_help(format!("the types are {}", one_of(names)));
    match meant(&written.value) {
        // Another spelling of a type: `fmt --fix` writes it as the format spells it.
        Some((kind, true)) => diagnostic.with_fix(
            format!("write `{kind}`"),
            vec![Edit::replace(written.span, quote(kind.as_str()))],
        ),
        Some((kind, false)) => diagnostic.with_suggestion(
            format!("write `{kind}`"),
            vec![Edit::replace(written.span, quote(kind.as_str()))],
        ),
        None => diagnostic,
    }
}
