//! `docs/diagnostics.md`, and the code table of `docs/convert.md`, generated from the rules'
//! doc comments.

use std::fmt::Write as _;

use crate::rules::{ALL, Rule, conversion_rules};

/// The Markdown reference of every diagnostic code.
pub fn diagnostics_markdown() -> String {
    let mut out = String::from(
        "# Diagnostics\n\n\
         <!-- Generated from the doc comments of the rules in crates/llmtool-core/src; do not edit.\n     \
         Regenerate with: LLMTOOL_BLESS=1 cargo test -p llmtool-core --test integration generated -->\n\n\
         Every finding of `llmtool check` has a stable code. Errors make `check` fail; warnings fail\n\
         it under `--strict`; info is never a failure. A fix marked *safe* is applied by\n\
         `llmtool fmt --fix`; other fixes are shown as suggestions.\n\n\
         `check --ignore RULE` leaves a rule out and `check --select RULE` keeps only the rules\n\
         named, each by its code (`LT215`), a prefix of codes (`LT2`: every variable rule) or its\n\
         name (`missing-variable-description`); the config file's `[check]` table does the same\n\
         for every run (`ignore = [\"LT215\"]`, `select = [...]`), the flags adding to it. A\n\
         problem that keeps a file from being read (LT0xx) is always reported.\n\n\
         | code | name | severity | summary |\n|---|---|---|---|\n",
    );
    for rule in ALL {
        table_row(&mut out, rule, "");
    }
    for rule in ALL {
        let _ = write!(
            out,
            "\n## {}\n\n`{}` · default severity: **{}**\n\n{}",
            rule.code,
            rule.name,
            rule.severity,
            rule.doc_markdown()
        );
    }
    out
}

/// The table of conversion codes at the end of `docs/convert.md`, each linked to its full
/// documentation in `docs/diagnostics.md`.
pub fn conversion_codes_markdown() -> String {
    let mut out = String::from(
        "<!-- Generated from the doc comments of the LT7xx rules; do not edit.\n     \
         Regenerate with: LLMTOOL_BLESS=1 cargo test -p llmtool-core --test integration generated -->\n\n\
         | code | name | severity | summary |\n|---|---|---|---|\n",
    );
    for rule in conversion_rules() {
        table_row(&mut out, rule, "diagnostics.md");
    }
    out
}

/// One row of a code table, its code linked to its section of the page `page` (this page
/// when empty).
fn table_row(out: &mut String, rule: &Rule, page: &str) {
    let _ = writeln!(
        out,
        "| [{code}]({page}#{anchor}) | `{name}` | {severity} | {summary} |",
        code = rule.code,
        anchor = rule.code.to_lowercase(),
        name = rule.name,
        severity = rule.severity,
        summary = rule.summary().replace('|', "\\|"),
    );
}
