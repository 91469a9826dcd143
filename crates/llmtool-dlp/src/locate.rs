//! Where a finding is, as people count: line and column, both from 1, columns in characters
//! (a byte-order mark, which editors do not show, is not one).

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Location {
    pub line: usize,
    pub column: usize,
}

/// Where each line of a text starts, to locate many offsets in it without reading it again
/// for each (a scan of a large file has thousands of findings).
#[derive(Debug)]
pub struct Lines<'t> {
    text: &'t str,
    starts: Vec<usize>,
}

impl<'t> Lines<'t> {
    pub fn new(text: &'t str) -> Lines<'t> {
        let starts = std::iter::once(first_line_start(text)).chain(memchr_newlines(text)).collect();
        Lines { text, starts }
    }

    /// The line and column of byte `offset` (clamped to the text).
    pub fn locate(&self, offset: usize) -> Location {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&start| start <= offset).max(1);
        let line_start = self.starts[line - 1].min(offset);
        Location { line, column: self.text[line_start..offset].chars().count() + 1 }
    }
}

/// Where the first line's text starts: after a byte-order mark, if there is one.
fn first_line_start(text: &str) -> usize {
    if text.starts_with('\u{feff}') { '\u{feff}'.len_utf8() } else { 0 }
}

fn memchr_newlines(text: &str) -> impl Iterator<Item = usize> + '_ {
    text.bytes().enumerate().filter(|&(_, b)| b == b'\n').map(|(i, _)| i + 1)
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
