//! Byte offsets to LSP positions and back, in the encoding the client and server agreed on:
//! UTF-8 when the client offers it (no counting at all), else UTF-16, the protocol's default.

use llmtool_core::Span;
use tower_lsp_server::ls_types::{Position, Range};

/// How a position's `character` counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Utf16,
}

/// Where each line of a text starts, to turn offsets into positions and back.
#[derive(Debug, Clone)]
pub struct Lines {
    starts: Vec<usize>,
    encoding: Encoding,
}

impl Lines {
    pub fn new(text: &str, encoding: Encoding) -> Self {
        let mut starts = vec![0];
        starts.extend(line_starts_after_newlines(text));
        Self { starts, encoding }
    }

    /// The position of byte `offset` (clamped to the text, and back to a character start).
    pub fn position(&self, text: &str, offset: usize) -> Position {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&start| start <= offset) - 1;
        let start = self.starts[line];
        let character = match self.encoding {
            Encoding::Utf8 => offset - start,
            Encoding::Utf16 => text[start..offset].encode_utf16().count(),
        };
        Position::new(to_u32(line), to_u32(character))
    }

    pub fn range(&self, text: &str, span: Span) -> Range {
        Range::new(self.position(text, span.start), self.position(text, span.end))
    }

    /// The byte offset of `position`: past the end of its line, the line's end; past the
    /// last line, the end of the text.
    pub fn offset(&self, text: &str, position: Position) -> usize {
        let line = position.line as usize;
        let Some(&start) = self.starts.get(line) else { return text.len() };
        let end = self.starts.get(line + 1).map_or(text.len(), |&next| {
            // The line's end is before its break: `\r\n`, `\n` or `\r`.
            if text.get(..next).is_some_and(|before| before.ends_with("\r\n")) {
                next - 2
            } else {
                next - 1
            }
        });
        let line_text = &text[start..end.max(start)];
        let wanted = position.character as usize;
        let within = match self.encoding {
            Encoding::Utf8 => {
                let mut at = wanted.min(line_text.len());
                while !line_text.is_char_boundary(at) {
                    at -= 1;
                }
                at
            }
            Encoding::Utf16 => {
                let mut units = 0;
                line_text
                    .char_indices()
                    .find(|&(_, c)| {
                        units += c.len_utf16();
                        units > wanted
                    })
                    .map_or(line_text.len(), |(at, _)| at)
            }
        };
        start + within
    }

    pub fn span(&self, text: &str, range: Range) -> Span {
        let start = self.offset(text, range.start);
        Span::new(start, self.offset(text, range.end).max(start))
    }
}

/// The offsets just past each line break: `\n`, `\r\n`, or a lone `\r`, as the protocol counts
/// lines (found with `memchr`, as this runs on the whole file after every keystroke).
fn line_starts_after_newlines(text: &str) -> impl Iterator<Item = usize> + '_ {
    let bytes = text.as_bytes();
    memchr::memchr2_iter(b'\n', b'\r', bytes).filter_map(move |i| {
        let ends_line = bytes[i] == b'\n' || bytes.get(i + 1) != Some(&b'\n');
        ends_line.then_some(i + 1)
    })
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_counts_units_and_utf8_counts_bytes() {
        let text = "{\n  \"a\": \"é😀x\"\r\n}";
        let x = text.find('x').unwrap_or_default();
        let utf16 = Lines::new(text, Encoding::Utf16);
        let utf8 = Lines::new(text, Encoding::Utf8);
        // `  "a": "` is 8 units, é is 1, the emoji 2.
        assert_eq!(utf16.position(text, x), Position::new(1, 11));
        assert_eq!(utf8.position(text, x), Position::new(1, 8 + 2 + 4));
        for lines in [&utf16, &utf8] {
            for offset in (0..=text.len()).filter(|&o| text.is_char_boundary(o)) {
                let position = lines.position(text, offset);
                if text.as_bytes().get(offset) != Some(&b'\n') {
                    assert_eq!(lines.offset(text, position), offset, "{offset}");
                }
            }
        }
    }

    #[test]
    fn a_lone_carriage_return_ends_a_line_as_the_protocol_says() {
        let text = "a\rb\r\nc\nd";
        let lines = Lines::new(text, Encoding::Utf8);
        for (offset, line) in [(2, 1), (5, 2), (7, 3)] {
            assert_eq!(lines.position(text, offset), Position::new(line, 0), "{offset}");
            assert_eq!(lines.offset(text, Position::new(line, 0)), offset);
        }
        assert_eq!(lines.offset(text, Position::new(0, 9)), 1);
        assert_eq!(lines.offset(text, Position::new(1, 9)), 3);
    }

    #[test]
    fn positions_past_a_line_or_the_text_are_clamped() {
        let text = "ab\r\ncd";
        let lines = Lines::new(text, Encoding::Utf16);
        assert_eq!(lines.offset(text, Position::new(0, 99)), 2);
        assert_eq!(lines.offset(text, Position::new(9, 0)), text.len());
        // Inside a surrogate pair: the character it belongs to.
        let text = "😀z";
        let lines = Lines::new(text, Encoding::Utf16);
        assert_eq!(lines.offset(text, Position::new(0, 1)), 0);
        assert_eq!(lines.offset(text, Position::new(0, 2)), 4);
    }
}
