//! Files made of YAML front matter between `---` lines and a template body.

use serde_json::{Map, Value};

use super::{invalid, yaml, yaml_read};
use crate::diagnostic::Diagnostic;

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
