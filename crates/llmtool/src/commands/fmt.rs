//! `llmtool fmt`: rewrite tool files in canonical form, optionally applying safe fixes first.

mod args;

pub(crate) use args::FmtArgs;

use std::io::IsTerminal;
use std::path::Path;

use llmtool_format::format::{self, Formatted, NotFormattable};
use llmtool_format::report::{self, Source};
use llmtool_format::syntax::decode_utf8;

use crate::outcome::Outcome;

use crate::io;

pub(crate) fn run(args: &FmtArgs) -> anyhow::Result<Outcome> {
    let files = io::collect_files(&args.paths)?;
    let color = io::color_for(std::io::stderr().is_terminal());
    let (mut changed, mut unchanged, mut failed) = (0usize, 0usize, 0usize);
    for path in &files {
        let name = io::display_name(path);
        let bytes = io::read_input(path)?;
        match format_bytes(&bytes, args.fix) {
            Err(blocked) => {
                failed += 1;
                let source = Source::new(&name, &blocked.text);
                eprint!("{}", report::human(&source, &blocked.diagnostics, color));
                eprintln!("{name}: not formatted: {blocked}");
            }
            Ok(formatted) if io::is_stdin(path) && !args.diff => {
                if args.check && formatted.text.as_bytes() != bytes.as_slice() {
                    changed += 1;
                } else if !args.check {
                    say_removed_comments(&name, &bytes, args.fix);
                    io::write_stdout(formatted.text.as_bytes())?;
                }
            }
            Ok(formatted) if formatted.text.as_bytes() == bytes.as_slice() => unchanged += 1,
            Ok(formatted) => {
                changed += 1;
                if args.diff {
                    io::write_stdout(diff(&name, &bytes, &formatted.text).as_bytes())?;
                } else if args.check {
                    println!("would reformat {name}");
                } else {
                    say_removed_comments(&name, &bytes, args.fix);
                    io::write_atomically(Path::new(path), formatted.text.as_bytes())?;
                    if formatted.fixes_applied > 0 {
                        eprintln!("{name}: applied {} fix(es)", formatted.fixes_applied);
                    }
                }
            }
        }
    }
    if files.iter().any(|p| !io::is_stdin(p)) {
        let verb = if args.check || args.diff { "would be reformatted" } else { "reformatted" };
        eprintln!(
            "{changed} file(s) {verb}, {unchanged} already canonical, {failed} not formattable"
        );
    }
    let problems = failed > 0 || ((args.check || args.diff) && changed > 0);
    Ok(if problems { Outcome::Problems } else { Outcome::Ok })
}

/// Formats raw bytes; invalid UTF-8 is never "fixed" (the right text cannot be guessed).
fn format_bytes(bytes: &[u8], fix: bool) -> Result<Formatted, NotFormattable> {
    let (text, decode_problems) = decode_utf8(bytes);
    if !decode_problems.is_empty() {
        return Err(NotFormattable { diagnostics: decode_problems, text: text.into_owned() });
    }
    format::format_source(&text, fix)
}

/// What formatting `before` into `after` changes, as a unified diff of `name`.
fn diff(name: &str, before: &[u8], after: &str) -> String {
    let before = String::from_utf8_lossy(before);
    similar::TextDiff::from_lines(before.as_ref(), after)
        .unified_diff()
        .context_radius(3)
        .header(name, name)
        .to_string()
}

/// Says each `//` or `/* */` comment that fixing removes, by line: JSON has no comments, so
/// the fix drops them, and what they said should not go unnoticed.
fn say_removed_comments(name: &str, bytes: &[u8], fix: bool) {
    if !fix {
        return;
    }
    let text = String::from_utf8_lossy(bytes);
    let document = llmtool_format::Document::from_text(text.clone().into_owned());
    let lines = llmtool_format::LineIndex::new(&text);
    for comment in document.diagnostics.iter().filter(|d| d.code() == COMMENT_CODE) {
        let Some(span) = comment.primary.as_ref().map(|label| label.span) else { continue };
        let written = text.get(span.start..span.end).unwrap_or_default();
        let first = written.lines().next().unwrap_or_default().trim();
        let shown: String = first.chars().take(60).collect();
        let more =
            if shown.len() < first.len() || written.lines().count() > 1 { "…" } else { "" };
        let line = lines.line_column(&text, span.start).line;
        eprintln!("{name}:{line}: removed the comment `{shown}{more}` (JSON has no comments)");
    }
}

/// LT003: a comment, which `fmt --fix` removes.
const COMMENT_CODE: &str = "LT003";
