//! The command line: the top-level parser, the list of subcommands, and the argument groups
//! several commands share. Each command's own arguments are in `commands/NAME/args.rs`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::commands::admin::AdminCommand;
use crate::commands::batch::BatchArgs;
use crate::commands::call::CallArgs;
use crate::commands::chat::ChatArgs;
use crate::commands::check::CheckArgs;
use crate::commands::completions::CompletionsArgs;
use crate::commands::control::{AuditArgs, IntegrationCommand};
use crate::commands::convert::{ConvertArgs, ExportArgs, ImportArgs};
use crate::commands::fmt::FmtArgs;
use crate::commands::library::{PublishArgs, PullArgs, SearchArgs, TagCommand};
use crate::commands::login::{LoginArgs, LogoutArgs, WhoamiArgs};
use crate::commands::logs::{LogsArgs, UsageArgs};
use crate::commands::lsp::LspArgs;
use crate::commands::mcp::McpArgs;
use crate::commands::model::ModelCommand;
use crate::commands::new::NewArgs;
use crate::commands::people::{MemberCommand, TeamCommand};
use crate::commands::providers::ProvidersArgs;
use crate::commands::render::RenderArgs;
use crate::commands::reply::ReplyArgs;
use crate::commands::run::RunArgs;
use crate::commands::sandbox::SandboxCommand;
use crate::commands::scan::ScanArgs;
use crate::commands::serve::{ServeArgs, TokenCommand};
use crate::commands::show::ShowArgs;
use crate::commands::slack::SlackCommand;
use crate::commands::test::TestArgs;

#[derive(Debug, Parser)]
#[command(
    name = "llmtool",
    version = env!("LLMTOOL_VERSION"),
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
    Call(CallArgs),
    Reply(ReplyArgs),
    Chat(ChatArgs),
    Mcp(McpArgs),
    Providers(ProvidersArgs),
    #[command(subcommand)]
    Model(ModelCommand),
    #[command(subcommand)]
    Sandbox(SandboxCommand),
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
    Serve(Box<ServeArgs>),
    Publish(PublishArgs),
    Search(SearchArgs),
    Pull(PullArgs),
    #[command(subcommand)]
    Tag(TagCommand),
    Login(LoginArgs),
    Logout(LogoutArgs),
    Whoami(WhoamiArgs),
    Conversations(crate::commands::conversations::ConversationsArgs),
    #[command(subcommand)]
    Token(TokenCommand),
    #[command(subcommand)]
    Member(MemberCommand),
    #[command(subcommand)]
    Team(TeamCommand),
    Audit(AuditArgs),
    #[command(subcommand)]
    Integration(IntegrationCommand),
    #[command(subcommand)]
    Admin(AdminCommand),
    #[command(subcommand)]
    Slack(SlackCommand),
    Completions(CompletionsArgs),
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

/// How a long-running command's log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum LogFormat {
    /// A line of text each, for a person.
    Text,
    /// A JSON object a line (`timestamp`, `level`, `message` and the event's fields), for a
    /// log collector.
    Json,
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

/// Values for a tool's variables, from flags and a file.
#[derive(Debug, Args, Clone, Default)]
pub(crate) struct VariableArgs {
    /// A value: `NAME=VALUE` (split at the first `=`). Repeat for each item of a multi-select.
    /// `NAME=@FILE` gives the text of a document (PDF, DOCX, ODT, HTML, Markdown, text);
    /// `NAME=@@…` a value that starts with `@`.
    #[arg(long = "var", value_name = "NAME=VALUE")]
    pub(crate) vars: Vec<String>,
    /// A JSON object of values: a multi-select's value is an array, or a string of
    /// comma-separated items (see docs/format.md). `--var` wins over it.
    #[arg(long = "vars", value_name = "FILE.json")]
    pub(crate) vars_file: Option<PathBuf>,
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
    #[command(flatten)]
    pub(crate) setup: SetupArgs,
}

/// How runs are set up, whatever the model: the config file, model files, the time limit and
/// data-loss prevention (`reply` takes these without a model: the conversation has one).
#[derive(Debug, Args, Clone)]
pub(crate) struct SetupArgs {
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

/// `docs/cli.md`: the help of every command, generated from the definitions above.
#[cfg(test)]
mod reference {
    use std::fmt::Write as _;

    use clap::CommandFactory;

    fn markdown() -> String {
        let mut command = super::Cli::command().term_width(100);
        let mut out = String::from(
            "# Command-line reference\n\n<!-- Generated from crates/llmtool/src/cli.rs and commands/*/args.rs; do not edit.\n     \
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

#[cfg(test)]
mod help {
    use clap::CommandFactory;

    /// Every argument of every command, with the path of commands it is under, that has no
    /// help text.
    fn undocumented(command: &clap::Command, path: &str, found: &mut Vec<String>) {
        for arg in command.get_arguments() {
            let builtin = matches!(arg.get_id().as_str(), "help" | "version");
            if !builtin && !arg.is_hide_set() && arg.get_help().is_none() {
                found.push(format!("{path} {}", arg.get_id()));
            }
        }
        for sub in command.get_subcommands() {
            undocumented(sub, &format!("{path} {}", sub.get_name()), found);
        }
    }

    #[test]
    fn every_argument_says_what_it_is() {
        let mut found = Vec::new();
        undocumented(&super::Cli::command(), "llmtool", &mut found);
        assert!(found.is_empty(), "arguments with no help text: {found:#?}");
    }
}
