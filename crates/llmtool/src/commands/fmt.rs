//! `llmtool fmt`: rewrite tool files in canonical form, optionally applying safe fixes first.

mod args;

pub(crate) use args::FmtArgs;

use std::io::IsTerminal;
use std::path::Path;

use llmtool_core::format::{self, Formatted, NotFormattable};
use llmtool_core::report::{self, Source};
use llmtool_core::syntax::decode_utf8;

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
            Ok(formatted) if io::is_stdin(path) => {
                if args.check && formatted.text.as_bytes() != bytes.as_slice() {
                    changed += 1;
                } else if !args.check {
                    io::write_stdout(formatted.text.as_bytes())?;
                }
            }
            Ok(formatted) if formatted.text.as_bytes() == bytes.as_slice() => unchanged += 1,
            Ok(formatted) => {
                changed += 1;
                if args.check {
                    println!("would reformat {name}");
                } else {
                    io::write_atomically(Path::new(path), formatted.text.as_bytes())?;
                    if formatted.fixes_applied > 0 {
                        eprintln!("{name}: applied {} fix(es)", formatted.fixes_applied);
                    }
                }
            }
        }
    }
    if files.iter().any(|p| !io::is_stdin(p)) {
        let verb = if args.check { "would be reformatted" } else { "reformatted" };
        eprintln!(
            "{changed} file(s) {verb}, {unchanged} already canonical, {failed} not formattable"
        );
    }
    let problems = failed > 0 || (args.check && changed > 0);
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
