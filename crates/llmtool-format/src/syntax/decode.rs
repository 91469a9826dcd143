//! Turning raw bytes into text: invalid UTF-8 is reported and replaced byte for byte, so every
//! span still points at the same offset in the original file.

use std::borrow::Cow;

use crate::diagnostic::Diagnostic;
use crate::span::Span;
use crate::syntax::codes;

/// How many invalid-UTF-8 runs are reported one by one before the rest are summed up.
const MAX_REPORTED: usize = 20;

/// `bytes` as a `String` without a copy when they are valid UTF-8, else the bytes back.
///
/// The same answer as [`String::from_utf8`], found with SIMD: tool files are mostly ASCII with
/// some accented or CJK text, and on such mixed text the standard library's check goes byte by
/// byte past each non-ASCII character (on the 10,000-file benchmark corpus, 6% of its bytes, it
/// was 6.5% of `check`'s time).
#[allow(unsafe_code)]
pub fn utf8_string(bytes: Vec<u8>) -> Result<String, Vec<u8>> {
    if simdutf8::basic::from_utf8(&bytes).is_err() {
        return Err(bytes);
    }
    // SAFETY: `simdutf8` has just found these very bytes to be valid UTF-8.
    Ok(unsafe { String::from_utf8_unchecked(bytes) })
}

/// Decodes `bytes` as UTF-8, replacing each invalid byte with `?` and reporting each run of them.
pub fn decode_utf8(bytes: &[u8]) -> (Cow<'_, str>, Vec<Diagnostic>) {
    if let Ok(text) = simdutf8::basic::from_utf8(bytes) {
        return (Cow::Borrowed(text), Vec::new());
    }
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

    proptest::proptest! {
        /// The SIMD check takes exactly what the standard library takes: random bytes (mostly
        /// invalid), and valid text of every width cut at any byte.
        #[test]
        fn utf8_string_agrees_with_the_standard_library(
            bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..200),
            text in "\\PC{0,80}",
            cut in 0usize..400,
        ) {
            proptest::prop_assert_eq!(utf8_string(bytes.clone()), String::from_utf8(bytes).map_err(std::string::FromUtf8Error::into_bytes));
            let cut_text = text.as_bytes()[..cut.min(text.len())].to_vec();
            proptest::prop_assert_eq!(utf8_string(cut_text.clone()), String::from_utf8(cut_text).map_err(std::string::FromUtf8Error::into_bytes));
        }
    }
}
