//! LT207: a value listed twice in `allowed_values`.

use crate::declare_rule;
use crate::diagnostic::{Diagnostic, Edit};
use crate::model::SpannedList;
use crate::rules::Context;
use crate::rules::names::NameMap;
use crate::span::Span;

declare_rule! {
    /// The same value appears twice in an `allowed_values` list (of a variable or of the
    /// expected output).
    ///
    /// Choices are a set; a repeated one shows up twice in every picker. The fix removes the
    /// repetition.
    ///
    /// ```json
    /// "allowed_values": ["formal", "casual", "formal"]
    /// ```
    pub static DUPLICATE_ALLOWED_VALUE = ("LT207", "duplicate-allowed-value", Error);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    for variable in cx.tool.variables() {
        if let Some(list) = &variable.allowed_values {
            report_repeats(cx.text, list, out);
        }
    }
    let output = cx.tool.metadata.as_ref().and_then(|m| m.expected_output.as_ref());
    if let Some(list) = output.and_then(|o| o.allowed_values.as_ref()) {
        report_repeats(cx.text, list, out);
    }
}

fn report_repeats(text: &str, list: &SpannedList, out: &mut Vec<Diagnostic>) {
    let mut first = NameMap::default();
    let mut previous_end = None;
    for item in &list.value {
        if let Some(&original) = first.get(item.value.as_str()) {
            let mut diagnostic = Diagnostic::new(
                &DUPLICATE_ALLOWED_VALUE,
                format!("`{}` is listed twice in `allowed_values`", item.value),
            )
            .at_labelled(item.span, "listed again here")
            .with_secondary(original, "first listed here");
            if let Some(end) = previous_end {
                // Delete from the end of the previous element through this one (its comma too).
                let span = Span::new(end, item.span.end);
                if text.get(span.range()).is_some_and(|s| s.trim_start().starts_with(',')) {
                    diagnostic =
                        diagnostic.with_fix("remove the repetition", vec![Edit::delete(span)]);
                }
            }
            out.push(diagnostic);
        } else {
            first.insert(item.value.as_str(), item.span);
        }
        previous_end = Some(item.span.end);
    }
}
