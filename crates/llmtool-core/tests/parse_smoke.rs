//! Parser behaviour on the hardest inputs: the published example, deep nesting, garbage.

use llmtool_core::syntax::{self, NodeKind};

fn codes(text: &str) -> Vec<(&'static str, usize)> {
    syntax::parse(text)
        .diagnostics
        .iter()
        .map(|d| (d.code(), d.primary.as_ref().map_or(0, |l| l.span.start)))
        .collect()
}

#[test]
fn deep_nesting_does_not_overflow() {
    let depth = 200_000;
    let text = format!("{{\"model_prompt\": \"x\", \"x-deep\": {}{}}}", "[".repeat(depth), "]".repeat(depth));
    let tree = syntax::parse(&text);
    assert_eq!(tree.diagnostics.iter().map(|d| d.code()).collect::<Vec<_>>(), ["LT009"]);
    let root = tree.root.unwrap();
    assert_eq!(root.get("model_prompt").unwrap().value.as_str(), Some("x"));
}

#[test]
fn deep_nesting_unclosed_reports_truncation() {
    let text = "[".repeat(200_000);
    let found = codes(&text);
    assert_eq!(found.iter().map(|c| c.0).collect::<Vec<_>>(), ["LT008", "LT009", "LT005"]);
}

#[test]
fn garbage_never_panics() {
    for text in ["", "   ", "}", "]]]", "{\"a\"", "{\"a\":", "{\"a\":1,,}", "[1 2]", "{,}", "\"\\u12", "{'a': 'b'}", "{a: True}", "/* x", "{\"a\": [}", "{]", "nul", "-", "\u{0}"] {
        let tree = syntax::parse(text);
        assert!(!tree.diagnostics.is_empty(), "no diagnostic for {text:?}");
    }
    assert!(matches!(syntax::parse("{}").root.unwrap().kind, NodeKind::Object(_)));
}
