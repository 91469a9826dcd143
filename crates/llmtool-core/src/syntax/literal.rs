//! Offsets inside a JSON string literal: from a byte range of its decoded value to the span
//! of the source text it was written as, across escapes (`\n`, `\"`, `\u00e9`).

use std::ops::Range;

use crate::span::Span;

/// Where the escapes of a JSON string literal are, to map decoded offsets to source offsets.
#[derive(Debug)]
pub struct Escapes {
    /// The source offset of the first byte inside the quotes.
    base: usize,
    /// The raw text between the quotes.
    raw_len: usize,
    /// Each escape: its decoded offset and width, its raw offset and width.
    found: Vec<Escape>,
}

#[derive(Debug, Clone, Copy)]
struct Escape {
    decoded: usize,
    decoded_width: usize,
    raw: usize,
    raw_width: usize,
}

impl Escapes {
    /// The escapes of the literal at `literal` (its quotes included) in `text`.
    pub fn of(text: &str, literal: Span) -> Self {
        let Some(raw) =
            text.get(literal.start + 1..literal.end.saturating_sub(1).max(literal.start + 1))
        else {
            return Self { base: literal.start, raw_len: 0, found: Vec::new() };
        };
        let mut escapes = Vec::new();
        let mut decoded = 0usize;
        let mut chars = raw.char_indices().peekable();
        while let Some((at, c)) = chars.next() {
            if c == '\\' {
                let width = escape_width(raw, at, &mut chars);
                let after = chars.peek().map_or(raw.len(), |&(next, _)| next);
                escapes.push(Escape {
                    decoded,
                    decoded_width: width,
                    raw: at,
                    raw_width: after - at,
                });
                decoded += width;
            } else {
                decoded += c.len_utf8();
            }
        }
        Self { base: literal.start + 1, raw_len: raw.len(), found: escapes }
    }

    /// The raw offset of the first character whose decoded offset is at least `decoded`.
    fn raw_offset(&self, decoded: usize) -> usize {
        let before = self.found.partition_point(|e| e.decoded < decoded);
        let raw = match before.checked_sub(1).map(|i| self.found[i]) {
            None => decoded,
            Some(e) if decoded <= e.decoded + e.decoded_width => e.raw + e.raw_width,
            Some(e) => e.raw + e.raw_width + (decoded - e.decoded - e.decoded_width),
        };
        raw.min(self.raw_len)
    }

    /// The source span of `range`, a byte range of the decoded value (a binary search among
    /// the escapes, so that mapping every placeholder of a prompt stays linear).
    pub fn span(&self, range: Range<usize>) -> Span {
        let start = self.raw_offset(range.start);
        let end = self.raw_offset(range.end).max(start);
        Span::new(self.base + start, self.base + end)
    }
}

/// The decoded width of the escape at `at`; advances `chars` past it.
fn escape_width(
    raw: &str,
    at: usize,
    chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>,
) -> usize {
    match chars.next() {
        Some((_, 'u')) => {
            let code = raw
                .get(at + 2..at + 6)
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .unwrap_or(0xfffd);
            for _ in 0..4 {
                chars.next();
            }
            if (0xD800..0xDC00).contains(&code) && raw.get(at + 6..at + 8) == Some("\\u") {
                for _ in 0..6 {
                    chars.next();
                }
                4
            } else {
                char::from_u32(code).map_or(3, char::len_utf8)
            }
        }
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain walk over the literal that [`Escapes`] must agree with.
    fn string_span(text: &str, literal: Span, range: Range<usize>) -> Span {
        let Some(raw) =
            text.get(literal.start + 1..literal.end.saturating_sub(1).max(literal.start + 1))
        else {
            return literal;
        };
        let base = literal.start + 1;
        let (mut decoded, mut start, mut end) = (0usize, None, None);
        let mut chars = raw.char_indices().peekable();
        while let Some((at, c)) = chars.next() {
            if start.is_none() && decoded >= range.start {
                start = Some(at);
            }
            if decoded >= range.end {
                end = Some(at);
                break;
            }
            decoded += if c == '\\' { escape_width(raw, at, &mut chars) } else { c.len_utf8() };
        }
        let start = start.unwrap_or(raw.len());
        let end = end.unwrap_or(raw.len()).max(start);
        Span::new(base + start, base + end)
    }

    #[test]
    fn the_escape_index_maps_like_the_walk() {
        let text = r#"{"p": "a\nb \u00e9 \ud83d\ude00 {{x}} \"q\" {{y}}\t"}"#;
        let literal = Span::new(6, text.len() - 1);
        let escapes = Escapes::of(text, literal);
        let decoded_len = "a\nb é 😀 {{x}} \"q\" {{y}}\t".len();
        for start in 0..=decoded_len {
            for end in start..=decoded_len {
                assert_eq!(
                    escapes.span(start..end),
                    string_span(text, literal, start..end),
                    "{start}..{end}"
                );
            }
        }
    }

    #[test]
    fn maps_through_escapes() {
        let text = r#"{"p": "a\nb \u00e9 {{x}}"}"#;
        let literal = Span::new(6, text.len() - 1);
        // decoded: "a\nb é {{x}}" -> `{{x}}` at decoded bytes 7..12
        let span = string_span(text, literal, 7..12);
        assert_eq!(&text[span.range()], "{{x}}");
    }
}
