//! LT504: avatar data that is not an image.

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::rules::Context;

declare_rule! {
    /// Base64 avatar data (or a base64 `data:` URL) that does not decode to a PNG, JPEG, GIF,
    /// WebP or SVG image.
    ///
    /// ```json
    /// "avatar_type": "base64", "avatar": "not an image"
    /// ```
    pub static INVALID_AVATAR_IMAGE = ("LT504", "invalid-avatar-image", Error);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let (Some(Err(error)), Some(data)) =
        (cx.avatar_image(), cx.avatar().and_then(|a| a.data.as_ref()))
    else {
        return;
    };
    out.push(
        Diagnostic::new(&INVALID_AVATAR_IMAGE, format!("the avatar is not an image: {error}"))
            .at(data.span)
            .with_help("encode a PNG, JPEG, GIF, WebP or SVG file with base64"),
    );
}
