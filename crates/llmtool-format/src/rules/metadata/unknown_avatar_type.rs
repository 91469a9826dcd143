//! LT507: an avatar type other than url or base64.

use crate::declare_rule;
use crate::diagnostic::{Diagnostic, Edit};
use crate::rules::Context;

declare_rule! {
    /// `avatar_type` is not `url` or `base64`.
    ///
    /// The fix infers the type from the data when it can.
    ///
    /// ```json
    /// "avatar_type": "png", "avatar": "iVBORw0KGgo..."
    /// ```
    pub static UNKNOWN_AVATAR_TYPE = ("LT507", "unknown-avatar-type", Error);
}

/// The avatar type the data looks like.
pub fn infer(data: &str) -> &'static str {
    let lower = data.trim_start().to_ascii_lowercase();
    if ["http://", "https://", "data:"].iter().any(|p| lower.starts_with(p)) {
        "url"
    } else {
        "base64"
    }
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let Some(avatar) = cx.avatar() else { return };
    let Some(kind) = &avatar.kind else { return };
    if matches!(kind.value.as_str(), "url" | "base64") {
        return;
    }
    let mut diagnostic =
        Diagnostic::new(&UNKNOWN_AVATAR_TYPE, format!("unknown avatar type `{}`", kind.value))
            .at(kind.span)
            .with_help("`avatar_type` is `url` or `base64`");
    if let Some(data) = &avatar.data {
        let inferred = infer(&data.value);
        diagnostic = diagnostic.with_suggestion(
            format!("write `{inferred}`"),
            vec![Edit::replace(kind.span, format!("\"{inferred}\""))],
        );
    }
    out.push(diagnostic);
}
