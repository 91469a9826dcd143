//! The Control Center's commands, over the library's API with an admin's token: `llmtool
//! audit` reads the audit log.

mod args;

pub(crate) use args::AuditArgs;
use comfy_table::{ContentArrangement, Table, presets};
use llmtool_registry::AuditRecord;

use crate::cli::ReportFormat;
use crate::io;
use crate::outcome::Outcome;
use crate::registry::{self, client};

/// The most records `--all` gathers.
const MOST_RECORDS: usize = 100_000;

/// The records a page, as the API gives them at most.
const PAGE: u32 = 500;

pub(crate) fn audit(args: &AuditArgs) -> anyhow::Result<Outcome> {
    let client = client(args.registry.registry.as_deref())?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let wanted = if args.all { MOST_RECORDS } else { args.limit as usize };
    let mut filters: Vec<(&str, String)> = [
        ("actor", &args.actor),
        ("action", &args.action),
        ("target", &args.target),
        ("since", &args.since),
    ]
    .into_iter()
    .filter_map(|(name, value)| value.clone().map(|value| (name, value)))
    .collect();
    let mut records: Vec<AuditRecord> = Vec::new();
    loop {
        let left = u32::try_from(wanted - records.len()).unwrap_or(PAGE).min(PAGE);
        let mut query = filters.clone();
        query.push(("limit", left.to_string()));
        let page = runtime
            .block_on(client.audit(&query))
            .map_err(|error| registry::explained(error, &client, "admin"))?;
        records.extend(page.records);
        match page.next {
            Some(next) if records.len() < wanted => {
                filters.retain(|(name, _)| *name != "cursor");
                filters.push(("cursor", next));
            }
            _ => break,
        }
    }
    let text = match args.format {
        ReportFormat::Json => serde_json::to_string_pretty(&records)? + "\n",
        ReportFormat::Text if records.is_empty() => "no changes recorded\n".to_owned(),
        ReportFormat::Text => table(&records),
    };
    io::write_stdout(text.as_bytes())?;
    Ok(Outcome::Ok)
}

/// The records as a table, a change's before and after on one line.
fn table(records: &[AuditRecord]) -> String {
    let mut table = Table::new();
    table
        .load_style(presets::ASCII_BORDERS_ONLY_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(["when", "actor", "from", "action", "target", "change"]);
    let shown = |value: &Option<serde_json::Value>| {
        value.as_ref().map_or_else(|| "-".to_owned(), serde_json::Value::to_string)
    };
    for record in records {
        let entry = &record.entry;
        let change = match (&entry.before, &entry.after) {
            (None, None) => String::new(),
            (before, after) => format!("{} -> {}", shown(before), shown(after)),
        };
        table.add_row([
            record.at.clone(),
            entry.actor.clone(),
            entry.address.clone().unwrap_or_default(),
            entry.action.clone(),
            entry.target.clone(),
            change,
        ]);
    }
    table.to_string() + "\n"
}
