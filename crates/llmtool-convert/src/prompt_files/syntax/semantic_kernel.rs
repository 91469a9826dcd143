//! Semantic Kernel's own template language: `{{$name}}`, and a literal `{{` written as the
//! value block `{{ "{{" }}`.
//!
//! Written by hand, after Semantic Kernel's tokenizer: a block runs from the last `{{` before
//! a `}}` that is not inside a quoted value, so `{{{$x}}` is a `{` and then a variable.

use super::{Part, Slots, TemplateError};
use llmtool_format::template::Piece;

/// Whether `name` can follow the `$` of a variable block: `[0-9A-Za-z_]+`.
pub(crate) fn is_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

pub(crate) fn write<'a>(pieces: impl Iterator<Item = Piece<'a>>, slots: &Slots<'_>) -> String {
    write_with(pieces, slots, str::to_owned)
}

/// As [`write`], with the literal text passed through `literal` first (a message's text is
/// encoded for Semantic Kernel's XML reading).
pub(crate) fn write_with<'a>(
    pieces: impl Iterator<Item = Piece<'a>>,
    slots: &Slots<'_>,
    literal: impl Fn(&str) -> String,
) -> String {
    super::write(
        pieces,
        |text, out| out.push_str(&literal(text).replace("{{", "{{ \"{{\" }}")),
        |slot, out| out.push_str(&format!("{{{{${}}}}}", slots.names[slot])),
    )
}

/// Templates shorter than this are text whatever they hold (an empty block `{{}}` is four).
const SHORTEST_BLOCK: usize = 5;

/// Reads a template of text, variable blocks and value blocks; a function call or any other
/// code is an error that quotes it.
pub(crate) fn read(template: &str) -> Result<Vec<Part>, TemplateError> {
    let mut parts = Vec::new();
    let mut literal = String::new();
    let mut end_of_last = 0;
    if template.len() >= SHORTEST_BLOCK {
        for (start, end) in blocks(template) {
            literal.push_str(&template[end_of_last..start]);
            let whole = &template[start..end];
            let inner = whole[2..whole.len() - 2].trim();
            if inner.is_empty() {
                literal.push_str(whole);
            } else if let Some(name) = inner.strip_prefix('$').filter(|name| is_name(name)) {
                if !literal.is_empty() {
                    parts.push(Part::Literal(std::mem::take(&mut literal)));
                }
                parts.push(Part::Variable { name: name.to_owned(), list: false, default: None });
            } else if let Some(text) = quoted_value(inner) {
                literal.push_str(text);
            } else {
                return Err(TemplateError::no_equivalent(whole));
            }
            end_of_last = end;
        }
    }
    literal.push_str(&template[end_of_last..]);
    if !literal.is_empty() {
        parts.push(Part::Literal(literal));
    }
    Ok(parts)
}

/// The byte ranges of the blocks, `{{` to `}}`, as Semantic Kernel finds them.
fn blocks(text: &str) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut blocks = Vec::new();
    let mut start = None;
    let mut quote = None;
    let mut i = 0;
    while i + 1 < bytes.len() {
        let (current, next) = (bytes[i], bytes[i + 1]);
        if let Some(delimiter) = quote {
            if current == b'\\' && matches!(next, b'"' | b'\'' | b'\\') {
                i += 2;
                continue;
            }
            if current == delimiter {
                quote = None;
            }
        } else if current == b'{' && next == b'{' {
            start = Some(i);
        } else if let Some(from) = start {
            if matches!(current, b'"' | b'\'') {
                quote = Some(current);
            } else if current == b'}' && next == b'}' {
                blocks.push((from, i + 2));
                start = None;
                i += 2;
                continue;
            }
        }
        i += 1;
    }
    blocks
}

/// The text of a value block (`"..."` or `'...'`) that holds no escapes.
fn quoted_value(inner: &str) -> Option<&str> {
    let quote = inner.chars().next().filter(|c| matches!(c, '"' | '\''))?;
    let body = inner.strip_prefix(quote)?.strip_suffix(quote)?;
    (!body.contains([quote, '\\'])).then_some(body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use llmtool_format::model::VariableKind;

    #[test]
    fn braces_round_trip() {
        let names = ["x".to_owned()];
        let slots = Slots { names: &names, kinds: vec![VariableKind::Text] };
        let pieces = [Piece::Literal("a {{b}} {"), Piece::Slot(0), Piece::Literal("}}} {{{")];
        let written = write(pieces.into_iter(), &slots);
        assert_eq!(written, r#"a {{ "{{" }}b}} {{{$x}}}}} {{ "{{" }}{"#);
        assert_eq!(
            read(&written).unwrap(),
            vec![
                Part::Literal("a {{b}} {".into()),
                Part::Variable { name: "x".into(), list: false, default: None },
                Part::Literal("}}} {{{".into()),
            ]
        );
    }

    #[test]
    fn code_is_refused_and_short_text_is_text() {
        assert!(read("{{ time.now }}").unwrap_err().message.contains("time.now"));
        assert_eq!(read("{{x}").unwrap(), vec![Part::Literal("{{x}".into())]);
        assert_eq!(read("a {{ }} b").unwrap(), vec![Part::Literal("a {{ }} b".into())]);
        assert_eq!(read("{{ '}}' }}").unwrap(), vec![Part::Literal("}}".into())]);
    }
}
