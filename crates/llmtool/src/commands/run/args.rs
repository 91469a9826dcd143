//! The arguments of `llmtool run`, and those every command that asks a model shares.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::cli::{ModelArgs, VariableArgs};

/// What `run` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum RunFormat {
    /// The answer (streamed when it is plain text).
    Text,
    /// `{output, raw, model, provider, usage, cost, latency_ms, conversation, ...}` for other
    /// programs.
    Json,
}

/// How a model is asked and its answer shown: the flags of `run`, `reply` and `chat`.
#[allow(clippy::struct_excessive_bools, reason = "independent command-line switches")]
#[derive(Debug, Args)]
pub(crate) struct TurnArgs {
    /// After the answer, show its tokens, cost and latency on standard error.
    #[arg(long)]
    pub(crate) usage: bool,
    /// Keep only a hash of the values in the run log, not the values (see `llmtool logs`); a
    /// conversation kept so cannot be followed up later.
    #[arg(long)]
    pub(crate) no_log_values: bool,
    /// Wait for the whole answer instead of streaming it.
    #[arg(long)]
    pub(crate) no_stream: bool,
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
    /// Where an image tool's pictures are saved (made if missing; no file is overwritten).
    /// Default: a new folder `images-DATE-TIME` in the current one.
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    /// Do not draw an image tool's pictures in the terminal. They are drawn under their paths
    /// in terminals that speak the kitty graphics protocol (kitty, `WezTerm`, Ghostty) or draw
    /// sixels (foot, mlterm, Konsole); `LLMTOOL_PREVIEW=off` does the same, and
    /// `LLMTOOL_PREVIEW=kitty` or `=sixel` draws them in any terminal.
    #[arg(long)]
    pub(crate) no_preview: bool,
}

/// Send a tool to a model and print the answer, with the tool's expected output enforced.
/// Every run starts a conversation: `llmtool reply` (or `run -c`) asks a follow-up.
#[allow(clippy::struct_excessive_bools, reason = "independent command-line switches")]
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  llmtool run examples/teach-me-anything.json --var topic=tides\n  llmtool run tool.json --model anthropic/claude-sonnet-4-5 --var text=\"$(cat notes.txt)\"\n  llmtool run examples/strategy-consultant.json --var situation=\"...\" --format json\n  llmtool run tool.json --dry-run        # print the HTTP request (keys redacted), send nothing\n  llmtool run -c \"Why that order?\"       # a follow-up to the last conversation (as `reply`)\n  llmtool run --cid 01jq... \"And then?\"  # a follow-up to conversation 01jq...\n  llmtool run registry:release-notes:production --var changes=...   # on the library, when signed in\n\nA `registry:` tool runs on the library's server when `llmtool login` saved a token for it (or\nLLMTOOL_TOKEN is set with LLMTOOL_REGISTRY): its integrations, budgets and data-loss policy\napply, the run is in its spend and the conversation in the studio; --local runs it here.\n\nThe model: --model (provider/model, or a bare name), else LLMTOOL_MODEL, else the first of the\ntool's model_version a configured provider serves, else default_model in the config file."
)]
pub(crate) struct RunArgs {
    /// The tool file, or `-` for standard input; with `-c` or `--cid`, the follow-up's text
    /// (`-`: read it from standard input).
    #[arg(value_name = "TOOL")]
    pub(crate) tool: PathBuf,
    #[command(flatten)]
    pub(crate) variables: VariableArgs,
    #[command(flatten)]
    pub(crate) target: ModelArgs,
    #[command(flatten)]
    pub(crate) turn: TurnArgs,
    /// Print the HTTP request that would be sent (keys redacted), and on standard error its
    /// input tokens and worst-case cost; send nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
    /// How the answer is printed.
    #[arg(long, value_enum, default_value_t = RunFormat::Text)]
    pub(crate) format: RunFormat,
    /// How many times to ask again when the answer misses the expected output.
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub(crate) max_repairs: u32,
    /// Keep a code answer whole instead of extracting its fenced block.
    #[arg(long)]
    pub(crate) raw: bool,
    #[command(flatten)]
    pub(crate) sandbox: SandboxArgs,
    /// Go on with the last conversation: TOOL is the follow-up's text (as `llmtool reply`).
    #[arg(short = 'c', long = "continue", conflicts_with = "cid")]
    pub(crate) continue_last: bool,
    /// Go on with this conversation: TOOL is the follow-up's text (as `llmtool reply --cid`).
    #[arg(long, value_name = "ID")]
    pub(crate) cid: Option<String>,
    /// Run a `registry:` tool on this machine, with your own keys or the local model, even
    /// when signed in to the library (which would otherwise run it, under its integrations,
    /// budgets and data-loss policy, and keep the conversation in your studio sidebar).
    #[arg(long)]
    pub(crate) local: bool,
}

/// The limits of a smart tool's run in the sandbox.
#[derive(Debug, Clone, Copy, Args)]
pub(crate) struct SandboxArgs {
    /// A smart tool's CPU time limit, in seconds (time waiting for `llm()` answers is not
    /// counted).
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0)]
    pub(crate) cpu_limit: f64,
    /// A smart tool's memory limit, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 512)]
    pub(crate) memory_limit: u64,
}

impl SandboxArgs {
    /// The sandbox's limits these flags set; the rest are the defaults.
    pub(crate) fn limits(self) -> anyhow::Result<llmtool_runtime::smart::Limits> {
        let cpu = std::time::Duration::try_from_secs_f64(self.cpu_limit)
            .ok()
            .filter(|cpu| !cpu.is_zero())
            .ok_or_else(|| anyhow::anyhow!("--cpu-limit takes a number of seconds above 0"))?;
        if self.memory_limit < 32 {
            anyhow::bail!(
                "--memory-limit takes at least 32 (MiB): Python needs that much to start"
            );
        }
        Ok(llmtool_runtime::smart::Limits {
            cpu,
            memory: self.memory_limit << 20,
            ..Default::default()
        })
    }
}
