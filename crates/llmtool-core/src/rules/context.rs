//! What every semantic rule sees: the tool, the source text, and the prompt's placeholders.

use std::ops::Range;

use std::cell::OnceCell;

use crate::image::{self, ImageError, ImageInfo};
use crate::model::{Avatar, Spanned, Tool};
use crate::span::Span;
use crate::template::{Placeholder, placeholders};

pub struct Context<'a> {
    pub text: &'a str,
    pub tool: &'a Tool,
    avatar_image: OnceCell<Option<Result<ImageInfo, ImageError>>>,
}

impl std::fmt::Debug for Context<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context").finish_non_exhaustive()
    }
}

impl<'a> Context<'a> {
    pub fn new(text: &'a str, tool: &'a Tool) -> Self {
        Self { text, tool, avatar_image: OnceCell::new() }
    }

    pub fn avatar(&self) -> Option<&'a Avatar> {
        self.tool.metadata.as_ref()?.avatar.as_ref()
    }

    /// The avatar decoded and sniffed, once for all rules: `None` when the avatar is a plain
    /// URL (never fetched) or absent.
    pub fn avatar_image(&self) -> Option<&Result<ImageInfo, ImageError>> {
        self.avatar_image
            .get_or_init(|| {
                let avatar = self.avatar()?;
                let data = avatar.data.as_ref()?.as_str();
                let kind = avatar.kind.as_ref().map(Spanned::as_str);
                let embedded = match kind {
                    Some("base64") => true,
                    Some("url") => data.starts_with("data:") && data.contains(";base64,"),
                    _ => false,
                };
                embedded.then(|| image::decode_base64(data).and_then(|bytes| image::sniff(&bytes)))
            })
            .as_ref()
    }

    /// Every `{{...}}` of `model_prompt`.
    pub fn placeholders(&self) -> impl Iterator<Item = Placeholder<'a>> {
        placeholders(self.tool.prompt())
    }

    /// The file span of `range`, a byte range of the decoded `model_prompt` value.
    pub fn prompt_span(&self, range: Range<usize>) -> Span {
        let Some(prompt) = &self.tool.model_prompt else { return Span::empty(0) };
        string_span(self.text, prompt.span, range)
    }
}

/// Maps a byte range of a decoded JSON string to the span of its source text, walking the
/// escapes of the literal at `literal` (which includes the quotes).
pub(crate) fn string_span(text: &str, literal: Span, range: Range<usize>) -> Span {
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

    #[test]
    fn maps_through_escapes() {
        let text = r#"{"p": "a\nb \u00e9 {{x}}"}"#;
        let literal = Span::new(6, text.len() - 1);
        // decoded: "a\nb é {{x}}" -> `{{x}}` at decoded bytes 7..12
        let span = string_span(text, literal, 7..12);
        assert_eq!(&text[span.range()], "{{x}}");
    }
}
