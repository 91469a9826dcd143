//! The diagnostics' docs are generated from every rule (the format's and the conversions',
//! joined by `llmtool_convert::all_rules`) and checked in; these tests fail when they are
//! stale, and rewrite them with `LLMTOOL_BLESS=1`.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use crate::support;

use std::collections::HashSet;

use llmtool_format::rules::{code_table, diagnostics_markdown};

use support::repo;

const REGENERATE: &str =
    "LLMTOOL_BLESS=1 cargo test -p llmtool-convert --test integration generated";

fn assert_fresh(relative: &str, generated: &str) {
    let path = repo().join(relative);
    if std::env::var_os("LLMTOOL_BLESS").is_some() {
        std::fs::write(&path, generated).unwrap();
        return;
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(checked_in == generated, "{relative} is stale; regenerate it with {REGENERATE}");
}

#[test]
fn diagnostics_reference_is_fresh() {
    assert_fresh("docs/diagnostics.md", &diagnostics_markdown(&llmtool_convert::all_rules()));
}

#[test]
fn conversion_codes_table_is_fresh() {
    // The table is the end of docs/convert.md, after its heading.
    const HEADING: &str = "## Conversion diagnostics\n\n";
    let text = std::fs::read_to_string(repo().join("docs/convert.md")).unwrap();
    let at = text.find(HEADING).expect("docs/convert.md has a conversion diagnostics section");
    let table =
        code_table(llmtool_convert::codes::ALL, "diagnostics.md", "the LT7xx rules", REGENERATE);
    assert_fresh("docs/convert.md", &format!("{}{HEADING}{table}", &text[..at]));
}

#[test]
fn rule_codes_are_unique_sorted_and_documented() {
    let all = llmtool_convert::all_rules();
    let mut seen = HashSet::new();
    for pair in all.windows(2) {
        assert!(pair[0].code < pair[1].code, "{} is listed twice", pair[0].code);
    }
    for list in [llmtool_format::rules::ALL, llmtool_convert::codes::ALL] {
        for pair in list.windows(2) {
            assert!(
                pair[0].code < pair[1].code,
                "{} is listed before {}",
                pair[0].code,
                pair[1].code
            );
        }
    }
    assert!(llmtool_convert::codes::ALL.iter().all(|rule| rule.code.starts_with("LT7")));
    for rule in &all {
        assert!(seen.insert(rule.name), "name {} is used twice", rule.name);
        assert!(rule.code.len() == 5 && rule.code.starts_with("LT"), "{}", rule.code);
        assert!(rule.summary().ends_with('.'), "{}: the summary is one full sentence", rule.code);
    }
}
