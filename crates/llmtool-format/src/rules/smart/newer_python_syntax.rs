//! LT902: `tool_code` uses syntax newer than the sandbox's Python.

use crate::declare_rule;
use crate::diagnostic::Diagnostic;
use crate::rules::Context;
use crate::smart::PYTHON_VERSION;

declare_rule! {
    /// A smart tool's `tool_code` uses syntax that the sandbox's Python (3.12) does not have
    /// yet, such as `except A, B:` without parentheses (3.14): the run would fail there.
    ///
    /// ```json
    /// { "metadata": { "tool_name": "Safe", "tool_code": "def execute(variables):\n    try:\n        return 1\n    except ValueError, TypeError:\n        return 0" } }
    /// ```
    pub static NEWER_PYTHON_SYNTAX = ("LT902", "newer-python-syntax", Error);
}

pub(crate) fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let Some(facts) = cx.code_facts() else { return };
    let (major, minor) = PYTHON_VERSION;
    for (range, message) in &facts.newer_syntax {
        out.push(
            Diagnostic::new(&NEWER_PYTHON_SYNTAX, message.clone())
                .at(cx.code_span(range.clone()))
                .with_help(format!(
                    "smart tools run on Python {major}.{minor}: write it the older way"
                )),
        );
    }
}
