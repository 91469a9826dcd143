//! The arguments of `llmtool slack`.

use std::path::PathBuf;

use clap::{Args, Subcommand};

/// Slack, where the team server answers (docs/slack.md).
#[derive(Debug, Subcommand)]
pub(crate) enum SlackCommand {
    Manifest(ManifestArgs),
}

/// Print the Slack app's manifest (JSON) for the server's public address: paste it into
/// Slack's "Create an app from a manifest".
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  llmtool slack manifest --public-url https://tools.example.com > slack-app.json"
)]
pub(crate) struct ManifestArgs {
    /// The address Slack reaches the server at (default: the config's `server.public_url`).
    #[arg(long, value_name = "URL")]
    pub(crate) public_url: Option<String>,
    /// The app's name, and its bot's.
    #[arg(long, default_value = "llmtool")]
    pub(crate) name: String,
    /// A config file other than the default one.
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
}
