//! LT505: an avatar that is not 256x256 pixels.

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::rules::Context;

declare_rule! {
    /// The avatar image is not 256x256 pixels, the size the format recommends.
    ///
    /// It still works; tool pickers scale it. The message reports the format and size found.
    pub static AVATAR_DIMENSIONS = ("LT505", "avatar-dimensions", Info);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let (Some(Ok(info)), Some(data)) =
        (cx.avatar_image(), cx.avatar().and_then(|a| a.data.as_ref()))
    else {
        return;
    };
    let Some((width, height)) = info.size else { return };
    if (width, height) != (256, 256) {
        out.push(
            Diagnostic::new(
                &AVATAR_DIMENSIONS,
                format!(
                    "the avatar is a {width}x{height} {} image; 256x256 is recommended",
                    info.format.name()
                ),
            )
            .at(data.span),
        );
    }
}
