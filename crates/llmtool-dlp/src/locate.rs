//! Where a finding is, as people count: line and column, both from 1, columns in characters.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Location {
    pub line: usize,
    pub column: usize,
}

/// The line and column of byte `offset` of `text` (clamped to the text).
pub fn locate(text: &str, offset: usize) -> Location {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
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
    }
}
