//! `llmtool slack manifest`: the Slack app's manifest for the team server.

mod args;

pub(crate) use args::SlackCommand;

use crate::outcome::Outcome;

pub(crate) fn run(command: &SlackCommand) -> anyhow::Result<Outcome> {
    match command {
        SlackCommand::Manifest(args) => {
            let config = crate::settings::load_config(args.config.as_deref())?;
            let configured = config.server.public_url.clone();
            let Some(url) = args.public_url.clone().or(configured) else {
                anyhow::bail!(
                    "the manifest needs the address Slack reaches the server at: --public-url https://HOST, or `public_url` under [server] in the config file"
                );
            };
            let manifest =
                llmtool_slack::manifest::manifest(&url, &args.name).map_err(anyhow::Error::msg)?;
            let mut text = serde_json::to_string_pretty(&manifest)?;
            text.push('\n');
            crate::io::write_stdout(text.as_bytes())?;
            Ok(Outcome::Ok)
        }
    }
}
