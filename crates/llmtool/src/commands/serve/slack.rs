//! `serve`'s Slack app: its signing secret and bot token read from their files.

use anyhow::Context as _;
use llmtool_server::SlackOptions;

use super::args::SlackArgs;

/// The Slack app of `--slack-signing-secret-file` and the rest; `None` without it.
pub(super) fn options(args: &SlackArgs) -> anyhow::Result<Option<SlackOptions>> {
    let Some(secret_file) = &args.signing_secret_file else { return Ok(None) };
    let first_line = |path: &std::path::Path, what: &str| -> anyhow::Result<String> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the Slack app's {what} {}", path.display()))?;
        let line = text.lines().next().unwrap_or_default().trim().to_owned();
        anyhow::ensure!(!line.is_empty(), "{} holds no {what}", path.display());
        Ok(line)
    };
    let bot_token = match &args.bot_token_file {
        Some(path) => Some(first_line(path, "bot token")?),
        None => None,
    };
    Ok(Some(SlackOptions {
        signing_secret: first_line(secret_file, "signing secret")?,
        bot_token,
        api_url: args.api_url.clone(),
    }))
}
