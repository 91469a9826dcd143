//! The arguments of `llmtool export`, `llmtool import` and `llmtool convert`.

use std::path::PathBuf;

use clap::Args;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use llmtool_convert::Format;

/// `--from`: a format by its name, each described in `--help` (the formats and their
/// descriptions are core's).
fn tool_format() -> impl TypedValueParser<Value = Format> {
    formats(|_| true)
}

/// `--to`: a format llmtool writes, by its name.
fn target_format() -> impl TypedValueParser<Value = Format> {
    formats(Format::is_written)
}

fn formats(wanted: fn(Format) -> bool) -> impl TypedValueParser<Value = Format> {
    let names = Format::ALL
        .into_iter()
        .filter(|format| wanted(*format))
        .map(|format| PossibleValue::new(format.name()).help(format.description()));
    PossibleValuesParser::new(names)
        .try_map(|name| Format::from_name(&name).ok_or("no such format"))
}

/// How `export` and `convert` write their result.
#[derive(Debug, Args)]
pub(crate) struct OutputArgs {
    /// OpenAI strict mode: every key required (optional ones nullable), no other keys.
    #[arg(long)]
    pub(crate) strict_schema: bool,
    #[command(flatten)]
    pub(crate) elisp: ElispArgs,
    /// Write into this folder (a file named after the tool; for semantic-kernel, the
    /// function's folder) instead of standard output.
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
}

/// The `:function` and `:async` of an elisp form, and gptel's options.
#[allow(clippy::struct_excessive_bools, reason = "independent command-line switches")]
#[derive(Debug, Args)]
pub(crate) struct ElispArgs {
    /// elisp targets: your own function that runs the tool (default: a function that runs
    /// it through `llmtool call`).
    #[arg(long, value_name = "SYMBOL")]
    pub(crate) function: Option<String>,
    /// elisp targets: your `--function` is asynchronous (`:async t`; it takes a callback
    /// first). The function that runs `llmtool call` is asynchronous unless `--sync`.
    #[arg(long = "async")]
    pub(crate) asynchronous: bool,
    /// elisp targets: the function that runs `llmtool call` waits for the answer (Emacs
    /// waits with it) instead of taking a callback.
    #[arg(long, conflicts_with = "function")]
    pub(crate) sync: bool,
    /// gptel: ask before running the tool (`:confirm t`).
    #[arg(long)]
    pub(crate) confirm: bool,
    /// gptel: put the tool's answer in the chat buffer too (`:include t`).
    #[arg(long)]
    pub(crate) include: bool,
}

/// Convert a tool file for another runtime (printed to standard output).
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  llmtool export tool.json --to openai\n  llmtool export tool.json --to openai --strict-schema\n  llmtool export tool.json --to openai --with-runner  # the schema, and the command that runs it\n  llmtool export tool.json --to mcp-tool --name summarize\n  llmtool export tool.json --to gptel                # runs the tool through `llmtool call`\n  llmtool export tool.json --to gptel --function my-summarize\n  llmtool export tool.json --to llm-template --out \"$(llm templates path)\"\n  llmtool export tool.json --to semantic-kernel --out plugins/Writing"
)]
pub(crate) struct ExportArgs {
    /// The tool file, or `-` for standard input.
    #[arg(value_name = "TOOL")]
    pub(crate) tool: PathBuf,
    /// The format to write (see docs/convert.md).
    #[arg(long, value_name = "TARGET", value_parser = target_format())]
    pub(crate) to: Format,
    /// The tool's name in the target (default: made from `prompt_name`).
    #[arg(long)]
    pub(crate) name: Option<String>,
    /// Function-tool targets: print `{"tool": SCHEMA, "run": {...}}`, where `run` is the one
    /// command an agent framework runs when the model calls the tool (`llmtool call TOOL -`,
    /// the arguments as JSON on standard input; docs/convert.md wires it into agent
    /// frameworks).
    #[arg(long)]
    pub(crate) with_runner: bool,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

/// Turn a tool from another runtime into a tool file (printed to standard output).
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  llmtool import weather.json                  # the source format is detected\n  llmtool import weather-tool.el               # a gptel or llm.el form\n  llmtool import tool.json --from anthropic > weather-tool.json\n  llmtool import plugins/Writing/summarize     # a Semantic Kernel function folder\n  llmtool import tools-list.json --out tools/  # every tool of a list, one file each"
)]
pub(crate) struct ImportArgs {
    /// The file (or a Semantic Kernel function's folder), or `-` for standard input.
    #[arg(value_name = "FILE")]
    pub(crate) file: PathBuf,
    /// Its format (detected when not given).
    #[arg(long, value_name = "SOURCE", value_parser = tool_format())]
    pub(crate) from: Option<Format>,
    /// For a file of several tools (a list, an MCP `tools/list` result, a request body): the
    /// one to import, by its name.
    #[arg(long)]
    pub(crate) name: Option<String>,
    /// Write each tool into this folder, as `NAME.json`, instead of standard output (needed
    /// to import every tool of a file of several).
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
}

/// Convert a function-tool spec from one runtime's form to another's.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  llmtool convert spec.json --from anthropic --to openai\n  llmtool convert spec.json --to gemini      # the source format is detected\n  llmtool convert tool.el --to anthropic     # from a gptel or llm.el form"
)]
pub(crate) struct ConvertArgs {
    /// The spec file, or `-` for standard input.
    #[arg(value_name = "SPEC")]
    pub(crate) spec: PathBuf,
    /// Its format (detected when not given).
    #[arg(long, value_name = "SOURCE", value_parser = tool_format())]
    pub(crate) from: Option<Format>,
    /// The format to write (see docs/convert.md).
    #[arg(long, value_name = "TARGET", value_parser = target_format())]
    pub(crate) to: Format,
    /// For a file of several tools: the one to convert, by its name.
    #[arg(long)]
    pub(crate) name: Option<String>,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}
