//! LT303: a model parameter the format does not name.

use crate::declare_rule;
use crate::diagnostic::{Diagnostic, Edit};
use crate::model::keys;
use crate::span::Span;
use crate::suggest::closest;

declare_rule! {
    /// `parameters` has a key other than `temperature`, `max_tokens`, `top_p`,
    /// `frequency_penalty` and `presence_penalty`.
    ///
    /// It is kept (a provider may understand `seed` or `stop`), but may be a typo, so the
    /// closest known name is suggested.
    ///
    /// ```json
    /// "parameters": { "temprature": 0.2 }
    /// ```
    pub static UNKNOWN_PARAMETER = ("LT303", "unknown-parameter", Warning);
}

pub(crate) fn diagnostic(name: &str, key: Span) -> Diagnostic {
    let diagnostic = Diagnostic::new(
        &UNKNOWN_PARAMETER,
        format!("unknown parameter `{name}`; it is kept as is"),
    )
    .at(key);
    match closest(name, keys::PARAMETERS.iter().copied()) {
        Some(near) => diagnostic.with_help(format!("did you mean `{near}`?")).with_suggestion(
            format!("rename to `{near}`"),
            vec![Edit::replace(key, format!("\"{near}\""))],
        ),
        None => diagnostic.with_help("providers that do not know it may reject the request"),
    }
}
