//! Byte offsets to LSP positions and back, in the encoding the client and server agreed on:
//! UTF-8 when the client offers it (no counting at all), else UTF-16, the protocol's default.

use std::sync::OnceLock;

use llmtool_format::Span;
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
    /// In UTF-16 with non-ASCII text: checkpoints along long lines, so that counting units
    /// to an offset reads at most [`CHECKPOINT_EVERY`] bytes, not the whole line (a prompt is
    /// often one line of a megabyte, with thousands of placeholders to place).
    checkpoints: OnceLock<Vec<Checkpoint>>,
    ascii: bool,
}

/// A character start in a line, and the UTF-16 units from its line's start to it.
#[derive(Debug, Clone, Copy)]
struct Checkpoint {
    byte: usize,
    units: usize,
}

/// How many bytes apart the UTF-16 checkpoints are.
const CHECKPOINT_EVERY: usize = 1024;

impl Lines {
    pub fn new(text: &str, encoding: Encoding) -> Self {
        let mut starts = vec![0];
        starts.extend(line_starts_after_newlines(text));
        // Only UTF-16 counting asks; UTF-8 positions are bytes already.
        let ascii = encoding == Encoding::Utf16 && text.is_ascii();
        Self { starts, encoding, checkpoints: OnceLock::new(), ascii }
    }

    /// The UTF-16 units from `start`, a line's start, to `offset` in the same line.
    fn units(&self, text: &str, start: usize, offset: usize) -> usize {
        if self.ascii {
            return offset - start;
        }
        let checkpoints = self.checkpoints.get_or_init(|| checkpoints(text, &self.starts));
        let before = checkpoints.partition_point(|c| c.byte <= offset);
        match before.checked_sub(1).map(|i| checkpoints[i]).filter(|c| c.byte >= start) {
            Some(c) => c.units + text[c.byte..offset].encode_utf16().count(),
            None => text[start..offset].encode_utf16().count(),
        }
    }

    /// The byte of the line starting at `start` (its text `line_text`) after which `wanted`
    /// UTF-16 units are reached: the nearest checkpoint before it, then counted.
    fn utf16_offset(&self, text: &str, start: usize, line_text: &str, wanted: usize) -> usize {
        if self.ascii {
            return start + wanted.min(line_text.len());
        }
        let end = start + line_text.len();
        let checkpoints = self.checkpoints.get_or_init(|| checkpoints(text, &self.starts));
        let first = checkpoints.partition_point(|c| c.byte < start);
        let in_line = &checkpoints[first..checkpoints.partition_point(|c| c.byte < end)];
        let (at, mut units) = in_line[..in_line.partition_point(|c| c.units <= wanted)]
            .last()
            .map_or((start, 0), |c| (c.byte, c.units));
        let rest = &text[at..end];
        rest.char_indices()
            .find(|&(_, c)| {
                units += c.len_utf16();
                units > wanted
            })
            .map_or(end, |(i, _)| at + i)
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
            Encoding::Utf16 => self.units(text, start, offset),
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
                return self.utf16_offset(text, start, line_text, wanted);
            }
        };
        start + within
    }

    pub fn span(&self, text: &str, range: Range) -> Span {
        let start = self.offset(text, range.start);
        Span::new(start, self.offset(text, range.end).max(start))
    }
}

/// Checkpoints every [`CHECKPOINT_EVERY`] bytes along each line that long.
fn checkpoints(text: &str, starts: &[usize]) -> Vec<Checkpoint> {
    let mut out = Vec::new();
    for (i, &start) in starts.iter().enumerate() {
        let end = starts.get(i + 1).copied().unwrap_or(text.len());
        let (mut byte, mut units) = (start, 0);
        loop {
            let mut next = byte + CHECKPOINT_EVERY;
            if next >= end {
                break;
            }
            while !text.is_char_boundary(next) {
                next += 1;
            }
            units += text[byte..next].encode_utf16().count();
            byte = next;
            out.push(Checkpoint { byte, units });
        }
    }
    out
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
    fn long_lines_count_the_same_through_the_checkpoints() {
        // Lines of several checkpoints, with characters of one to four bytes across them.
        let line = "é word {{a}} 😀 x ".repeat(300);
        let text = format!("{{\r\n{line}\n{line}\r\n}}");
        let lines = Lines::new(&text, Encoding::Utf16);
        for offset in (0..=text.len()).filter(|&o| text.is_char_boundary(o)) {
            let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
            let units = text[line_start..offset].encode_utf16().count();
            let position = lines.position(&text, offset);
            assert_eq!(position.character as usize, units, "{offset}");
            if !matches!(text.as_bytes().get(offset), Some(b'\n' | b'\r')) {
                assert_eq!(lines.offset(&text, position), offset, "{offset}");
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
