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

/// The byte offset at which each line starts, for offset -> line:column lookups.
#[derive(Debug, Clone)]
pub struct LineIndex {
    line_starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(text: &str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        Self { line_starts }
    }

    /// Line and column of `offset`; an offset past the end maps to the end of the text.
    pub fn line_column(&self, text: &str, offset: usize) -> LineColumn {
        let offset = offset.min(text.len());
        let line = self.line_starts.partition_point(|&start| start <= offset) - 1;
        let line_start = self.line_starts[line];
        let column = text
            .get(line_start..offset)
            .map_or(offset - line_start, |prefix| prefix.chars().count());
        LineColumn { line: line + 1, column: column + 1 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
