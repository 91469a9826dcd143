//! `llmtool export`, `import` and `convert`: reading the source (a file, standard input or a
//! Semantic Kernel function's folder), core's conversion, and writing the result.

use std::path::{Path, PathBuf};

use llmtool_core::convert::semantic_kernel;
use llmtool_core::convert::{
    self, Converted, ElispOptions, Format, Source, WriteOptions, Written, naming,
};

use crate::Outcome;
use crate::cli::{ConvertArgs, ExportArgs, ImportArgs, OutputArgs};
use crate::io;

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
    let options = write_options(&args.output, args.name.clone());
    check_destination(args.to, &options, args.output.out.as_deref())?;
    let written = args.to.write_tool(&document, &options)?;
    super::render::print_problems(&name, &document.text, &written.diagnostics);
    emit(&written.value, args.output.out.as_deref())?;
    Ok(Outcome::Ok)
}

pub(crate) fn import(args: &ImportArgs) -> anyhow::Result<Outcome> {
    let name = io::display_name(&args.file);
    let Some(source) = read(&args.file, &name, args.from)? else {
        return Ok(Outcome::Problems);
    };
    let text = match source {
        Source::Function(function) => {
            let converted = convert::tool_file(&function);
            super::render::print_problems(&name, "", &converted.diagnostics);
            converted.value
        }
        Source::ToolFile(text) => text,
    };
    io::write_stdout(text.as_bytes())?;
    Ok(Outcome::Ok)
}

pub(crate) fn convert(args: &ConvertArgs) -> anyhow::Result<Outcome> {
    let name = io::display_name(&args.spec);
    let Some(source) = read(&args.spec, &name, args.from)? else {
        return Ok(Outcome::Problems);
    };
    let options = write_options(&args.output, None);
    check_destination(args.to, &options, args.output.out.as_deref())?;
    let written = match source {
        Source::Function(function) => args.to.write_function(&function, None, &options)?,
        Source::ToolFile(text) => {
            args.to.write_tool(&llmtool_core::Document::from_text(text), &options)?
        }
    };
    super::render::print_problems(&name, "", &written.diagnostics);
    emit(&written.value, args.output.out.as_deref())?;
    Ok(Outcome::Ok)
}

fn write_options(output: &OutputArgs, name: Option<String>) -> WriteOptions {
    WriteOptions {
        strict: output.strict_schema,
        elisp: ElispOptions {
            function: output.elisp.function.clone(),
            asynchronous: output.elisp.asynchronous,
        },
        name,
    }
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

fn write_file(path: &Path, text: &str) -> anyhow::Result<()> {
    io::write_atomically(path, text.as_bytes())?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

/// Reads the source at `path` (a file, standard input, or a Semantic Kernel function's
/// folder) as `from` or as detected, printing its problems; `None` when it cannot be read.
fn read(path: &Path, name: &str, from: Option<Format>) -> anyhow::Result<Option<Source>> {
    if from == Some(Format::SemanticKernel) || (from.is_none() && is_kernel_function(path)) {
        return read_kernel_function(path, name);
    }
    let bytes = io::read_input(path)?;
    let text = String::from_utf8_lossy(&bytes);
    let read = convert::read_source(&text, &path.to_string_lossy(), from);
    Ok(shown(name, &text, read))
}

/// The source read, with its problems printed against `text`.
fn shown(
    name: &str,
    text: &str,
    read: Result<Converted<Source>, Box<llmtool_core::Diagnostic>>,
) -> Option<Source> {
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

/// Whether `path` is a Semantic Kernel function: its folder, or a file of it.
fn is_kernel_function(path: &Path) -> bool {
    path.is_dir()
        || path.file_name().is_some_and(|file| {
            file == semantic_kernel::CONFIG_FILE || file == semantic_kernel::PROMPT_FILE
        })
}

/// Reads the Semantic Kernel function at `path` (its folder, or either of its files).
fn read_kernel_function(path: &Path, name: &str) -> anyhow::Result<Option<Source>> {
    let folder: PathBuf = if path.is_dir() {
        path.to_owned()
    } else {
        path.parent().map_or_else(|| PathBuf::from("."), Path::to_owned)
    };
    let read = |file: &str| {
        let path = folder.join(file);
        let bytes = crate::io::read_file(&path)?;
        String::from_utf8(bytes).map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))
    };
    let (config, prompt) =
        (read(semantic_kernel::CONFIG_FILE)?, read(semantic_kernel::PROMPT_FILE)?);
    let folder_name = folder
        .canonicalize()
        .ok()
        .and_then(|f| f.file_name().map(|n| n.to_string_lossy().into_owned()));
    let read = semantic_kernel::read(&config, &prompt, folder_name.as_deref()).map(|converted| {
        Converted { value: Source::ToolFile(converted.value), diagnostics: converted.diagnostics }
    });
    Ok(shown(name, &config, read))
}
