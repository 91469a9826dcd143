//! JSON output: one record per diagnostic, with 1-based line:column and byte spans.

use serde::Serialize;

use crate::diagnostic::{Diagnostic, Fix, Severity};
use crate::report::Source;
use crate::span::{LineColumn, Span};

/// A diagnostic as programs read it.
#[derive(Debug, Clone, Serialize)]
pub struct JsonDiagnostic<'a> {
    pub path: &'a str,
    pub code: &'static str,
    pub name: &'static str,
    pub severity: Severity,
    pub message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<LineColumn>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_location: Option<LineColumn>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub span: Option<Span>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<JsonLabel<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<&'a Fix>,
}

#[derive(Debug, Clone, Serialize)]
pub struct JsonLabel<'a> {
    pub location: LineColumn,
    pub span: Span,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<&'a str>,
}

/// The JSON records of one file's diagnostics.
pub fn json_records<'a>(
    source: &'a Source<'a>,
    diagnostics: &'a [Diagnostic],
) -> Vec<JsonDiagnostic<'a>> {
    diagnostics
        .iter()
        .map(|d| {
            let located = d.primary.as_ref().map(|label| source.locate(label.span));
            JsonDiagnostic {
                path: source.path,
                code: d.rule.code,
                name: d.rule.name,
                severity: d.severity,
                message: &d.message,
                location: located.map(|l| l.0),
                end_location: located.map(|l| l.1),
                span: d.primary.as_ref().map(|label| label.span),
                labels: d
                    .secondary
                    .iter()
                    .map(|label| JsonLabel {
                        location: source.line_column(label.span.start),
                        span: label.span,
                        message: label.message.as_deref(),
                    })
                    .collect(),
                help: d.help.as_deref(),
                fix: d.fix.as_ref(),
            }
        })
        .collect()
}
