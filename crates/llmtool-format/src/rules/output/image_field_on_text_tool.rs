//! LT407: a field only image tools use, on a tool that writes text (and `seed` there, which
//! stays an unknown parameter, LT303, as before image tools).

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::model::problems::unknown_parameter;
use crate::rules::Context;

declare_rule! {
    /// A tool that writes text has a field that only image tools use: `expected_output.size`,
    /// or the parameters `quality` and `n`.
    ///
    /// It is ignored. A tool makes pictures when its expected output says `"type": "image"`
    /// (or its first model is an image model).
    ///
    /// ```json
    /// "expected_output": { "type": "text", "size": "1024x1024" }
    /// ```
    pub static IMAGE_FIELD_ON_TEXT_TOOL = ("LT407", "image-field-on-text-tool", Warning);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    if cx.tool.makes_images() {
        return;
    }
    let output = cx.tool.metadata.as_ref().and_then(|m| m.expected_output.as_ref());
    if let Some(size) = output.and_then(|o| o.size.as_ref()) {
        out.push(
            Diagnostic::new(
                &IMAGE_FIELD_ON_TEXT_TOOL,
                "`size` is the size of an image; this tool writes text",
            )
            .at(size.span)
            .with_help("it is ignored; an image tool says `\"type\": \"image\"`"),
        );
    }
    for (name, key, _) in cx.tool.image_parameters() {
        out.push(if name == "seed" {
            // Some chat APIs take a seed: for a tool that writes text it is kept as is.
            unknown_parameter::diagnostic(name, key)
        } else {
            Diagnostic::new(
                &IMAGE_FIELD_ON_TEXT_TOOL,
                format!("`{name}` is a parameter of image tools; this tool writes text"),
            )
            .at(key)
            .with_help(
                "it is ignored; an image tool says `\"expected_output\": { \"type\": \"image\" }`",
            )
        });
    }
}
