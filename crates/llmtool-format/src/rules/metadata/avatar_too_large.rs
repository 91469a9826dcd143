//! LT506: an embedded avatar over 1 MiB.

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::rules::Context;

/// The largest embedded avatar that is not reported.
pub const MAX_AVATAR_BYTES: usize = 1024 * 1024;

declare_rule! {
    /// An embedded avatar image is larger than 1 MiB.
    ///
    /// Every copy of the tool, every listing of a library and every MCP response carries it. A
    /// 256x256 icon needs a few kilobytes.
    pub static AVATAR_TOO_LARGE = ("LT506", "avatar-too-large", Warning);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let (Some(Ok(info)), Some(data)) =
        (cx.avatar_image(), cx.avatar().and_then(|a| a.data.as_ref()))
    else {
        return;
    };
    if info.bytes > MAX_AVATAR_BYTES {
        out.push(
            Diagnostic::new(
                &AVATAR_TOO_LARGE,
                format!("the avatar image is {} KiB; keep it under 1024 KiB", info.bytes / 1024),
            )
            .at(data.span)
            .with_help("scale it to 256x256 and compress it, or link it with `avatar_type: url`"),
        );
    }
}
