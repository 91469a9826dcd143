//! Python's `string.Template`, which the `llm` CLI fills its templates with: `$name`, or
//! `${name}` when a letter, digit or `_` follows, and a literal `$` written `$$`.
//!
//! Written by hand: the syntax is four rules (see Python's `string` module), and no crate
//! implements Python's exact ones (ASCII identifiers, case-insensitive, `$` anywhere else an
//! error).

use super::{Part, Slots, TemplateError};
use llmtool_format::template::Piece;

/// Whether `name` is a `string.Template` identifier: `[_a-zA-Z][_a-zA-Z0-9]*`.
pub(crate) fn is_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(is_name_char)
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The template: literal `$` doubled, each slot `$name`, braced when the text after it would
/// otherwise extend the name.
pub(crate) fn write<'a>(pieces: impl Iterator<Item = Piece<'a>>, slots: &Slots<'_>) -> String {
    let pieces: Vec<Piece<'a>> = pieces.collect();
    let mut out = String::new();
    for (i, piece) in pieces.iter().enumerate() {
        match piece {
            Piece::Literal(text) => out.push_str(&text.replace('$', "$$")),
            Piece::Slot(slot) => {
                let name = &slots.names[*slot];
                let extends = match pieces.get(i + 1) {
                    Some(Piece::Literal(next)) => next.starts_with(is_name_char),
                    _ => false,
                };
                if extends {
                    out.push_str(&format!("${{{name}}}"));
                } else {
                    out.push('$');
                    out.push_str(name);
                }
            }
        }
    }
    out
}

/// Reads a template the way `string.Template.substitute` does. A `$` that starts none of
/// `$$`, `$name` or `${name}` is an error, as it is in Python.
pub(crate) fn read(template: &str) -> Result<Vec<Part>, TemplateError> {
    let mut parts = Vec::new();
    let mut literal = String::new();
    let mut rest = template;
    while let Some(at) = rest.find('$') {
        literal.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, used) = if after.starts_with('$') {
            literal.push('$');
            (None, 1)
        } else if let Some(braced) = after.strip_prefix('{') {
            match braced.find('}').map(|end| &braced[..end]).filter(|name| is_name(name)) {
                Some(name) => (Some(name), name.len() + 2),
                None => return Err(invalid_placeholder(&rest[at..])),
            }
        } else {
            let length = after.find(|c: char| !is_name_char(c)).unwrap_or(after.len());
            let name = &after[..length];
            if !is_name(name) {
                return Err(invalid_placeholder(&rest[at..]));
            }
            (Some(name), length)
        };
        if let Some(name) = name {
            if !literal.is_empty() {
                parts.push(Part::Literal(std::mem::take(&mut literal)));
            }
            parts.push(Part::Variable { name: name.to_owned(), list: false, default: None });
        }
        rest = &rest[at + 1 + used..];
    }
    literal.push_str(rest);
    if !literal.is_empty() {
        parts.push(Part::Literal(literal));
    }
    Ok(parts)
}

/// The error for the `$` that starts `from`.
fn invalid_placeholder(from: &str) -> TemplateError {
    let shown: String = from.chars().take(13).collect();
    let message = format!(
        "`{shown}` is not a placeholder: write `$name` or `${{name}}`, and `$$` for a literal `$`"
    );
    TemplateError::at(&shown, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use llmtool_format::model::VariableKind;

    #[test]
    fn dollars_and_names() {
        let names = ["topic".to_owned(), "n".to_owned()];
        let slots = Slots { names: &names, kinds: vec![VariableKind::Text; 2] };
        let pieces = [
            Piece::Literal("Cost $5 for "),
            Piece::Slot(0),
            Piece::Literal(", "),
            Piece::Slot(1),
            Piece::Literal("th time"),
        ];
        let written = write(pieces.into_iter(), &slots);
        assert_eq!(written, "Cost $$5 for $topic, ${n}th time");
        assert_eq!(
            read(&written).unwrap(),
            vec![
                Part::Literal("Cost $5 for ".into()),
                Part::Variable { name: "topic".into(), list: false, default: None },
                Part::Literal(", ".into()),
                Part::Variable { name: "n".into(), list: false, default: None },
                Part::Literal("th time".into()),
            ]
        );
    }

    #[test]
    fn a_lone_dollar_is_refused() {
        assert!(read("ab $5").unwrap_err().message.contains("`$5`"));
        assert!(read("$$ ${x").unwrap_err().message.contains("`${x`"));
        assert!(read("${x y}").is_err());
        assert!(read("end $").is_err());
        assert!(!is_name("주제") && !is_name("9a") && is_name("_a9"));
    }
}
