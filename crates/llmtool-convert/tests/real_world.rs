//! Import of files people really wrote, taken from the peers' public repositories (each one's
//! repository, path, commit and licence are in `tests/fixtures/real-world/SOURCES.tsv`, and each
//! repository's licence text in `LICENSES/`): each is
//! imported with its format detected, the result and every diagnostic are snapshotted, and the
//! counts are the table of `docs/convert.md` ("Real-world files"), regenerated with
//! `LLMTOOL_BLESS=1`.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use crate::support;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use llmtool_convert::{
    Converted, NoFolder, Source, errors_in_source, read_sources, semantic_kernel, tool_file,
};
use llmtool_format::report::{Source as ReportSource, human};
use llmtool_format::{Diagnostic, Severity};

/// What importing one file gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Outcome {
    Imported,
    ImportedWithWarnings,
    /// Refused with an error that points at the place in the file.
    RefusedLocated,
    /// Refused with an error that says where nothing.
    RefusedUnlocated,
}

impl Outcome {
    fn label(self) -> &'static str {
        match self {
            Outcome::Imported => "imported",
            Outcome::ImportedWithWarnings => "imported with warnings",
            Outcome::RefusedLocated => "refused, with the place in the file",
            Outcome::RefusedUnlocated => "refused, with no place in the file",
        }
    }
}

fn corpus() -> PathBuf {
    support::repo().join("crates/llmtool-convert/tests/fixtures/real-world")
}

/// The entries of one format's folder: files, and (for Semantic Kernel) function folders.
fn entries(family: &Path) -> Vec<PathBuf> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(family)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            path.file_name().is_some_and(|name| name != "SOURCES.tsv" && name != "LICENSES")
        })
        .collect();
    entries.sort();
    entries
}

/// The tool files of a file, each named by where it is in the file, or why there are none.
type Imported = Result<Converted<Vec<(String, String)>>, Box<Diagnostic>>;

/// Imports `entry` as `llmtool import` would, without a `--from`: the name and text of the
/// file the diagnostics are in (one of a function folder's two files), and the tool file of
/// each tool in it (a file may hold several), named by where it is.
fn import(entry: &Path) -> (String, String, Imported) {
    let name = entry.file_name().unwrap().to_string_lossy().into_owned();
    if entry.parent().and_then(Path::file_name).is_some_and(|family| family == "promptfoo") {
        return promptfoo(entry, &name);
    }
    if entry.is_dir() {
        let read = |file: &str| std::fs::read_to_string(entry.join(file)).unwrap();
        let config = read(semantic_kernel::CONFIG_FILE);
        let prompt = read(semantic_kernel::PROMPT_FILE);
        let in_file = |file: &str| format!("{name}/{file}");
        return match semantic_kernel::read(&config, &prompt, Some(&name)) {
            Ok(converted) => {
                let value = vec![(String::new(), converted.value)];
                let read = Ok(Converted { value, diagnostics: converted.diagnostics });
                (in_file(semantic_kernel::CONFIG_FILE), config, read)
            }
            Err(problem) if problem.file == semantic_kernel::PROMPT_FILE => {
                (in_file(problem.file), prompt, Err(problem.diagnostic))
            }
            Err(problem) => (in_file(problem.file), config, Err(problem.diagnostic)),
        };
    }
    let text = String::from_utf8_lossy(&std::fs::read(entry).unwrap()).into_owned();
    let read = read_sources(&text, &name, None, &NoFolder).map(|converted| {
        let mut diagnostics = converted.diagnostics;
        let tools = converted
            .value
            .into_iter()
            .map(|(at, source)| match source {
                Source::ToolFile(tool) => (at, tool),
                Source::Function(function) => {
                    let file = tool_file(&function);
                    diagnostics.extend(file.diagnostics);
                    (at, file.value)
                }
            })
            .collect();
        Converted { value: tools, diagnostics }
    });
    (name, text, read)
}

/// The files beside a promptfoo config, read from its folder (never out of it).
struct Folder<'a>(&'a Path);

impl llmtool_convert::SiblingFiles for Folder<'_> {
    fn read(&self, name: &str) -> Result<String, String> {
        if let Some(why) = llmtool_convert::outside_folder(name) {
            return Err(why);
        }
        std::fs::read_to_string(self.0.join(name)).map_err(|error| error.to_string())
    }
}

/// A promptfoo example (a folder with its `promptfooconfig.yaml`) imported as
/// `llmtool test --from promptfoo` does: the tool of each prompt, named after it.
fn promptfoo(entry: &Path, name: &str) -> (String, String, Imported) {
    let text = std::fs::read_to_string(entry.join("promptfooconfig.yaml")).unwrap();
    let read = llmtool_convert::promptfoo::import::import(&text, &Folder(entry)).map(|read| {
        let tools = read.value.into_iter().map(|suite| (suite.name, suite.tool)).collect();
        Converted { value: tools, diagnostics: read.diagnostics }
    });
    (format!("{name}/promptfooconfig.yaml"), text, read)
}

/// The outcome of `entry`, and its snapshot: the outcome, the diagnostics as `check` shows
/// them, and the tool file made.
fn outcome(entry: &Path) -> (Outcome, String) {
    let (name, text, read) = import(entry);
    let shown =
        |diagnostics: &[Diagnostic]| human(&ReportSource::new(&name, &text), diagnostics, false);
    match read {
        Ok(converted) => {
            // As `llmtool import` does, a tool that `check` would refuse is not written.
            let refused: Vec<Diagnostic> = converted
                .value
                .iter()
                .flat_map(|(_, tool)| errors_in_source(tool, &text))
                .collect();
            if !refused.is_empty() {
                let located = refused.iter().all(|d| d.primary.is_some());
                let outcome =
                    if located { Outcome::RefusedLocated } else { Outcome::RefusedUnlocated };
                let said: Vec<Diagnostic> =
                    converted.diagnostics.iter().cloned().chain(refused).collect();
                return (outcome, format!("{}\n{}", outcome.label(), shown(&said)));
            }
            let warned = converted.diagnostics.iter().any(|d| d.severity >= Severity::Warning);
            let outcome = if warned { Outcome::ImportedWithWarnings } else { Outcome::Imported };
            let report = shown(&converted.diagnostics);
            let mut tools = String::new();
            for (at, tool) in &converted.value {
                let heading = if at.is_empty() { String::new() } else { format!("{at}:\n") };
                let _ = write!(tools, "---\n{heading}{tool}");
            }
            (outcome, format!("{}\n{report}{tools}", outcome.label()))
        }
        Err(problem) => {
            let outcome = if problem.primary.is_some() {
                Outcome::RefusedLocated
            } else {
                Outcome::RefusedUnlocated
            };
            (outcome, format!("{}\n{}", outcome.label(), shown(&[*problem])))
        }
    }
}

#[test]
fn real_world_files_import_as_snapshotted_and_counted() {
    let mut counts: BTreeMap<String, BTreeMap<Outcome, usize>> = BTreeMap::new();
    for family in entries(&corpus()) {
        let family_name = family.file_name().unwrap().to_string_lossy().into_owned();
        for entry in entries(&family) {
            let (outcome, snapshot) = outcome(&entry);
            let entry_name = entry.file_name().unwrap().to_string_lossy().into_owned();
            insta::assert_snapshot!(format!("real-world-{family_name}-{entry_name}"), snapshot);
            *counts.entry(family_name.clone()).or_default().entry(outcome).or_default() += 1;
        }
    }
    assert_counts_fresh(&counts);
}

/// The counts table of `docs/convert.md`, between its markers.
/// `part` of `whole` as a whole percentage.
fn rate(part: usize, whole: usize) -> String {
    (part * 100 + whole / 2)
        .checked_div(whole)
        .map_or_else(|| "-".into(), |rate| format!("{rate}%"))
}

fn assert_counts_fresh(counts: &BTreeMap<String, BTreeMap<Outcome, usize>>) {
    const BEGIN: &str = "<!-- real-world counts: begin -->\n";
    const END: &str = "<!-- real-world counts: end -->\n";
    let mut table = String::from(
        "| format | files | imported | imported with warnings | refused, located | refused, no location | import rate |\n|---|---|---|---|---|---|---|\n",
    );
    let mut total = [0usize; 5];
    for (family, outcomes) in counts {
        let get = |outcome| outcomes.get(&outcome).copied().unwrap_or(0);
        let row = [
            outcomes.values().sum(),
            get(Outcome::Imported),
            get(Outcome::ImportedWithWarnings),
            get(Outcome::RefusedLocated),
            get(Outcome::RefusedUnlocated),
        ];
        for (sum, value) in total.iter_mut().zip(row) {
            *sum += value;
        }
        let _ = writeln!(
            table,
            "| {family} | {} | {} | {} | {} | {} | {} |",
            row[0],
            row[1],
            row[2],
            row[3],
            row[4],
            rate(row[1] + row[2], row[0])
        );
    }
    let _ = writeln!(
        table,
        "| **all** | **{}** | **{}** | **{}** | **{}** | **{}** | **{}** |",
        total[0],
        total[1],
        total[2],
        total[3],
        total[4],
        rate(total[1] + total[2], total[0])
    );
    let path = support::repo().join("docs/convert.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let start = text.find(BEGIN).expect("docs/convert.md has the real-world counts markers");
    let end = text.find(END).unwrap();
    let generated = format!("{}{BEGIN}{table}{}", &text[..start], &text[end..]);
    if std::env::var_os("LLMTOOL_BLESS").is_some() {
        std::fs::write(&path, generated).unwrap();
        return;
    }
    assert!(
        text == generated,
        "the real-world counts in docs/convert.md are stale; regenerate them with LLMTOOL_BLESS=1 cargo test -p llmtool-convert --test integration real_world"
    );
}
