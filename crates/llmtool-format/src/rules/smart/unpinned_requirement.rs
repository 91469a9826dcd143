//! LT906: a requirement without an exact version.

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::rules::Context;
use crate::smart::Requirement;

declare_rule! {
    /// A smart tool's requirement does not pin one version (`name==1.2.3`): the package a
    /// run gets would change as new versions are published, and a run refuses to fetch it.
    ///
    /// ```json
    /// { "metadata": { "tool_name": "Render", "tool_code": "def execute(v):\n    return ''", "requirements": ["markdown>=3"] } }
    /// ```
    pub static UNPINNED_REQUIREMENT = ("LT906", "unpinned-requirement", Warning);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    for entry in cx.tool.requirements() {
        if let Requirement::Unpinned { name } = Requirement::read(&entry.value) {
            out.push(
                Diagnostic::new(
                    &UNPINNED_REQUIREMENT,
                    format!("`{}` does not pin a version", entry.value.trim()),
                )
                .at(entry.span)
                .with_help(format!(
                    "write `{name}==VERSION` with the version the code was written for"
                )),
            );
        }
    }
}
