//! LT406: the picture an image tool asks for, in a format or size no image API makes.

use crate::declare_rule;
use crate::diagnostic::{Diagnostic, Edit};
use crate::output::{IMAGE_FORMATS, ImageFormat, ImageSize, MAX_SIDE};
use crate::rules::Context;
use crate::suggest::closest;

declare_rule! {
    /// An image tool's `expected_output` names a picture no image API makes: a `format` other
    /// than `png`, `jpeg` (or `jpg`) and `webp`, or a `size` that is not `WIDTHxHEIGHT` (each
    /// side 1 to 8192 pixels) or `auto`.
    ///
    /// ```json
    /// "expected_output": { "type": "image", "format": "gif", "size": "1024" }
    /// ```
    pub static INVALID_IMAGE_OUTPUT = ("LT406", "invalid-image-output", Error);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let Some(output) = cx.tool.metadata.as_ref().and_then(|m| m.expected_output.as_ref()) else {
        return;
    };
    if !cx.tool.makes_images() {
        return;
    }
    if let Some(format) = &output.format
        && ImageFormat::from_name(&format.value).is_none()
    {
        let mut diagnostic = Diagnostic::new(
            &INVALID_IMAGE_OUTPUT,
            format!("image APIs make no `{}` pictures", format.value),
        )
        .at(format.span);
        diagnostic = match closest(&format.value.to_ascii_lowercase(), IMAGE_FORMATS) {
            Some(near) => diagnostic.with_suggestion(
                format!("write `{near}`"),
                vec![Edit::replace(format.span, format!("\"{near}\""))],
            ),
            None => diagnostic.with_help("the formats are `png`, `jpeg` and `webp`"),
        };
        out.push(diagnostic);
    }
    if let Some(size) = &output.size
        && size.value != "auto"
        && ImageSize::parse(&size.value).is_none()
    {
        out.push(
            Diagnostic::new(
                &INVALID_IMAGE_OUTPUT,
                format!("`{}` is not an image size", size.value),
            )
            .at(size.span)
            .with_help(format!(
                "write `WIDTHxHEIGHT` (such as `1024x1536`, each side 1 to {MAX_SIDE}) or `auto`"
            )),
        );
    }
}
