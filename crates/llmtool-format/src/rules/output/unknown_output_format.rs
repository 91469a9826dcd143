//! LT404: an expected-output format llmtool does not check.

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::rules::Context;

declare_rule! {
    /// `expected_output.format` is not JSON, XML or CSV (in any case).
    ///
    /// The format is kept and passed on, but llmtool can only check answers in those three.
    ///
    /// ```json
    /// "expected_output": { "type": "text", "format": "YAML" }
    /// ```
    pub static UNKNOWN_OUTPUT_FORMAT = ("LT404", "unknown-output-format", Info);
}

pub const CHECKED_FORMATS: [&str; 3] = ["json", "xml", "csv"];

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    // An image's format is LT406's.
    if cx.tool.makes_images() {
        return;
    }
    let output = cx.tool.metadata.as_ref().and_then(|m| m.expected_output.as_ref());
    let Some(format) = output.and_then(|o| o.format.as_ref()) else { return };
    if !CHECKED_FORMATS.contains(&format.value.to_ascii_lowercase().as_str()) {
        out.push(
            Diagnostic::new(
                &UNKNOWN_OUTPUT_FORMAT,
                format!("answers in format `{}` are not checked", format.value),
            )
            .at(format.span)
            .with_help("llmtool checks JSON, XML and CSV answers"),
        );
    }
}
