//! `llmtool providers`: which providers are known and which are ready (keys are never shown).

mod args;

pub(crate) use args::ProvidersArgs;

use comfy_table::{ColumnConstraint, ContentArrangement, Table, presets};

use crate::commands::run::RunFormat;
use crate::outcome::Outcome;
use crate::{io, secrets, settings};

pub(crate) fn run(args: &ProvidersArgs) -> anyhow::Result<Outcome> {
    let providers = settings::load_providers(args.config.as_deref())?;
    let statuses = providers.statuses();
    let text = match args.format {
        RunFormat::Json => serde_json::to_string_pretty(&statuses)? + "\n",
        RunFormat::Text => {
            let mut table = Table::new();
            table
                .load_style(presets::ASCII_BORDERS_ONLY_CONDENSED)
                .set_content_arrangement(ContentArrangement::Dynamic)
                .set_width(110)
                .set_header(["provider", "ready", "api", "base url", "key from"]);
            // A URL is never broken mid-word: the other columns give way.
            if let Some(column) = table.column_mut(3) {
                column.set_constraint(ColumnConstraint::ContentWidth);
            }
            for status in &statuses {
                table.add_row([
                    status.name.clone(),
                    if status.ready { "yes".into() } else { "no".into() },
                    serde_json::to_value(status.api)?.as_str().unwrap_or_default().to_owned(),
                    status.base_url.clone(),
                    status.key_variable.clone().unwrap_or_else(|| "(none needed)".into()),
                ]);
            }
            format!("{table}\n")
        }
    };
    io::write_stdout(secrets::redact(&text).as_bytes())?;
    Ok(Outcome::Ok)
}
