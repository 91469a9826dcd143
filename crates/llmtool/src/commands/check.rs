//! `llmtool check`: every problem of every file, in parallel across files.

mod args;

pub(crate) use args::CheckArgs;

use std::io::{IsTerminal, Write as _};
use std::path::Path;

use llmtool_format::diagnostic::Summary;
use llmtool_format::report::{self, Source};
use llmtool_format::rules::selection::Selection;
use llmtool_format::{Diagnostic, Severity};
use llmtool_runtime::{TestsFile, ToolFile, files};

use crate::cli::DiagnosticFormat;
use crate::io;
use crate::outcome::Outcome;

/// One file's result: its report text (human or GitHub) or JSON records, and its counts.
struct FileResult {
    text: String,
    json: Vec<serde_json::Value>,
    summary: Summary,
}

pub(crate) fn run(args: &CheckArgs) -> anyhow::Result<Outcome> {
    anyhow::ensure!(
        !args.fix,
        "`check` changes no file; `llmtool fmt --fix PATH` applies the safe fixes (and `fmt --check` says which files would change)"
    );
    without_huge_pages();
    let config = crate::settings::load_providers(args.config.as_deref())?.config.check;
    let chosen = |flags: &[String], configured: &[String]| [configured, flags].concat();
    let selection = Selection::new(
        &chosen(&args.select, &config.select),
        &chosen(&args.ignore, &config.ignore),
    )
    .map_err(anyhow::Error::msg)?;
    // Test files are checked too, with their tool.
    let color = io::color_for(std::io::stdout().is_terminal());
    let checked = io::each_matching(
        &args.paths,
        |p| files::is_tool_file(p) || files::is_test_file(p),
        |reader, path| check_file(reader, path, args, &selection, color),
    )?;
    let checked_files = checked.len();
    // A file that cannot be read fails the run before anything is printed.
    let results = checked
        .into_iter()
        .map(|(_, result)| result)
        .collect::<anyhow::Result<Vec<FileResult>>>()?;

    let mut total = Summary::default();
    for result in &results {
        total.errors += result.summary.errors;
        total.warnings += result.summary.warnings;
        total.infos += result.summary.infos;
    }
    // Each file's report is written as it is, not gathered into one string first: a megabyte
    // of reports built by doubling a buffer cost more than the checking's last files.
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    match args.format {
        DiagnosticFormat::Json => {
            let json: Vec<serde_json::Value> =
                results.into_iter().flat_map(|result| result.json).collect();
            serde_json::to_writer_pretty(&mut out, &json)?;
            writeln!(out)?;
        }
        DiagnosticFormat::Human => {
            for result in &results {
                out.write_all(result.text.as_bytes())?;
            }
            writeln!(
                out,
                "checked {} file{}: {} error{}, {} warning{}, {} info",
                checked_files,
                plural(checked_files),
                total.errors,
                plural(total.errors),
                total.warnings,
                plural(total.warnings),
                total.infos,
            )?;
        }
        DiagnosticFormat::Github => {
            for result in &results {
                out.write_all(result.text.as_bytes())?;
            }
        }
    }
    out.flush()?;
    Ok(if total.fails(false) { Outcome::Problems } else { Outcome::Ok })
}

fn check_file(
    reader: &mut files::Reader,
    path: &Path,
    args: &CheckArgs,
    selection: &Selection,
    color: bool,
) -> anyhow::Result<FileResult> {
    if files::is_test_file(path) {
        return check_test_file(path, args, selection, color);
    }
    let bytes = if io::is_stdin(path) { io::read_input(path)? } else { reader.read(path)? };
    let mut file = ToolFile::from_bytes(io::display_name(path), bytes);
    selection.apply(&mut file.document.diagnostics);
    if args.strict {
        file.document.make_strict();
    }
    let document = &file.document;
    if document.diagnostics.is_empty() {
        return Ok(FileResult {
            text: String::new(),
            json: Vec::new(),
            summary: document.summary(),
        });
    }
    let diagnostics = &document.diagnostics;
    let (text, json) = reports(args.format, &file.name, &document.text, diagnostics, || {
        file.report(diagnostics, color)
    })?;
    Ok(FileResult { text, json, summary: document.summary() })
}

/// A test file's problems, and its cases' against its tool.
fn check_test_file(
    path: &Path,
    args: &CheckArgs,
    selection: &Selection,
    color: bool,
) -> anyhow::Result<FileResult> {
    let library = crate::registry::named()?;
    let file = TestsFile::load(path, io::max_file_bytes(), Some(&library))?;
    if let Some(note) = &file.note {
        eprintln!("warning: {note}");
    }
    let mut diagnostics = file.diagnostics.clone();
    selection.apply(&mut diagnostics);
    if args.strict {
        for diagnostic in &mut diagnostics {
            if diagnostic.severity == Severity::Warning {
                diagnostic.severity = Severity::Error;
            }
        }
    }
    let summary = Summary::of(&diagnostics);
    let (text, json) = reports(args.format, &file.name, &file.text, &diagnostics, || {
        file.report(&diagnostics, color)
    })?;
    Ok(FileResult { text, json, summary })
}

/// A file's `diagnostics` in `format`: report text (human or GitHub) or JSON records. The
/// human report comes from `human`, which makes its own line index; the other two are located
/// by one made here, only when they are asked for.
fn reports(
    format: DiagnosticFormat,
    name: &str,
    text: &str,
    diagnostics: &[Diagnostic],
    human: impl FnOnce() -> String,
) -> anyhow::Result<(String, Vec<serde_json::Value>)> {
    Ok(match format {
        DiagnosticFormat::Human => (human(), Vec::new()),
        DiagnosticFormat::Github => {
            (report::github(&Source::new(name, text), diagnostics), Vec::new())
        }
        DiagnosticFormat::Json => {
            let source = Source::new(name, text);
            let records = report::json_records(&source, diagnostics);
            (String::new(), records.iter().map(serde_json::to_value).collect::<Result<_, _>>()?)
        }
    })
}

/// Turns transparent huge pages off for this process. `check` allocates many small, short-lived
/// values; a fresh 2 MiB page costs more to clear on first touch than its fewer page faults
/// save, and on a machine that hands freed memory back to its host (a virtual machine with
/// free page reporting) that first touch is slower still: next to a process that has just
/// freed its memory, `check`'s time moved by a quarter with huge pages and stayed steady
/// without (docs/benchmarks.md). Where the call is refused, nothing changes.
fn without_huge_pages() {
    #[cfg(target_os = "linux")]
    let _ = rustix::thread::disable_transparent_huge_pages(true);
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
