//! LT304: a parameter of text generation on an image tool.

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::rules::Context;

declare_rule! {
    /// An image tool has a parameter of text generation: `temperature`, `max_tokens`, `top_p`,
    /// `frequency_penalty` or `presence_penalty`.
    ///
    /// Image APIs take none of them, so it is not sent. (A warning, not an error: tools
    /// written for other runtimes set them on image models, such as Genkit's Imagen examples
    /// with a `temperature`, and they import and run as their authors meant.) An image request
    /// takes `quality`, `n` (how many pictures) and `seed`, and its size and format come from
    /// `expected_output`.
    ///
    /// ```json
    /// "parameters": { "temperature": 0.9 },
    /// "expected_output": { "type": "image" }
    /// ```
    pub static TEXT_PARAMETER_ON_IMAGE_TOOL = ("LT304", "text-parameter-on-image-tool", Warning);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let Some(params) = cx.tool.metadata.as_ref().and_then(|m| m.parameters.as_ref()) else {
        return;
    };
    if !cx.tool.makes_images() {
        return;
    }
    for (name, param) in params.known() {
        out.push(
            Diagnostic::new(
                &TEXT_PARAMETER_ON_IMAGE_TOOL,
                format!("`{name}` is a parameter of text generation; image APIs do not take it, so it is not sent"),
            )
            .at(param.span)
            .with_help("remove it; an image tool takes `quality`, `n` and `seed`"),
        );
    }
}
