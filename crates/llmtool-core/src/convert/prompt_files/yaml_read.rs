//! Reading YAML (front matter, `llm` templates), with the nesting checked first: the YAML
//! parser stops at 128 levels, but reaching that limit through deeply nested flow collections
//! (`[[[[...`) takes it time quadratic in the input, so such input is refused before parsing.
//!
//! The check is written by hand: a single cheap pass that may over-count but never
//! under-counts. Every bracket counts, even inside quotes or comments (YAML quoting spans lines
//! and hides in block scalars, and a scanner that tried to follow it could be misled into
//! missing the brackets that matter); a file is refused only when more than 128 brackets are
//! open at once (counted over the whole file), which no real prompt file has.

use serde_json::Value;

use crate::convert::codes::INVALID_SOURCE;
use crate::diagnostic::Diagnostic;

/// The deepest nesting accepted: the YAML parser's own recursion limit.
pub(crate) const MAX_NESTING: usize = 128;

/// Why YAML could not be read: the parser's message, and the byte offset in the text where it
/// stopped, when it says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct YamlError {
    pub(crate) message: String,
    pub(crate) at: Option<usize>,
}

impl std::fmt::Display for YamlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Parses `text` as one YAML document into a JSON value.
pub(crate) fn from_str(text: &str) -> Result<Value, YamlError> {
    check_nesting(text).map_err(|message| YamlError { message, at: None })?;
    serde_yaml_ng::from_str::<Value>(text).map_err(|error| YamlError {
        at: error.location().map(|location| location.index().min(text.len())),
        message: error.to_string(),
    })
}

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
            diagnostic.at(crate::span::Span::new(at, end))
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

/// An error if flow collections, or block sequences opened on one line (`- - - x`), nest
/// deeper than [`MAX_NESTING`].
pub(crate) fn check_nesting(text: &str) -> Result<(), String> {
    let too_deep = |line: usize| {
        Err(format!("line {line}: collections are nested more than {MAX_NESTING} levels deep"))
    };
    let mut flow_depth = 0usize;
    for (index, line) in text.lines().enumerate() {
        if dashes(line) > MAX_NESTING {
            return too_deep(index + 1);
        }
        for byte in line.bytes() {
            match byte {
                b'[' | b'{' => {
                    flow_depth += 1;
                    if flow_depth > MAX_NESTING {
                        return too_deep(index + 1);
                    }
                }
                b']' | b'}' => flow_depth = flow_depth.saturating_sub(1),
                _ => {}
            }
        }
    }
    Ok(())
}

/// How many block sequence or mapping-key indicators (`- `, `? `) open a line.
fn dashes(line: &str) -> usize {
    let mut count = 0;
    let mut rest = line.trim_start();
    while let Some(after) = rest.strip_prefix("- ").or_else(|| rest.strip_prefix("? ")) {
        count += 1;
        rest = after.trim_start();
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_nesting_is_refused_before_parsing() {
        let deep = format!("a: {}", "[".repeat(100_000));
        assert!(from_str(&deep).unwrap_err().message.contains("more than 128 levels"));
        let dashes = format!("{}x", "- ".repeat(200));
        assert!(from_str(&dashes).unwrap_err().message.contains("line 1"));
        assert_eq!(
            without_positions(
                "did not find key at line 14 column 24, while parsing at line 2 column 5"
            ),
            "did not find key, while parsing"
        );
        let mixed = format!("a: {}", "[{".repeat(65));
        assert!(check_nesting(&mixed).is_err());
    }

    #[test]
    fn ordinary_yaml_passes() {
        let text = "a: [1, [2, {b: c}]]\nprompt: |\n  Use arr[i][j] and {{x}}.\n";
        assert!(from_str(text).is_ok());
        assert_eq!(
            check_nesting(&format!("a: \"{}{}\"", "[".repeat(128), "]".repeat(128))),
            Ok(())
        );
    }
}
