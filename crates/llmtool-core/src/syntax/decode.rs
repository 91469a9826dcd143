//! Turning raw bytes into text: invalid UTF-8 is reported and replaced byte for byte, so every
//! span still points at the same offset in the original file.

use std::borrow::Cow;

use crate::diagnostic::Diagnostic;
use crate::span::Span;
use crate::syntax::codes;

/// How many invalid-UTF-8 runs are reported one by one before the rest are summed up.
const MAX_REPORTED: usize = 20;

/// Decodes `bytes` as UTF-8, replacing each invalid byte with `?` and reporting each run of them.
pub fn decode_utf8(bytes: &[u8]) -> (Cow<'_, str>, Vec<Diagnostic>) {
    let first_error = match std::str::from_utf8(bytes) {
        Ok(text) => return (Cow::Borrowed(text), Vec::new()),
        Err(error) => error,
    };
    let mut text = Vec::with_capacity(bytes.len());
    let mut diagnostics = Vec::new();
    let mut unreported = 0usize;
    let mut rest = bytes;
    let mut offset = 0;
    let mut error = Some(first_error);
    while let Some(e) = error {
        let valid = e.valid_up_to();
        text.extend_from_slice(&rest[..valid]);
        let bad = e.error_len().unwrap_or(rest.len() - valid);
        text.extend(std::iter::repeat_n(b'?', bad));
        let span = Span::new(offset + valid, offset + valid + bad);
        if diagnostics.len() < MAX_REPORTED {
            diagnostics.push(
                Diagnostic::new(&codes::INVALID_UTF8, format!("{bad} byte(s) of invalid UTF-8"))
                    .at(span)
                    .with_help("save the file as UTF-8"),
            );
        } else {
            unreported += 1;
        }
        offset += valid + bad;
        rest = &rest[valid + bad..];
        error = std::str::from_utf8(rest).err();
    }
    text.extend_from_slice(rest);
    if unreported > 0 {
        diagnostics.push(
            Diagnostic::new(
                &codes::INVALID_UTF8,
                format!("{unreported} more run(s) of invalid UTF-8"),
            )
            .with_help("the file is probably not text, or not UTF-8"),
        );
    }
    let text = String::from_utf8(text)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    (Cow::Owned(text), diagnostics)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_bytes_keep_their_offsets() {
        let (text, diagnostics) = decode_utf8(b"{\"a\": \"x\xff\xfey\"}");
        assert_eq!(text, "{\"a\": \"x??y\"}");
        assert_eq!(diagnostics.len(), 2, "{diagnostics:?}");
        assert_eq!(diagnostics[0].primary.as_ref().unwrap().span, Span::new(8, 9));
    }

    #[test]
    fn valid_text_is_borrowed() {
        let (text, diagnostics) = decode_utf8("주제".as_bytes());
        assert!(matches!(text, Cow::Borrowed("주제")));
        assert!(diagnostics.is_empty());
    }
}
