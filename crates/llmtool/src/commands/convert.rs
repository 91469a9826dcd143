//! `llmtool export`, `import` and `convert`: reading the source (a file, standard input or a
//! Semantic Kernel function's folder), core's conversion, and writing the result.

mod args;
mod kernel_folder;
mod source_folder;

pub(crate) use args::{ConvertArgs, ExportArgs, ImportArgs, OutputArgs};

use std::path::Path;

use llmtool_convert::semantic_kernel;
use llmtool_convert::{
    Converted, ElispOptions, Family, Format, NoFolder, SiblingFiles, Source, WriteOptions, Written,
    naming,
};
use llmtool_format::Diagnostic;

use crate::outcome::Outcome;

use crate::io;
use kernel_folder::KernelFolder;
pub(crate) use source_folder::SourceFolder;

pub(crate) fn export(args: &ExportArgs) -> anyhow::Result<Outcome> {
    let name = io::display_name(&args.tool);
    let Some((document, _)) = super::render::load_tool(&args.tool, &name)? else {
        return Ok(Outcome::Problems);
    };
    if let Some(wanted) = &args.name
        && !naming::is_portable(wanted)
    {
        anyhow::bail!(
            "`{wanted}` is not a name every target accepts: use letters, digits, `_` and `-`, a letter first, at most {}",
            naming::MAX_NAME
        );
    }
    let mut options = write_options(&args.output, args.name.clone());
    if matches!(args.to, Format::Gptel | Format::LlmEl) && args.output.elisp.function.is_none() {
        let runner = runner_reference(&args.tool)?;
        let asynchronous =
            if runner.is_some() { !args.output.elisp.sync } else { options.elisp.asynchronous };
        options.elisp = ElispOptions { runner, asynchronous, ..options.elisp };
        if options.elisp.runner.is_none() {
            eprintln!(
                "warning: a tool from standard input has no file `llmtool call` could run later: :function is a stub; export the file itself, or give `--function`"
            );
        }
    }
    check_destination(args.to, &options, args.output.out.as_deref())?;
    let runner = if args.with_runner { Some(runner_of(args)?) } else { None };
    let mut written = args.to.write_tool(&document, &options)?;
    if let (Some(run), Written::Json { value, .. }) = (runner, &mut written.value) {
        *value = serde_json::json!({ "tool": value.take(), "run": run });
    }
    print_written(&name, &document.text, &written.diagnostics, args.to);
    emit(&written.value, args.output.out.as_deref())?;
    Ok(Outcome::Ok)
}

/// `--with-runner`: the command that runs the exported tool when a model calls it, and what
/// it reads and writes.
fn runner_of(args: &ExportArgs) -> anyhow::Result<serde_json::Value> {
    if !matches!(args.to.family(), Family::Function(_)) {
        anyhow::bail!(
            "--with-runner is for function-tool targets (openai, anthropic, gemini, mcp-tool, ...); `--to {}` has a runner of its own or none",
            args.to.name()
        );
    }
    let Some(tool) = runner_reference(&args.tool)? else {
        anyhow::bail!(
            "--with-runner names the tool for `llmtool call` later: export its file or its library name, not standard input"
        );
    };
    Ok(serde_json::json!({
        "command": ["llmtool", "call", tool, "-"],
        "stdin": "the model's arguments for the tool, as one JSON object",
        "stdout": "the answer (exit 0); exit 1: the arguments or the answer have problems, said on standard error; exit 2: the call could not be made",
    }))
}

pub(crate) fn import(args: &ImportArgs) -> anyhow::Result<Outcome> {
    let name = io::display_name(&args.file);
    let Some(sources) = read(&args.file, &name, args.from)? else {
        return Ok(Outcome::Problems);
    };
    let several = if args.out.is_some() { Several::All } else { Several::OneOrOut };
    let sources = pick(sources, args.name.as_deref(), several)?;
    let mut files = Vec::with_capacity(sources.len());
    for source in sources {
        files.push(match source {
            Source::Function(function) => {
                let converted = llmtool_convert::tool_file(&function);
                super::render::print_problems(&name, "", &converted.diagnostics);
                converted.value
            }
            Source::ToolFile(text) => text,
        });
    }
    match &args.out {
        Some(out) => write_tool_files(&files, out)?,
        None => io::write_stdout(files.concat().as_bytes())?,
    }
    Ok(Outcome::Ok)
}

/// Writes each tool file into `out`, named after its tool (names made distinct).
fn write_tool_files(files: &[String], out: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(out)
        .map_err(|e| anyhow::anyhow!("cannot create the folder {}: {e}", out.display()))?;
    let mut names: Vec<String> = files
        .iter()
        .map(|text| {
            let document = llmtool_format::Document::from_text(text.clone());
            let prompt_name = document.tool.as_ref().and_then(|t| t.name()).unwrap_or("tool");
            naming::slug(prompt_name, naming::MAX_NAME)
        })
        .collect();
    naming::distinct(&mut names, naming::MAX_NAME);
    for (text, name) in files.iter().zip(names) {
        write_file(&out.join(format!("{name}.json")), text)?;
    }
    Ok(())
}

/// How a command takes a file of several tools.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Several {
    /// `import --out DIR`: every one.
    All,
    /// `import` to standard output: one, picked with `--name` (or all, with `--out`).
    OneOrOut,
    /// `convert`: one, picked with `--name`.
    One,
}

/// The tools to use of those read: the one named `name`, or all of them when there is one or
/// `several` allows it; a file of several is otherwise refused with their names.
fn pick(sources: Vec<Source>, name: Option<&str>, several: Several) -> anyhow::Result<Vec<Source>> {
    let name_of = |source: &Source| match source {
        Source::Function(function) => function.name.clone(),
        Source::ToolFile(text) => {
            let document = llmtool_format::Document::from_text(text.clone());
            document.tool.as_ref().and_then(|t| t.name()).unwrap_or_default().to_owned()
        }
    };
    let names: Vec<String> = sources.iter().map(name_of).collect();
    if let Some(wanted) = name {
        let Some(at) = names.iter().position(|n| n == wanted) else {
            anyhow::bail!("no tool here is named `{wanted}`; there are: {}", names.join(", "));
        };
        return Ok(sources.into_iter().nth(at).into_iter().collect());
    }
    if sources.len() > 1 && several != Several::All {
        let out =
            if several == Several::OneOrOut { "import them all with `--out DIR`, or " } else { "" };
        anyhow::bail!(
            "this file holds {} tools ({}): {out}pick one with `--name NAME`",
            sources.len(),
            names.join(", ")
        );
    }
    Ok(sources)
}

pub(crate) fn convert(args: &ConvertArgs) -> anyhow::Result<Outcome> {
    let name = io::display_name(&args.spec);
    let Some(sources) = read(&args.spec, &name, args.from)? else {
        return Ok(Outcome::Problems);
    };
    let Some(source) = pick(sources, args.name.as_deref(), Several::One)?.into_iter().next() else {
        return Ok(Outcome::Problems);
    };
    let options = write_options(&args.output, None);
    check_destination(args.to, &options, args.output.out.as_deref())?;
    let written = match source {
        Source::Function(function) => args.to.write_function(&function, None, &options)?,
        Source::ToolFile(text) => {
            args.to.write_tool(&llmtool_format::Document::from_text(text), &options)?
        }
    };
    print_written(&name, "", &written.diagnostics, args.to);
    emit(&written.value, args.output.out.as_deref())?;
    Ok(Outcome::Ok)
}

fn write_options(output: &OutputArgs, name: Option<String>) -> WriteOptions {
    let elisp = &output.elisp;
    WriteOptions {
        strict: output.strict_schema,
        elisp: ElispOptions {
            function: elisp.function.clone(),
            runner: None,
            // Your own function (or the stub) when you say so; the function that runs
            // `llmtool call` (set by `export`) is asynchronous unless `--sync`.
            asynchronous: elisp.asynchronous,
            confirm: elisp.confirm,
            include: elisp.include,
        },
        name,
    }
}

/// How an exported form names the tool for `llmtool call`: a library name as given, a file by
/// its absolute path (so that the form works from any folder); none for standard input.
fn runner_reference(tool: &Path) -> anyhow::Result<Option<String>> {
    let Some(text) = tool.to_str() else {
        anyhow::bail!(
            "{}: the tool's path is not UTF-8, which Emacs cannot be given",
            tool.display()
        );
    };
    if llmtool_registry::Reference::from_path(text).is_some() {
        return Ok(Some(text.to_owned()));
    }
    if io::is_stdin(tool) {
        return Ok(None);
    }
    let absolute = std::fs::canonicalize(tool)
        .map_err(|e| anyhow::anyhow!("cannot find {}: {e}", tool.display()))?;
    let Some(absolute) = absolute.to_str() else {
        anyhow::bail!(
            "{}: the tool's path is not UTF-8, which Emacs cannot be given",
            absolute.display()
        );
    };
    Ok(Some(absolute.to_owned()))
}

/// Why a Semantic Kernel export cannot go to standard output.
const FOLDER_NEEDS_OUT: &str = "a Semantic Kernel function is a folder: say where with `--out DIR`";

/// Refuses, before anything is written, a folder target with nowhere to go, and options the
/// target cannot take.
fn check_destination(
    format: Format,
    options: &WriteOptions,
    out: Option<&Path>,
) -> anyhow::Result<()> {
    if format == Format::SemanticKernel && out.is_none() {
        anyhow::bail!(FOLDER_NEEDS_OUT);
    }
    Ok(format.check_options(options)?)
}

/// Prints `written`, or writes it into `out` (a file named after the tool, or the function's
/// folder), saying on standard error what was written.
fn emit(written: &Written, out: Option<&Path>) -> anyhow::Result<()> {
    let (text, name, extension) = match written {
        Written::Json { value, name } => {
            let mut text = serde_json::to_string_pretty(value)?;
            text.push('\n');
            (text, name, ".json")
        }
        Written::Text { text, name, extension } => (text.clone(), name, *extension),
        Written::Folder(function) => {
            let Some(out) = out else {
                anyhow::bail!(FOLDER_NEEDS_OUT);
            };
            let folder = out.join(&function.name);
            std::fs::create_dir_all(&folder).map_err(|e| {
                anyhow::anyhow!("cannot create the folder {}: {e}", folder.display())
            })?;
            write_file(&folder.join(semantic_kernel::CONFIG_FILE), &function.config)?;
            write_file(&folder.join(semantic_kernel::PROMPT_FILE), &function.prompt)?;
            return Ok(());
        }
    };
    match out {
        Some(out) => {
            std::fs::create_dir_all(out)
                .map_err(|e| anyhow::anyhow!("cannot create the folder {}: {e}", out.display()))?;
            write_file(&out.join(format!("{name}{extension}")), &text)
        }
        None => io::write_stdout(text.as_bytes()),
    }
}

/// The problems of writing `name` as `target`: the fields the target has no place for in one
/// line (each is a whole field, so its snippet says nothing the name does not), the rest in
/// full.
fn print_written(name: &str, text: &str, diagnostics: &[Diagnostic], target: Format) {
    let (dropped, rest): (Vec<&Diagnostic>, Vec<&Diagnostic>) =
        diagnostics.iter().partition(|d| d.code() == "LT701" && d.message.ends_with(NOT_CARRIED));
    let rest: Vec<Diagnostic> = rest.into_iter().cloned().collect();
    super::render::print_problems(name, text, &rest);
    match dropped.as_slice() {
        [] => {}
        [one] => super::render::print_problems(name, text, &[(*one).clone()]),
        several => {
            let fields: Vec<&str> =
                several.iter().map(|d| d.message.trim_end_matches(NOT_CARRIED).trim()).collect();
            eprintln!(
                "warning[LT701]: {name}: {} has no place for {}",
                target.name(),
                fields.join(", ")
            );
        }
    }
}

/// How LT701 ends when a whole field has no place in the target.
const NOT_CARRIED: &str = "is not carried by this target";

fn write_file(path: &Path, text: &str) -> anyhow::Result<()> {
    io::write_atomically(path, text.as_bytes())?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

/// Reads the sources at `path` (a file, standard input, or a Semantic Kernel function's
/// folder; a file may hold several tools) as `from` or as detected, printing their problems;
/// `None` when nothing can be read.
fn read(path: &Path, name: &str, from: Option<Format>) -> anyhow::Result<Option<Vec<Source>>> {
    if from == Some(Format::SemanticKernel) || (from.is_none() && KernelFolder::is_one(path)) {
        return Ok(read_kernel_function(path)?.map(|source| vec![source]));
    }
    let bytes = io::read_input(path)?;
    let text = String::from_utf8_lossy(&bytes);
    let changed = changed_at(path);
    let folder = SourceFolder::of(path, io::max_file_bytes());
    let files: &dyn SiblingFiles = if io::is_stdin(path) { &NoFolder } else { &folder };
    let read = llmtool_convert::read_sources(&text, &path.to_string_lossy(), from, files).map(
        |converted| {
            let sources: Vec<Source> = converted
                .value
                .into_iter()
                .map(|(_, source)| stamped(source, changed.as_deref()))
                .collect();
            Converted { value: sources, diagnostics: converted.diagnostics }
        },
    );
    let Some(sources) = shown(name, &text, read) else { return Ok(None) };
    Ok(passing(name, &text, sources))
}

/// `sources`, read from `text` (the file `name`), unless a tool among them would not pass
/// `llmtool check`: then nothing is written, and its errors are said in the source.
fn passing(name: &str, text: &str, sources: Vec<Source>) -> Option<Vec<Source>> {
    let errors: Vec<_> = sources
        .iter()
        .filter_map(|source| match source {
            Source::ToolFile(tool) => Some(llmtool_convert::errors_in_source(tool, text)),
            Source::Function(_) => None,
        })
        .flatten()
        .collect();
    if errors.is_empty() {
        return Some(sources);
    }
    super::render::print_problems(name, text, &errors);
    None
}

/// When the file at `path` last changed (RFC 3339, UTC, to the second); `None` for standard
/// input or a file the system gives no time for.
fn changed_at(path: &Path) -> Option<String> {
    if path.as_os_str() == "-" {
        return None;
    }
    let modified = std::fs::metadata(path).ok()?.modified().ok()?;
    let at = jiff::Timestamp::try_from(modified).ok()?;
    Some(at.round(jiff::Unit::Second).ok()?.to_string())
}

/// `source`, a tool file read from a prompt file with no date of its own, given the time its
/// file last changed as its `timestamp` (a prompt file's only record of when it was written).
fn stamped(source: Source, changed: Option<&str>) -> Source {
    match (source, changed) {
        (Source::ToolFile(text), Some(changed)) => {
            let stamped = llmtool_convert::with_missing_metadata(&text, "timestamp", changed);
            Source::ToolFile(stamped.unwrap_or(text))
        }
        (source, _) => source,
    }
}

/// The source read, with its problems printed against `text`.
fn shown<T>(
    name: &str,
    text: &str,
    read: Result<Converted<T>, Box<llmtool_format::Diagnostic>>,
) -> Option<T> {
    match read {
        Ok(converted) => {
            super::render::print_problems(name, text, &converted.diagnostics);
            Some(converted.value)
        }
        Err(problem) => {
            super::render::print_problems(name, text, &[*problem]);
            None
        }
    }
}

/// Reads the Semantic Kernel function at `path` (its folder, or either of its files), printing
/// its problems against the file of the folder they are in.
fn read_kernel_function(path: &Path) -> anyhow::Result<Option<Source>> {
    let function = KernelFolder::load(path, io::max_file_bytes())?;
    match semantic_kernel::read(&function.config, &function.prompt, function.name.as_deref()) {
        Ok(converted) => {
            // The later change of its two files.
            let changed = [semantic_kernel::CONFIG_FILE, semantic_kernel::PROMPT_FILE]
                .iter()
                .filter_map(|file| changed_at(&function.folder.join(file)))
                .max();
            let source = stamped(Source::ToolFile(converted.value), changed.as_deref());
            let read = Ok(Converted { value: source, diagnostics: converted.diagnostics });
            let shown_as = function.shown(semantic_kernel::CONFIG_FILE);
            let Some(source) = shown(&shown_as, &function.config, read) else { return Ok(None) };
            // The settings that `check` would refuse are in `config.json`.
            Ok(passing(&shown_as, &function.config, vec![source]).and_then(|mut s| s.pop()))
        }
        Err(problem) => {
            let (shown_as, text) = (function.shown(problem.file), function.text(problem.file));
            Ok(shown::<Source>(&shown_as, text, Err(problem.diagnostic)))
        }
    }
}
