//! A tool with 50,000 variables, every one used, and a prompt with 50,000 undeclared
//! placeholders: checked and rendered correctly. (How the time grows is measured by
//! `bench/scaling.sh`, not here: timings do not belong in tests.)

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use llmtool_format::Document;
use llmtool_format::report::{Source, human, json_records};
use llmtool_format::template::{Inputs, ToolTemplate};
use serde_json::json;

const N: usize = 50_000;

#[test]
fn a_tool_with_fifty_thousand_variables_checks_and_renders() {
    let variables: Vec<_> = (0..N)
        .map(|i| match i % 3 {
            0 => json!({"name": format!("v{i}"), "type": "text", "description": "d", "default": format!("t{i}")}),
            1 => json!({"name": format!("v{i}"), "type": "single-select", "description": "d", "default": "a", "allowed_values": ["a", "b"]}),
            _ => json!({"name": format!("v{i}"), "type": "multi-select", "description": "d", "default": ["b", "a"], "allowed_values": ["a", "b"]}),
        })
        .collect();
    let prompt: Vec<String> = (0..N).map(|i| format!("{{{{v{i}}}}}")).collect();
    let tool = json!({"model_prompt": prompt.join(" "), "metadata": {"prompt_name": "Wide", "description": "d",
        "model_version": ["local"], "timestamp": "2026-11-23T08:00:00Z", "variables": variables}});
    let document = Document::from_text(tool.to_string());
    assert!(
        document.diagnostics.is_empty(),
        "{:?}",
        document.diagnostics.first().map(|d| &d.message)
    );
    let template = ToolTemplate::new(document.tool.as_ref().unwrap());
    let mut inputs = Inputs::new();
    inputs.push("v0", "given");
    let rendered = template.render(&inputs).unwrap();
    assert!(rendered.starts_with("given a b, a t3 a b, a t6"), "{}", &rendered[..40]);
    let multi_selects = (0..N).filter(|i| i % 3 == 2).count();
    assert_eq!(rendered.split(' ').count(), N + multi_selects, "each value once");
}

#[test]
fn fifty_thousand_undeclared_placeholders_are_each_reported_once() {
    let prompt: Vec<String> = (0..N).map(|i| format!("{{{{u{i}}}}} \\u00e9")).collect();
    let text = format!(
        "{{\"model_prompt\": \"{}\", \"metadata\": {{\"prompt_name\": \"Wide\", \"description\": \"d\", \"variables\": []}}}}",
        prompt.join(" ")
    );
    let document = Document::from_text(text);
    let undeclared: Vec<_> =
        document.diagnostics.iter().filter(|d| d.rule.code == "LT212").collect();
    assert_eq!(undeclared.len(), N);
    let last = undeclared[N - 1].primary.as_ref().unwrap().span;
    assert_eq!(&document.text[last.range()], format!("{{{{u{}}}}}", N - 1));
    let source = Source::new("wide.json", &document.text);
    assert_eq!(json_records(&source, &document.diagnostics).len(), document.diagnostics.len());
    let shown = human(&source, &document.diagnostics[..100], false);
    assert!(shown.contains("(a long line, shown in part)"));
}

#[test]
fn an_object_of_fifty_thousand_keys_reports_its_one_repeat_at_both_places() {
    let mut members: Vec<String> = (0..N).map(|i| format!("\"k{i}\": {i}")).collect();
    members.push("\"k7\": true".into());
    let text = format!("{{\"model_prompt\": \"x\", \"x-wide\": {{{}}}}}", members.join(", "));
    let document = Document::from_text(text);
    let repeats: Vec<_> = document.diagnostics.iter().filter(|d| d.rule.code == "LT013").collect();
    assert_eq!(repeats.len(), 1, "{:?}", repeats.iter().map(|d| &d.message).collect::<Vec<_>>());
    let again = repeats[0].primary.as_ref().unwrap().span;
    let first = repeats[0].secondary[0].span;
    assert_eq!(&document.text[first.range()], "\"k7\"");
    assert_eq!(&document.text[again.range()], "\"k7\"");
    assert!(again.start > document.text.rfind("k49999").unwrap(), "the last one is the repeat");
}
