//! The arguments of `llmtool mcp`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::cli::{LogLevel, ModelArgs};

/// Serve tool files over the Model Context Protocol: each tool as a prompt and as a tool.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  llmtool mcp examples/                        # stdio, for Claude Desktop, VS Code, Cursor, Emacs\n  llmtool mcp --registry https://tools.internal # the library's tools you see, run on the library\n  llmtool mcp --http 127.0.0.1:8765 tools/     # Streamable HTTP at http://127.0.0.1:8765/mcp\n  llmtool mcp --only prompts --name-prefix team_ tools/\n\nTool files are watched: changes update the lists, and clients are told. Logs go to standard error."
)]
pub(crate) struct McpArgs {
    /// Tool files, folders searched recursively for `*.json` (hidden ones skipped, symbolic
    /// links followed), and tools of the team library (`registry:SLUG`, `SLUG@VERSION` or
    /// `SLUG:LABEL`, from `LLMTOOL_REGISTRY` or the config file's `registry`).
    #[arg(value_name = "PATH", default_value = ".")]
    pub(crate) paths: Vec<PathBuf>,
    /// Relay standard input and output to this library's own MCP endpoint (`URL/mcp`), as the
    /// member the saved token (`llmtool login URL`) or `LLMTOOL_TOKEN` signs in as: the tools
    /// they see, each run on the library under its budgets, data-loss policy and spend. No
    /// file is served then.
    #[arg(long, value_name = "URL", conflicts_with_all = ["http", "only", "smart_tools"])]
    pub(crate) registry: Option<String>,
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
    /// Run smart tools (their Python code, in the WebAssembly sandbox) when a client calls
    /// them; without it, such a call is refused. With `--yes`, the Python runtime is fetched
    /// at start if it is not installed.
    #[arg(long)]
    pub(crate) smart_tools: bool,
    #[command(flatten)]
    pub(crate) sandbox: crate::commands::run::SandboxArgs,
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
