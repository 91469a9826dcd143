//! Generated artifacts are checked in; these tests fail when they are stale, and rewrite them
//! with `LLMTOOL_BLESS=1`. The schema is also checked against what `llmtool check` accepts.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use crate::support;

use std::collections::HashSet;
use std::path::PathBuf;

use llmtool_core::rules::{ALL, conversion_codes_markdown, diagnostics_markdown};
use llmtool_core::schema::json_schema;
use llmtool_core::{Document, Severity};

use support::repo;

fn assert_fresh(relative: &str, generated: &str) {
    let path = repo().join(relative);
    if std::env::var_os("LLMTOOL_BLESS").is_some() {
        std::fs::write(&path, generated).unwrap();
        return;
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == generated,
        "{relative} is stale; regenerate it with LLMTOOL_BLESS=1 cargo test -p llmtool-core --test integration generated"
    );
}

#[test]
fn diagnostics_reference_is_fresh() {
    assert_fresh("docs/diagnostics.md", &diagnostics_markdown());
}

#[test]
fn conversion_codes_table_is_fresh() {
    // The table is the end of docs/convert.md, after its heading.
    const HEADING: &str = "## Conversion diagnostics\n\n";
    let text = std::fs::read_to_string(repo().join("docs/convert.md")).unwrap();
    let at = text.find(HEADING).expect("docs/convert.md has a conversion diagnostics section");
    let generated = format!("{}{HEADING}{}", &text[..at], conversion_codes_markdown());
    assert_fresh("docs/convert.md", &generated);
}

#[test]
fn schema_file_is_fresh() {
    let mut text = serde_json::to_string_pretty(&json_schema()).unwrap();
    text.push('\n');
    assert_fresh("schema/llm-tool.schema.json", &text);
    let mut tests =
        serde_json::to_string_pretty(&llmtool_core::suite::tests_json_schema()).unwrap();
    tests.push('\n');
    assert_fresh("schema/llm-tool-tests.schema.json", &tests);
}

#[test]
fn rule_codes_are_unique_sorted_and_documented() {
    let mut seen = HashSet::new();
    for pair in ALL.windows(2) {
        assert!(pair[0].code < pair[1].code, "{} is listed before {}", pair[0].code, pair[1].code);
    }
    for rule in ALL {
        assert!(seen.insert(rule.name), "name {} is used twice", rule.name);
        assert!(rule.code.len() == 5 && rule.code.starts_with("LT"), "{}", rule.code);
        assert!(rule.summary().ends_with('.'), "{}: the summary is one full sentence", rule.code);
    }
}

/// Every tool file that `check` accepts without errors, and the schema's verdict on it.
fn files_under(dir: &str) -> Vec<PathBuf> {
    support::json_files_under(dir)
}

#[test]
fn schema_accepts_every_file_check_accepts() {
    let validator = jsonschema::draft202012::new(&json_schema()).unwrap();
    let mut files = support::examples();
    files.extend(files_under("crates/llmtool-core/tests/fixtures/valid"));
    for path in files {
        let value: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let errors: Vec<String> = validator.iter_errors(&value).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{}: {errors:?}", path.display());
    }
}

#[test]
fn the_tests_schema_accepts_every_example_test_file() {
    let validator =
        jsonschema::draft202012::new(&llmtool_core::suite::tests_json_schema()).unwrap();
    let files = support::example_test_files();
    assert!(!files.is_empty(), "every example tool has a test file");
    for path in files {
        let value: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let errors: Vec<String> = validator.iter_errors(&value).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{}: {errors:?}", path.display());
    }
}

#[test]
fn schema_rejects_what_check_rejects_structurally() {
    let validator = jsonschema::draft202012::new(&json_schema()).unwrap();
    let cases = [
        r#"{"metadata": {}}"#,
        r#"{"model_prompt": ["a"]}"#,
        r#"{"model_prompt": "x", "version": 1.5}"#,
        r#"{"model_prompt": "x", "metadata": {"parameters": {"temperature": 3}}}"#,
        r#"{"model_prompt": "x", "metadata": {"parameters": {"max_tokens": 0}}}"#,
        r#"{"model_prompt": "x", "metadata": {"variables": [{"name": "a", "type": "dropdown"}]}}"#,
        r#"{"model_prompt": "x", "metadata": {"variables": [{"name": "a", "type": "single-select"}]}}"#,
        r#"{"model_prompt": "x", "metadata": {"variables": [{"name": "{{a}}", "type": "text"}]}}"#,
        r#"{"model_prompt": "x", "metadata": {"variables": [{"name": "a", "type": "multi-select", "allowed_values": ["b", "b"]}]}}"#,
        r#"{"model_prompt": "x", "metadata": {"expected_output": {"type": "limited"}}}"#,
        r#"{"model_prompt": "x", "metadata": {"avatar_type": "png"}}"#,
    ];
    for case in cases {
        let document = Document::from_text(case.to_owned());
        assert!(
            document.diagnostics.iter().any(|d| d.severity == Severity::Error),
            "check accepts {case}"
        );
        let value: serde_json::Value = serde_json::from_str(case).unwrap();
        assert!(!validator.is_valid(&value), "the schema accepts {case}");
    }
}
