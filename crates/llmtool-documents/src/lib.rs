//! Text out of documents, for a variable's value (`--var contract=@contract.pdf`): PDF, DOCX,
//! ODT, HTML, Markdown and plain text in any common encoding, with the text in reading order
//! and paragraphs kept (separated by one blank line).
//!
//! Reading a document runs nothing inside it: no macros, no scripts, no fetching of what it
//! links to. Every reading is bounded ([`Limits`]: bytes in, decompressed bytes, pages,
//! characters out, time), and a document that holds no text (a scanned PDF) is an error, not
//! an empty value.

mod error;
mod html;
mod kind;
mod office;
mod pdf;
mod text;

use std::path::Path;
use std::time::Duration;

pub use error::DocumentError;
pub use kind::Kind;
pub use pdf::THREAD_NAME as PDF_THREAD;

/// How much of a document is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The file's size.
    pub max_bytes: u64,
    /// What one part of an office document may decompress to (a ZIP bomb stops here).
    pub max_unpacked_bytes: u64,
    /// A PDF's pages.
    pub max_pages: usize,
    /// The text taken out, in bytes.
    pub max_text_bytes: usize,
    /// How long taking the text out of a PDF may take.
    pub max_time: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_bytes: 64 << 20,
            max_unpacked_bytes: 64 << 20,
            max_pages: 2_000,
            max_text_bytes: 16 << 20,
            max_time: Duration::from_mins(1),
        }
    }
}

/// A document's text, and what it was read as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extracted {
    pub kind: Kind,
    pub text: String,
    /// A PDF's page count.
    pub pages: Option<usize>,
}

/// Reads the document at `path` (its name helps tell HTML and Markdown from plain text).
pub fn read(path: &Path, limits: &Limits) -> Result<Extracted, DocumentError> {
    use std::io::Read as _;
    let file = std::fs::File::open(path).map_err(DocumentError::Io)?;
    let mut bytes = Vec::new();
    file.take(limits.max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(DocumentError::Io)?;
    if bytes.len() as u64 > limits.max_bytes {
        return Err(DocumentError::TooLarge { limit: limits.max_bytes });
    }
    let name = path.file_name().map(|name| name.to_string_lossy()).unwrap_or_default();
    extract(&bytes, &name, limits)
}

/// What a value written for a variable stands for where `@` may name a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Written<'a> {
    /// The value itself (`@@…` is the value `@…`).
    Value(&'a str),
    /// The text of the document at this path.
    Document(std::path::PathBuf),
}

/// Reads `value` as written for a variable: `@FILE` names a document, `@@…` is a value that
/// starts with `@`, anything else is itself. Written in a file that lies in `folder` (a
/// `--vars` file, a dataset), FILE must be [`inside`] it; written on the command line
/// (`None`), it may be any path.
pub fn written<'a>(value: &'a str, folder: Option<&Path>) -> Result<Written<'a>, String> {
    let Some(rest) = value.strip_prefix('@') else { return Ok(Written::Value(value)) };
    if rest.starts_with('@') {
        return Ok(Written::Value(rest));
    }
    if rest.trim().is_empty() {
        return Err("`@` names no file: write `@FILE`, or `@@…` for a value that starts with `@`"
            .to_owned());
    }
    match folder {
        None => Ok(Written::Document(std::path::PathBuf::from(rest))),
        Some(folder) => inside(folder, rest).map(Written::Document),
    }
}

/// The file `relative` names inside `folder`, for a document named by a file (a `--vars`
/// file, a dataset's cell) rather than by the command line: an absolute path, a `..`, or a
/// link that leads out of the folder is refused, so that such a file cannot make llmtool send
/// any file the user can read.
pub fn inside(folder: &Path, relative: &str) -> Result<std::path::PathBuf, String> {
    use std::path::Component;
    let path = Path::new(relative);
    if !path.components().all(|part| matches!(part, Component::Normal(_) | Component::CurDir)) {
        return Err(format!(
            "`{relative}` is not a path inside {}: a document named in a file must be below that file's folder",
            folder.display()
        ));
    }
    let joined = folder.join(path);
    let (Ok(real_folder), Ok(real)) = (folder.canonicalize(), joined.canonicalize()) else {
        return Ok(joined);
    };
    if real.starts_with(&real_folder) {
        Ok(joined)
    } else {
        Err(format!("`{relative}` leads out of {} through a link", folder.display()))
    }
}

/// The text of the document `bytes`, named `name` (a file name, or empty).
pub fn extract(bytes: &[u8], name: &str, limits: &Limits) -> Result<Extracted, DocumentError> {
    if bytes.len() as u64 > limits.max_bytes {
        return Err(DocumentError::TooLarge { limit: limits.max_bytes });
    }
    let kind = Kind::of(bytes, name, limits)?;
    let (raw, pages) = match kind {
        Kind::Pdf => {
            let (text, pages) = pdf::text(bytes, limits)?;
            (text, Some(pages))
        }
        Kind::Docx => (office::docx(bytes, limits)?, None),
        Kind::Odt => (office::odt(bytes, limits)?, None),
        Kind::Html => (html::text(&text::decode(bytes))?, None),
        Kind::Markdown | Kind::Text => (text::decode(bytes), None),
    };
    let text = tidy(&raw);
    if text.len() > limits.max_text_bytes {
        return Err(DocumentError::TooMuchText { limit: limits.max_text_bytes });
    }
    if text.trim().is_empty() {
        return Err(DocumentError::NoText { kind });
    }
    Ok(Extracted { kind, text, pages })
}

/// Line breaks made `\n`, spaces at line ends dropped, and runs of blank lines made one: a
/// paragraph break is one blank line, whatever the format wrote.
fn tidy(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut blank_lines = 0;
    for line in raw.replace("\r\n", "\n").replace('\r', "\n").split('\n') {
        let line = line.trim_end();
        if line.is_empty() {
            blank_lines += 1;
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank_lines > 0 { "\n\n" } else { "\n" });
        }
        blank_lines = 0;
        out.push_str(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paragraphs_are_separated_by_one_blank_line() {
        assert_eq!(tidy("a  \r\nb\r\n\r\n\r\n\nc\rd\n\n"), "a\nb\n\nc\nd");
        assert_eq!(tidy("\n\n  x"), "  x");
    }

    #[test]
    fn a_value_with_no_text_is_an_error() {
        let empty = extract(b" \n\n ", "notes.txt", &Limits::default());
        assert!(matches!(empty, Err(DocumentError::NoText { kind: Kind::Text })), "{empty:?}");
    }
}
