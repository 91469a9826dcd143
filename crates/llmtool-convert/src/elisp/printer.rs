//! Emacs Lisp literals: strings with their escapes, symbols, and JSON values as the data gptel
//! and llm.el serialize (objects as plists, arrays as vectors).

use serde_json::{Map, Value};

/// `text` as an Emacs Lisp string literal that reads back as exactly `text`.
pub(crate) fn string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            // Three octal digits always, so that a digit after the escape stays itself.
            c if c.is_control() && (c as u32) < 0x80 => {
                out.push_str(&format!("\\{:03o}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `name` as a symbol that reads back with exactly this name.
pub(crate) fn symbol(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for (i, c) in name.chars().enumerate() {
        let special = c.is_whitespace()
            || c.is_control()
            || matches!(c, '(' | ')' | '[' | ']' | '"' | '\'' | ';' | '`' | ',' | '\\' | '#' | '?')
            || (c == '.' && i == 0);
        if special {
            out.push('\\');
        }
        out.push(c);
    }
    // A name the reader would take for a number is escaped at its first character.
    if super::reader::is_number(name) {
        out.insert(0, '\\');
    }
    out
}

/// The keyword for an object key: `:name`.
pub(crate) fn keyword(key: &str) -> String {
    format!(":{}", symbol(key))
}

/// A JSON number as Emacs Lisp reads it: an integer, or a float with a `.` or an exponent.
fn number(number: &serde_json::Number) -> String {
    if number.is_f64() {
        let float = number.as_f64().unwrap_or_default();
        // `{:?}` always writes `.0` or an exponent, both of which Emacs reads as a float.
        format!("{float:?}")
    } else {
        number.to_string()
    }
}

/// A datum to print: laid out on one line when it fits, else broken at its entries.
#[derive(Debug, Clone)]
pub(crate) enum Doc {
    Atom(String),
    /// `(:k v ...)`; `nil` when empty, which both encoders write as `{}`.
    Plist(Vec<(String, Doc)>),
    Vector(Vec<Doc>),
}

/// The printed width the layout aims at.
const WIDTH: usize = 90;

impl Doc {
    /// The text of the datum when it starts at `column`.
    pub(crate) fn layout(&self, column: usize) -> String {
        let flat = self.flat();
        if column + flat.len() <= WIDTH {
            return flat;
        }
        match self {
            Doc::Atom(text) => text.clone(),
            Doc::Plist(entries) if !entries.is_empty() => {
                // Every key lines up under the first, one `(` to the right of `column`.
                let indent = column + 1;
                let lines: Vec<String> = entries
                    .iter()
                    .map(|(key, value)| format!("{key} {}", value.layout(indent + key.len() + 1)))
                    .collect();
                format!("({})", lines.join(&format!("\n{}", " ".repeat(indent))))
            }
            Doc::Vector(items) if items.iter().all(|item| matches!(item, Doc::Atom(_))) => {
                fill(items.iter().map(Doc::flat), column + 1)
            }
            Doc::Vector(items) if !items.is_empty() => {
                let indent = column + 1;
                let lines: Vec<String> = items.iter().map(|item| item.layout(indent)).collect();
                format!("[{}]", lines.join(&format!("\n{}", " ".repeat(indent))))
            }
            _ => flat,
        }
    }

    /// The datum on one line.
    pub(crate) fn flat(&self) -> String {
        match self {
            Doc::Atom(text) => text.clone(),
            Doc::Plist(entries) if entries.is_empty() => "nil".into(),
            Doc::Plist(entries) => {
                let parts: Vec<String> =
                    entries.iter().map(|(k, v)| format!("{k} {}", v.flat())).collect();
                format!("({})", parts.join(" "))
            }
            Doc::Vector(items) => {
                format!("[{}]", items.iter().map(Doc::flat).collect::<Vec<_>>().join(" "))
            }
        }
    }
}

/// `[a b c]` with as many atoms on each line as fit, lines after the first starting at `indent`.
fn fill(atoms: impl Iterator<Item = String>, indent: usize) -> String {
    let mut out = String::from("[");
    let mut column = indent;
    for (i, atom) in atoms.enumerate() {
        if i > 0 {
            if column + 1 + atom.len() + 1 > WIDTH {
                out.push('\n');
                out.push_str(&" ".repeat(indent));
                column = indent;
            } else {
                out.push(' ');
                column += 1;
            }
        }
        column += atom.len();
        out.push_str(&atom);
    }
    out.push(']');
    out
}

/// Plain data: objects as plists, arrays as vectors, `true` as `t`, `false` as `:json-false`
/// and `null` as `:null`, as gptel's and llm.el's JSON encoders take them.
pub(crate) fn data(value: &Value) -> Doc {
    match value {
        Value::Null => Doc::Atom(":null".into()),
        Value::Bool(true) => Doc::Atom("t".into()),
        Value::Bool(false) => Doc::Atom(":json-false".into()),
        Value::Number(n) => Doc::Atom(number(n)),
        Value::String(text) => Doc::Atom(string(text)),
        Value::Array(items) => Doc::Vector(items.iter().map(data).collect()),
        Value::Object(object) => {
            Doc::Plist(object.iter().map(|(k, v)| (keyword(k), data(v))).collect())
        }
    }
}

/// A JSON Schema as a plist: its `type` names are symbols, and the schemas inside it
/// (`properties`, `items`, `anyOf`, ...) are written the same way.
pub(crate) fn schema(value: &Value) -> Doc {
    let Value::Object(object) = value else { return data(value) };
    Doc::Plist(schema_entries(object))
}

/// The `(:key value)` pairs of a schema object.
pub(crate) fn schema_entries(object: &Map<String, Value>) -> Vec<(String, Doc)> {
    object
        .iter()
        .map(|(key, value)| {
            let written = match (key.as_str(), value) {
                ("type", Value::String(name)) => Doc::Atom(symbol(name)),
                (
                    "properties" | "$defs" | "definitions" | "patternProperties",
                    Value::Object(map),
                ) => Doc::Plist(map.iter().map(|(k, v)| (keyword(k), schema(v))).collect()),
                ("items" | "additionalProperties" | "not", Value::Object(_)) => schema(value),
                ("anyOf" | "oneOf" | "allOf" | "prefixItems", Value::Array(items)) => {
                    Doc::Vector(items.iter().map(schema).collect())
                }
                _ => data(value),
            };
            (keyword(key), written)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::reader::{Kind, read_all};
    use super::*;

    fn reads_back(text: &str) {
        let written = string(text);
        let nodes = read_all(&written).unwrap();
        assert_eq!(nodes[0].kind, Kind::Str(text.into()), "{written}");
    }

    #[test]
    fn strings_read_back() {
        for text in [
            "",
            "plain",
            "a \"quote\" and \\ backslash",
            "tab\tnew\nline",
            "\u{1}2\u{7f}",
            "é 한 😀",
        ] {
            reads_back(text);
        }
        assert_eq!(string("say \"hi\"\n"), r#""say \"hi\"\n""#);
    }

    #[test]
    fn symbols_read_back() {
        for name in ["plain", "with space", "a(b)", "12", "-1.5", "1e3", ".x", "#x", "?", "é"] {
            let nodes = read_all(&symbol(name)).unwrap();
            assert_eq!(nodes[0].kind, Kind::Symbol(name.into()), "{}", symbol(name));
        }
    }

    #[test]
    fn json_becomes_plists_and_vectors() {
        let value = serde_json::json!({"a": [1, 2.5, true, false, null], "b": {}, "c b": "x"});
        assert_eq!(data(&value).flat(), r#"(:a [1 2.5 t :json-false :null] :b nil :c\ b "x")"#);
        let schema_value =
            serde_json::json!({"type": "object", "properties": {"type": {"type": "string"}}});
        assert_eq!(
            schema(&schema_value).flat(),
            "(:type object :properties (:type (:type string)))"
        );
    }
}
