//! What a document is, told by its first bytes (and, for HTML and Markdown, by its name).

use std::io::Cursor;

use crate::error::DocumentError;
use crate::{Limits, office};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Pdf,
    /// Word's Office Open XML (`.docx`).
    Docx,
    /// `OpenDocument` text (`.odt`).
    Odt,
    Html,
    Markdown,
    /// Plain text, in any common encoding.
    Text,
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Kind::Pdf => "PDF",
            Kind::Docx => "DOCX document",
            Kind::Odt => "ODT document",
            Kind::Html => "HTML page",
            Kind::Markdown => "Markdown file",
            Kind::Text => "text file",
        })
    }
}

/// Formats refused by their signature, with what to do instead.
const REFUSED: &[(&[u8], &str, &str)] = &[
    (
        b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1",
        "a Word 97-2003 (or other OLE) document",
        ": save it as .docx",
    ),
    (b"{\\rtf", "an RTF document", ": save it as .docx or .odt"),
    (b"\x89PNG\r\n\x1a\n", "a PNG image", ": its text would need OCR"),
    (b"\xFF\xD8\xFF", "a JPEG image", ": its text would need OCR"),
    (b"GIF8", "a GIF image", ": its text would need OCR"),
    (b"\x1F\x8B", "a gzip archive", ""),
    (b"7z\xBC\xAF\x27\x1C", "a 7-Zip archive", ""),
];

impl Kind {
    /// What `bytes`, named `name`, are.
    pub(crate) fn of(bytes: &[u8], name: &str, limits: &Limits) -> Result<Kind, DocumentError> {
        // A PDF's header may come after some bytes of something else, within its first 1 KiB.
        if memchr::memmem::find(&bytes[..bytes.len().min(1024)], b"%PDF-").is_some() {
            return Ok(Kind::Pdf);
        }
        if bytes.starts_with(b"PK\x03\x04") {
            return office::kind(Cursor::new(bytes), limits);
        }
        if let Some((_, what, hint)) = REFUSED.iter().find(|(magic, _, _)| bytes.starts_with(magic))
        {
            return Err(DocumentError::Unsupported { what: (*what).to_owned(), hint });
        }
        let extension = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
        match extension.as_deref() {
            Some("html" | "htm" | "xhtml") => return Ok(Kind::Html),
            Some("md" | "markdown") => return Ok(Kind::Markdown),
            _ => {}
        }
        if looks_like_html(bytes) {
            return Ok(Kind::Html);
        }
        if is_binary(bytes) {
            return Err(DocumentError::Unsupported {
                what: "a binary file".to_owned(),
                hint: ": give a PDF, DOCX, ODT, HTML, Markdown or text file",
            });
        }
        Ok(Kind::Text)
    }
}

/// Whether the text starts (after a byte-order mark and blanks) with an HTML doctype or tag.
fn looks_like_html(bytes: &[u8]) -> bool {
    let start = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let start: Vec<u8> = start
        .iter()
        .skip_while(|b| b.is_ascii_whitespace())
        .take(16)
        .map(u8::to_ascii_lowercase)
        .collect();
    start.starts_with(b"<!doctype html") || start.starts_with(b"<html")
}

/// Whether the bytes hold NUL bytes that a UTF-16 text would not explain.
fn is_binary(bytes: &[u8]) -> bool {
    let utf16 = bytes.starts_with(b"\xFF\xFE") || bytes.starts_with(b"\xFE\xFF");
    !utf16 && bytes[..bytes.len().min(8192)].contains(&0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(bytes: &[u8], name: &str) -> Result<Kind, DocumentError> {
        Kind::of(bytes, name, &Limits::default())
    }

    #[test]
    fn formats_are_told_by_their_first_bytes() {
        assert_eq!(kind(b"%PDF-1.7\n", "a.bin").ok(), Some(Kind::Pdf));
        assert_eq!(kind(b"junk\n%PDF-1.4", "a").ok(), Some(Kind::Pdf));
        assert_eq!(kind(b"  <!DOCTYPE html><p>x", "page").ok(), Some(Kind::Html));
        assert_eq!(kind(b"# Title", "notes.md").ok(), Some(Kind::Markdown));
        assert_eq!(kind(b"plain", "notes").ok(), Some(Kind::Text));
        assert_eq!(kind(b"\xFF\xFEh\0i\0", "notes").ok(), Some(Kind::Text));
    }

    #[test]
    fn what_cannot_be_read_says_what_it_is() {
        let doc = kind(b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1rest", "old.doc").unwrap_err();
        assert_eq!(
            doc.to_string(),
            "a Word 97-2003 (or other OLE) document cannot be read as text: save it as .docx"
        );
        assert!(
            kind(b"\x89PNG\r\n\x1a\nrest", "scan.png").unwrap_err().to_string().contains("OCR")
        );
        assert!(kind(b"ELF\0\0\0", "a.out").is_err());
    }
}
