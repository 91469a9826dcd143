//! Reading YAML (test files here; front matter and `llm` templates in `llmtool-convert`), with
//! the nesting checked first: the YAML parser stops at 128 levels, but reaching that limit
//! through deeply nested flow collections (`[[[[...`) takes it time quadratic in the input, so
//! such input is refused before parsing.
//!
//! The check is written by hand: a single cheap pass that may over-count but never
//! under-counts. Every bracket counts, even inside quotes or comments (YAML quoting spans lines
//! and hides in block scalars, and a scanner that tried to follow it could be misled into
//! missing the brackets that matter); a file is refused only when more than 128 brackets are
//! open at once (counted over the whole file), which no real prompt file has.

use serde_json::Value;

/// The deepest nesting accepted: the YAML parser's own recursion limit.
pub const MAX_NESTING: usize = 128;

/// Why YAML could not be read: the parser's message, and the byte offset in the text where it
/// stopped, when it says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlError {
    pub message: String,
    pub at: Option<usize>,
}

impl std::fmt::Display for YamlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Parses `text` as one YAML document into a JSON value.
pub fn from_str(text: &str) -> Result<Value, YamlError> {
    check_nesting(text).map_err(|message| YamlError { message, at: None })?;
    serde_yaml_ng::from_str::<Value>(text).map_err(|error| YamlError {
        at: error.location().map(|location| location.index().min(text.len())),
        message: error.to_string(),
    })
}

/// An error if flow collections, or block sequences opened on one line (`- - - x`), nest
/// deeper than [`MAX_NESTING`].
pub fn check_nesting(text: &str) -> Result<(), String> {
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
