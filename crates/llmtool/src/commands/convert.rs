//! `llmtool export`, `import` and `convert`: tools to and from other runtimes' forms.

use llmtool_core::Severity;
use llmtool_core::convert::{self, FunctionFormat, FunctionTool, codes};
use llmtool_core::diagnostic::Diagnostic;

use crate::Outcome;
use crate::cli::{ConvertArgs, ExportArgs, ImportArgs, ToolFormat};
use crate::io;

pub(crate) fn export(args: &ExportArgs) -> anyhow::Result<Outcome> {
    let name = io::display_name(&args.tool);
    let Some((document, _)) = super::render::load_tool(&args.tool, &name)? else {
        return Ok(Outcome::Problems);
    };
    let Some(tool) = &document.tool else { return Ok(Outcome::Problems) };
    if let Some(wanted) = &args.name
        && !convert::naming::is_portable(wanted)
    {
        anyhow::bail!(
            "`{wanted}` is not a name every target accepts: use letters, digits, `_` and `-`, a letter first, at most {}",
            convert::naming::MAX_NAME
        );
    }
    let converted = FunctionTool::from_tool(tool, args.name.as_deref(), &[]);
    let mut diagnostics = converted.diagnostics;
    let (value, mut more) = write(&converted.value, args.to, args.strict_schema, Some(tool));
    diagnostics.append(&mut more);
    super::render::print_problems(&name, &document.text, &diagnostics);
    print_json(&value)?;
    Ok(Outcome::Ok)
}

pub(crate) fn import(args: &ImportArgs) -> anyhow::Result<Outcome> {
    let name = io::display_name(&args.file);
    let Some(function) = read(&args.file, &name, args.from)? else {
        return Ok(Outcome::Problems);
    };
    let converted = convert::tool_file(&function);
    super::render::print_problems(&name, "", &converted.diagnostics);
    io::write_stdout(converted.value.as_bytes())?;
    Ok(Outcome::Ok)
}

pub(crate) fn convert(args: &ConvertArgs) -> anyhow::Result<Outcome> {
    let name = io::display_name(&args.spec);
    let Some(function) = read(&args.spec, &name, args.from)? else {
        return Ok(Outcome::Problems);
    };
    let (value, diagnostics) = write(&function, args.to, args.strict_schema, None);
    super::render::print_problems(&name, "", &diagnostics);
    print_json(&value)?;
    Ok(Outcome::Ok)
}

/// `tool` written as `format`; `original` is the tool file, which an MCP prompt is made from.
fn write(
    tool: &FunctionTool,
    format: ToolFormat,
    strict: bool,
    original: Option<&llmtool_core::model::Tool>,
) -> (serde_json::Value, Vec<Diagnostic>) {
    match function_format(format) {
        Some(format) => format.write(tool, strict),
        None => match original {
            Some(original) => (tool.mcp_prompt(original), Vec::new()),
            // From a function spec: its parameters, as text arguments.
            None => {
                let file = convert::tool_value(tool);
                let document = llmtool_core::Document::from_text(file.value.to_string());
                let prompt = document.tool.as_ref().map(|t| tool.mcp_prompt(t)).unwrap_or_default();
                (prompt, file.diagnostics)
            }
        },
    }
}

/// Reads a function tool (or MCP prompt) from `path`, printing why when it cannot.
fn read(
    path: &std::path::Path,
    name: &str,
    from: Option<ToolFormat>,
) -> anyhow::Result<Option<FunctionTool>> {
    let bytes = io::read_input(path)?;
    let text = String::from_utf8_lossy(&bytes);
    let value: serde_json::Value = match serde_json::from_str(&text) {
        Ok(value) => value,
        Err(error) => {
            let problem = Diagnostic::new(&codes::INVALID_SOURCE, format!("not JSON: {error}"));
            super::render::print_problems(name, &text, &[problem]);
            return Ok(None);
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
        Ok(function) => Ok(Some(function)),
        Err(problem) => {
            debug_assert_eq!(problem.severity, Severity::Error);
            super::render::print_problems(name, &text, &[*problem]);
            Ok(None)
        }
    }
}

fn print_json(value: &serde_json::Value) -> anyhow::Result<()> {
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    io::write_stdout(text.as_bytes())
}

fn function_format(format: ToolFormat) -> Option<FunctionFormat> {
    Some(match format {
        ToolFormat::OpenAi => FunctionFormat::OpenAi,
        ToolFormat::OpenAiResponses => FunctionFormat::OpenAiResponses,
        ToolFormat::Anthropic => FunctionFormat::Anthropic,
        ToolFormat::Gemini => FunctionFormat::Gemini,
        ToolFormat::McpTool => FunctionFormat::McpTool,
        ToolFormat::JsonSchema => FunctionFormat::JsonSchema,
        ToolFormat::McpPrompt => return None,
    })
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
