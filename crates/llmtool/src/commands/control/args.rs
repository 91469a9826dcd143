//! The arguments of the Control Center's commands: `llmtool audit` and `llmtool integration`.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::cli::ReportFormat;
use crate::commands::library::RegistryArgs;

/// Read the tool library's audit log, newest first: who changed members, teams, tags, labels,
/// tokens, integrations, prices and budgets, and who published and deleted (admins only).
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  llmtool audit                               # the newest 50 changes\n  llmtool audit --actor ana@example.org --since 7d\n  llmtool audit --action member.edit --all --format json > edits.json\n\nThe token (admin role) comes from LLMTOOL_TOKEN, or `llmtool login URL`."
)]
pub(crate) struct AuditArgs {
    /// Only the changes of this actor: a token's name, a member's e-mail, `cli:USER`.
    #[arg(long, value_name = "WHO")]
    pub(crate) actor: Option<String>,
    /// Only this kind of change (`member.edit`, `tool.publish`, `integration.add`, ...).
    #[arg(long, value_name = "ACTION")]
    pub(crate) action: Option<String>,
    /// Only the changes to this: an e-mail, a team, a slug, a token's or integration's name.
    #[arg(long, value_name = "WHAT")]
    pub(crate) target: Option<String>,
    /// Only the changes since a date, a time or a span back from now (`7d`, `24h`).
    #[arg(long, value_name = "WHEN")]
    pub(crate) since: Option<String>,
    /// The most changes listed.
    #[arg(long, default_value_t = 50, value_name = "N")]
    pub(crate) limit: u32,
    /// Every change that matches, page after page (up to 100,000).
    #[arg(long, conflicts_with = "limit")]
    pub(crate) all: bool,
    /// How the changes are printed.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub(crate) format: ReportFormat,
    #[command(flatten)]
    pub(crate) registry: RegistryArgs,
}

/// The library's integrations with the providers (admins only): what the server's runs use.
/// Keys are sealed by the server and never shown again (only their last four characters).
#[derive(Debug, Subcommand)]
#[command(
    after_help = "Examples:\n  llmtool integration add openai --key-env OPENAI_API_KEY --model gpt-4o-mini --model gpt-4o\n  llmtool integration add vllm --api openai --base-url http://10.0.0.5:8000/v1 --model qwen2.5\n  llmtool integration add anthropic --key-file ~/.anthropic-key --team sales=claude-sonnet-4-5\n  llmtool integration test openai\n  llmtool integration keygen >> integration-keys.new   # a new key, for a rotation\n\nThe token (admin role) comes from LLMTOOL_TOKEN, or `llmtool login URL`. See docs/control-center.md."
)]
pub(crate) enum IntegrationCommand {
    /// Add an integration: a provider llmtool knows, or a server of yours (`--api`,
    /// `--base-url`).
    Add(IntegrationAddArgs),
    /// List the integrations, their models, teams and last test.
    List {
        /// How they are printed.
        #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
        format: ReportFormat,
        #[command(flatten)]
        registry: RegistryArgs,
    },
    /// Send one short request through an integration and say what came back (exit 1 when it
    /// fails).
    Test {
        /// The integration's name.
        name: String,
        /// The model to ask (default: the integration's first).
        #[arg(long)]
        model: Option<String>,
        #[command(flatten)]
        registry: RegistryArgs,
    },
    /// Remove an integration, and its key.
    Remove {
        /// The integration's name.
        name: String,
        #[command(flatten)]
        registry: RegistryArgs,
    },
    /// Seal every key again with the server's current integration key (after a new one was
    /// put first in its keyring).
    Rotate {
        #[command(flatten)]
        registry: RegistryArgs,
    },
    /// Print a new integration key (32 random bytes in base64), for `serve --integration-keys`.
    Keygen,
}

/// `llmtool integration add`.
#[derive(Debug, Args)]
pub(crate) struct IntegrationAddArgs {
    /// A provider's name (`openai`, `anthropic`, `gemini`, `groq`, `local`...), or one of yours.
    pub(crate) name: String,
    /// The API a server of yours speaks: `openai`, `anthropic` or `gemini`; or, for a
    /// database or search integration (a tool's functions), `postgres`, `sqlite`, `searxng`,
    /// `brave` or `tavily` (a database's key is its connection URL).
    #[arg(long)]
    pub(crate) api: Option<String>,
    /// The server's address (`http://HOST:PORT/v1`), over the provider's own.
    #[arg(long, value_name = "URL")]
    pub(crate) base_url: Option<String>,
    /// Read the key from this environment variable (never from the command line, where
    /// other users of the machine could see it).
    #[arg(long, value_name = "VAR", group = "key")]
    pub(crate) key_env: Option<String>,
    /// Read the key from this file.
    #[arg(long, value_name = "FILE", group = "key")]
    pub(crate) key_file: Option<PathBuf>,
    /// Read the key from standard input.
    #[arg(long, group = "key")]
    pub(crate) key_stdin: bool,
    /// A model runs may use (repeat; none: every model of the provider).
    #[arg(long = "model", value_name = "MODEL")]
    pub(crate) models: Vec<String>,
    /// A team that may use it, and which of its models (`sales`, `sales=gpt-4o,o3`); repeat.
    /// None: every team.
    #[arg(long = "team", value_name = "TEAM[=MODELS]")]
    pub(crate) teams: Vec<String>,
    /// For a database or search integration: a tool (its slug) whose runs may use it;
    /// repeat. None: no tool.
    #[arg(long = "tool", value_name = "SLUG")]
    pub(crate) tools: Vec<String>,
    /// Add it switched off.
    #[arg(long)]
    pub(crate) disabled: bool,
    #[command(flatten)]
    pub(crate) registry: RegistryArgs,
}
