//! LT216: a placeholder missing a brace (`{{ diff }` or `{ diff }}`), kept as literal text.

use crate::declare_rule;
use crate::diagnostic::{Diagnostic, Edit};
use crate::rules::Context;

declare_rule! {
    /// A name in `model_prompt` has two braces on one side and one on the other.
    ///
    /// `{{ diff }` and `{ diff }}` are not placeholders: they are sent to the model as they
    /// are, and the value is never filled in. Only a name (letters, digits, spaces, `_`, `-`
    /// and `.`, on one line) is taken for a placeholder missing a brace, so that braces of
    /// code or JSON in a prompt are not. The fix adds the missing brace.
    ///
    /// ```json
    /// { "model_prompt": "Review this change: {{ diff }" }
    /// ```
    pub static UNCLOSED_PLACEHOLDER = ("LT216", "unclosed-placeholder", Warning);
}

/// The longest name taken for a placeholder missing a brace.
const MAX_NAME: usize = 64;

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let prompt = cx.tool.prompt();
    for (range, name) in half_braced(prompt) {
        let span = cx.prompt_span(range);
        out.push(
            Diagnostic::new(
                &UNCLOSED_PLACEHOLDER,
                format!("`{name}` has a brace missing: it is kept as literal text, not filled in"),
            )
            .at(span)
            .with_help(format!("write `{{{{{name}}}}}`"))
            .with_suggestion(
                format!("write `{{{{{name}}}}}`"),
                vec![Edit::replace(span, format!("{{{{{name}}}}}"))],
            ),
        );
    }
}

/// Each `{{name}` and `{name}}` of `prompt`: its byte range and name.
fn half_braced(prompt: &str) -> Vec<(std::ops::Range<usize>, &str)> {
    let bytes = prompt.as_bytes();
    let is_name = |text: &str| {
        let name = text.trim();
        !name.is_empty()
            && name.len() <= MAX_NAME
            && name.chars().all(|c| c.is_alphanumeric() || matches!(c, ' ' | '_' | '-' | '.'))
    };
    let mut found = Vec::new();
    let mut at = 0;
    // Braces and newlines are single bytes, so a byte search finds them at char boundaries.
    while let Some(offset) = memchr::memchr(b'{', &bytes[at..]) {
        let open = at + offset;
        let braces = bytes[open..].iter().take_while(|&&b| b == b'{').count();
        let start = open + braces;
        let Some(length) = memchr::memchr3(b'{', b'}', b'\n', &bytes[start..]) else { break };
        let end = start + length;
        let closing = bytes[end..].iter().take_while(|&&b| b == b'}').count();
        let inner = &prompt[start..end];
        // Two on one side and one on the other; a whole `{{name}}` is a placeholder.
        if matches!((braces, closing), (2, 1) | (1, 2)) && is_name(inner) {
            found.push((open..end + closing, inner.trim()));
        }
        at = start.max(open + 1);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(prompt: &str) -> Vec<&str> {
        half_braced(prompt).into_iter().map(|(_, name)| name).collect()
    }

    #[test]
    fn a_name_with_a_brace_missing_on_either_side_is_found() {
        assert_eq!(names("Review {{ diff } now"), ["diff"]);
        assert_eq!(names("Review { diff }} now"), ["diff"]);
        assert_eq!(half_braced("x {{a}")[0].0, 2..6);
    }

    #[test]
    fn placeholders_code_and_json_are_not() {
        for prompt in [
            "{{topic}} and {{ style }}",
            "fn main() { println!(\"{}\", x); }",
            r#"Answer as {"name": "x"}"#,
            "{a} {b}",
            "{{{x}}}",
            "{{not\n}",
            "{{ a sentence that is far too long to be the name of any variable in a tool, surely }",
        ] {
            assert_eq!(names(prompt), Vec::<&str>::new(), "{prompt}");
        }
    }
}
