//! Files made of YAML front matter between `---` lines and a template body.

use serde_json::{Map, Value};

use super::{invalid, yaml, yaml_read};
use crate::codes::DROPPED_FIELD;
use llmtool_format::diagnostic::Diagnostic;
use llmtool_format::span::Span;

/// Front matter and body of `text`; a file with no front matter is all body.
pub(crate) fn split(text: &str) -> Result<(Map<String, Value>, &str), Box<Diagnostic>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text.strip_prefix("---\n").or_else(|| text.strip_prefix("---\r\n")) else {
        return Ok((Map::new(), text));
    };
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            let front = &rest[..offset];
            let body = &rest[offset + line.len()..];
            return Ok((parse_in(text, front)?, body));
        }
        offset += line.len();
    }
    Err(invalid("the front matter has no closing `---` line"))
}

/// The YAML mapping in `front`, a part of the file `text`.
fn parse_in(text: &str, front: &str) -> Result<Map<String, Value>, Box<Diagnostic>> {
    if front.trim().is_empty() {
        return Ok(Map::new());
    }
    match yaml_read::from_str(front) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(invalid("the front matter is not a YAML mapping")),
        Err(error) => Err(yaml_read::problem(text, front, "the front matter", &error)),
    }
}

/// `---`, the front matter, `---`, then the body.
pub(crate) fn join(front: &Map<String, Value>, body: &str) -> String {
    format!("---\n{}---\n{body}", yaml::document(front))
}
/// How many left-out keys of one file are located: each search reads the front matter, so a
/// file of many thousands of keys gets the rest of its warnings without a place.
const MAX_LOCATED_KEYS: usize = 256;

/// The LT701 warning that the key at `path` of `front` is left out, saying `what`, at the key
/// while fewer than [`MAX_LOCATED_KEYS`] have been `located`.
pub(crate) fn dropped_key(
    front: &str,
    path: &[&str],
    what: String,
    located: &mut usize,
) -> Diagnostic {
    let diagnostic = Diagnostic::new(&DROPPED_FIELD, what);
    if *located >= MAX_LOCATED_KEYS {
        return diagnostic;
    }
    *located += 1;
    match key_span(front, path) {
        Some(span) => diagnostic.at(span),
        None => diagnostic,
    }
}

/// Where the key at `path` (`["model", "parameters"]`) is written in the YAML `text`: the
/// key's name on the first line that holds it, each step searched below its parent, by
/// indentation. Written by hand because the YAML parser keeps no positions.
pub(crate) fn key_span(text: &str, path: &[&str]) -> Option<Span> {
    let mut from = 0;
    let mut indent: Option<usize> = None;
    for key in path {
        let mut found = None;
        let mut offset = from;
        for line in text[from..].split_inclusive('\n') {
            let content = line.trim_start();
            let this_indent = line.len() - content.len();
            let at = offset;
            offset += line.len();
            if content.trim().is_empty() || content.starts_with('#') {
                continue;
            }
            if let Some(parent) = indent
                && this_indent <= parent
            {
                break;
            }
            let bare = content.strip_prefix("- ").unwrap_or(content);
            let unquoted = bare.trim_start_matches(['"', '\'']);
            if unquoted.starts_with(key)
                && unquoted[key.len()..].trim_start_matches(['"', '\'']).starts_with(':')
            {
                let start = at + this_indent + (content.len() - unquoted.len());
                found = Some((start, this_indent, offset));
                break;
            }
        }
        let (start, this_indent, next) = found?;
        if std::ptr::eq(key, path.last()?) {
            return Some(Span::new(start, start + key.len()));
        }
        indent = Some(this_indent);
        from = next;
    }
    None
}
