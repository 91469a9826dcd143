//! Test files (`*.tests.json`, `*.tests.yaml`) read and checked against their tool: a good
//! file reads the same in JSON and YAML with no problem; a broken one reports each problem at
//! its place (snapshot of what a user sees), and keeps every assertion that can be kept.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::path::Path;

use llmtool_format::Document;
use llmtool_format::report::{Source, human};
use llmtool_format::suite::{Check, ReadTests, check_against, read_json, read_yaml};

fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/suite").join(name);
    std::fs::read_to_string(path).unwrap()
}

fn tool() -> llmtool_format::model::Tool {
    Document::from_bytes(fixture("sentiment.json").as_bytes()).tool.unwrap()
}

/// The read file's problems and those against the tool, as a user sees them.
fn problems(name: &str, read: &ReadTests) -> String {
    let text = fixture(name);
    let mut diagnostics = read.diagnostics.clone();
    if let Some(file) = &read.file {
        diagnostics.extend(check_against(file, &tool()));
    }
    llmtool_format::diagnostic::sort(&mut diagnostics);
    human(&Source::new(&format!("fixtures/suite/{name}"), &text), &diagnostics, false)
}

#[test]
fn a_good_file_reads_the_same_in_json_and_yaml() {
    let json = read_json(&fixture("good.tests.json"));
    let yaml = read_yaml(&fixture("good.tests.yaml"));
    assert_eq!(problems("good.tests.json", &json), "");
    assert_eq!(problems("good.tests.yaml", &yaml), "");
    let (json, yaml) = (json.file.unwrap(), yaml.file.unwrap());
    assert_eq!(json.tool.as_deref(), Some("sentiment.json"));
    assert_eq!(json.shared.len(), 1);
    assert_eq!(json.cases.len(), 2);
    let checks = |file: &llmtool_format::suite::TestFile| {
        file.cases
            .iter()
            .map(|c| {
                (
                    c.name.clone(),
                    c.vars.clone(),
                    c.threshold,
                    c.assertions.iter().map(|a| (a.check.clone(), a.weight)).collect::<Vec<_>>(),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(checks(&json), checks(&yaml));
    assert!(
        matches!(json.cases[1].assertions[2].check, Check::Judge { threshold, .. } if (threshold - 0.5).abs() < 1e-12)
    );
    // A YAML case is placed at its list item, for annotations.
    let text = fixture("good.tests.yaml");
    assert!(text[yaml.cases[1].span.start..].starts_with("- name: sarcasm"));
}

#[test]
fn a_broken_file_reports_each_problem_in_place() {
    let read = read_json(&fixture("broken.tests.json"));
    let file = read.file.as_ref().unwrap();
    // Kept: the case, the one assertion that is fine, and the unreachable one (a warning).
    assert_eq!(file.cases.len(), 2);
    assert_eq!(file.cases[0].assertions.len(), 1);
    insta::assert_snapshot!(problems("broken.tests.json", &read));
}

#[test]
fn what_is_not_a_test_file_says_so() {
    for (text, yaml) in [
        ("[1, 2]", false),
        ("{\"tool\": \"x.json\"}", false),
        ("- a\n- b\n", true),
        ("cases: [", true),
    ] {
        let read = if yaml { read_yaml(text) } else { read_json(text) };
        assert!(read.has_errors(), "{text}: {:?}", read.diagnostics);
        assert!(
            read.diagnostics.iter().all(|d| d.code() == "LT801"),
            "{text}: {:?}",
            read.diagnostics
        );
    }
}

#[test]
fn the_schema_agrees_with_the_reader_on_the_fixtures() {
    let schema = llmtool_format::suite::tests_json_schema();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let good: serde_json::Value = serde_json::from_str(&fixture("good.tests.json")).unwrap();
    let errors: Vec<String> = validator.iter_errors(&good).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    let yaml: serde_json::Value = serde_yaml_ng::from_str(&fixture("good.tests.yaml")).unwrap();
    assert!(validator.is_valid(&yaml));
    let broken: serde_json::Value = serde_json::from_str(&fixture("broken.tests.json")).unwrap();
    assert!(!validator.is_valid(&broken));
}
