//! PDF text, page by page, through `pdf-extract` (on `lopdf`): the text a page draws, in the
//! order it draws it, with spaces, line and paragraph breaks from where each glyph is placed
//! ([`Lines`]). Nothing in the file runs (JavaScript, forms and links are never looked at).
//!
//! The work is bounded by the page count (checked before any page is read), the text's size
//! and a deadline checked between pages. It runs on a thread of its own: `pdf-extract` panics
//! on some damaged files, and a panic there is this file's error, not the program's end.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Instant;

mod forms;

use crate::Limits;
use crate::error::DocumentError;
use crate::kind::Kind;

/// The reading thread's stack: a form drawn inside a form is a recursive call of the reader.
const STACK_BYTES: usize = 64 << 20;

/// The name of the thread a PDF is read on (a panic hook can tell its panics by it).
pub const THREAD_NAME: &str = "llmtool-pdf-text";

/// The most PDF readings alive at once in this process, counting those given up on after
/// their time limit, whose threads go on until they end: a server asked to read slow PDFs one
/// after the other does not pile up threads past this.
pub(crate) const MAX_READINGS: usize = 4;

/// PDF readings whose thread is alive.
static READINGS: AtomicUsize = AtomicUsize::new(0);

/// Counts one reading alive until its thread ends (on a panic too).
struct Reading;

impl Reading {
    fn start() -> Option<Reading> {
        let alive = READINGS.fetch_add(1, Ordering::SeqCst);
        if alive >= MAX_READINGS {
            READINGS.fetch_sub(1, Ordering::SeqCst);
            return None;
        }
        Some(Reading)
    }
}

impl Drop for Reading {
    fn drop(&mut self) {
        READINGS.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The text of the PDF `bytes`, and its page count.
pub(crate) fn text(bytes: &[u8], limits: &Limits) -> Result<(String, usize), DocumentError> {
    let reading = Reading::start().ok_or(DocumentError::Busy { readings: MAX_READINGS })?;
    let (sender, receiver) = mpsc::channel();
    let (bytes, limits_copy) = (bytes.to_vec(), *limits);
    let spawned = std::thread::Builder::new()
        .name(THREAD_NAME.to_owned())
        // Room for `pdf-extract`'s recursion through forms, which `forms` bounds in depth.
        .stack_size(STACK_BYTES)
        .spawn(move || {
            let _reading = reading;
            let _ = sender.send(read(&bytes, &limits_copy));
        })
        .map_err(DocumentError::Io)?;
    match receiver.recv_timeout(limits.max_time) {
        Ok(result) => {
            let _ = spawned.join();
            result
        }
        // The thread is left to finish on its own (it cannot be stopped); it counts among the
        // readings alive until it does.
        Err(mpsc::RecvTimeoutError::Timeout) => {
            Err(DocumentError::TimedOut { seconds: limits.max_time.as_secs() })
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => Err(DocumentError::Damaged {
            kind: Kind::Pdf,
            reason: "its text could not be read (the PDF reader failed on it)".to_owned(),
        }),
    }
}

fn read(bytes: &[u8], limits: &Limits) -> Result<(String, usize), DocumentError> {
    let started = Instant::now();
    let mut document = pdf_extract::Document::load_mem(bytes).map_err(damaged)?;
    if document.is_encrypted() {
        // An owner password alone (printing or copying restricted) opens with an empty one.
        document.decrypt("").map_err(|_| DocumentError::Encrypted { kind: Kind::Pdf })?;
    }
    if let Some(problem) = forms::problem(&document) {
        return Err(DocumentError::Damaged { kind: Kind::Pdf, reason: problem });
    }
    let pages: Vec<u32> = document.get_pages().into_keys().collect();
    if pages.len() > limits.max_pages {
        return Err(DocumentError::TooManyPages { pages: pages.len(), limit: limits.max_pages });
    }
    let mut text = String::new();
    for page in &pages {
        if started.elapsed() > limits.max_time {
            return Err(DocumentError::TimedOut { seconds: limits.max_time.as_secs() });
        }
        let mut lines = Lines { out: &mut text, last: None };
        pdf_extract::output_doc_page(&document, &mut lines, *page).map_err(damaged)?;
        text.push_str("\n\n");
        if text.len() > limits.max_text_bytes {
            return Err(DocumentError::TooMuchText { limit: limits.max_text_bytes });
        }
    }
    Ok((text, pages.len()))
}

fn damaged(error: impl std::fmt::Display) -> DocumentError {
    DocumentError::Damaged { kind: Kind::Pdf, reason: error.to_string() }
}

/// Where the last glyph ended, along its baseline and across it, its size (in page units), and
/// the direction its baseline runs in.
#[derive(Clone, Copy)]
struct Glyph {
    end: f64,
    baseline: f64,
    size: f64,
    direction: (f64, f64),
}

/// Text from glyph positions. `pdf-extract`'s own writer looks for gaps only where a text
/// operator begins, so a line drawn by one operator that places each word (as table cells
/// often are) came out as one run of letters; this one compares every glyph with the last:
/// another baseline is another line (a blank line after a gap of two lines or more), and a
/// gap along the line of more than an eighth of the font size is a space.
struct Lines<'a> {
    out: &'a mut String,
    last: Option<Glyph>,
}

impl pdf_extract::OutputDev for Lines<'_> {
    fn begin_page(
        &mut self,
        _page: u32,
        _media_box: &pdf_extract::MediaBox,
        _art_box: Option<(f64, f64, f64, f64)>,
    ) -> Result<(), pdf_extract::OutputError> {
        self.last = None;
        Ok(())
    }

    fn end_page(&mut self) -> Result<(), pdf_extract::OutputError> {
        Ok(())
    }

    fn output_character(
        &mut self,
        trm: &pdf_extract::Transform,
        width: f64,
        _spacing: f64,
        font_size: f64,
        text: &str,
    ) -> Result<(), pdf_extract::OutputError> {
        // The glyph's size on the page (the font size, scaled as the matrix scales areas),
        // and where it sits along its baseline's direction and across it: rotated text (a
        // landscape table, say) reads the same as upright text.
        let scale = (trm.m11 * trm.m22 - trm.m12 * trm.m21).abs().sqrt();
        let size = (font_size * scale).max(f64::EPSILON);
        let length = trm.m11.hypot(trm.m12).max(f64::EPSILON);
        let direction = (trm.m11 / length, trm.m12 / length);
        let along = trm.m31 * direction.0 + trm.m32 * direction.1;
        let across = trm.m32 * direction.0 - trm.m31 * direction.1;
        if let Some(last) = self.last {
            let turned = (direction.0 - last.direction.0).abs()
                + (direction.1 - last.direction.1).abs()
                > 0.01;
            let drop = (across - last.baseline).abs();
            let height = last.size.max(size);
            if turned || drop > height * 0.6 {
                self.out.push_str(if turned || drop > height * 2.0 { "\n\n" } else { "\n" });
            } else if (along > last.end + height / 8.0 || along + height < last.end)
                && !self.out.ends_with(' ')
                && text != " "
            {
                self.out.push(' ');
            }
        }
        self.out.push_str(text);
        self.last = Some(Glyph { end: along + width * size, baseline: across, size, direction });
        Ok(())
    }

    fn begin_word(&mut self) -> Result<(), pdf_extract::OutputError> {
        Ok(())
    }

    fn end_word(&mut self) -> Result<(), pdf_extract::OutputError> {
        Ok(())
    }

    fn end_line(&mut self) -> Result<(), pdf_extract::OutputError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readings_alive_are_bounded_until_their_threads_end() {
        let alive: Vec<Reading> = (0..MAX_READINGS).map(|_| Reading::start().unwrap()).collect();
        assert!(Reading::start().is_none(), "one past the bound");
        let refused = text(b"%PDF-1.4", &Limits::default());
        assert!(matches!(refused, Err(DocumentError::Busy { readings: MAX_READINGS })));
        drop(alive);
        assert!(Reading::start().is_some(), "their end frees the places");
    }
}
