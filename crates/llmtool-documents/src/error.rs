//! Why a document's text could not be taken out.

use crate::Kind;

#[derive(Debug, thiserror::Error)]
pub enum DocumentError {
    #[error("cannot read the document: {0}")]
    Io(std::io::Error),
    #[error("the document is larger than {limit} bytes")]
    TooLarge { limit: u64 },
    #[error("its text is longer than {limit} bytes")]
    TooMuchText { limit: usize },
    #[error("the PDF has {pages} pages; at most {limit} are read")]
    TooManyPages { pages: usize, limit: usize },
    #[error("reading the PDF took longer than {seconds} s")]
    TimedOut { seconds: u64 },
    #[error("{what} cannot be read as text{hint}")]
    Unsupported { what: String, hint: &'static str },
    #[error("the {kind} is encrypted; save a copy without a password")]
    Encrypted { kind: Kind },
    #[error("the {kind} is damaged: {reason}")]
    Damaged { kind: Kind, reason: String },
    #[error("{}", no_text(*kind))]
    NoText { kind: Kind },
    /// As many PDFs as are read at once are being read (some perhaps given up on, still
    /// running): try again later.
    #[error("{readings} PDFs are being read already; try again in a minute")]
    Busy { readings: usize },
}

impl DocumentError {
    /// Whether the document itself is the problem (the input), rather than reading it.
    pub fn is_in_the_document(&self) -> bool {
        !matches!(self, DocumentError::Io(_) | DocumentError::Busy { .. })
    }
}

fn no_text(kind: Kind) -> String {
    match kind {
        Kind::Pdf => "the PDF has no text layer (a scanned document?): run it through OCR \
                      first, or give the text itself"
            .to_owned(),
        kind => format!("the {kind} holds no text"),
    }
}
