//! HTML as text: the page's text in reading order, paragraphs, list items and table cells on
//! lines of their own, scripts and styles left out, nothing fetched.

use crate::error::DocumentError;
use crate::kind::Kind;

/// Wide enough that no line of prose is wrapped: the text keeps its own line breaks.
const WIDTH: usize = 10_000;

pub(crate) fn text(html: &str) -> Result<String, DocumentError> {
    html2text::config::plain_no_decorate()
        .raw_mode(true)
        .allow_width_overflow()
        .string_from_read(html.as_bytes(), WIDTH)
        .map_err(|error| DocumentError::Damaged { kind: Kind::Html, reason: error.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paragraphs_and_items_stay_apart_and_scripts_go() {
        let html = "<html><head><title>T</title><style>p{color:red}</style>\
                    <script>alert('x')</script></head><body><h1>Terms</h1>\
                    <p>First <b>paragraph</b>.</p><p>Second.</p><ul><li>one</li><li>two</li></ul>\
                    <img src=\"https://example.invalid/x.png\" alt=\"\"></body></html>";
        let text = crate::tidy(&text(html).unwrap());
        assert!(text.contains("Terms"), "{text}");
        assert!(text.contains("First paragraph."), "{text}");
        assert!(text.contains("Second."), "{text}");
        assert!(!text.contains("alert") && !text.contains("color"), "{text}");
        let first = text.find("First").unwrap();
        assert!(
            first < text.find("Second").unwrap()
                && text.find("one").unwrap() < text.find("two").unwrap()
        );
    }
}
