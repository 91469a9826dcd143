//! Word (DOCX) and `OpenDocument` (ODT) text: both are ZIP archives of XML, and the text is read
//! from the body's XML part alone (no macros, embedded objects, or linked files are opened).
//! Paragraphs and headings become paragraphs; tabs and line breaks inside them are kept;
//! deleted tracked changes, field codes, comments and Word's duplicate old-format copies of
//! drawings are left out.

use std::io::{Read, Seek};

use quick_xml::events::{BytesRef, Event};

use crate::Limits;
use crate::error::DocumentError;
use crate::kind::Kind;

/// Which office format a ZIP archive is, if either.
pub(crate) fn kind(archive: impl Read + Seek, limits: &Limits) -> Result<Kind, DocumentError> {
    let mut archive = zip::ZipArchive::new(archive).map_err(|error| damaged(Kind::Docx, &error))?;
    if archive.index_for_name("word/document.xml").is_some() {
        return Ok(Kind::Docx);
    }
    if archive.index_for_name("content.xml").is_some() {
        let mimetype = part(&mut archive, "mimetype", limits, Kind::Odt).unwrap_or_default();
        if mimetype.trim() == "application/vnd.oasis.opendocument.text" {
            return Ok(Kind::Odt);
        }
        return Err(DocumentError::Unsupported {
            what: format!("an OpenDocument file of type `{}`", mimetype.trim()),
            hint: ": only text documents (.odt) are read",
        });
    }
    Err(DocumentError::Unsupported {
        what: "a ZIP archive that is neither a DOCX nor an ODT document".to_owned(),
        hint: "",
    })
}

/// The text of a DOCX document: its body, then its footnotes and endnotes (each note a
/// paragraph of its own, as a printed page puts them after the text).
pub(crate) fn docx(bytes: &[u8], limits: &Limits) -> Result<String, DocumentError> {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes))
        .map_err(|error| damaged(Kind::Docx, &error))?;
    let body = part(&mut archive, "word/document.xml", limits, Kind::Docx)?;
    let mut text = docx_part(&body, limits)?;
    for notes in ["word/footnotes.xml", "word/endnotes.xml"] {
        if archive.index_for_name(notes).is_some() {
            text.push_str("\n\n");
            text.push_str(&docx_part(&part(&mut archive, notes, limits, Kind::Docx)?, limits)?);
        }
    }
    Ok(text)
}

/// The text of one of a DOCX document's XML parts.
fn docx_part(xml: &str, limits: &Limits) -> Result<String, DocumentError> {
    walk(xml, Kind::Docx, limits, |element| match element {
        "p" => Some(Mark::Paragraph),
        "tab" => Some(Mark::Literal("\t")),
        "br" | "cr" => Some(Mark::Literal("\n")),
        "noBreakHyphen" => Some(Mark::Literal("-")),
        "t" => Some(Mark::Text),
        // Deleted text, field codes, and the old-format copy Word writes of what it also
        // writes as DrawingML (a text box's text would come twice).
        "delText" | "instrText" | "Fallback" => Some(Mark::Skip),
        _ => None,
    })
}

/// The text of an ODT document's body.
pub(crate) fn odt(bytes: &[u8], limits: &Limits) -> Result<String, DocumentError> {
    let xml = body(bytes, "content.xml", limits, Kind::Odt)?;
    walk(&xml, Kind::Odt, limits, |element| match element {
        "p" | "h" => Some(Mark::Paragraph),
        "tab" => Some(Mark::Literal("\t")),
        "line-break" => Some(Mark::Literal("\n")),
        "s" => Some(Mark::Spaces),
        "annotation" | "tracked-changes" | "note-citation" => Some(Mark::Skip),
        _ => None,
    })
}

/// What an element means for the text.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mark {
    /// Its text is a paragraph of its own.
    Paragraph,
    /// It stands for this text.
    Literal(&'static str),
    /// It stands for spaces (ODT's `<text:s text:c="3"/>`: three).
    Spaces,
    /// Its content is text (DOCX's `<w:t>`; text elsewhere is layout).
    Text,
    /// Its content is left out.
    Skip,
}

/// The text of the XML `xml` of `kind`, each element read as `mark` says by its local name.
///
/// In DOCX, text is what `<w:t>` elements hold, as written. In ODT, it is what paragraphs
/// hold, with runs of white space read as one space (the format's rule: more spaces are
/// written as `<text:s>`).
/// The text stops at `limits.max_text_bytes`: elements that stand for text (`<text:s
/// text:c="1000"/>`) could otherwise make far more of it than the file holds.
fn walk(
    xml: &str,
    kind: Kind,
    limits: &Limits,
    mark: impl Fn(&str) -> Option<Mark>,
) -> Result<String, DocumentError> {
    let holder = if kind == Kind::Odt { Mark::Paragraph } else { Mark::Text };
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut out = String::new();
    // How deep inside skipped elements, and inside elements that hold text.
    let (mut skipping, mut holding) = (0usize, 0usize);
    loop {
        let event = reader.read_event().map_err(|error| damaged(kind, &error))?;
        let taken = skipping == 0 && holding > 0;
        match event {
            Event::Start(start) => {
                let meaning = mark(start.local_name().as_ref());
                if meaning == Some(Mark::Skip) {
                    skipping += 1;
                } else if skipping == 0 && meaning == Some(Mark::Paragraph) {
                    out.push_str("\n\n");
                }
                if meaning == Some(holder) {
                    holding += 1;
                }
            }
            Event::End(end) => {
                let meaning = mark(end.local_name().as_ref());
                if meaning == Some(Mark::Skip) {
                    skipping = skipping.saturating_sub(1);
                } else if skipping == 0 && meaning == Some(Mark::Paragraph) {
                    out.push_str("\n\n");
                }
                if meaning == Some(holder) {
                    holding = holding.saturating_sub(1);
                }
            }
            Event::Empty(empty) if skipping == 0 => match mark(empty.local_name().as_ref()) {
                Some(Mark::Literal(text)) => out.push_str(text),
                Some(Mark::Spaces) => out.extend(std::iter::repeat_n(' ', spaces(&empty))),
                Some(Mark::Paragraph) => out.push_str("\n\n"),
                _ => {}
            },
            Event::Text(text) if taken => push(&mut out, &text.xml10_content(), kind),
            Event::CData(data) if taken => push(&mut out, &data.xml10_content(), kind),
            Event::GeneralRef(reference) if taken => out.push_str(&entity(&reference)),
            Event::Eof => break,
            _ => {}
        }
        if out.len() > limits.max_text_bytes {
            return Err(DocumentError::TooMuchText { limit: limits.max_text_bytes });
        }
    }
    Ok(out)
}

/// Adds `text` to `out`: as it is in DOCX; with white space collapsed in ODT (none at a
/// paragraph's start).
fn push(out: &mut String, text: &str, kind: Kind) {
    if kind != Kind::Odt {
        out.push_str(text);
        return;
    }
    for c in text.chars() {
        if c.is_whitespace() {
            if !(out.is_empty() || out.ends_with([' ', '\n', '\t'])) {
                out.push(' ');
            }
        } else {
            out.push(c);
        }
    }
}

/// The text an entity reference stands for (`&amp;`, `&#233;`).
fn entity(reference: &BytesRef<'_>) -> String {
    if let Ok(Some(c)) = reference.resolve_char_ref() {
        return c.to_string();
    }
    let name = reference.xml10_content();
    quick_xml::escape::resolve_predefined_entity(&name).unwrap_or_default().to_owned()
}

/// ODT's `text:c`, the number of spaces a `<text:s>` stands for (1 without it).
fn spaces(element: &quick_xml::events::BytesStart<'_>) -> usize {
    element
        .attributes()
        .flatten()
        .find(|attribute| attribute.key.local_name().as_ref() == "c")
        .and_then(|attribute| attribute.value.trim().parse().ok())
        .unwrap_or(1)
        .min(1000)
}

/// The XML part `name` of the archive `bytes`, decompressed up to the limit.
fn body(bytes: &[u8], name: &str, limits: &Limits, kind: Kind) -> Result<String, DocumentError> {
    let mut archive =
        zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(|error| damaged(kind, &error))?;
    part(&mut archive, name, limits, kind)
}

fn part<R: Read + Seek>(
    archive: &mut zip::ZipArchive<R>,
    name: &str,
    limits: &Limits,
    kind: Kind,
) -> Result<String, DocumentError> {
    let file = archive.by_name(name).map_err(|error| damaged(kind, &error))?;
    if file.encrypted() {
        return Err(DocumentError::Encrypted { kind });
    }
    let mut bytes = Vec::new();
    file.take(limits.max_unpacked_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|error| damaged(kind, &error))?;
    if bytes.len() as u64 > limits.max_unpacked_bytes {
        return Err(DocumentError::Damaged {
            kind,
            reason: format!("`{name}` unpacks to more than {} bytes", limits.max_unpacked_bytes),
        });
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn damaged(kind: Kind, error: &dyn std::fmt::Display) -> DocumentError {
    DocumentError::Damaged { kind, reason: error.to_string() }
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    /// An ODT archive whose body is `content`.
    fn odt_with(content: &str) -> Vec<u8> {
        let mut archive = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let stored = zip::write::SimpleFileOptions::default();
        archive.start_file("mimetype", stored).unwrap();
        archive.write_all(b"application/vnd.oasis.opendocument.text").unwrap();
        archive.start_file("content.xml", stored).unwrap();
        archive.write_all(content.as_bytes()).unwrap();
        archive.finish().unwrap().into_inner()
    }

    #[test]
    fn elements_that_stand_for_text_cannot_pass_the_text_limit() {
        let spaces = "<text:s text:c=\"1000\"/>".repeat(2_000);
        let content = format!(
            "<office:document-content><office:body><office:text><text:p>a{spaces}b</text:p></office:text></office:body></office:document-content>"
        );
        let limits = Limits { max_text_bytes: 100_000, ..Limits::default() };
        let read = odt(&odt_with(&content), &limits);
        assert!(matches!(read, Err(DocumentError::TooMuchText { limit: 100_000 })), "{read:?}");
        let fits = Limits { max_text_bytes: 3_000_000, ..Limits::default() };
        assert_eq!(odt(&odt_with(&content), &fits).unwrap().len(), 2_000_000 + 6);
    }
}
