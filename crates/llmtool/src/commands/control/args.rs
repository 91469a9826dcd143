//! The arguments of the Control Center's commands: `llmtool audit`.

use clap::Args;

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
