//! Writing a tool file, or a function tool read from elsewhere, in any [`Format`]: what
//! `llmtool export` and `convert` produce, before anything touches the file system.

use serde_json::Value;

use super::formats::{Family, Format};
use super::semantic_kernel::{self, SemanticKernelFunction};
use super::{Converted, ElispOptions, FunctionTool, naming, tool_file, tool_value, write_elisp};
use llmtool_format::document::Document;
use llmtool_format::model::Tool;

/// How to write.
#[derive(Debug, Clone, Default)]
pub struct WriteOptions {
    /// OpenAI strict mode: every key required (optional ones nullable), no other keys.
    pub strict: bool,
    pub elisp: ElispOptions,
    /// The function's name, instead of one made from the tool's `prompt_name`.
    pub name: Option<String>,
}

/// A conversion's result: JSON, a text file, or a Semantic Kernel function's folder.
#[derive(Debug, Clone)]
pub enum Written {
    /// JSON named `name` (its file is `name.json`).
    Json {
        value: Value,
        name: String,
    },
    /// A text file named `name` + `extension`.
    Text {
        text: String,
        name: String,
        extension: &'static str,
    },
    Folder(SemanticKernelFunction),
}

/// Why options cannot be written in a format.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WriteError {
    #[error("`{0}` cannot name a Semantic Kernel function: use letters, digits and `_`")]
    KernelFunctionName(String),
    #[error("`{0}` is not a function name: give a symbol such as `my-tool-function`")]
    ElispSymbol(String),
    #[error("the tool file could not be read")]
    NoTool,
    #[error(
        "`{0}` is read, not written: OpenAI stops serving stored prompts on 30 November 2026 and asks for their text in the caller's code (export to `openai` or a prompt file instead)"
    )]
    ReadOnly(&'static str),
}

impl Format {
    /// Refuses, before anything is written, options this format cannot take.
    pub fn check_options(self, options: &WriteOptions) -> Result<(), WriteError> {
        if !self.is_written() {
            return Err(WriteError::ReadOnly(self.name()));
        }
        match (self.family(), &options.name, &options.elisp.function) {
            (Family::SemanticKernel | Family::SemanticKernelYaml, Some(name), _)
                if !semantic_kernel::is_function_name(name) =>
            {
                Err(WriteError::KernelFunctionName(name.clone()))
            }
            (Family::Elisp(_), _, Some(symbol)) if !is_function_symbol(symbol) => {
                Err(WriteError::ElispSymbol(symbol.clone()))
            }
            _ => Ok(()),
        }
    }

    /// The tool file `document` (free of errors) written in this format.
    pub fn write_tool(
        self,
        document: &Document,
        options: &WriteOptions,
    ) -> Result<Converted<Written>, WriteError> {
        self.check_options(options)?;
        let name = options.name.as_deref();
        match self.family() {
            Family::SemanticKernelYaml => {
                let written = semantic_kernel::write_yaml(document, name);
                let file = name.map_or_else(|| file_name(document), str::to_owned);
                let value = Written::Text { text: written.value, name: file, extension: ".yaml" };
                return Ok(Converted { value, diagnostics: written.diagnostics });
            }
            Family::SemanticKernel => {
                let written = semantic_kernel::write(document, name);
                return Ok(Converted {
                    value: Written::Folder(written.value),
                    diagnostics: written.diagnostics,
                });
            }
            Family::PromptFile(format) => {
                let written = format.write(document);
                let name = name.map_or_else(|| file_name(document), str::to_owned);
                let extension = format.extension();
                let value = Written::Text { text: written.value, name, extension };
                return Ok(Converted { value, diagnostics: written.diagnostics });
            }
            Family::Function(_) | Family::McpPrompt | Family::Elisp(_) | Family::OpenAiPrompt => {}
        }
        let tool = document.tool.as_ref().ok_or(WriteError::NoTool)?;
        let converted = FunctionTool::from_tool(tool, name, &[]);
        let mut written = self.write_function(&converted.value, Some(tool), options)?;
        let mut diagnostics = converted.diagnostics;
        diagnostics.append(&mut written.diagnostics);
        Ok(Converted { value: written.value, diagnostics })
    }

    /// `function` written in this format (for a format that keeps a whole tool, through the
    /// tool file made from it). `original` is the tool file it came from, if any, which an
    /// MCP prompt is made from.
    pub fn write_function(
        self,
        function: &FunctionTool,
        original: Option<&Tool>,
        options: &WriteOptions,
    ) -> Result<Converted<Written>, WriteError> {
        self.check_options(options)?;
        let name = function.name.clone();
        match self.family() {
            Family::Function(format) => {
                let (value, diagnostics) = format.write(function, options.strict);
                Ok(Converted { value: Written::Json { value, name }, diagnostics })
            }
            Family::Elisp(flavor) => {
                let written = write_elisp(function, flavor, &options.elisp);
                let value = Written::Text { text: written.value, name, extension: ".el" };
                Ok(Converted { value, diagnostics: written.diagnostics })
            }
            Family::McpPrompt => Ok(match original {
                Some(original) => Converted {
                    value: Written::Json { value: function.mcp_prompt(original), name },
                    diagnostics: Vec::new(),
                },
                // From a function spec: its parameters, as text arguments.
                None => {
                    let file = tool_value(function);
                    let document = Document::from_text(file.value.to_string());
                    let tool = document.tool.as_ref();
                    let prompt = tool.map(|t| function.mcp_prompt(t)).unwrap_or_default();
                    let value = Written::Json { value: prompt, name };
                    Converted { value, diagnostics: file.diagnostics }
                }
            }),
            // A whole tool: the function made into a tool file first.
            Family::PromptFile(_)
            | Family::SemanticKernel
            | Family::SemanticKernelYaml
            | Family::OpenAiPrompt => {
                let file = tool_file(function);
                let mut written = self.write_tool(&Document::from_text(file.value), options)?;
                let mut diagnostics = file.diagnostics;
                diagnostics.append(&mut written.diagnostics);
                Ok(Converted { value: written.value, diagnostics })
            }
        }
    }
}

/// The name of a file written for `document`: its prompt name as a slug.
fn file_name(document: &Document) -> String {
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
