//! `llmtool export`, `import` and `convert`: tools to and from other runtimes' forms.

use llmtool_core::Severity;
use std::path::{Path, PathBuf};

use llmtool_core::convert::semantic_kernel::{self, SemanticKernelFunction};
use llmtool_core::convert::{
    self, ElispFlavor, ElispOptions, FunctionFormat, FunctionTool, PromptFormat, codes, naming,
};
use llmtool_core::diagnostic::Diagnostic;

use crate::Outcome;
use crate::cli::{ConvertArgs, ElispArgs, ExportArgs, ImportArgs, ToolFormat};
use crate::io;

pub(crate) fn export(args: &ExportArgs) -> anyhow::Result<Outcome> {
    let name = io::display_name(&args.tool);
    let Some((document, _)) = super::render::load_tool(&args.tool, &name)? else {
        return Ok(Outcome::Problems);
    };
    if let Some(wanted) = &args.name
        && !convert::naming::is_portable(wanted)
    {
        anyhow::bail!(
            "`{wanted}` is not a name every target accepts: use letters, digits, `_` and `-`, a letter first, at most {}",
            convert::naming::MAX_NAME
        );
    }
    let target = Target {
        format: args.to,
        strict: args.output.strict_schema,
        elisp: &args.output.elisp,
        name: args.name.as_deref(),
    };
    target.check_destination(args.output.out.as_deref())?;
    let (output, diagnostics) = target.write_tool(&document)?;
    super::render::print_problems(&name, &document.text, &diagnostics);
    output.emit(args.output.out.as_deref())?;
    Ok(Outcome::Ok)
}

pub(crate) fn import(args: &ImportArgs) -> anyhow::Result<Outcome> {
    let name = io::display_name(&args.file);
    let Some(loaded) = read(&args.file, &name, args.from)? else {
        return Ok(Outcome::Problems);
    };
    let text = match loaded {
        Loaded::Function(function) => {
            let converted = convert::tool_file(&function);
            super::render::print_problems(&name, "", &converted.diagnostics);
            converted.value
        }
        Loaded::ToolFile(text) => text,
    };
    io::write_stdout(text.as_bytes())?;
    Ok(Outcome::Ok)
}

pub(crate) fn convert(args: &ConvertArgs) -> anyhow::Result<Outcome> {
    let name = io::display_name(&args.spec);
    let Some(loaded) = read(&args.spec, &name, args.from)? else {
        return Ok(Outcome::Problems);
    };
    let target = Target {
        format: args.to,
        strict: args.output.strict_schema,
        elisp: &args.output.elisp,
        name: None,
    };
    target.check_destination(args.output.out.as_deref())?;
    let (output, diagnostics) = match loaded {
        Loaded::Function(function) if !is_prompt_file(args.to) => {
            target.write_function(&function, None)?
        }
        Loaded::Function(function) => {
            let file = convert::tool_file(&function);
            super::render::print_problems(&name, "", &file.diagnostics);
            target.write_tool(&llmtool_core::Document::from_text(file.value))?
        }
        Loaded::ToolFile(text) => target.write_tool(&llmtool_core::Document::from_text(text))?,
    };
    super::render::print_problems(&name, "", &diagnostics);
    output.emit(args.output.out.as_deref())?;
    Ok(Outcome::Ok)
}

/// What was read: a function spec, or a tool file (from a prompt file).
enum Loaded {
    Function(FunctionTool),
    ToolFile(String),
}

/// Why a Semantic Kernel export cannot go to standard output.
const FOLDER_NEEDS_OUT: &str = "a Semantic Kernel function is a folder: say where with `--out DIR`";

/// What a conversion gives: JSON, a text file, or a Semantic Kernel function's folder.
enum Output {
    Json { value: serde_json::Value, name: String },
    Text { text: String, name: String, extension: &'static str },
    Folder(SemanticKernelFunction),
}

impl Output {
    /// Prints the output, or writes it into `out` (a file named after the tool, or the
    /// function's folder), saying on standard error what was written.
    fn emit(&self, out: Option<&Path>) -> anyhow::Result<()> {
        let (text, name, extension) = match self {
            Output::Json { value, name } => {
                let mut text = serde_json::to_string_pretty(value)?;
                text.push('\n');
                (text, name, ".json")
            }
            Output::Text { text, name, extension } => (text.clone(), name, *extension),
            Output::Folder(function) => {
                let Some(out) = out else {
                    anyhow::bail!(FOLDER_NEEDS_OUT);
                };
                let folder = out.join(&function.name);
                std::fs::create_dir_all(&folder).map_err(|e| {
                    anyhow::anyhow!("cannot create the folder {}: {e}", folder.display())
                })?;
                for (file, text) in [
                    (semantic_kernel::CONFIG_FILE, &function.config),
                    (semantic_kernel::PROMPT_FILE, &function.prompt),
                ] {
                    write_file(&folder.join(file), text)?;
                }
                return Ok(());
            }
        };
        match out {
            Some(out) => {
                std::fs::create_dir_all(out).map_err(|e| {
                    anyhow::anyhow!("cannot create the folder {}: {e}", out.display())
                })?;
                write_file(&out.join(format!("{name}{extension}")), &text)
            }
            None => io::write_stdout(text.as_bytes()),
        }
    }
}

fn write_file(path: &Path, text: &str) -> anyhow::Result<()> {
    io::write_atomically(path, text.as_bytes())?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

/// The target format and its options.
struct Target<'a> {
    format: ToolFormat,
    strict: bool,
    elisp: &'a ElispArgs,
    /// The function's name, when given.
    name: Option<&'a str>,
}

impl Target<'_> {
    /// Refuses, before anything is written, a folder target with nowhere to go or a name it
    /// cannot take.
    fn check_destination(&self, out: Option<&Path>) -> anyhow::Result<()> {
        if self.format != ToolFormat::SemanticKernel {
            return Ok(());
        }
        if out.is_none() {
            anyhow::bail!(FOLDER_NEEDS_OUT);
        }
        if let Some(name) = self.name
            && !semantic_kernel::is_function_name(name)
        {
            anyhow::bail!(
                "`{name}` cannot name a Semantic Kernel function: use letters, digits and `_`"
            );
        }
        Ok(())
    }

    /// The tool file `document` (free of errors) written in the target format.
    fn write_tool(
        &self,
        document: &llmtool_core::Document,
    ) -> anyhow::Result<(Output, Vec<Diagnostic>)> {
        if self.format == ToolFormat::SemanticKernel {
            let written = semantic_kernel::write(document, self.name);
            return Ok((Output::Folder(written.value), written.diagnostics));
        }
        if let Some(format) = prompt_format(self.format) {
            let written = format.write(document);
            let name = self.name.map_or_else(|| file_name(document), str::to_owned);
            let output = Output::Text { text: written.value, name, extension: format.extension() };
            return Ok((output, written.diagnostics));
        }
        let Some(tool) = &document.tool else {
            anyhow::bail!("the tool file could not be read");
        };
        let converted = FunctionTool::from_tool(tool, self.name, &[]);
        let mut diagnostics = converted.diagnostics;
        let (output, mut more) = self.write_function(&converted.value, Some(tool))?;
        diagnostics.append(&mut more);
        Ok((output, diagnostics))
    }

    /// `tool` written in the target format (a function-tool, elisp or MCP prompt target);
    /// `original` is the tool file, which an MCP prompt is made from.
    fn write_function(
        &self,
        tool: &FunctionTool,
        original: Option<&llmtool_core::model::Tool>,
    ) -> anyhow::Result<(Output, Vec<Diagnostic>)> {
        let name = tool.name.clone();
        if let Some(format) = function_format(self.format) {
            let (value, diagnostics) = format.write(tool, self.strict);
            return Ok((Output::Json { value, name }, diagnostics));
        }
        if let Some(flavor) = elisp_flavor(self.format) {
            if let Some(symbol) = &self.elisp.function
                && !is_function_symbol(symbol)
            {
                anyhow::bail!(
                    "`{symbol}` is not a function name: give a symbol such as `my-tool-function`"
                );
            }
            let options = ElispOptions {
                function: self.elisp.function.clone(),
                asynchronous: self.elisp.asynchronous,
            };
            let written = convert::write_elisp(tool, flavor, &options);
            let output = Output::Text { text: written.value, name, extension: ".el" };
            return Ok((output, written.diagnostics));
        }
        Ok(match original {
            Some(original) => (Output::Json { value: tool.mcp_prompt(original), name }, Vec::new()),
            // From a function spec: its parameters, as text arguments.
            None => {
                let file = convert::tool_value(tool);
                let document = llmtool_core::Document::from_text(file.value.to_string());
                let prompt = document.tool.as_ref().map(|t| tool.mcp_prompt(t)).unwrap_or_default();
                (Output::Json { value: prompt, name }, file.diagnostics)
            }
        })
    }
}

/// The name of a file written for `document`: its prompt name as a slug.
fn file_name(document: &llmtool_core::Document) -> String {
    let prompt_name = document.tool.as_ref().and_then(|tool| tool.name()).unwrap_or("tool");
    naming::slug(prompt_name, naming::MAX_NAME)
}

/// A symbol name a user would give for `:function`: no spaces, brackets or quotes, and not
/// a number.
fn is_function_symbol(symbol: &str) -> bool {
    !symbol.is_empty()
        && symbol.parse::<f64>().is_err()
        && symbol
            .chars()
            .all(|c| !c.is_whitespace() && !c.is_control() && !"()[]\"';`,#?\\".contains(c))
}

/// Reads a function tool (or MCP prompt, elisp form or prompt file) from `path`, printing why
/// when it cannot.
fn read(
    path: &std::path::Path,
    name: &str,
    from: Option<ToolFormat>,
) -> anyhow::Result<Option<Loaded>> {
    if from == Some(ToolFormat::SemanticKernel) || (from.is_none() && is_kernel_function(path)) {
        return read_kernel_function(path, name);
    }
    let bytes = io::read_input(path)?;
    let text = String::from_utf8_lossy(&bytes);
    let prompt = match from {
        Some(format) => prompt_format(format),
        None => {
            PromptFormat::from_path(&path.to_string_lossy()).or_else(|| detect_prompt_file(&text))
        }
    };
    if let Some(format) = prompt {
        return Ok(match format.read(&text) {
            Ok(converted) => {
                super::render::print_problems(name, &text, &converted.diagnostics);
                Some(Loaded::ToolFile(converted.value))
            }
            Err(problem) => {
                super::render::print_problems(name, &text, &[*problem]);
                None
            }
        });
    }
    Ok(read_function(&text, name, from).map(Loaded::Function))
}

/// Whether `path` is a Semantic Kernel function: its folder, or a file of it.
fn is_kernel_function(path: &Path) -> bool {
    path.is_dir()
        || path.file_name().is_some_and(|file| {
            file == semantic_kernel::CONFIG_FILE || file == semantic_kernel::PROMPT_FILE
        })
}

/// Reads the Semantic Kernel function at `path` (its folder, or either of its files).
fn read_kernel_function(path: &Path, name: &str) -> anyhow::Result<Option<Loaded>> {
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
    Ok(match semantic_kernel::read(&config, &prompt, folder_name.as_deref()) {
        Ok(converted) => {
            super::render::print_problems(name, &config, &converted.diagnostics);
            Some(Loaded::ToolFile(converted.value))
        }
        Err(problem) => {
            super::render::print_problems(name, &config, &[*problem]);
            None
        }
    })
}

/// A prompt file's format judged by its text. Front matter: Prompty declares `inputs` or
/// `template`, Dotprompt `input`, `model` or `config`. Without it, YAML with a `prompt` key
/// (or the `# llmtool:` comment block) is an `llm` template.
fn detect_prompt_file(text: &str) -> Option<PromptFormat> {
    let has_line = |start: &str| text.lines().any(|line| line.starts_with(start));
    if !text.starts_with("---") {
        let first = text.trim_start().chars().next();
        let json_or_lisp = matches!(first, Some('{' | '[' | '(' | ';'));
        return (!json_or_lisp && (has_line("prompt:") || has_line("# llmtool:")))
            .then_some(PromptFormat::LlmTemplate);
    }
    let front = text.strip_prefix("---")?;
    let front = &front[..front.find("\n---").unwrap_or(front.len())];
    let has = |key: &str| front.lines().any(|line| line.starts_with(&format!("{key}:")));
    if has("inputs") || has("template") {
        Some(PromptFormat::Prompty)
    } else {
        Some(PromptFormat::Dotprompt)
    }
}

/// Reads a function tool (or MCP prompt, or elisp form) from `text`.
fn read_function(text: &str, name: &str, from: Option<ToolFormat>) -> Option<FunctionTool> {
    let elisp = match from {
        Some(format) => elisp_flavor(format).is_some(),
        None => convert::looks_like_elisp(text),
    };
    if elisp {
        return match convert::read_elisp(text) {
            Ok(converted) => {
                super::render::print_problems(name, text, &converted.diagnostics);
                Some(converted.value)
            }
            Err(problem) => {
                super::render::print_problems(name, text, &[*problem]);
                None
            }
        };
    }
    let value: serde_json::Value = match serde_json::from_str(text) {
        Ok(value) => value,
        Err(error) => {
            let problem = Diagnostic::new(&codes::INVALID_SOURCE, format!("not JSON: {error}"));
            super::render::print_problems(name, text, &[problem]);
            return None;
        }
    };
    let format = match from {
        Some(format) => Some(format),
        None => FunctionFormat::detect(&value)
            .map(tool_format)
            .or_else(|| value.get("arguments").is_some().then_some(ToolFormat::McpPrompt)),
    };
    let result = match format {
        Some(ToolFormat::McpPrompt) => convert::read_mcp_prompt(&value),
        Some(format) => function_format(format).map_or_else(
            || Err(Box::new(Diagnostic::new(&codes::INVALID_SOURCE, "unsupported source"))),
            |f| f.read(&value),
        ),
        None => Err(Box::new(Diagnostic::new(
            &codes::INVALID_SOURCE,
            "the format is not recognized; name it with `--from`",
        ))),
    };
    match result {
        Ok(function) => Some(function),
        Err(problem) => {
            debug_assert_eq!(problem.severity, Severity::Error);
            super::render::print_problems(name, text, &[*problem]);
            None
        }
    }
}

fn function_format(format: ToolFormat) -> Option<FunctionFormat> {
    Some(match format {
        ToolFormat::OpenAi => FunctionFormat::OpenAi,
        ToolFormat::OpenAiResponses => FunctionFormat::OpenAiResponses,
        ToolFormat::Anthropic => FunctionFormat::Anthropic,
        ToolFormat::Gemini => FunctionFormat::Gemini,
        ToolFormat::McpTool => FunctionFormat::McpTool,
        ToolFormat::JsonSchema => FunctionFormat::JsonSchema,
        ToolFormat::McpPrompt
        | ToolFormat::Gptel
        | ToolFormat::LlmEl
        | ToolFormat::Prompty
        | ToolFormat::Dotprompt
        | ToolFormat::LlmTemplate
        | ToolFormat::SemanticKernel => return None,
    })
}

fn elisp_flavor(format: ToolFormat) -> Option<ElispFlavor> {
    match format {
        ToolFormat::Gptel => Some(ElispFlavor::Gptel),
        ToolFormat::LlmEl => Some(ElispFlavor::LlmEl),
        _ => None,
    }
}

/// Whether `format` keeps a whole tool (a prompt file or Semantic Kernel folder) rather than
/// a function's inputs.
fn is_prompt_file(format: ToolFormat) -> bool {
    prompt_format(format).is_some() || format == ToolFormat::SemanticKernel
}

fn prompt_format(format: ToolFormat) -> Option<PromptFormat> {
    match format {
        ToolFormat::Prompty => Some(PromptFormat::Prompty),
        ToolFormat::Dotprompt => Some(PromptFormat::Dotprompt),
        ToolFormat::LlmTemplate => Some(PromptFormat::LlmTemplate),
        _ => None,
    }
}

fn tool_format(format: FunctionFormat) -> ToolFormat {
    match format {
        FunctionFormat::OpenAi => ToolFormat::OpenAi,
        FunctionFormat::OpenAiResponses => ToolFormat::OpenAiResponses,
        FunctionFormat::Anthropic => ToolFormat::Anthropic,
        FunctionFormat::Gemini => ToolFormat::Gemini,
        FunctionFormat::McpTool => ToolFormat::McpTool,
        FunctionFormat::JsonSchema => ToolFormat::JsonSchema,
    }
}
