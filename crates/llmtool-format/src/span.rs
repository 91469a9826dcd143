//! Byte spans into a source text, and the line index that turns them into line:column.

use serde::Serialize;

/// A half-open byte range `start..end` into the source text.
///
/// Spans are kept as bytes everywhere; line and column are computed only when a diagnostic is
/// shown, with a [`LineIndex`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord, Serialize)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub const fn new(start: usize, end: usize) -> Self {
        Self { start, end }
    }

    /// An empty span at `offset`, used for insertions ("a comma is missing here").
    pub const fn empty(offset: usize) -> Self {
        Self { start: offset, end: offset }
    }

    pub const fn len(self) -> usize {
        self.end - self.start
    }

    pub const fn is_empty(self) -> bool {
        self.start == self.end
    }

    /// The smallest span that covers both.
    #[must_use]
    pub fn cover(self, other: Span) -> Span {
        Span { start: self.start.min(other.start), end: self.end.max(other.end) }
    }

    pub fn range(self) -> std::ops::Range<usize> {
        self.start..self.end
    }
}

/// A 1-based line and column; the column counts Unicode scalar values, as rustc and ruff do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LineColumn {
    pub line: usize,
    pub column: usize,
}

/// The byte offset at which each line starts, for offset -> line:column lookups; and, every
/// [`CHECKPOINT_BYTES`] bytes, the column there, so that a column on a very long line is
/// counted from a nearby checkpoint rather than from the line's start.
#[derive(Debug, Clone)]
pub struct LineIndex {
    line_starts: Vec<usize>,
    /// `(byte offset, 0-based column)` at the first character boundary of each step: made
    /// when a column far into a line is first asked for (counting every character of a file
    /// for one diagnostic near a line's start is most of the cost of locating it).
    checkpoints: std::sync::OnceLock<Vec<(usize, usize)>>,
}

/// How far apart the column checkpoints are.
const CHECKPOINT_BYTES: usize = 4096;

impl LineIndex {
    pub fn new(text: &str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        Self { line_starts, checkpoints: std::sync::OnceLock::new() }
    }

    fn checkpoints(&self, text: &str) -> &[(usize, usize)] {
        let line_starts = &self.line_starts;
        self.checkpoints.get_or_init(|| {
            let mut checkpoints = Vec::with_capacity(text.len() / CHECKPOINT_BYTES);
            let mut line = 0;
            let mut previous = (0, 0);
            let mut next = CHECKPOINT_BYTES;
            while next < text.len() {
                let at =
                    (next..text.len()).find(|&i| text.is_char_boundary(i)).unwrap_or(text.len());
                while line + 1 < line_starts.len() && line_starts[line + 1] <= at {
                    line += 1;
                }
                let line_start = line_starts[line];
                let (from, column) =
                    if previous.0 >= line_start { previous } else { (line_start, 0) };
                let column = column + text[from..at].chars().count();
                checkpoints.push((at, column));
                previous = (at, column);
                next = at + CHECKPOINT_BYTES;
            }
            checkpoints
        })
    }

    /// The byte range of the line holding `offset`, without its line break.
    pub fn line_range(&self, text: &str, offset: usize) -> std::ops::Range<usize> {
        let offset = offset.min(text.len());
        let line = self.line_starts.partition_point(|&start| start <= offset) - 1;
        let end = self.line_starts.get(line + 1).map_or(text.len(), |next| next - 1);
        self.line_starts[line]..end.max(self.line_starts[line])
    }

    /// Line and column of `offset`; an offset past the end maps to the end of the text.
    pub fn line_column(&self, text: &str, offset: usize) -> LineColumn {
        let offset = offset.min(text.len());
        let line = self.line_starts.partition_point(|&start| start <= offset) - 1;
        let line_start = self.line_starts[line];
        let (from, counted) = if offset - line_start <= CHECKPOINT_BYTES {
            (line_start, 0)
        } else {
            let checkpoints = self.checkpoints(text);
            let nearest = checkpoints.partition_point(|&(at, _)| at <= offset);
            match nearest.checked_sub(1).map(|i| checkpoints[i]) {
                Some((at, column)) if at >= line_start => (at, column),
                _ => (line_start, 0),
            }
        };
        let column = text.get(from..offset).map_or(offset - from, |prefix| prefix.chars().count());
        LineColumn { line: line + 1, column: counted + column + 1 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkpoints_give_the_same_columns_as_counting_from_the_line_start() {
        let line = "é😀ab\u{7ff}".repeat(3000);
        let text = format!("x\n{line}\n{line}y");
        let index = LineIndex::new(&text);
        for offset in (0..=text.len()).filter(|&i| text.is_char_boundary(i)) {
            let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
            let expected = text[line_start..offset].chars().count() + 1;
            assert_eq!(index.line_column(&text, offset).column, expected, "at {offset}");
        }
        assert!(index.checkpoints.get().is_some_and(|c| c.len() > 10));
    }

    #[test]
    fn line_column_counts_characters_not_bytes() {
        let text = "ab\n주제 x\n";
        let index = LineIndex::new(text);
        assert_eq!(index.line_column(text, 0), LineColumn { line: 1, column: 1 });
        assert_eq!(index.line_column(text, 3), LineColumn { line: 2, column: 1 });
        let x = text.find('x').unwrap();
        assert_eq!(index.line_column(text, x), LineColumn { line: 2, column: 4 });
        assert_eq!(index.line_column(text, 999), LineColumn { line: 3, column: 1 });
    }
}
