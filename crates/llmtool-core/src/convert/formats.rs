//! Every form llmtool converts to and from, by the name users write, and how a source's form
//! is told from its file name and text.

use serde_json::Value;

use super::codes::INVALID_SOURCE;
use super::{
    Converted, ElispFlavor, FunctionFormat, FunctionTool, PromptFormat, looks_like_elisp,
    read_elisp, read_mcp_prompt,
};
use crate::diagnostic::Diagnostic;

/// A form of tool that llmtool reads and writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    OpenAi,
    OpenAiResponses,
    Anthropic,
    Gemini,
    McpTool,
    McpPrompt,
    JsonSchema,
    Gptel,
    LlmEl,
    Prompty,
    Dotprompt,
    LlmTemplate,
    SemanticKernel,
}

/// What kind of thing a format holds, which decides how it is read and written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// A function-calling tool: a name, a description and the inputs' schema.
    Function(FunctionFormat),
    /// An MCP prompt: a name, a description and text arguments.
    McpPrompt,
    /// An Emacs Lisp form that defines a function tool.
    Elisp(ElispFlavor),
    /// A prompt file: the whole tool, prompt included.
    PromptFile(PromptFormat),
    /// A Semantic Kernel prompt function: a folder of two files, the whole tool.
    SemanticKernel,
}

impl Format {
    pub const ALL: [Format; 13] = [
        Format::OpenAi,
        Format::OpenAiResponses,
        Format::Anthropic,
        Format::Gemini,
        Format::McpTool,
        Format::McpPrompt,
        Format::JsonSchema,
        Format::Gptel,
        Format::LlmEl,
        Format::Prompty,
        Format::Dotprompt,
        Format::LlmTemplate,
        Format::SemanticKernel,
    ];

    /// The name users write (`--to openai`).
    pub const fn name(self) -> &'static str {
        match self.family() {
            Family::Function(format) => format.name(),
            Family::PromptFile(format) => format.name(),
            Family::McpPrompt => "mcp-prompt",
            Family::Elisp(ElispFlavor::Gptel) => "gptel",
            Family::Elisp(ElispFlavor::LlmEl) => "llm-el",
            Family::SemanticKernel => "semantic-kernel",
        }
    }

    pub fn from_name(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|format| format.name() == name)
    }

    /// One line saying what the format is.
    pub const fn description(self) -> &'static str {
        match self {
            Format::OpenAi => "An OpenAI Chat Completions `tools` entry",
            Format::OpenAiResponses => "An OpenAI Responses API function tool",
            Format::Anthropic => "An Anthropic Messages API tool (`input_schema`)",
            Format::Gemini => "A Gemini function declaration",
            Format::McpTool => "An MCP tool (`inputSchema`)",
            Format::McpPrompt => "An MCP prompt (`arguments`)",
            Format::JsonSchema => "The tool's inputs alone, as a JSON Schema 2020-12 document",
            Format::Gptel => "An Emacs Lisp `(gptel-make-tool ...)` form",
            Format::LlmEl => "An Emacs Lisp `(llm-make-tool ...)` form (llm.el)",
            Format::Prompty => "A Microsoft Prompty file (`.prompty`)",
            Format::Dotprompt => "A Google Dotprompt file (`.prompt`)",
            Format::LlmTemplate => "A template of the `llm` CLI (`.yaml`, for `llm -t`)",
            Format::SemanticKernel => {
                "A Semantic Kernel prompt function: a folder with `config.json` and `skprompt.txt`"
            }
        }
    }

    pub const fn family(self) -> Family {
        match self {
            Format::OpenAi => Family::Function(FunctionFormat::OpenAi),
            Format::OpenAiResponses => Family::Function(FunctionFormat::OpenAiResponses),
            Format::Anthropic => Family::Function(FunctionFormat::Anthropic),
            Format::Gemini => Family::Function(FunctionFormat::Gemini),
            Format::McpTool => Family::Function(FunctionFormat::McpTool),
            Format::JsonSchema => Family::Function(FunctionFormat::JsonSchema),
            Format::McpPrompt => Family::McpPrompt,
            Format::Gptel => Family::Elisp(ElispFlavor::Gptel),
            Format::LlmEl => Family::Elisp(ElispFlavor::LlmEl),
            Format::Prompty => Family::PromptFile(PromptFormat::Prompty),
            Format::Dotprompt => Family::PromptFile(PromptFormat::Dotprompt),
            Format::LlmTemplate => Family::PromptFile(PromptFormat::LlmTemplate),
            Format::SemanticKernel => Family::SemanticKernel,
        }
    }

    /// Whether the format keeps a whole tool (prompt included), not only a function's inputs.
    pub const fn keeps_whole_tool(self) -> bool {
        matches!(self.family(), Family::PromptFile(_) | Family::SemanticKernel)
    }

    fn of_function(format: FunctionFormat) -> Format {
        let found = Format::ALL.into_iter().find(|f| f.family() == Family::Function(format));
        found.unwrap_or(Format::JsonSchema)
    }
}

/// A source read: a function tool, or a whole tool file (canonical text, from a prompt file).
#[derive(Debug, Clone)]
pub enum Source {
    Function(FunctionTool),
    ToolFile(String),
}

/// A prompt file's format, by the file's name, else by its text. Front matter: Prompty
/// declares `inputs` or `template`, Dotprompt `input`, `model` or `config`. Without it, YAML
/// with a `prompt` key (or the `# llmtool:` comment block) is an `llm` template.
pub fn detect_prompt_file(path: &str, text: &str) -> Option<PromptFormat> {
    if let Some(format) = PromptFormat::from_path(path) {
        return Some(format);
    }
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

/// The form of a JSON source: a function tool's, else an MCP prompt (it has `arguments`).
pub fn detect_json(value: &Value) -> Option<Format> {
    FunctionFormat::detect(value)
        .map(Format::of_function)
        .or_else(|| value.get("arguments").is_some().then_some(Format::McpPrompt))
}

/// Reads `text`, the file `path`, as `from`, or as the form detected. A Semantic Kernel
/// function is read from its folder ([`super::semantic_kernel::read`]), not from one text.
pub fn read_source(
    text: &str,
    path: &str,
    from: Option<Format>,
) -> Result<Converted<Source>, Box<Diagnostic>> {
    let family = from.map(Format::family);
    let prompt = match family {
        Some(Family::PromptFile(format)) => Some(format),
        Some(_) => None,
        None => detect_prompt_file(path, text),
    };
    if let Some(format) = prompt {
        let converted = format.read(text)?;
        return Ok(Converted {
            value: Source::ToolFile(converted.value),
            diagnostics: converted.diagnostics,
        });
    }
    let is_elisp = match family {
        Some(family) => matches!(family, Family::Elisp(_)),
        None => looks_like_elisp(text),
    };
    if is_elisp {
        let converted = read_elisp(text)?;
        return Ok(Converted {
            value: Source::Function(converted.value),
            diagnostics: converted.diagnostics,
        });
    }
    let value: Value = serde_json::from_str(text).map_err(|error| {
        Box::new(Diagnostic::new(&INVALID_SOURCE, format!("not JSON: {error}")))
    })?;
    let function = match from.or_else(|| detect_json(&value)).map(Format::family) {
        Some(Family::McpPrompt) => read_mcp_prompt(&value)?,
        Some(Family::Function(format)) => format.read(&value)?,
        Some(_) => {
            let problem = "a Semantic Kernel function is read from its folder";
            return Err(Box::new(Diagnostic::new(&INVALID_SOURCE, problem)));
        }
        None => {
            let problem = "the format is not recognized; name it with `--from`";
            return Err(Box::new(Diagnostic::new(&INVALID_SOURCE, problem)));
        }
    };
    Ok(Converted { value: Source::Function(function), diagnostics: Vec::new() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_reads_back_and_families_agree() {
        for format in Format::ALL {
            assert_eq!(Format::from_name(format.name()), Some(format));
            assert_eq!(
                format.keeps_whole_tool(),
                matches!(
                    format,
                    Format::Prompty
                        | Format::Dotprompt
                        | Format::LlmTemplate
                        | Format::SemanticKernel
                )
            );
        }
        assert_eq!(Format::of_function(FunctionFormat::Gemini), Format::Gemini);
        assert_eq!(Format::from_name("nope"), None);
    }
}
