//! Runs every vector of `conformance/vectors/`: check the tool, compare the diagnostic codes,
//! then render it with the given values and compare the prompt or the value errors.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::path::Path;

use llmtool_format::Document;
use llmtool_format::template::{Inputs, ToolTemplate};
use serde_json::Value;

fn codes<'a>(diagnostics: impl IntoIterator<Item = &'a llmtool_format::Diagnostic>) -> Vec<String> {
    let mut codes: Vec<String> = diagnostics.into_iter().map(|d| d.code().to_owned()).collect();
    codes.sort();
    codes
}

fn expected_codes(value: &Value) -> Vec<String> {
    let mut codes: Vec<String> =
        value.as_array().unwrap().iter().map(|c| c.as_str().unwrap().to_owned()).collect();
    codes.sort();
    codes
}

fn run_vector(path: &Path) -> Result<(), String> {
    let vector: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let source = match (&vector["source"], &vector["tool"]) {
        (Value::String(source), _) => source.clone(),
        (_, tool) => serde_json::to_string_pretty(tool).unwrap(),
    };
    let expect = &vector["expect"];
    let document = Document::from_text(source);
    let found = codes(&document.diagnostics);
    if found != expected_codes(&expect["diagnostics"]) {
        return Err(format!("diagnostics: expected {}, found {found:?}", expect["diagnostics"]));
    }
    let Some(values) = vector.get("values") else { return Ok(()) };
    let tool = document.tool.as_ref().ok_or("a vector with values needs a tool")?;
    let template = ToolTemplate::new(tool);
    let inputs = Inputs::from_json(values, template.variables()).map_err(|e| e.to_string())?;
    if let Some(expected) = expect.get("messages") {
        let values =
            template.resolve(&inputs).map_err(|problems| format!("{:?}", codes(&problems)))?;
        let sent: Vec<Value> = template
            .render_turns(&values)
            .into_iter()
            .map(|turn| serde_json::json!({ "role": turn.role, "content": turn.text }))
            .collect();
        if &Value::Array(sent.clone()) != expected {
            return Err(format!("messages: expected {expected}, got {}", Value::Array(sent)));
        }
    }
    match (template.render(&inputs), &expect["prompt"], &expect["render_errors"]) {
        (Ok(prompt), Value::String(expected), _) if &prompt == expected => Ok(()),
        (Err(problems), Value::Null, errors @ Value::Array(_))
            if codes(&problems) == expected_codes(errors) =>
        {
            Ok(())
        }
        (result, prompt, errors) => Err(format!(
            "render: expected prompt {prompt} / errors {errors}, got {:?}",
            result.map_err(|problems| codes(&problems))
        )),
    }
}

#[test]
fn every_conformance_vector_passes() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/vectors");
    let mut paths: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    paths.sort();
    assert!(paths.len() >= 60, "only {} vectors", paths.len());
    let failures: Vec<String> = paths
        .iter()
        .filter_map(|path| {
            run_vector(path)
                .err()
                .map(|e| format!("{}: {e}", path.file_name().unwrap().to_string_lossy()))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} vectors failed:\n{}",
        failures.len(),
        paths.len(),
        failures.join("\n")
    );
}

#[test]
fn every_rule_is_covered_by_a_vector() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/vectors");
    let mut all = String::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        all.push_str(&std::fs::read_to_string(entry.unwrap().path()).unwrap());
    }
    // Covered elsewhere: LT006 needs bytes that JSON cannot carry, LT009 and LT506 need inputs
    // of hundreds of kilobytes (see tests/fixtures.rs and the unit tests); the conversion codes
    // (LT7xx) come from conversions, not checks (see tests/convert.rs), and the test-file
    // codes (LT8xx) from test files (see tests/suite.rs).
    let elsewhere = ["LT006", "LT009", "LT506"];
    let missing: Vec<&str> = llmtool_format::rules::ALL
        .iter()
        .map(|rule| rule.code)
        .filter(|code| !code.starts_with("LT7") && !code.starts_with("LT8"))
        .filter(|code| !elsewhere.contains(code) && !all.contains(&format!("\"{code}\"")))
        .collect();
    assert!(missing.is_empty(), "no vector covers {missing:?}");
}
