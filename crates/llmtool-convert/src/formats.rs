//! Every form llmtool converts to and from, by the name users write, and how a source's form
//! is told from its file name and text.

use serde_json::Value;

use super::codes::{DROPPED_FIELD, INVALID_SOURCE};
use super::detect::detect;
use super::sibling_files::{NoFolder, SiblingFiles};
use super::{
    Converted, ElispFlavor, FunctionFormat, FunctionTool, PromptFormat, read_elisp,
    read_mcp_prompt, semantic_kernel,
};
use llmtool_format::diagnostic::Diagnostic;
use llmtool_format::span::Span;

/// A form of tool that llmtool reads and writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    OpenAi,
    OpenAiResponses,
    Anthropic,
    Gemini,
    McpTool,
    Bedrock,
    McpPrompt,
    JsonSchema,
    Gptel,
    LlmEl,
    Prompty,
    Dotprompt,
    LlmTemplate,
    Langfuse,
    OpenAiPrompt,
    SemanticKernel,
    SemanticKernelYaml,
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
    /// A Semantic Kernel prompt template in one YAML file, the whole tool.
    SemanticKernelYaml,
    /// An OpenAI stored prompt, copied out as JSON: read, never written.
    OpenAiPrompt,
}

impl Format {
    pub const ALL: [Format; 17] = [
        Format::OpenAi,
        Format::OpenAiResponses,
        Format::Anthropic,
        Format::Gemini,
        Format::McpTool,
        Format::Bedrock,
        Format::McpPrompt,
        Format::JsonSchema,
        Format::Gptel,
        Format::LlmEl,
        Format::Prompty,
        Format::Dotprompt,
        Format::LlmTemplate,
        Format::Langfuse,
        Format::OpenAiPrompt,
        Format::SemanticKernel,
        Format::SemanticKernelYaml,
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
            Family::SemanticKernelYaml => "semantic-kernel-yaml",
            Family::OpenAiPrompt => "openai-prompt",
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
            Format::Bedrock => "An AWS Bedrock Converse tool (`toolSpec` with `inputSchema.json`)",
            Format::McpPrompt => "An MCP prompt (`arguments`)",
            Format::JsonSchema => "The tool's inputs alone, as a JSON Schema 2020-12 document",
            Format::Gptel => "An Emacs Lisp `(gptel-make-tool ...)` form",
            Format::LlmEl => "An Emacs Lisp `(llm-make-tool ...)` form (llm.el)",
            Format::Prompty => "A Microsoft Prompty file (`.prompty`)",
            Format::Dotprompt => "A Google Dotprompt file (`.prompt`)",
            Format::LlmTemplate => "A template of the `llm` CLI (`.yaml`, for `llm -t`)",
            Format::Langfuse => {
                "A Langfuse prompt (`name`, `type`, `prompt`, `config`), or Langfuse's export of them"
            }
            Format::OpenAiPrompt => {
                "An OpenAI stored prompt (`pmpt_...`) copied out as JSON (read only)"
            }
            Format::SemanticKernel => {
                "A Semantic Kernel prompt function: a folder with `config.json` and `skprompt.txt`"
            }
            Format::SemanticKernelYaml => {
                "A Semantic Kernel prompt template in one YAML file (`template`, `input_variables`)"
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
            Format::Bedrock => Family::Function(FunctionFormat::Bedrock),
            Format::JsonSchema => Family::Function(FunctionFormat::JsonSchema),
            Format::McpPrompt => Family::McpPrompt,
            Format::Gptel => Family::Elisp(ElispFlavor::Gptel),
            Format::LlmEl => Family::Elisp(ElispFlavor::LlmEl),
            Format::Prompty => Family::PromptFile(PromptFormat::Prompty),
            Format::Dotprompt => Family::PromptFile(PromptFormat::Dotprompt),
            Format::LlmTemplate => Family::PromptFile(PromptFormat::LlmTemplate),
            Format::Langfuse => Family::PromptFile(PromptFormat::Langfuse),
            Format::OpenAiPrompt => Family::OpenAiPrompt,
            Format::SemanticKernel => Family::SemanticKernel,
            Format::SemanticKernelYaml => Family::SemanticKernelYaml,
        }
    }

    /// Whether the format keeps a whole tool (prompt included), not only a function's inputs.
    pub const fn keeps_whole_tool(self) -> bool {
        matches!(
            self.family(),
            Family::PromptFile(_)
                | Family::SemanticKernel
                | Family::SemanticKernelYaml
                | Family::OpenAiPrompt
        )
    }

    /// Whether llmtool writes this format (an OpenAI stored prompt is only read: OpenAI
    /// retires them).
    pub const fn is_written(self) -> bool {
        !matches!(self.family(), Family::OpenAiPrompt)
    }

    pub(crate) fn of_function(format: FunctionFormat) -> Format {
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

/// Reads `text`, the file `path`, as `from`, or as the form detected (see [`detect`]). A
/// Semantic Kernel function folder is read from its two files
/// ([`super::semantic_kernel::read`]), not from one text. Files the source names beside
/// itself cannot be reached: see [`read_source_in`].
pub fn read_source(
    text: &str,
    path: &str,
    from: Option<Format>,
) -> Result<Converted<Source>, Box<Diagnostic>> {
    read_source_in(text, path, from, &NoFolder)
}

/// [`read_source`], reaching the files the source names beside itself through `files`.
pub fn read_source_in(
    text: &str,
    path: &str,
    from: Option<Format>,
    files: &dyn SiblingFiles,
) -> Result<Converted<Source>, Box<Diagnostic>> {
    // A byte-order mark is set aside; the diagnostics still point into the whole text.
    let Some(unmarked) = text.strip_prefix('\u{feff}') else {
        return read_unmarked(text, path, from, files);
    };
    let shift = |d: Diagnostic| d.shifted(text.len() - unmarked.len());
    match read_unmarked(unmarked, path, from, files) {
        Ok(read) => Ok(Converted {
            value: read.value,
            diagnostics: read.diagnostics.into_iter().map(shift).collect(),
        }),
        Err(problem) => Err(Box::new(shift(*problem))),
    }
}

/// [`read_source`] of text with no byte-order mark.
fn read_unmarked(
    text: &str,
    path: &str,
    from: Option<Format>,
    files: &dyn SiblingFiles,
) -> Result<Converted<Source>, Box<Diagnostic>> {
    let format = match from {
        Some(format) => format,
        None => detect(path, text)?,
    };
    let tool_file = |converted: Converted<String>| Converted {
        value: Source::ToolFile(converted.value),
        diagnostics: converted.diagnostics,
    };
    let function = match format.family() {
        Family::PromptFile(prompt_format) => {
            let converted = prompt_format.read_in(text, files)?;
            let stem = file_name(path, prompt_format == PromptFormat::Dotprompt);
            return Ok(tool_file(named_after(converted, stem)));
        }
        Family::SemanticKernelYaml => {
            let converted = semantic_kernel::read_yaml(text)?;
            return Ok(tool_file(named_after(converted, file_name(path, false))));
        }
        Family::OpenAiPrompt => {
            let converted = super::openai_prompt::read(text)?;
            return Ok(tool_file(named_after(converted, file_name(path, false))));
        }
        Family::SemanticKernel => {
            let problem = "a Semantic Kernel function is read from its folder";
            return Err(Box::new(Diagnostic::new(&INVALID_SOURCE, problem)));
        }
        Family::Elisp(_) => {
            let converted = read_elisp(text)?;
            return Ok(Converted {
                value: Source::Function(converted.value),
                diagnostics: converted.diagnostics,
            });
        }
        Family::McpPrompt | Family::Function(_) => {
            let value: Value = serde_json::from_str(text)
                .map_err(|error| Box::new(super::detect::not_json(text, "", &error)))?;
            match format.family() {
                Family::Function(format) => format.read(&value)?,
                _ => read_mcp_prompt(&value)?,
            }
        }
    };
    Ok(Converted { value: Source::Function(function), diagnostics: Vec::new() })
}

/// The name a prompt file goes by when it names itself nowhere inside: its file's name without
/// the extension (and, for Dotprompt, without a `.variant`: `greet.casual.prompt` is `greet`),
/// as `llm` and Dotprompt name their prompts. None for standard input.
fn file_name(path: &str, cut_variant: bool) -> Option<&str> {
    if path.is_empty() || path == "-" {
        return None;
    }
    let stem = std::path::Path::new(path).file_stem()?.to_str()?;
    let stem = if cut_variant { stem.split('.').next().unwrap_or(stem) } else { stem };
    Some(stem).filter(|stem| !stem.trim().is_empty())
}

/// `converted` (a tool file's canonical text), with `name` as its `prompt_name` when the
/// source gave it none.
fn named_after(converted: Converted<String>, name: Option<&str>) -> Converted<String> {
    let Some(name) = name else { return converted };
    match with_missing_metadata(&converted.value, "prompt_name", name) {
        Some(value) => Converted { value, diagnostics: converted.diagnostics },
        None => converted,
    }
}

/// `tool` (a tool file's canonical text) with `metadata.KEY` set to `value`, in canonical form,
/// when it has no `KEY`; `None` when it has one (or is not a tool file's text).
pub fn with_missing_metadata(tool: &str, key: &str, value: &str) -> Option<String> {
    let Ok(Value::Object(mut tool)) = serde_json::from_str::<Value>(tool) else { return None };
    let Some(Value::Object(metadata)) = tool.get_mut("metadata") else { return None };
    if metadata.contains_key(key) {
        return None;
    }
    metadata.insert(key.to_owned(), Value::String(value.to_owned()));
    let text = serde_json::to_string(&Value::Object(tool)).ok()?;
    llmtool_format::format::format_source(&text, false).ok().map(|formatted| formatted.text)
}

/// Reads every tool of `text`, the file `path`: the entries of a file of several tools (see
/// [`super::lists`]), each named by where it is (`tools[2]`), or the one tool of any other
/// source, named `""`. An entry that is not a tool is left out with a warning; a file none of
/// whose entries is a tool is an error. `files` reaches the files a source names beside itself.
pub fn read_sources(
    text: &str,
    path: &str,
    from: Option<Format>,
    files: &dyn SiblingFiles,
) -> Result<Converted<Vec<(String, Source)>>, Box<Diagnostic>> {
    let unmarked = text.strip_prefix('\u{feff}').unwrap_or(text);
    let json = matches!(unmarked.trim_start().chars().next(), Some('{' | '['))
        .then(|| serde_json::from_str::<Value>(unmarked).ok())
        .flatten();
    // A stored OpenAI prompt lists `tools` as a request does, but is one prompt.
    let one_prompt = from == Some(Format::OpenAiPrompt)
        || json.as_ref().is_some_and(|json| super::openai_prompt::prompt_id(json).is_some());
    let entries = json.as_ref().and_then(super::lists::entries).filter(|_| !one_prompt);
    let Some(entries) = entries else {
        let one = read_source_in(text, path, from, files)?;
        return Ok(Converted {
            value: vec![(String::new(), one.value)],
            diagnostics: one.diagnostics,
        });
    };
    let mut diagnostics = Vec::new();
    // Langfuse's export lists every version of each prompt: a file of tools gets the latest.
    let entries = super::prompt_files::langfuse::latest_versions(&entries, &mut diagnostics);
    let mut sources = Vec::new();
    let mut first_problem = None;
    for entry in &entries {
        let format = from.or(entry.implied).or_else(|| super::detect::detect_value(entry.value));
        let read = match format.map(Format::family) {
            Some(Family::Function(format)) => format.read(entry.value).map(Source::Function),
            Some(Family::McpPrompt) => read_mcp_prompt(entry.value).map(Source::Function),
            Some(Family::PromptFile(PromptFormat::Langfuse)) => {
                let place = format!("{}.", entry.at);
                super::prompt_files::langfuse::read_value(entry.value, Some((unmarked, &place)))
                    .map(|read| {
                        let bom = text.len() - unmarked.len();
                        diagnostics.extend(read.diagnostics.into_iter().map(|d| d.shifted(bom)));
                        Source::ToolFile(super::prompt_files::canonical(&read.value))
                    })
            }
            _ => Err(Box::new(Diagnostic::new(
                &INVALID_SOURCE,
                "not a function tool, an MCP prompt or a Langfuse prompt",
            ))),
        };
        match read {
            Ok(source) => sources.push((entry.at.clone(), source)),
            Err(problem) => {
                let kind = entry.value.get("type").and_then(Value::as_str);
                let what = kind.map_or_else(String::new, |kind| format!(" (a `{kind}` tool)"));
                let mut left_out = Diagnostic::new(
                    &DROPPED_FIELD,
                    format!("`{}`{what} is left out: {}", entry.at, problem.message),
                );
                let place = super::lists::span_of(unmarked, &entry.at).map(|span| {
                    let bom = text.len() - unmarked.len();
                    Span::new(span.start + bom, span.end + bom)
                });
                if let Some(place) = place {
                    left_out = left_out.at_labelled(place, "not a tool llmtool reads");
                }
                diagnostics.push(left_out);
                first_problem.get_or_insert((problem, place));
            }
        }
    }
    if sources.is_empty() {
        let (reason, place) = first_problem
            .map_or_else(|| ("it is empty".to_owned(), None), |(p, place)| (p.message, place));
        let mut problem = Diagnostic::new(
            &INVALID_SOURCE,
            format!("none of the {} entries of this list is a tool: {reason}", entries.len()),
        );
        if let Some(place) = place {
            problem = problem.at_labelled(place, "the first entry that is not a tool");
        }
        return Err(Box::new(problem));
    }
    Ok(Converted { value: sources, diagnostics })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_converse_request_gives_its_tools_and_not_its_cache_point() {
        let request = r#"{
  "modelId": "anthropic.claude-3-haiku",
  "messages": [{"role": "user", "content": [{"text": "Weather in Paris?"}]}],
  "toolConfig": {
    "tools": [
      {"toolSpec": {"name": "get_weather", "description": "The weather in a city",
        "inputSchema": {"json": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}},
      {"cachePoint": {"type": "default"}},
      {"toolSpec": {"name": "get_time", "inputSchema": {"json": {"type": "object"}}}}
    ],
    "toolChoice": {"auto": {}}
  }
}"#;
        let read = read_sources(request, "request.json", None, &NoFolder).unwrap();
        assert!(read.diagnostics.is_empty(), "{:?}", read.diagnostics);
        let names: Vec<(&str, &str)> = read
            .value
            .iter()
            .map(|(at, source)| match source {
                Source::Function(function) => (at.as_str(), function.name.as_str()),
                Source::ToolFile(_) => (at.as_str(), "a tool file"),
            })
            .collect();
        assert_eq!(
            names,
            [("toolConfig.tools[0]", "get_weather"), ("toolConfig.tools[2]", "get_time")]
        );
        let Source::Function(weather) = &read.value[0].1 else { unreachable!() };
        assert_eq!(weather.parameters["required"], serde_json::json!(["city"]));
        // A `toolSpec` without its `json` schema is said so.
        let broken = serde_json::json!({"toolSpec": {"name": "x", "inputSchema": {}}});
        let refused = FunctionFormat::Bedrock.read(&broken).unwrap_err();
        assert!(refused.message.contains("no `json` object"), "{}", refused.message);
    }

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
                        | Format::Langfuse
                        | Format::OpenAiPrompt
                        | Format::SemanticKernel
                        | Format::SemanticKernelYaml
                )
            );
        }
        assert_eq!(Format::of_function(FunctionFormat::Gemini), Format::Gemini);
        assert_eq!(Format::from_name("nope"), None);
    }
}
