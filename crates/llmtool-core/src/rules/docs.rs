//! `docs/diagnostics.md`, generated from the rules' doc comments.

use std::fmt::Write as _;

use crate::rules::ALL;

/// The Markdown reference of every diagnostic code.
pub fn diagnostics_markdown() -> String {
    let mut out = String::from(
        "# Diagnostics\n\n\
         <!-- Generated from the doc comments of the rules in crates/llmtool-core/src; do not edit.\n     \
         Regenerate with: LLMTOOL_BLESS=1 cargo test -p llmtool-core --test generated -->\n\n\
         Every finding of `llmtool check` has a stable code. Errors make `check` fail; warnings fail\n\
         it under `--strict`; info is never a failure. A fix marked *safe* is applied by\n\
         `llmtool fmt --fix`; other fixes are shown as suggestions.\n\n\
         | code | name | severity | summary |\n|---|---|---|---|\n",
    );
    for rule in ALL {
        let _ = writeln!(
            out,
            "| [{code}](#{anchor}) | `{name}` | {severity} | {summary} |",
            code = rule.code,
            anchor = rule.code.to_lowercase(),
            name = rule.name,
            severity = rule.severity,
            summary = rule.summary().replace('|', "\\|"),
        );
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
