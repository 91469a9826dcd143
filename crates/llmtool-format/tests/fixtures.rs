//! Fixture tests: every file under `fixtures/valid` and `fixtures/invalid` is checked, and what a

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

//! user would see (human report, JSON records, canonical form) is compared to its snapshot.
//! Adding a case means adding a file.

use std::path::Path;

use llmtool_format::format::format_source;
use llmtool_format::report::{Source, human, json_records};
use llmtool_format::{Document, Severity};

fn name_of(path: &Path) -> String {
    format!(
        "fixtures/{}",
        path.strip_prefix(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures"))
            .unwrap()
            .display()
    )
}

fn report(path: &Path, document: &Document) -> (String, String) {
    let name = name_of(path);
    let source = Source::new(&name, &document.text);
    let text = human(&source, &document.diagnostics, false);
    let json = serde_json::to_string_pretty(&json_records(&source, &document.diagnostics)).unwrap();
    (text, json)
}

#[test]
fn valid_files_have_no_errors_and_format_stably() {
    insta::glob!("fixtures/valid/*.json", |path| {
        let bytes = std::fs::read(path).unwrap();
        let document = Document::from_bytes(&bytes);
        let errors: Vec<_> =
            document.diagnostics.iter().filter(|d| d.severity == Severity::Error).collect();
        assert!(errors.is_empty(), "{}: {errors:#?}", path.display());
        let (text, _) = report(path, &document);
        let formatted = format_source(&document.text, false).expect("a valid file formats").text;
        let again = format_source(&formatted, false).expect("canonical output formats").text;
        assert_eq!(formatted, again, "fmt is not idempotent on {}", path.display());
        insta::assert_snapshot!("report", text);
        insta::assert_snapshot!("canonical", formatted);
    });
}

#[test]
fn invalid_files_report_what_is_wrong() {
    insta::glob!("fixtures/invalid/*.json", |path| {
        let bytes = std::fs::read(path).unwrap();
        let document = Document::from_bytes(&bytes);
        assert!(
            document.diagnostics.iter().any(|d| d.severity >= Severity::Warning),
            "{} reports nothing",
            path.display()
        );
        let (text, json) = report(path, &document);
        insta::assert_snapshot!("report", text);
        insta::assert_snapshot!("json", json);
    });
}

#[test]
fn fix_repairs_the_published_slips() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/invalid/published-slips.json");
    let text = std::fs::read_to_string(path).unwrap();
    let before = Document::from_text(text.clone());
    let slips: Vec<_> = before
        .diagnostics
        .iter()
        .map(|d| {
            let start = d.primary.as_ref().unwrap().span.start;
            let lc = llmtool_format::LineIndex::new(&text).line_column(&text, start);
            (d.code(), lc.line, lc.column)
        })
        .collect();
    assert_eq!(slips, [("LT001", 13, 27), ("LT002", 26, 41)]);
    let formatted = format_source(&text, true).expect("the slips are fixable");
    assert_eq!(formatted.fixes_applied, 2);
    let after = Document::from_text(formatted.text);
    assert!(after.diagnostics.is_empty(), "{:#?}", after.diagnostics);
}

#[test]
fn nesting_200k_deep_is_reported_not_overflowed() {
    let depth = 200_000;
    let text = format!(
        "{{\"model_prompt\": \"x\", \"x-deep\": {}{}}}",
        "[".repeat(depth),
        "]".repeat(depth)
    );
    let document = Document::from_text(text);
    let codes: Vec<_> = document.diagnostics.iter().map(llmtool_format::Diagnostic::code).collect();
    assert_eq!(codes, ["LT104", "LT009"]);
    let unclosed = Document::from_text("[".repeat(depth));
    let codes: Vec<_> = unclosed.diagnostics.iter().map(llmtool_format::Diagnostic::code).collect();
    assert_eq!(codes, ["LT008", "LT009", "LT005"]);
}

#[test]
fn avatar_over_one_mebibyte_is_reported() {
    use base64::Engine as _;
    let svg = format!("<svg width=\"256\" height=\"256\"><!--{}--></svg>", "x".repeat(1024 * 1024));
    let data = base64::engine::general_purpose::STANDARD.encode(svg);
    let text = format!(
        r#"{{"model_prompt": "x", "metadata": {{"prompt_name": "t", "description": "d", "model_version": ["m"], "timestamp": "2026-01-01", "avatar_type": "base64", "avatar": "{data}"}}}}"#
    );
    let codes: Vec<_> = Document::from_text(text)
        .diagnostics
        .iter()
        .map(llmtool_format::Diagnostic::code)
        .collect();
    assert_eq!(codes, ["LT506"]);
}
