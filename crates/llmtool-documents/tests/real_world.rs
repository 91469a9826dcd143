//! Documents the project did not write (see `fixtures/real-world/SOURCES.tsv`), read by
//! llmtool and compared with an independent extractor's text of the same file (`pdftotext`
//! for PDFs, `pandoc` for DOCX and ODT: `scripts/document_references.py` writes them).
//!
//! Agreement is measured on words (a word is a run of letters and digits, compared without
//! case), as multisets: how much of the reference's words llmtool's text also has (recall),
//! and how much of llmtool's the reference has (precision); and the same for pairs of
//! neighbouring words, which fall when the order differs. Recall is what the test holds to:
//! the references are not complete (pandoc 2.17 stops partway through a long ODT table, and
//! leaves out text boxes and Strict Office XML), so text llmtool finds beyond them lowers
//! precision without being wrong. docs/documents.md has the table this test prints.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use llmtool_documents::{DocumentError, Kind, Limits, read};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/real-world")
}

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// How much of `theirs` `ours` also has, and how much of `ours` `theirs` has (as multisets).
fn recall_precision<T: std::hash::Hash + Eq>(ours: &[T], theirs: &[T]) -> (f64, f64) {
    let mut counts: HashMap<&T, (usize, usize)> = HashMap::new();
    for x in ours {
        counts.entry(x).or_default().0 += 1;
    }
    for x in theirs {
        counts.entry(x).or_default().1 += 1;
    }
    let common: usize = counts.values().map(|(x, y)| x.min(y)).sum();
    let share =
        |part: usize, whole: usize| if whole == 0 { 1.0 } else { part as f64 / whole as f64 };
    (share(common, theirs.len()), share(common, ours.len()))
}

/// The reference without pandoc's note markers (`[1]`): pandoc numbers notes where the text
/// refers to them; llmtool puts the notes after the text, unnumbered.
fn without_note_markers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let digits = after.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 && after[digits..].starts_with(']') {
            rest = &after[digits + 1..];
        } else {
            out.push('[');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

fn pairs(words: &[String]) -> Vec<(&str, &str)> {
    words.windows(2).map(|w| (w[0].as_str(), w[1].as_str())).collect()
}

/// How one document's text compares with the reference's.
struct Row {
    name: String,
    words: usize,
    recall: f64,
    precision: f64,
    pair_recall: f64,
}

/// Each document with a reference.
fn agreements() -> Vec<Row> {
    let mut rows = Vec::new();
    for kind in ["pdf", "docx", "odt"] {
        let mut names: Vec<_> = std::fs::read_dir(fixtures().join(kind))
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        for name in names {
            let reference = fixtures().join("references").join(format!("{name}.txt"));
            let Ok(reference) = std::fs::read_to_string(reference) else { continue };
            let reference = without_note_markers(&reference);
            let ours = read(&fixtures().join(kind).join(&name), &Limits::default()).unwrap();
            let (ours, theirs) = (words(&ours.text), words(&reference));
            let (recall, precision) = recall_precision(&ours, &theirs);
            let (pair_recall, _) = recall_precision(&pairs(&ours), &pairs(&theirs));
            rows.push(Row { name, words: theirs.len(), recall, precision, pair_recall });
        }
    }
    rows
}

#[test]
fn every_document_agrees_with_the_independent_extractor() {
    let rows = agreements();
    assert_eq!(rows.len(), 15, "a reference went missing");
    let mut report = String::from(
        "| document | reference words | words found (recall) | words confirmed (precision) | word pairs found |\n|---|---|---|---|---|\n",
    );
    for row in &rows {
        report.push_str(&format!(
            "| {} | {} | {:.3} | {:.3} | {:.3} |\n",
            row.name, row.words, row.recall, row.precision, row.pair_recall
        ));
    }
    println!("{report}");
    // The lowest: ODT superscripts, which pandoc writes as `²` and llmtool as `2`.
    for row in &rows {
        assert!(row.recall >= 0.85, "{}: recall {:.3}\n{report}", row.name, row.recall);
        assert!(row.pair_recall >= 0.65, "{}: pairs {:.3}\n{report}", row.name, row.pair_recall);
    }
}

#[test]
fn a_scanned_pdf_is_an_error_not_an_empty_value() {
    let scanned = read(&fixtures().join("pdf/c02-22-scanned.pdf"), &Limits::default());
    let error = scanned.unwrap_err();
    assert!(matches!(error, DocumentError::NoText { kind: Kind::Pdf }), "{error:?}");
    assert!(error.to_string().contains("no text layer"), "{error}");
    assert!(error.is_in_the_document());
}

#[test]
fn a_pdf_behind_a_password_says_so() {
    let locked = read(&fixtures().join("pdf/password-example.pdf"), &Limits::default());
    assert!(matches!(locked, Err(DocumentError::Encrypted { kind: Kind::Pdf })), "{locked:?}");
}

#[test]
fn what_pandoc_leaves_out_is_read() {
    let read = |name: &str| read(&fixtures().join("docx").join(name), &Limits::default());
    // Strict Office Open XML (another namespace), and a paragraph in a text box.
    assert_eq!(read("strict-format.docx").unwrap().text, "Test");
    assert_eq!(read("text-box.docx").unwrap().text, "Datum plane");
    // A picture linked from outside the file is never fetched: there is no text.
    let linked = read("external-picture.docx");
    assert!(matches!(linked, Err(DocumentError::NoText { kind: Kind::Docx })), "{linked:?}");
}

#[test]
fn pages_are_counted_and_bounded() {
    let path = fixtures().join("pdf/federal-register-2020-17221.pdf");
    assert_eq!(read(&path, &Limits::default()).unwrap().pages, Some(15));
    let few = Limits { max_pages: 10, ..Limits::default() };
    let refused = read(&path, &few);
    assert!(matches!(refused, Err(DocumentError::TooManyPages { pages: 15, limit: 10 })));
    let small = Limits { max_bytes: 1000, ..Limits::default() };
    assert!(matches!(read(&path, &small), Err(DocumentError::TooLarge { limit: 1000 })));
}

#[test]
fn damaged_files_are_errors_never_a_crash_or_a_hang() {
    let pdf = std::fs::read(fixtures().join("pdf/scotus-transcript-p1.pdf")).unwrap();
    let docx = std::fs::read(fixtures().join("docx/tables.docx")).unwrap();
    let limits = Limits { max_time: std::time::Duration::from_secs(20), ..Limits::default() };
    for whole in [&pdf, &docx] {
        for eighth in 1..8 {
            let cut = &whole[..whole.len() * eighth / 8];
            // Either some text or an error: the call returns, whatever the reader met.
            let _ = llmtool_documents::extract(cut, "cut", &limits);
            let mut flipped = whole.clone();
            let at = whole.len() * eighth / 8;
            flipped[at] ^= 0xFF;
            let _ = llmtool_documents::extract(&flipped, "flipped", &limits);
        }
    }
    let truncated = llmtool_documents::extract(&pdf[..pdf.len() / 3], "cut.pdf", &limits);
    assert!(truncated.is_err() || truncated.is_ok_and(|doc| !doc.text.is_empty()));
}

#[test]
fn pdfs_whose_drawings_loop_or_explode_are_refused_before_reading() {
    let hostile = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hostile");
    // Without the check, the first overflowed the reading thread's stack (the process ended)
    // and the second ran past the time limit.
    let cyclic = read(&hostile.join("cyclic.pdf"), &Limits::default()).unwrap_err();
    assert!(cyclic.to_string().contains("draws itself"), "{cyclic}");
    let fanout = read(&hostile.join("fanout.pdf"), &Limits::default()).unwrap_err();
    assert!(fanout.to_string().contains("more than 100000 drawings"), "{fanout}");
}
