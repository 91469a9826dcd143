//! `llmtool test`: the test files found under the paths run on their models (see
//! `llmtool-eval`), the results printed as a table, JSON or GitHub annotations, and written as
//! `JUnit` XML on request; `--init` writes a starter test file instead.

mod args;
mod promptfoo;

pub(crate) use args::{TestArgs, TestFormat};

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use llmtool_eval::{Cache, FileResult, Options, report, run_file};
use llmtool_format::report::{Source, github as github_annotations};
use llmtool_runtime::pictures::Pictures;
use llmtool_runtime::{Fetch, LogPolicy, Runtime, RuntimeOptions, TestsFile, ToolFile, files};

use crate::outcome::Outcome;

use crate::{io, settings};

pub(crate) fn run(args: &TestArgs) -> anyhow::Result<Outcome> {
    if let Some(tool) = &args.init {
        return init(tool);
    }
    if let (Some(_), Some(out)) = (&args.from, &args.out) {
        return promptfoo::from(&args.paths, out);
    }
    anyhow::ensure!(args.out.is_none() || args.to.is_some(), "--out goes with --to or --from");
    let paths = test_files(&args.paths)?;
    if let (Some(_), Some(out)) = (&args.to, &args.out) {
        return promptfoo::to(&paths, out, &args.models);
    }
    if paths.is_empty() {
        anyhow::bail!(
            "no test files under {} (NAME.tests.json or .yaml; `llmtool test --init TOOL` writes one)",
            args.paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
        );
    }
    // A test file may name a tool of the team's library (`"tool": "registry:SLUG"`).
    let library = crate::registry::named()?;
    let mut loaded = Vec::new();
    // What is wrong with the test files that cannot run: annotations in GitHub's format (with
    // the failing cases'), else the diagnostics on standard error.
    let mut annotations = String::new();
    let mut broken = false;
    for path in &paths {
        let file = TestsFile::load(path, io::max_file_bytes(), Some(&library))?;
        if let Some(note) = &file.note {
            eprintln!("warning: {note}");
        }
        if file.has_errors() {
            if args.format == TestFormat::Github {
                let source = Source::new(&file.name, &file.text);
                annotations.push_str(&github_annotations(&source, &file.diagnostics));
            } else {
                eprint!("{}", file.report(&file.diagnostics, io::color_for(false)));
            }
            broken = true;
            continue;
        }
        loaded.push(file);
    }
    let providers = settings::load_providers(args.config.as_deref())?;
    let options = RuntimeOptions {
        // Tests never stop to ask: pull the local model first (`llmtool model pull`).
        fetch: Fetch::Never,
        seed: args.seed,
        // Every answer sent for (not read from the cache) is logged, so that `usage` counts it.
        log: LogPolicy::from_env(args.no_log_values),
        dlp: args.dlp.map(Into::into),
        // Testing your own smart tools is asking for their code to run (in the sandbox).
        smart: Some(llmtool_runtime::smart::Limits::default()),
        // An image tool's pictures are measured for its assertions, then let go.
        pictures: Pictures::Returned,
        ..RuntimeOptions::default()
    };
    let runtime = Runtime::new(providers, options)?;
    let repeat = args.repeat.max(1);
    let cache = if args.no_cache {
        None
    } else {
        llmtool_log::data_dir().map(|dir| Cache::new(dir.join("test-cache")))
    };
    let options = Options {
        models: args.models.clone(),
        repeat,
        min_pass: args.min_pass.unwrap_or(repeat).min(repeat),
        cache,
        jobs: args.jobs.max(1),
    };
    let threads = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let results: Vec<FileResult> = threads.block_on(async {
        let mut results = Vec::new();
        for file in &loaded {
            results.push(run_file(&runtime, file, &options).await);
        }
        results
    });
    let printed = match args.format {
        TestFormat::Human => report::table(&results),
        TestFormat::Json => serde_json::to_string_pretty(&results)? + "\n",
        TestFormat::Github => annotations + &report::github(&results),
    };
    io::write_stdout(printed.as_bytes())?;
    super::logs::say_runs_not_logged(&runtime);
    if let Some(junit) = &args.junit {
        llmtool_log::private::write_private(junit, report::junit(&results).as_bytes())
            .with_context(|| format!("cannot write {}", junit.display()))?;
    }
    let failed = results.iter().flat_map(|f| &f.cases).any(|c| !c.pass);
    Ok(if failed || broken { Outcome::Problems } else { Outcome::Ok })
}

/// The test files `paths` name: test files as given, a tool's test files beside it, and the
/// test files under folders.
fn test_files(paths: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    for path in paths {
        if path.is_file() && files::is_tool_file(path) {
            let name = path.file_name().map(|s| s.to_string_lossy()).unwrap_or_default();
            let beside = llmtool_format::suite::test_file_names(&name)
                .into_iter()
                .map(|beside| path.with_file_name(beside))
                .filter(|candidate| candidate.is_file());
            found.extend(beside);
        } else {
            found.extend(io::collect_matching(std::slice::from_ref(path), files::is_test_file)?);
        }
    }
    found.dedup();
    Ok(found)
}

/// Writes `NAME.tests.json` beside the tool `NAME.json`, unless it exists.
fn init(tool_path: &Path) -> anyhow::Result<Outcome> {
    let file = ToolFile::load(tool_path, io::max_file_bytes())?;
    let tool = match file.into_tool() {
        Ok(tool) => tool,
        Err(errors) => {
            eprint!("{}", errors.report);
            return Ok(Outcome::Problems);
        }
    };
    let name = tool_path.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let Some(beside) = llmtool_format::suite::test_file_names(&name).into_iter().next() else {
        anyhow::bail!("{} is not a tool file's name (NAME.json)", tool_path.display());
    };
    let target = tool_path.with_file_name(beside);
    if target.exists() {
        anyhow::bail!("{} exists already; not overwritten", target.display());
    }
    let starter = llmtool_eval::init::starter(&tool, &name);
    let mut text = serde_json::to_string_pretty(&starter)?;
    text.push('\n');
    std::fs::write(&target, text).with_context(|| format!("cannot write {}", target.display()))?;
    eprintln!(
        "wrote {}: edit its cases, then `llmtool test {}`",
        target.display(),
        tool_path.display()
    );
    Ok(Outcome::Ok)
}
