//! GitHub Actions workflow commands: `::error file=...,line=...::message`, shown as annotations
//! on the pull request.

use std::fmt::Write as _;

use crate::diagnostic::{Diagnostic, Severity};
use crate::report::Source;

/// One workflow command per diagnostic.
pub fn github(source: &Source<'_>, diagnostics: &[Diagnostic]) -> String {
    let mut out = String::new();
    for d in diagnostics {
        let command = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "notice",
        };
        let _ = write!(out, "::{command} file={}", escape_property(source.path));
        if let Some(primary) = &d.primary {
            let (start, end) = source.locate(primary.span);
            let _ = write!(
                out,
                ",line={},col={},endLine={},endColumn={}",
                start.line, start.column, end.line, end.column
            );
        }
        let title = format!("{} ({})", d.rule.code, d.rule.name);
        let mut message = d.message.clone();
        if let Some(help) = &d.help {
            message.push_str("\nhelp: ");
            message.push_str(help);
        }
        let _ = writeln!(out, ",title={}::{}", escape_property(&title), escape_data(&message));
    }
    out
}

fn escape_data(text: &str) -> String {
    text.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}
