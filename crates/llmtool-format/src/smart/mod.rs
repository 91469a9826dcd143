//! Smart tools, the sibling format whose work is Python code (`tool_code`, defining
//! `execute(variables)`) rather than a prompt: what `check` reads from the code and from its
//! `requirements`. Core never runs the code; `llmtool-sandbox` does, when asked.

pub mod code;
pub mod requirements;

pub use code::{CodeFacts, CodeToken, Execute, PYTHON_VERSION, facts, highlights};
pub use requirements::Requirement;

use crate::model::Tool;
use crate::span::Span;
use crate::syntax::literal::Escapes;

/// Where line `line` (1-based, as a Python traceback counts) of `tool`'s code is in `text`, the
/// file the tool was read from: a failure at run time points into the file as `check` does.
pub fn code_line_span(text: &str, tool: &Tool, line: u32) -> Option<Span> {
    let code = tool.code()?;
    let index = usize::try_from(line.checked_sub(1)?).ok()?;
    let mut start = 0;
    for (number, piece) in code.value.split_inclusive('\n').enumerate() {
        if number == index {
            let end = start + piece.trim_end_matches(['\n', '\r']).len();
            return Some(Escapes::of(text, code.span).span(start..end));
        }
        start += piece.len();
    }
    None
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

    use super::*;

    #[test]
    fn a_code_line_is_found_in_the_file() {
        let text = r#"{"tool_code": "def execute(v):\n    return v['x']\n"}"#;
        let document = crate::document::Document::from_text(text.to_owned());
        let tool = document.tool.as_ref().unwrap();
        let span = code_line_span(text, tool, 2).unwrap();
        assert_eq!(&text[span.start..span.end], "    return v['x']");
        assert_eq!(code_line_span(text, tool, 9), None);
    }
}
