//! `docs/diagnostics.md`, and code tables such as `docs/convert.md`'s, generated from the
//! rules' doc comments (`llmtool-convert`'s tests write both, as only they see every rule).

use std::fmt::Write as _;

use crate::rules::Rule;

/// The Markdown reference of the diagnostic codes `rules` (every code: the format's and the
/// conversions', in code order).
pub fn diagnostics_markdown(rules: &[&Rule]) -> String {
    let mut out = String::from(
        "# Diagnostics\n\n\
         <!-- Generated from the doc comments of the rules in crates/llmtool-format/src and crates/llmtool-convert/src; do not edit.\n     \
         Regenerate with: LLMTOOL_BLESS=1 cargo test -p llmtool-convert --test integration generated -->\n\n\
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
    for rule in rules {
        table_row(&mut out, rule, "");
    }
    for rule in rules {
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

/// A table of the codes `rules`, each linked to its section of the page `page`, after a
/// header saying where it comes from (`source`, and the command `regenerate`).
pub fn code_table(rules: &[&Rule], page: &str, source: &str, regenerate: &str) -> String {
    let mut out = format!(
        "<!-- Generated from the doc comments of {source}; do not edit.\n     Regenerate with: {regenerate} -->\n\n| code | name | severity | summary |\n|---|---|---|---|\n"
    );
    for rule in rules {
        table_row(&mut out, rule, page);
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
