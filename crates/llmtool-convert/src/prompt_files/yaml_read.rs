//! YAML that cannot be read, said as a conversion's diagnostic at its place (the reading
//! itself, with its nesting check, is `llmtool_format::yaml`).

pub(crate) use llmtool_format::yaml::{YamlError, from_str};

use crate::codes::INVALID_SOURCE;
use llmtool_format::diagnostic::Diagnostic;

/// The diagnostic of YAML that cannot be read: `what` (`the front matter`) and the parser's
/// message, at the place it stopped; `yaml` is a part of `text`, the whole file.
pub(crate) fn problem(text: &str, yaml: &str, what: &str, error: &YamlError) -> Box<Diagnostic> {
    let start = yaml.as_ptr() as usize - text.as_ptr() as usize;
    let located = error.at.map(|at| start + at).filter(|at| *at <= text.len());
    // The parser counts lines from the start of the YAML, not of the file: with a location
    // of our own, its positions would only mislead.
    let message =
        if located.is_some() { without_positions(&error.message) } else { error.message.clone() };
    let diagnostic =
        Diagnostic::new(&INVALID_SOURCE, format!("{what} is not valid YAML: {message}"));
    Box::new(match located {
        Some(at) => {
            let end = text[at..].chars().next().map_or(at, |c| at + c.len_utf8());
            diagnostic.at(llmtool_format::span::Span::new(at, end))
        }
        None => diagnostic,
    })
}

/// `message` without the parser's ` at line N column M` positions.
fn without_positions(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find(" at line ") {
        out.push_str(&rest[..at]);
        let after = &rest[at + " at line ".len()..];
        let digits =
            |text: &str| text.len() - text.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let line = digits(after);
        let column = after[line..].strip_prefix(" column ").map(digits);
        match column {
            Some(column) if line > 0 && column > 0 => {
                rest = &after[line + " column ".len() + column..];
            }
            _ => {
                out.push_str(" at line ");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parsers_positions_are_left_out() {
        assert_eq!(
            without_positions(
                "did not find key at line 14 column 24, while parsing at line 2 column 5"
            ),
            "did not find key, while parsing"
        );
    }
}
