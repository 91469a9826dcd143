//! `llmtool scan`: data-loss prevention's findings in a text, or in the parts of a tool file
//! that reach a model (its prompt, and its variables' defaults and allowed values), each with
//! its kind, place and confidence; never the value.

mod args;

pub(crate) use args::{ScanArgs, ScanFormat};

use std::path::Path;

use llmtool_dlp::{Confidence, Finding, Lines, Scanner};
use llmtool_format::Document;
use llmtool_format::model::SentString;
use llmtool_format::span::Span;
use llmtool_format::syntax::literal::Escapes;
use serde::Serialize;

use crate::outcome::Outcome;

use llmtool_runtime::files;

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
    let providers = settings::load_providers(args.config.as_deref())?;
    let scanner = Scanner::new(&providers.config.dlp)
        .map_err(|error| anyhow::anyhow!("in the `[dlp]` table of the config file: {error}"))?;
    // A folder is scanned for the tool files in it, as `check` finds them.
    let folder = args.files.iter().any(|path| path.is_dir());
    let files = if folder {
        io::collect_matching(&args.files, files::is_tool_file)?
    } else {
        args.files.clone()
    };
    let mut results = Vec::with_capacity(files.len());
    for file in &files {
        match scan_file(&scanner, file) {
            Ok(result) => results.push(result),
            // In a folder, a file that cannot be scanned is said and passed over.
            Err(error) if folder => eprintln!("warning: {error:#}"),
            Err(error) => return Err(error),
        }
    }
    let total: usize = results.iter().map(|(_, found)| found.len()).sum();
    match args.format {
        ScanFormat::Json => {
            let shown: Vec<serde_json::Value> = results
                .iter()
                .map(|(name, found)| serde_json::json!({ "file": name, "findings": found }))
                .collect();
            // One file named: its object; a folder or several files: a list of them.
            let shown = match shown.as_slice() {
                [one] if !folder && args.files.len() == 1 => one.clone(),
                _ => serde_json::Value::Array(shown),
            };
            io::write_stdout((serde_json::to_string_pretty(&shown)? + "\n").as_bytes())?;
        }
        ScanFormat::Human => {
            let mut out = String::new();
            for (name, found) in &results {
                for f in found {
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
            }
            let files_part = if results.len() == 1 {
                String::new()
            } else {
                format!(" in {} files", results.len())
            };
            out.push_str(&match total {
                0 => format!("nothing sensitive found{files_part}\n"),
                1 => format!("1 sensitive value found{files_part}\n"),
                n => format!("{n} sensitive values found{files_part}\n"),
            });
            io::write_stdout(out.as_bytes())?;
        }
    }
    Ok(if total == 0 { Outcome::Ok } else { Outcome::Problems })
}

/// The findings of one file: its name as shown, and what was found.
fn scan_file(scanner: &Scanner, file: &Path) -> anyhow::Result<(String, Vec<Found>)> {
    let name = io::display_name(file);
    let bytes = io::read_input(file)?;
    // As grep and git judge it: a NUL byte means a binary file, whose "findings" would be
    // noise (and whose places mean nothing to a reader).
    if bytes.contains(&0) {
        anyhow::bail!(
            "`{name}` is not a text file (it holds NUL bytes); scan reads text and tool files"
        );
    }
    let text = String::from_utf8_lossy(&bytes);
    let lines = Lines::new(&text);
    let found = match tool_fields(file, &text) {
        Some(fields) => fields
            .into_iter()
            .flat_map(|field| scan_field(scanner, &text, &lines, &field))
            .collect(),
        None => scanner
            .scan(&text)
            .iter()
            .map(|f| found(&lines, f, Span::new(f.span.start, f.span.end), None))
            .collect::<Vec<_>>(),
    };
    Ok((name, found))
}

fn confidence_name(confidence: Confidence) -> &'static str {
    match confidence {
        Confidence::Low => "low",
        Confidence::Medium => "medium",
        Confidence::High => "high",
    }
}

/// For a tool file (a `.json` file, or standard input, that reads as a tool): the strings a
/// model is sent (`Tool::sent_strings`); `None` for any other text.
fn tool_fields(path: &Path, text: &str) -> Option<Vec<SentString>> {
    let json_like = io::is_stdin(path) || path.extension().is_some_and(|e| e == "json");
    // A byte-order mark may come first, as `check` and `render` allow.
    if !json_like || !text.trim_start_matches('\u{feff}').trim_start().starts_with('{') {
        return None;
    }
    let tool = Document::from_text(text.to_owned()).tool?;
    tool.model_prompt.is_some().then(|| tool.sent_strings())
}

/// The findings in one string of a tool file, scanned as decoded and each placed where its
/// value is written in the file (across escapes such as `\n` or `\u00e9`).
fn scan_field(scanner: &Scanner, text: &str, lines: &Lines<'_>, field: &SentString) -> Vec<Found> {
    let escapes = Escapes::of(text, field.span);
    scanner
        .scan(&field.value)
        .iter()
        .map(|finding| {
            found(lines, finding, escapes.span(finding.span.clone()), Some(&field.field))
        })
        .collect()
}

/// A finding as reported, at `at` in the file.
fn found(lines: &Lines<'_>, finding: &Finding, at: Span, field: Option<&str>) -> Found {
    let start = lines.locate(at.start);
    let end = lines.locate(at.end);
    Found {
        kind: finding.kind.name(),
        rule: finding.rule.to_string(),
        label: finding.label.to_string(),
        confidence: finding.confidence,
        line: start.line,
        column: start.column,
        end_line: end.line,
        end_column: end.column,
        start: at.start,
        end: at.end,
        field: field.map(str::to_owned),
        describe: finding.kind.describe(),
    }
}
