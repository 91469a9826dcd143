//! Markdown code fences in model answers: finding the fenced blocks, and unwrapping an answer
//! that is one fenced block.

/// One fenced block: its info string (`python`, `json`, or empty) and its content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FencedBlock<'a> {
    pub info: &'a str,
    pub content: &'a str,
}

/// Every fenced block (three or more backticks or tildes) in `text`, in order. An unclosed block runs
/// to the end of the text, as Markdown readers take it.
pub fn fenced_blocks(text: &str) -> Vec<FencedBlock<'_>> {
    let mut blocks = Vec::new();
    let mut lines = line_spans(text).peekable();
    while let Some((start, end)) = lines.next() {
        let line = &text[start..end];
        let Some((fence, info)) = opening_fence(line) else { continue };
        let content_start = (end + 1).min(text.len());
        let mut content_end = text.len();
        for (inner_start, inner_end) in lines.by_ref() {
            let inner = text[inner_start..inner_end].trim();
            if inner.starts_with(fence)
                && inner.trim_start_matches(fence.chars().next().unwrap_or('`')).is_empty()
            {
                content_end = inner_start;
                break;
            }
        }
        let content = text.get(content_start..content_end.max(content_start)).unwrap_or("");
        blocks.push(FencedBlock { info, content: content.strip_suffix('\n').unwrap_or(content) });
    }
    blocks
}

/// The text inside, when the whole answer (trimmed) is one fenced block; otherwise the answer.
pub fn unwrap_fence(text: &str) -> &str {
    let trimmed = text.trim();
    let blocks = fenced_blocks(trimmed);
    match blocks.as_slice() {
        [only] if trimmed.starts_with(['`', '~']) && trimmed.ends_with(['`', '~']) => only.content,
        _ => trimmed,
    }
}

/// `(fence, info)` when `line` opens a fenced block.
fn opening_fence(line: &str) -> Option<(&str, &str)> {
    let trimmed = line.trim_start();
    let marker = trimmed.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let fence_len = trimmed.chars().take_while(|c| *c == marker).count();
    if fence_len < 3 {
        return None;
    }
    let (fence, info) = trimmed.split_at(fence_len);
    Some((fence, info.trim()))
}

/// `(start, end)` byte offsets of each line, without its `\n`.
fn line_spans(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut start = 0;
    std::iter::from_fn(move || {
        if start > text.len() || (start == text.len() && !text.is_empty()) {
            return None;
        }
        let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
        let span = (start, end);
        start = end + 1;
        Some(span)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_blocks_with_info() {
        let text = "Here:\n```python\nprint(1)\n```\nand\n~~~\nplain\n~~~\n";
        let blocks = fenced_blocks(text);
        assert_eq!(
            blocks,
            [
                FencedBlock { info: "python", content: "print(1)" },
                FencedBlock { info: "", content: "plain" }
            ]
        );
    }

    #[test]
    fn unclosed_block_runs_to_the_end() {
        assert_eq!(
            fenced_blocks("```sql\nSELECT 1;"),
            [FencedBlock { info: "sql", content: "SELECT 1;" }]
        );
    }

    #[test]
    fn unwraps_a_single_fenced_answer() {
        assert_eq!(unwrap_fence("  ```json\n{\"a\": 1}\n```  "), "{\"a\": 1}");
        assert_eq!(unwrap_fence("{\"a\": 1}"), "{\"a\": 1}");
        assert_eq!(unwrap_fence("text ```x``` text"), "text ```x``` text");
    }
}
