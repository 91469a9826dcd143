//! Offsets inside a JSON string literal: from a byte range of its decoded value to the span
//! of the source text it was written as, across escapes (`\n`, `\"`, `\u00e9`).

use std::ops::Range;

use crate::span::Span;
use crate::syntax::escape;

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
    /// An invalid escape kept as written (`\q`, `\{`): its decoded bytes are its source bytes.
    kept: bool,
}

impl Escapes {
    /// The escapes of the literal at `literal` (its quotes included; an unterminated one has
    /// no closing quote) in `text`, read as the lexer reads them.
    pub fn of(text: &str, literal: Span) -> Self {
        let base = literal.start + 1;
        let quote = text.get(literal.start..).and_then(|t| t.chars().next());
        let Some(inside) = text.get(base..literal.end.max(base)) else {
            return Self { base: literal.start, raw_len: 0, found: Vec::new() };
        };
        let mut found = Vec::new();
        let (mut at, mut decoded) = (0usize, 0usize);
        let mut raw_len = inside.len();
        while let Some(special) = inside[at..].find(|c| c == '\\' || Some(c) == quote) {
            decoded += special;
            at += special;
            if !inside[at..].starts_with('\\') {
                // The closing quote.
                raw_len = at;
                break;
            }
            let escape = escape::read(text, base + at);
            let end = (escape.end - base).min(inside.len());
            let width = escape.decoded.len_utf8();
            let kept = matches!(escape.decoded, escape::Decoded::Kept(_));
            found.push(Escape {
                decoded,
                decoded_width: width,
                raw: at,
                raw_width: end - at,
                kept,
            });
            decoded += width;
            at = end;
        }
        Self { base, raw_len, found }
    }

    /// The raw offset of the first character whose decoded offset is at least `decoded`.
    fn raw_offset(&self, decoded: usize) -> usize {
        let before = self.found.partition_point(|e| e.decoded < decoded);
        let raw = match before.checked_sub(1).map(|i| self.found[i]) {
            None => decoded,
            // Inside a kept escape: a placeholder may begin at its character (`\{{x}}` holds
            // `{{x}}` from its second byte on), which is in the source where it is in the value.
            Some(e) if e.kept && decoded < e.decoded + e.decoded_width => {
                e.raw + (decoded - e.decoded)
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::{NodeKind, parse};

    /// The string the lexer decodes from `raw` written between quotes.
    fn lexed(raw: &str) -> String {
        match parse(&format!("\"{raw}\"")).root.map(|n| n.kind) {
            Some(NodeKind::String(value)) => value,
            other => panic!("{raw:?} is not a string: {other:?}"),
        }
    }

    /// Every decoded range whose ends fall between escapes or characters maps to source text
    /// that the lexer decodes to exactly that part of the value.
    fn maps_as_the_lexer_decodes(raw: &str) {
        let text = format!("{{\"p\": \"{raw}\"}}");
        let literal = Span::new(6, text.len() - 1);
        let escapes = Escapes::of(&text, literal);
        let value = lexed(raw);
        let inside_an_escape = |at: usize| {
            escapes.found.iter().any(|e| e.decoded < at && at < e.decoded + e.decoded_width)
        };
        let ends: Vec<usize> = (0..=value.len())
            .filter(|&at| value.is_char_boundary(at) && !inside_an_escape(at))
            .collect();
        for (i, &start) in ends.iter().enumerate() {
            for &end in &ends[i..] {
                let span = escapes.span(start..end);
                assert_eq!(lexed(&text[span.range()]), value[start..end], "{raw:?} {start}..{end}");
            }
        }
    }

    #[test]
    fn maps_through_every_kind_of_escape() {
        maps_as_the_lexer_decodes(r#"a\nb \u00e9 \ud83d\ude00 {{x}} \"q\" {{y}}\t"#);
        maps_as_the_lexer_decodes(r"é 😀 {{x}} \/ \\ {{y}}");
    }

    #[test]
    fn maps_through_invalid_escapes_as_the_lexer_reads_them() {
        // Each of these once moved every placeholder after it by a byte or more.
        maps_as_the_lexer_decodes(r"\q {{n}} \é {{m}}");
        maps_as_the_lexer_decodes(r"\ud83d\u00e9 {{n}}");
        maps_as_the_lexer_decodes(r"\u+0e9 {{n}}");
        maps_as_the_lexer_decodes(r"\uéé{{n}}");
        maps_as_the_lexer_decodes(r"\u12{{n}} \ude00 {{m}}");
    }

    #[test]
    fn maps_an_unterminated_literal_to_its_last_character() {
        let text = "{\"p\": \"say \\n{{x}}\n";
        let escapes = Escapes::of(text, Span::new(6, text.len() - 1));
        // decoded: "say \n{{x}}": `{{x}}` at decoded bytes 5..10
        assert_eq!(&text[escapes.span(5..10).range()], "{{x}}");
    }

    #[test]
    fn a_placeholder_that_begins_inside_a_kept_escape_maps_to_its_source() {
        // `\{` is not an escape JSON has: the lexer keeps it as written, so the value is
        // `\{{x}} \{{{y}}`, whose placeholders begin at the escapes' braces. The LSP's property
        // test found the first one mapped a byte late, onto `{x}}`.
        let text = r#"{"p": "\{{x}} \{{{y}}"}"#;
        let escapes = Escapes::of(text, Span::new(6, text.len() - 1));
        assert_eq!(lexed(r"\{{x}} \{{{y}}"), r"\{{x}} \{{{y}}");
        assert_eq!(&text[escapes.span(1..6).range()], "{{x}}");
        assert_eq!(&text[escapes.span(8..13).range()], "{{{y}");
        assert_eq!(&text[escapes.span(9..14).range()], "{{y}}");
    }

    #[test]
    fn a_placeholder_after_escapes_maps_to_its_source() {
        let text = r#"{"p": "a\nb \u00e9 \q {{x}}"}"#;
        let escapes = Escapes::of(text, Span::new(6, text.len() - 1));
        // decoded: "a\nb é \q {{x}}": `{{x}}` at decoded bytes 10..15
        assert_eq!(&text[escapes.span(10..15).range()], "{{x}}");
    }
}
