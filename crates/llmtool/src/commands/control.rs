//! The Control Center's commands, over the library's API with an admin's token: `llmtool
//! audit` reads the audit log, `llmtool integration` manages the providers' integrations.

mod args;

use std::collections::BTreeMap;

use anyhow::Context as _;
pub(crate) use args::{AuditArgs, IntegrationAddArgs, IntegrationCommand};
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

pub(crate) fn integration(command: &IntegrationCommand) -> anyhow::Result<Outcome> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let registry = match command {
        IntegrationCommand::Keygen => {
            io::write_stdout(format!("{}\n", llmtool_server::Keyring::new_key()).as_bytes())?;
            return Ok(Outcome::Ok);
        }
        IntegrationCommand::Add(args) => &args.registry,
        IntegrationCommand::List { registry, .. }
        | IntegrationCommand::Test { registry, .. }
        | IntegrationCommand::Remove { registry, .. }
        | IntegrationCommand::Rotate { registry } => registry,
    };
    let client = client(registry.registry.as_deref())?;
    let explained = |error| registry::explained(error, &client, "admin");
    match command {
        IntegrationCommand::Keygen => unreachable!("answered above"),
        IntegrationCommand::Add(args) => {
            let body = add_body(args)?;
            let made = runtime.block_on(client.add_integration(&body)).map_err(explained)?;
            let hint = made.key_hint.map(|hint| format!(" (key ...{hint})")).unwrap_or_default();
            eprintln!("the integration `{}` is added{hint}", made.name);
        }
        IntegrationCommand::List { format, .. } => {
            let integrations = runtime.block_on(client.integrations()).map_err(explained)?;
            let text = match format {
                ReportFormat::Json => serde_json::to_string_pretty(&integrations)? + "\n",
                ReportFormat::Text if integrations.is_empty() => "no integrations\n".to_owned(),
                ReportFormat::Text => {
                    let mut table = Table::new();
                    table
                        .load_style(presets::ASCII_BORDERS_ONLY_CONDENSED)
                        .set_content_arrangement(ContentArrangement::Dynamic)
                        .set_header([
                            "name",
                            "state",
                            "key",
                            "models or tools",
                            "teams",
                            "last test",
                        ]);
                    for i in &integrations {
                        let teams: Vec<String> = i
                            .teams
                            .iter()
                            .map(|(team, models)| {
                                if models.is_empty() {
                                    team.clone()
                                } else {
                                    format!("{team}={}", models.join(","))
                                }
                            })
                            .collect();
                        let test = i.last_test.as_ref().map_or_else(String::new, |t| {
                            format!("{} {} ({})", if t.ok { "ok" } else { "failed" }, t.at, t.model)
                        });
                        table.add_row([
                            i.name.clone(),
                            if i.enabled { "enabled" } else { "disabled" }.to_owned(),
                            i.key_hint.as_ref().map(|h| format!("...{h}")).unwrap_or_default(),
                            if !i.tools.is_empty() {
                                format!("tools: {}", i.tools.join(", "))
                            } else if i.models.is_empty() {
                                "all".to_owned()
                            } else {
                                i.models.join(", ")
                            },
                            if teams.is_empty() { "all".to_owned() } else { teams.join("; ") },
                            test,
                        ]);
                    }
                    table.to_string() + "\n"
                }
            };
            io::write_stdout(text.as_bytes())?;
        }
        IntegrationCommand::Test { name, model, .. } => {
            let test = runtime
                .block_on(client.test_integration(name, model.as_deref()))
                .map_err(explained)?;
            let said =
                format!("{name} ({}): {} in {} ms\n", test.model, test.detail, test.latency_ms);
            if !test.ok {
                eprint!("the test failed: {said}");
                return Ok(Outcome::Problems);
            }
            io::write_stdout(format!("ok: {said}").as_bytes())?;
        }
        IntegrationCommand::Remove { name, .. } => {
            runtime.block_on(client.remove_integration(name)).map_err(explained)?;
            eprintln!("the integration `{name}` is removed, with its key");
        }
        IntegrationCommand::Rotate { .. } => {
            let rotated = runtime.block_on(client.rotate_integrations()).map_err(explained)?;
            let names = rotated["resealed"].as_array().map_or(0, Vec::len);
            eprintln!(
                "{names} key(s) sealed again with the integration key {}",
                rotated["key_id"].as_str().unwrap_or("?")
            );
        }
    }
    Ok(Outcome::Ok)
}

/// The body of `POST /integrations` from `llmtool integration add`'s arguments, its key read
/// from where they say.
fn add_body(args: &IntegrationAddArgs) -> anyhow::Result<serde_json::Value> {
    let key = if let Some(variable) = &args.key_env {
        Some(std::env::var(variable).with_context(|| format!("{variable} is not set"))?)
    } else if let Some(file) = &args.key_file {
        Some(
            std::fs::read_to_string(file)
                .with_context(|| format!("cannot read {}", file.display()))?,
        )
    } else if args.key_stdin {
        Some(std::io::read_to_string(std::io::stdin()).context("cannot read standard input")?)
    } else {
        None
    };
    let key = key.map(|key| key.trim().to_owned());
    if let Some(key) = &key {
        crate::secrets::add(key);
    }
    let mut teams: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for team in &args.teams {
        let (name, models) = team.split_once('=').unwrap_or((team, ""));
        let models = models.split(',').map(str::trim).filter(|m| !m.is_empty());
        teams.insert(name.trim().to_owned(), models.map(str::to_owned).collect());
    }
    Ok(serde_json::json!({
        "name": args.name, "api": args.api, "base_url": args.base_url, "key": key,
        "models": args.models, "enabled": !args.disabled, "teams": teams, "tools": args.tools,
    }))
}
