//! LT905: a `requirements` entry that is not a package on PyPI.

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::rules::Context;
use crate::smart::Requirement;

declare_rule! {
    /// A smart tool's `requirements` entry is not a package name from PyPI: a URL, a path, a
    /// pip option, or not a requirement at all. Runs only fetch packages by name and pinned
    /// version, so a tool file can never make llmtool download from an address it chose.
    ///
    /// ```json
    /// { "metadata": { "tool_name": "Fetch", "tool_code": "def execute(v):\n    return ''", "requirements": ["https://example.org/pkg.whl"] } }
    /// ```
    pub static INVALID_REQUIREMENT = ("LT905", "invalid-requirement", Error);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    for entry in cx.tool.requirements() {
        if let Requirement::Refused { reason } = Requirement::read(&entry.value) {
            out.push(
                Diagnostic::new(
                    &INVALID_REQUIREMENT,
                    format!("`{}`: {reason}", entry.value.trim()),
                )
                .at(entry.span),
            );
        }
    }
}
