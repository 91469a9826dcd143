//! The arguments of `llmtool publish`, `llmtool search` and `llmtool pull`.

use std::path::PathBuf;

use clap::Args;

use crate::cli::ReportFormat;

/// Which tool library: `--registry`, else `LLMTOOL_REGISTRY`, else the config file's
/// `registry` (`llmtool login`), else `http://127.0.0.1:8080`. The token comes from
/// `LLMTOOL_TOKEN`, else the config file's (for its library only).
#[derive(Debug, Args)]
pub(crate) struct RegistryArgs {
    /// The library's URL (`http://HOST:PORT`, as `llmtool serve` prints it; default: the config
    /// file's `registry`, else `http://127.0.0.1:8080`).
    #[arg(long, value_name = "URL", env = "LLMTOOL_REGISTRY")]
    pub(crate) registry: Option<String>,
}

/// Publish tool files to the tool library: each becomes a new version of its slug.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  llmtool publish tools/*.json --tag team --note \"clearer wording\"\n  llmtool publish summarize.json --slug summarize --label production\n  llmtool publish tools/*.json --dry-run   # what each would become; nothing sent\n  llmtool publish --from langfuse langfuse-prompts-all.json   # every version, with its labels\n\nThe token (editor role) comes from LLMTOOL_TOKEN, or `llmtool login URL`. A file with errors is refused with the\ndiagnostics `llmtool check` prints, and nothing of it is published."
)]
pub(crate) struct PublishArgs {
    /// The tool files.
    #[arg(value_name = "FILE", required = true)]
    pub(crate) files: Vec<PathBuf>,
    /// The slug to publish under (default: made from each tool's `prompt_name`); only with
    /// one file.
    #[arg(long)]
    pub(crate) slug: Option<String>,
    /// Tag each tool (repeat for several tags). A new tool tagged with a team's name is that
    /// team's alone; it is also tagged `all` (every member) only when no team's tag is given,
    /// or `--tag all` is.
    #[arg(long = "tag", value_name = "TAG")]
    pub(crate) tags: Vec<String>,
    /// Point this label at each new version (`production`, `staging`).
    #[arg(long, value_name = "LABEL")]
    pub(crate) label: Option<String>,
    /// What changed, kept with the version.
    #[arg(long, value_name = "TEXT")]
    pub(crate) note: Option<String>,
    /// Check each file as the library would and say what publishing would make of it (a new
    /// tool, a new version, unchanged); publish nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
    /// The files are another system's prompts, brought in with their history: `langfuse`
    /// (Langfuse's export, a JSON list of prompt versions): each version of each prompt is
    /// published in order, its commit message as the note, and its labels and tags set.
    #[arg(long, value_name = "SYSTEM", value_parser = ["langfuse"], conflicts_with_all = ["slug", "dry_run"])]
    pub(crate) from: Option<String>,
    #[command(flatten)]
    pub(crate) registry: RegistryArgs,
}

/// Search the tool library: words over name, description, usage notes and prompt.
#[derive(Debug, Args)]
pub(crate) struct SearchArgs {
    /// Words that must all match (prefixes); none lists every tool.
    #[arg(value_name = "QUERY")]
    pub(crate) query: Option<String>,
    /// Only the tools with this tag.
    #[arg(long)]
    pub(crate) tag: Option<String>,
    /// The most tools listed.
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub(crate) limit: u32,
    /// How the results are printed.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub(crate) format: ReportFormat,
    #[command(flatten)]
    pub(crate) registry: RegistryArgs,
}

/// Fetch a tool file from the library: SLUG (the latest), SLUG@VERSION or SLUG:LABEL.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  llmtool pull teach-me-anything > teach.json\n  llmtool pull summarize:production -o summarize.json\n  llmtool run registry:summarize:production --var text=...   # run it straight from the library\n  llmtool pull summarize teach-me-anything --to langfuse -o langfuse-prompts.json\n\nPulled versions are cached in the data directory: when the library cannot be reached, the\ncached version is used, with a warning."
)]
pub(crate) struct PullArgs {
    /// The tool: SLUG (its latest version), SLUG@VERSION or SLUG:LABEL; with `--to`, one SLUG
    /// or more.
    #[arg(value_name = "SLUG[@VERSION|:LABEL]", required = true)]
    pub(crate) references: Vec<String>,
    /// Write every version of the tools, in this format, instead of one tool file.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub(crate) to: Option<HistoryFormat>,
    /// Write the tool file here instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) registry: RegistryArgs,
}

/// The formats a library's tools can leave in with every version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum HistoryFormat {
    /// Langfuse's export: a JSON list of prompt objects, one per version, with the library's
    /// labels (and `latest`), tags and notes (as commit messages)
    Langfuse,
}

/// Curate a tool in the library: put a tag on it or take one off. A team's name as a tag
/// shows the tool to that team's members; `all` shows it to every member (editors tag for
/// their own teams; owners and admins for any).
#[derive(Debug, clap::Subcommand)]
#[command(
    after_help = "Examples:\n  llmtool tag add release-notes sales\n  llmtool tag remove release-notes all     # sales' alone from now on\n\nEach change is in the library's audit log (`tag.add`, `tag.remove`)."
)]
pub(crate) enum TagCommand {
    /// Tag a tool.
    Add(TagArgs),
    /// Take a tag off a tool.
    Remove(TagArgs),
}

/// A tool and a tag.
#[derive(Debug, Args)]
pub(crate) struct TagArgs {
    /// The tool's slug.
    pub(crate) slug: String,
    /// The tag: lowercase letters, digits, `-`, `_` and `.`.
    pub(crate) tag: String,
    #[command(flatten)]
    pub(crate) registry: RegistryArgs,
}
