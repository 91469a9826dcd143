//! `llmtool test --to promptfoo` and `--from promptfoo`: test files written for promptfoo,
//! and promptfoo's configs read back as tools and test files (the conversions are
//! `llmtool_convert::promptfoo` and `promptfoo_import`).

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use llmtool_convert::promptfoo;
use llmtool_convert::promptfoo::import as promptfoo_import;
use llmtool_format::report::Source;
use llmtool_runtime::TestsFile;

use crate::io;
use crate::outcome::Outcome;

/// Writes each test file at `paths`, with its tool, for promptfoo: `OUT/NAME/promptfooconfig.yaml`
/// and the prompt file beside it, run on `models` (else the tool's own).
pub(super) fn to(paths: &[PathBuf], out: &Path, models: &[String]) -> anyhow::Result<Outcome> {
    anyhow::ensure!(!paths.is_empty(), "no test files to write (NAME.tests.json or .yaml)");
    let mut outcome = Outcome::Ok;
    for path in paths {
        let file = TestsFile::load(path, io::max_file_bytes(), None)?;
        let (Some(tests), Some(tool_path)) = (&file.file, &file.tool_path) else {
            eprint!("{}", file.report(&file.diagnostics, io::color_for(false)));
            outcome = Outcome::Problems;
            continue;
        };
        if file.has_errors() {
            eprint!("{}", file.report(&file.diagnostics, io::color_for(false)));
            outcome = Outcome::Problems;
            continue;
        }
        // Read as every tool file is: bounded, and refused when it is not a regular file.
        let bytes = llmtool_runtime::files::read(tool_path, io::max_file_bytes())?;
        let tool =
            llmtool_format::Document::from_text(String::from_utf8_lossy(&bytes).into_owned());
        let name = tool_path.file_stem().map(|s| s.to_string_lossy().into_owned());
        let name = name.unwrap_or_else(|| "tool".into());
        let Some(written) = promptfoo::export(tests, &tool, &name, models) else {
            anyhow::bail!("{} has errors (`llmtool check` it)", tool_path.display());
        };
        let source = Source::new(&file.name, &file.text);
        eprint!(
            "{}",
            llmtool_format::report::human(&source, &written.diagnostics, io::color_for(false))
        );
        let folder = out.join(&name);
        std::fs::create_dir_all(&folder)
            .with_context(|| format!("cannot create {}", folder.display()))?;
        let (prompt_name, prompt) = &written.value.prompt_file;
        write_new(
            &folder,
            &[(promptfoo::CONFIG_FILE, &written.value.config), (prompt_name, prompt)],
        )?;
    }
    Ok(outcome)
}

/// Reads each promptfoo config at `paths` and writes its prompts as tools, with their test
/// files, into `out`.
pub(super) fn from(paths: &[PathBuf], out: &Path) -> anyhow::Result<Outcome> {
    let mut outcome = Outcome::Ok;
    for path in paths {
        anyhow::ensure!(path.is_file(), "{} is not a promptfoo config file", path.display());
        let text = String::from_utf8(io::read_input(path)?)
            .map_err(|_| anyhow::anyhow!("{} is not UTF-8 text", path.display()))?;
        let folder = crate::commands::convert::SourceFolder::of(path, io::max_file_bytes());
        let name = io::display_name(path);
        let read = match promptfoo_import::import(&text, &folder) {
            Ok(read) => read,
            Err(problem) => {
                crate::commands::render::print_problems(&name, &text, &[*problem]);
                outcome = Outcome::Problems;
                continue;
            }
        };
        crate::commands::render::print_problems(&name, &text, &read.diagnostics);
        std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
        // Every tool and test file of the config, or none.
        let names: Vec<(String, String)> = read
            .value
            .iter()
            .map(|suite| (format!("{}.json", suite.name), format!("{}.tests.json", suite.name)))
            .collect();
        let files: Vec<(&str, &String)> = read
            .value
            .iter()
            .zip(&names)
            .flat_map(|(suite, (tool, tests))| {
                [(tool.as_str(), &suite.tool), (tests.as_str(), &suite.tests)]
            })
            .collect();
        write_new(out, &files)?;
    }
    Ok(outcome)
}

/// Writes each `(name, text)` into `folder` as a private file; none of them may exist, and
/// none is written unless all can be.
fn write_new(folder: &Path, files: &[(&str, &String)]) -> anyhow::Result<()> {
    for (name, _) in files {
        let target = folder.join(name);
        anyhow::ensure!(!target.exists(), "{} exists already; not overwritten", target.display());
    }
    for (name, text) in files {
        let target = folder.join(name);
        llmtool_log::private::write_private(&target, text.as_bytes())
            .with_context(|| format!("cannot write {}", target.display()))?;
        eprintln!("wrote {}", target.display());
    }
    Ok(())
}
