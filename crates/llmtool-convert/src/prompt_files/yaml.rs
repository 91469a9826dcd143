//! YAML for the prompt-file peers, written so that YAML 1.1 readers (PyYAML, which Prompty,
//! Dotprompt's Python package and the `llm` CLI use) and YAML 1.2 readers read the same
//! values.
//!
//! Written by hand: serde's YAML writers emit YAML 1.2 plain scalars such as `yes`, `on` or
//! `1e3`, which PyYAML reads as a boolean or keeps as a string, and they leave line separators
//! (U+2028) raw inside quoted strings, where YAML 1.1 folds them. Here every string is either a
//! literal block (multi-line text with nothing a block cannot hold) or double-quoted with
//! escapes, so nothing is left to a reader's guessing.

use serde_json::{Map, Value};

/// `value` (an object) as a YAML document body, one `key: value` per line.
pub(crate) fn document(value: &Map<String, Value>) -> String {
    let mut out = String::new();
    mapping(value, 0, &mut out);
    out
}

fn mapping(map: &Map<String, Value>, indent: usize, out: &mut String) {
    for (key, value) in map {
        out.push_str(&" ".repeat(indent));
        out.push_str(&scalar_key(key));
        out.push(':');
        node(value, indent, out);
    }
}

/// Writes the value of a key (after its `:`), ending with a newline.
fn node(value: &Value, indent: usize, out: &mut String) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            out.push('\n');
            mapping(map, indent + 2, out);
        }
        Value::Array(items) if !items.is_empty() && items.iter().any(is_collection) => {
            out.push('\n');
            for item in items {
                out.push_str(&" ".repeat(indent + 2));
                out.push('-');
                match item {
                    Value::Object(map) if !map.is_empty() => {
                        // The first key on the dash's line, the others under it.
                        let mut nested = String::new();
                        mapping(map, indent + 4, &mut nested);
                        out.push(' ');
                        out.push_str(nested.trim_start());
                    }
                    other => node(other, indent + 2, out),
                }
            }
        }
        Value::String(text) if block_fits(text) => {
            out.push_str(&block(text, indent + 2));
        }
        Value::String(text) if is_plain(text) => {
            out.push(' ');
            out.push_str(text);
            out.push('\n');
        }
        other => {
            out.push(' ');
            out.push_str(&flow(other));
            out.push('\n');
        }
    }
}

fn is_collection(value: &Value) -> bool {
    matches!(value, Value::Object(m) if !m.is_empty())
        || matches!(value, Value::Array(a) if !a.is_empty())
}

/// A value on one line: `"text"`, `12`, `true`, `null`, `["a", "b"]`, `{"k": "v"}`.
pub(crate) fn flow(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => number(n),
        Value::String(text) => quoted(text),
        Value::Array(items) => {
            format!("[{}]", items.iter().map(flow).collect::<Vec<_>>().join(", "))
        }
        Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!("{}: {}", quoted(k), flow(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A number both YAML versions read as the same number: a float always has a `.` and never an
/// exponent (PyYAML takes `1e3` for a string).
fn number(number: &serde_json::Number) -> String {
    match number.as_f64() {
        Some(float) if number.is_f64() => {
            let text = format!("{float}");
            if text.contains('.') || !float.is_finite() { text } else { format!("{text}.0") }
        }
        _ => number.to_string(),
    }
}

/// A key: plain when it is a simple word no reader takes for anything else, else quoted.
fn scalar_key(key: &str) -> String {
    let plain = key.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        && !is_special_word(key);
    if plain { key.to_owned() } else { quoted(key) }
}

/// Whether `text` reads as itself when written bare as a key's value: a letter first, then
/// letters, digits, blanks and a few marks that mean nothing to YAML there, and not a word
/// that YAML 1.1 reads as a boolean or null.
fn is_plain(text: &str) -> bool {
    text.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && !text.ends_with(' ')
        && text.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(c, ' ' | '_' | '.' | ',' | '\'' | '(' | ')' | '/' | '-')
        })
        && !text.contains("  ")
        && !is_special_word(text)
}

/// Words that YAML 1.1 reads as booleans or null.
fn is_special_word(word: &str) -> bool {
    matches!(
        word.to_ascii_lowercase().as_str(),
        "y" | "n" | "yes" | "no" | "on" | "off" | "true" | "false" | "null" | "~"
    )
}

/// A double-quoted scalar with YAML's escapes.
pub(crate) fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{85}' => out.push_str("\\N"),
            '\u{2028}' => out.push_str("\\L"),
            '\u{2029}' => out.push_str("\\P"),
            c if !is_printable(c) => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// YAML's printable characters (PyYAML refuses the others even in quoted scalars).
fn is_printable(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{7e}' | '\u{85}' | '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..)
        && c != '\u{feff}'
}

/// Whether `text` can be a literal block: several lines of printable text, no carriage returns
/// or other line breaks, no line of blanks only, and no blank at the start (which would set
/// the indentation).
fn block_fits(text: &str) -> bool {
    text.contains('\n')
        && !text.starts_with([' ', '\t', '\n'])
        && text.chars().all(|c| {
            c == '\n'
                || (is_printable(c) && !matches!(c, '\r' | '\u{85}' | '\u{2028}' | '\u{2029}'))
        })
        && text.split('\n').all(|line| line.is_empty() || !line.trim().is_empty())
        && !text.split('\n').any(|line| line.ends_with([' ', '\t']))
}

/// ` |` and the lines of `text` at `indent`, with the chomping indicator that keeps its final
/// newlines exactly.
fn block(text: &str, indent: usize) -> String {
    let body = text.trim_end_matches('\n');
    let newlines = text.len() - body.len();
    let chomp = match newlines {
        0 => "-",
        1 => "",
        _ => "+",
    };
    let pad = " ".repeat(indent);
    let mut out = format!(" |{chomp}\n");
    for line in body.split('\n') {
        if !line.is_empty() {
            out.push_str(&pad);
            out.push_str(line);
        }
        out.push('\n');
    }
    for _ in 1..newlines {
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn reads_back(value: &Value) {
        let text = document(value.as_object().unwrap());
        let back: Value = serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(&back, value, "{text}");
    }

    #[test]
    fn values_read_back() {
        reads_back(&json!({
            "name": "Strategy: consultant",
            "yes": "no",
            "prompt": "line one\nline \"two\" $x\n  indented\n",
            "two_newlines": "a\nb\n\n",
            "no_newline": "a\nb",
            "starts_blank": " a\nb",
            "blank_line": "a\n  \nb",
            "crlf": "a\r\nb",
            "separators": "a\u{2028}b\u{85}c\u{1}d\u{feff}",
            "n": 1.5, "big": 1e20, "int": -3, "t": true, "none": null,
            "list": ["a", "on", 1],
            "objects": [{"a": 1, "b": {"c": [1, 2]}}, {"d": "e"}],
            "nested": {"deep": {"deeper": "x"}, "empty": {}, "list": []},
            "한국어 key": "값",
        }));
    }

    #[test]
    fn special_words_are_quoted() {
        let text = document(
            json!({"on": "yes", "x": ["no"], "y": "Off", "z": "plain text, fine."})
                .as_object()
                .unwrap(),
        );
        assert_eq!(text, "\"on\": \"yes\"\nx: [\"no\"]\n\"y\": \"Off\"\nz: plain text, fine.\n");
    }
}
