//! A test file and its tool written for promptfoo: the config and the prompt file, as
//! snapshots (`scripts/promptfoo_peer.py` runs them with promptfoo itself).

mod support;

use llmtool_core::Document;
use llmtool_core::suite::{promptfoo, read_json};

#[test]
fn the_agreement_suite_is_written_for_promptfoo() {
    let folder = support::repo().join("crates/llmtool-core/tests/fixtures/promptfoo");
    let tests = std::fs::read_to_string(folder.join("agreement.tests.json")).unwrap();
    let tool = std::fs::read_to_string(folder.join("agreement.json")).unwrap();
    let read = read_json(&tests);
    let file = read.file.expect("the test file reads");
    let written =
        promptfoo::export(&file, &Document::from_text(tool), "agreement", &["mock/m".into()])
            .expect("the tool has no errors");
    assert!(written.diagnostics.is_empty(), "{:?}", written.diagnostics);
    insta::assert_snapshot!("agreement-promptfooconfig", written.value.config);
    let (name, prompt) = &written.value.prompt_file;
    assert_eq!(name, "agreement.prompt.json");
    insta::assert_snapshot!("agreement-prompt", prompt);
}

#[test]
fn what_promptfoo_has_no_counterpart_for_is_said_where_it_is_written() {
    let tests = r#"{"cases": [{"name": "x", "vars": {"question": "q"}, "assert": [
        {"type": "similar", "value": "a reply", "threshold": 0.7},
        {"type": "json_path", "path": "$.a", "value": 1},
        {"type": "contains", "value": "{{ not a value }}"}
    ]}]}"#;
    let tool = std::fs::read_to_string(
        support::repo().join("crates/llmtool-core/tests/fixtures/promptfoo/agreement.json"),
    )
    .unwrap();
    let file = read_json(tests).file.unwrap();
    let written = promptfoo::export(&file, &Document::from_text(tool), "agreement", &[]).unwrap();
    let said: Vec<&str> = written.diagnostics.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(said.len(), 2, "{said:?}");
    assert!(said[0].contains("embeddings") && said[1].contains("`json_path`"), "{said:?}");
    for diagnostic in &written.diagnostics {
        let span = diagnostic.primary.as_ref().expect("placed").span;
        assert!(
            tests[span.start..span.end].starts_with("{\"type\""),
            "{}",
            &tests[span.start..span.end]
        );
    }
    // promptfoo renders an assertion's value as Nunjucks: braces are written as literals.
    assert!(
        written.value.config.contains(r#"value: "{{ \"{{\" }} not a value }}""#),
        "{}",
        written.value.config
    );
    // The tool names no model: promptfoo's usual OpenAI one.
    assert!(written.value.config.contains("openai:chat:gpt-4o-mini"), "{}", written.value.config);
}
