//! `llmtool scan`: data-loss prevention's findings in a text, or in the parts of a tool file
//! that reach a model (its prompt, and its variables' defaults and allowed values), each with
//! its kind, place and confidence; never the value.

use std::path::Path;

use llmtool_core::Document;
use llmtool_core::span::Span;
use llmtool_dlp::{Confidence, Finding, Lines, Scanner};
use serde::Serialize;

use crate::Outcome;
use crate::cli::{ScanArgs, ScanFormat};
use crate::{io, settings};

/// One finding as `scan` reports it.
#[derive(Debug, Serialize)]
struct Found {
    kind: &'static str,
    rule: String,
    label: String,
    confidence: Confidence,
    line: usize,
    column: usize,
    end_line: usize,
    end_column: usize,
    /// Its bytes in the file: `start..end`.
    start: usize,
    end: usize,
    /// For a tool file: the field it is in (`model_prompt`, `metadata.variables[0].default`).
    #[serde(skip_serializing_if = "Option::is_none")]
    field: Option<String>,
    #[serde(skip)]
    describe: &'static str,
}

pub(crate) fn run(args: &ScanArgs) -> anyhow::Result<Outcome> {
    let name = io::display_name(&args.file);
    let bytes = io::read_input(&args.file)?;
    let text = String::from_utf8_lossy(&bytes);
    let providers = settings::load_providers(args.config.as_deref())?;
    let scanner = Scanner::new(&providers.config.dlp)
        .map_err(|error| anyhow::anyhow!("in the `[dlp]` table of the config file: {error}"))?;
    let lines = Lines::new(&text);
    let found = match tool_fields(&args.file, &text) {
        Some(fields) => fields
            .into_iter()
            .flat_map(|(field, span)| scan_field(&scanner, &text, &lines, &field, span))
            .collect(),
        None => scanner.scan(&text).iter().map(|f| found(&lines, f, 0, None)).collect::<Vec<_>>(),
    };
    match args.format {
        ScanFormat::Json => {
            let shown = serde_json::json!({ "file": name, "findings": found });
            io::write_stdout((serde_json::to_string_pretty(&shown)? + "\n").as_bytes())?;
        }
        ScanFormat::Human => {
            let mut out = String::new();
            for f in &found {
                let field =
                    f.field.as_ref().map(|field| format!(" in {field}")).unwrap_or_default();
                let rule =
                    if f.rule == f.kind { String::new() } else { format!(", rule {}", f.rule) };
                out.push_str(&format!(
                    "{name}:{}:{}: {}{field} ({} confidence{rule})\n",
                    f.line,
                    f.column,
                    f.describe,
                    confidence_name(f.confidence),
                ));
            }
            let count = found.len();
            out.push_str(&match count {
                0 => "nothing sensitive found\n".to_owned(),
                1 => "1 sensitive value found\n".to_owned(),
                n => format!("{n} sensitive values found\n"),
            });
            io::write_stdout(out.as_bytes())?;
        }
    }
    Ok(if found.is_empty() { Outcome::Ok } else { Outcome::Problems })
}

fn confidence_name(confidence: Confidence) -> &'static str {
    match confidence {
        Confidence::Low => "low",
        Confidence::Medium => "medium",
        Confidence::High => "high",
    }
}

/// For a tool file (a `.json` file, or standard input, that reads as a tool): the fields a
/// model is sent, with their spans in the file; `None` for any other text.
fn tool_fields(path: &Path, text: &str) -> Option<Vec<(String, Span)>> {
    let json_like = io::is_stdin(path) || path.extension().is_some_and(|e| e == "json");
    if !json_like || !text.trim_start().starts_with('{') {
        return None;
    }
    let tool = Document::from_text(text.to_owned()).tool?;
    let mut fields = Vec::new();
    fields.push(("model_prompt".to_owned(), tool.model_prompt.as_ref()?.span));
    let variables =
        tool.metadata.iter().flat_map(|m| m.variables.iter().flat_map(|v| v.value.iter()));
    for (index, variable) in variables.enumerate() {
        let at = format!("metadata.variables[{index}]");
        match variable.default.as_ref().map(|d| (&d.value, d.span)) {
            Some((llmtool_core::model::DefaultValue::List(items), _)) => {
                for (i, item) in items.iter().enumerate() {
                    fields.push((format!("{at}.default[{i}]"), item.span));
                }
            }
            Some((_, span)) => fields.push((format!("{at}.default"), span)),
            None => {}
        }
        for (i, value) in variable.allowed_values.iter().flat_map(|l| l.value.iter()).enumerate() {
            fields.push((format!("{at}.allowed_values[{i}]"), value.span));
        }
    }
    Some(fields)
}

/// The findings in one string of a tool file. The string is scanned as decoded; a finding's
/// place is exact when the string has no escapes (its text in the file is its value), else
/// the string's own start.
fn scan_field(
    scanner: &Scanner,
    text: &str,
    lines: &Lines<'_>,
    field: &str,
    span: Span,
) -> Vec<Found> {
    let raw = text.get(span.start..span.end).unwrap_or_default();
    let Ok(value) = serde_json::from_str::<String>(raw) else { return Vec::new() };
    let inner = raw.get(1..raw.len().saturating_sub(1)).unwrap_or_default();
    let exact = inner == value;
    scanner
        .scan(&value)
        .iter()
        .map(|finding| {
            if exact {
                found(lines, finding, span.start + 1, Some(field))
            } else {
                let pinned = Finding { span: 0..0, ..finding.clone() };
                found(lines, &pinned, span.start, Some(field))
            }
        })
        .collect()
}

fn found(lines: &Lines<'_>, finding: &Finding, offset: usize, field: Option<&str>) -> Found {
    let start = lines.locate(offset + finding.span.start);
    let end = lines.locate(offset + finding.span.end);
    Found {
        kind: finding.kind.name(),
        rule: finding.rule.to_string(),
        label: finding.label.to_string(),
        confidence: finding.confidence,
        line: start.line,
        column: start.column,
        end_line: end.line,
        end_column: end.column,
        start: offset + finding.span.start,
        end: offset + finding.span.end,
        field: field.map(str::to_owned),
        describe: finding.kind.describe(),
    }
}
