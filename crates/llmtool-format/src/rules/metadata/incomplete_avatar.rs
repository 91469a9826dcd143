//! LT508: only one of `avatar_type` and `avatar`.

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::rules::Context;

declare_rule! {
    /// The avatar has data but no `avatar_type`, or a type but no data.
    ///
    /// Without the type a reader must guess whether the data is a URL or an image; llmtool
    /// guesses from the data (`http`, `https` and `data:` mean `url`).
    ///
    /// ```json
    /// "avatar": "https://example.org/icon.png"
    /// ```
    pub static INCOMPLETE_AVATAR = ("LT508", "incomplete-avatar", Warning);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let Some(avatar) = cx.avatar() else { return };
    match (&avatar.kind, &avatar.data) {
        (None, Some(data)) => out.push(
            Diagnostic::new(&INCOMPLETE_AVATAR, "the avatar has no `avatar_type`")
                .at(data.span)
                .with_help(format!(
                    "add `\"avatar_type\": \"{}\"`",
                    super::unknown_avatar_type::infer(&data.value)
                )),
        ),
        (Some(kind), None) => out.push(
            Diagnostic::new(&INCOMPLETE_AVATAR, "`avatar_type` is given but there is no `avatar`")
                .at(kind.span)
                .with_help("add the avatar's URL or base64 data, or remove `avatar_type`"),
        ),
        _ => {}
    }
}
