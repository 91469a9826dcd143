//! Where a finding is, as people count: line and column, both from 1, columns in characters
//! (a byte-order mark, which editors do not show, is not one). [`Lines`] is the text's line
//! index, built once and asked many times: the secret rules take their windows and lines from
//! it too, so that nothing reads a long line again for each hit on it.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Location {
    pub line: usize,
    pub column: usize,
}

/// How far apart the character-count checkpoints of a non-ASCII text are, in bytes.
const CHECKPOINT_BYTES: usize = 1024;

/// Where each line of a text starts, and how many characters come before points every
/// [`CHECKPOINT_BYTES`], so that locating an offset reads at most that many bytes, however
/// long its line is (a scan of one long line can have a finding every few bytes).
#[derive(Debug)]
pub struct Lines<'t> {
    text: &'t str,
    starts: Vec<usize>,
    /// `(byte, characters before it)`, from byte 0, every [`CHECKPOINT_BYTES`] or so; empty
    /// for an ASCII text, where bytes are characters. Made on the first [`Lines::locate`]: the
    /// secret rules use the line starts only.
    checkpoints: std::sync::OnceLock<Vec<(usize, usize)>>,
}

impl<'t> Lines<'t> {
    pub fn new(text: &'t str) -> Lines<'t> {
        let starts = std::iter::once(first_line_start(text))
            .chain(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1))
            .collect();
        Lines { text, starts, checkpoints: std::sync::OnceLock::new() }
    }

    /// The line and column of byte `offset` (clamped to the text).
    pub fn locate(&self, offset: usize) -> Location {
        let offset = self.floor(offset);
        let line = self.starts.partition_point(|&start| start <= offset).max(1);
        let line_start = self.starts[line - 1].min(offset);
        Location { line, column: self.chars_before(offset) - self.chars_before(line_start) + 1 }
    }

    /// The text this indexes.
    pub(crate) fn text(&self) -> &'t str {
        self.text
    }

    /// The byte where the line holding `offset` starts.
    pub(crate) fn line_start(&self, offset: usize) -> usize {
        let offset = offset.min(self.text.len());
        match self.starts.partition_point(|&start| start <= offset) {
            0 => 0,
            line => self.starts[line - 1],
        }
    }

    /// The byte just past the line break that ends the `n`th line after the one holding
    /// `offset` (0: that line itself), or the text's end.
    pub(crate) fn end_of_line_after(&self, offset: usize, n: usize) -> usize {
        let line = self.starts.partition_point(|&start| start <= offset.min(self.text.len()));
        self.starts.get(line + n).copied().unwrap_or(self.text.len())
    }

    /// `offset` clamped to the text and moved back to a character's start.
    fn floor(&self, offset: usize) -> usize {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        offset
    }

    /// How many characters come before byte `offset`, a character's start.
    fn chars_before(&self, offset: usize) -> usize {
        let checkpoints = self.checkpoints.get_or_init(|| checkpoints(self.text));
        if checkpoints.is_empty() {
            return offset;
        }
        let at = checkpoints.partition_point(|&(byte, _)| byte <= offset) - 1;
        let (byte, chars) = checkpoints[at];
        chars + self.text[byte..offset].chars().count()
    }
}

/// The checkpoints of a non-ASCII text: `(0, 0)`, then one at the first character start at or
/// after every [`CHECKPOINT_BYTES`].
fn checkpoints(text: &str) -> Vec<(usize, usize)> {
    if text.is_ascii() {
        return Vec::new();
    }
    let mut checkpoints = vec![(0, 0)];
    let (mut byte, mut chars) = (0, 0);
    while byte + CHECKPOINT_BYTES < text.len() {
        let mut next = byte + CHECKPOINT_BYTES;
        while !text.is_char_boundary(next) {
            next += 1;
        }
        chars += text[byte..next].chars().count();
        byte = next;
        checkpoints.push((byte, chars));
    }
    checkpoints
}

/// Where the first line's text starts: after a byte-order mark, if there is one.
fn first_line_start(text: &str) -> usize {
    if text.starts_with('\u{feff}') { '\u{feff}'.len_utf8() } else { 0 }
}

/// The line and column of byte `offset` of `text` (clamped to the text).
pub fn locate(text: &str, offset: usize) -> Location {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line_start = before.rfind('\n').map_or(first_line_start(text).min(offset), |i| i + 1);
    Location {
        line: before.bytes().filter(|&b| b == b'\n').count() + 1,
        column: before[line_start..].chars().count() + 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_columns_count_from_one_in_characters() {
        let text = "one\n두 e@x.io";
        assert_eq!(locate(text, 0), Location { line: 1, column: 1 });
        assert_eq!(
            locate(text, text.find("e@").unwrap_or_default()),
            Location { line: 2, column: 3 }
        );
        assert_eq!(locate(text, 999), Location { line: 2, column: 9 });
        let lines = Lines::new(text);
        for offset in [0, 2, 3, 4, 5, 7, 8, 12, 999] {
            assert_eq!(lines.locate(offset), locate(text, offset), "{offset}");
        }
    }

    #[test]
    fn a_byte_order_mark_is_not_a_column() {
        let text = "\u{feff}a@b.io\nc";
        let lines = Lines::new(text);
        for offset in 0..=text.len() {
            assert_eq!(lines.locate(offset), locate(text, offset), "{offset}");
        }
        assert_eq!(locate(text, 0), Location { line: 1, column: 1 });
        assert_eq!(locate(text, 3), Location { line: 1, column: 1 });
        assert_eq!(locate(text, 4), Location { line: 1, column: 2 });
        assert_eq!(lines.locate(text.len()), Location { line: 2, column: 2 });
    }
}
