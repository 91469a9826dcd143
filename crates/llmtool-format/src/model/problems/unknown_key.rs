//! LT103: a key the format does not define.

use crate::declare_rule;
use crate::diagnostic::{Diagnostic, Edit};
use crate::model::keys;
use crate::suggest::closest;
use crate::syntax::Member;

declare_rule! {
    /// A key that the format does not define at this place.
    ///
    /// Unknown keys are kept (by `fmt` too) but are most often typos, or a field put at the
    /// wrong level, such as `prompt_name` at the top instead of inside `metadata`. The message
    /// says which known key is closest. Keys starting with `x-` are extensions: they are kept
    /// and never reported.
    ///
    /// ```json
    /// { "model_prompt": "Hi", "metadata": { "promt_name": "Greeter" } }
    /// ```
    pub static UNKNOWN_KEY = ("LT103", "unknown-key", Warning);
}

pub(crate) fn diagnostic(member: &Member, parent: &str, known: &[&str]) -> Diagnostic {
    let name = member.key.name.as_str();
    let place =
        if parent.is_empty() { "at the top level".to_owned() } else { format!("in `{parent}`") };
    let mut diagnostic =
        Diagnostic::new(&UNKNOWN_KEY, format!("unknown key `{name}` {place}")).at(member.key.span);
    if let Some(suggestion) = closest(name, known.iter().copied()) {
        diagnostic = diagnostic.with_help(format!("did you mean `{suggestion}`?")).with_suggestion(
            format!("rename to `{suggestion}`"),
            vec![Edit::replace(member.key.span, format!("\"{suggestion}\""))],
        );
    } else if parent.is_empty() && keys::METADATA.contains(&name) {
        diagnostic = diagnostic.with_help(format!("`{name}` belongs inside `metadata`"));
    } else {
        diagnostic = diagnostic
            .with_help("keep private data under a key starting with `x-`, which is never reported");
    }
    diagnostic
}
