//! The tools served: tool files read from the paths given, each named for MCP, with the last
//! good version of a file kept when it turns invalid.

use std::path::PathBuf;

use llmtool_convert::{FunctionFormat, FunctionTool, naming};
use llmtool_format::model::Tool;
use llmtool_format::output::{OutputFormat, OutputKind, OutputSpec};
use llmtool_format::template::ToolTemplate;
use llmtool_runtime::files::LibraryClient;
use llmtool_runtime::{ToolFile, files};
use serde_json::{Value, json};

use crate::icons;

/// One tool file, ready to serve.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The file it was read from.
    pub path: PathBuf,
    /// Its MCP name (prompt and tool), with the name prefix.
    pub name: String,
    pub tool: Tool,
    pub template: ToolTemplate,
    /// The `prompts/list` entry.
    pub prompt: rmcp::model::Prompt,
    /// The `tools/list` entry.
    pub mcp_tool: rmcp::model::Tool,
    /// What `tools/call` returns as structured content, if anything.
    pub structured: Structured,
}

/// The structured content of a tool's answer: `{"answer": ...}`, or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Structured {
    /// Text only.
    None,
    /// One of the allowed values (a `limited` expected output).
    Choice,
    /// The answer parsed as JSON (`format: JSON`).
    Json,
}

/// The key of the answer in structured content.
pub const ANSWER_KEY: &str = "answer";

/// A file that could not be served as it is now.
#[derive(Debug, Clone)]
pub struct FileProblem {
    pub path: PathBuf,
    /// What is wrong: the diagnostics as `llmtool check` prints them, or the I/O error.
    pub report: String,
    /// Whether an earlier good version of the file is still served.
    pub kept_previous: bool,
}

/// How tools are named and which kinds are served.
#[derive(Debug, Clone)]
pub struct LibraryOptions {
    /// Put before every name (`team_` makes `team_summarize`).
    pub name_prefix: String,
    /// A larger file is skipped, not read.
    pub max_file_bytes: u64,
    /// The team library that `registry:` names are pulled from.
    pub library: Option<LibraryClient>,
}

impl Default for LibraryOptions {
    fn default() -> Self {
        Self {
            name_prefix: String::new(),
            max_file_bytes: llmtool_format::limits::DEFAULT_MAX_FILE_BYTES,
            library: None,
        }
    }
}

/// The tools served, by name.
#[derive(Debug, Clone, Default)]
pub struct Library {
    entries: Vec<Entry>,
}

impl Library {
    /// Reads every tool file under `paths` (as `llmtool_runtime::files` finds them).
    /// A file that is invalid now but was good in `previous` keeps its previous version.
    pub fn load(
        paths: &[PathBuf],
        options: &LibraryOptions,
        previous: Option<&Library>,
    ) -> (Library, Vec<FileProblem>) {
        let mut problems = Vec::new();
        let mut good: Vec<(PathBuf, Tool)> = Vec::new();
        let (files, unlisted) = files::find(paths);
        problems.extend(unlisted.into_iter().map(|error| FileProblem {
            path: error.path().to_owned(),
            report: error.to_string(),
            kept_previous: false,
        }));
        for path in files {
            let kept = || {
                previous
                    .and_then(|p| p.entries.iter().find(|e| e.path == path))
                    .map(|e| e.tool.clone())
            };
            let read = match ToolFile::open(&path, options.max_file_bytes, options.library.as_ref())
            {
                Ok(file) => {
                    if let Some(note) = &file.note {
                        tracing::warn!("{note}");
                    }
                    file.into_tool().map_err(|errors| errors.report)
                }
                Err(error) => Err(error.to_string()),
            };
            match read {
                Ok(tool) => good.push((path, tool)),
                Err(report) => {
                    let earlier = kept();
                    problems.push(FileProblem {
                        path: path.clone(),
                        report,
                        kept_previous: earlier.is_some(),
                    });
                    if let Some(tool) = earlier {
                        good.push((path, tool));
                    }
                }
            }
        }
        let library = Library::from_tools(good, options, &mut problems);
        (library, problems)
    }

    /// Names and prepares `tools` (in path order, so names are stable across reloads). A tool
    /// whose MCP description cannot be built is left out and reported in `problems`.
    pub fn from_tools(
        mut tools: Vec<(PathBuf, Tool)>,
        options: &LibraryOptions,
        problems: &mut Vec<FileProblem>,
    ) -> Library {
        tools.sort_by(|a, b| a.0.cmp(&b.0));
        let room = naming::MAX_NAME.saturating_sub(options.name_prefix.len()).max(1);
        let mut names: Vec<String> = tools
            .iter()
            .map(|(_, tool)| naming::slug(tool.name().unwrap_or("tool"), room))
            .collect();
        naming::distinct(&mut names, room);
        let mut entries = Vec::with_capacity(tools.len());
        for ((path, tool), name) in tools.into_iter().zip(names) {
            let name = format!("{}{name}", options.name_prefix);
            match Entry::new(path.clone(), name, tool) {
                Ok(entry) => entries.push(entry),
                Err(error) => problems.push(FileProblem {
                    path,
                    report: format!("cannot be described to MCP clients: {error}"),
                    kept_previous: false,
                }),
            }
        }
        Library { entries }
    }

    /// Marks each tool that runs on a model reached over the network (`openWorldHint`).
    pub(crate) fn mark_open_world(&mut self, is_remote: impl Fn(&Tool) -> bool) {
        for entry in &mut self.entries {
            let remote = is_remote(&entry.tool);
            if let Some(annotations) = &mut entry.mcp_tool.annotations {
                annotations.open_world_hint = Some(remote);
            }
        }
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    pub fn get(&self, name: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.name == name)
    }

    /// Whether both libraries give the same `prompts/list` and `tools/list`.
    pub fn lists_equal(&self, other: &Library) -> bool {
        self.entries.len() == other.entries.len()
            && self
                .entries
                .iter()
                .zip(&other.entries)
                .all(|(a, b)| a.prompt == b.prompt && a.mcp_tool == b.mcp_tool)
    }

    /// The names, for messages that list what exists.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.name.as_str())
    }
}

impl Entry {
    fn new(path: PathBuf, name: String, tool: Tool) -> Result<Entry, serde_json::Error> {
        let function = FunctionTool::from_tool(&tool, Some(&name), &[]).value;
        let template = ToolTemplate::new(&tool);
        let icons = icons::of(&tool);
        let mut prompt = function.mcp_prompt(&tool);
        let (mut schema, _) = FunctionFormat::McpTool.write(&function, false);
        let (structured, output_schema) = output_schema(&tool);
        if let Some(output_schema) = output_schema {
            schema["outputSchema"] = output_schema;
        }
        // `openWorldHint` depends on the model that runs the tool: the server sets it.
        schema["annotations"] = json!({
            "readOnlyHint": true,
            "destructiveHint": false,
            "openWorldHint": false,
        });
        if !icons.is_empty() {
            prompt["icons"] = Value::Array(icons.clone());
            schema["icons"] = Value::Array(icons);
        }
        Ok(Entry {
            path,
            name,
            prompt: serde_json::from_value(prompt)?,
            mcp_tool: serde_json::from_value(schema)?,
            template,
            tool,
            structured,
        })
    }
}

/// The output schema of a tool whose answer has a known shape: one of the allowed values, or
/// JSON.
fn output_schema(tool: &Tool) -> (Structured, Option<Value>) {
    let spec = OutputSpec::of(tool);
    let (structured, answer) = match (&spec.kind, &spec.format) {
        (OutputKind::Limited { allowed }, _) => (
            Structured::Choice,
            json!({ "type": "string", "enum": allowed, "description": "The answer: one of the allowed values." }),
        ),
        (_, Some(OutputFormat::Json)) => {
            // Any JSON value, said explicitly: a schema with no keyword reads as a mistake to
            // schema linters, and a list of types is not portable.
            let types: Vec<Value> = ["object", "array", "string", "number", "boolean", "null"]
                .iter()
                .map(|kind| json!({ "type": kind }))
                .collect();
            (
                Structured::Json,
                json!({ "anyOf": types, "description": "The answer, parsed as JSON." }),
            )
        }
        _ => return (Structured::None, None),
    };
    let schema = json!({
        "type": "object",
        "properties": { ANSWER_KEY: answer },
        "required": [ANSWER_KEY],
    });
    (structured, Some(schema))
}
