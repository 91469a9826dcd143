//! `llmtool conversations`: a member's conversations on the library's server, listed (as the
//! studio's sidebar lists them) or shown turn by turn.

mod args;

pub(crate) use args::{ConversationsArgs, ConversationsCommand};

use crate::cli::ReportFormat;
use crate::commands::serve::table;
use crate::outcome::Outcome;
use crate::{io, registry};

pub(crate) fn run(args: &ConversationsArgs) -> anyhow::Result<Outcome> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    if let Some(ConversationsCommand::Show { id, format, registry }) = &args.command {
        let client = registry::client(registry.registry.as_deref())?;
        let shown = runtime.block_on(client.conversation(id));
        let shown = shown.map_err(|error| registry::explained(error, &client, "viewer"))?;
        let text = match format {
            ReportFormat::Json => serde_json::to_string_pretty(&shown)? + "\n",
            ReportFormat::Text => transcript(&shown),
        };
        io::write_stdout(text.as_bytes())?;
        return Ok(Outcome::Ok);
    }
    let client = registry::client(args.registry.registry.as_deref())?;
    let listed = runtime.block_on(client.conversations(args.search.as_deref()));
    let listed = listed.map_err(|error| registry::explained(error, &client, "viewer"))?;
    let text = match args.format {
        ReportFormat::Json => serde_json::to_string_pretty(&listed)? + "\n",
        ReportFormat::Text => {
            let mut shown = table(["id", "title", "tool", "model", "turns", "last"]);
            for conversation in listed.as_array().into_iter().flatten() {
                let field = |name: &str| conversation[name].as_str().unwrap_or_default().to_owned();
                let tool = format!("{}@{}", field("slug"), conversation["version"]);
                let model = format!("{}/{}", field("provider"), field("model"));
                let last = field("last_at").get(..16).unwrap_or_default().replace('T', " ");
                let turns = conversation["turns"].to_string();
                shown.add_row([field("id"), field("title"), tool, model, turns, last]);
            }
            shown.to_string() + "\n"
        }
    };
    io::write_stdout(text.as_bytes())?;
    Ok(Outcome::Ok)
}

/// A conversation's turns in words: each question after `> `, then its answer.
fn transcript(conversation: &serde_json::Value) -> String {
    let text = |value: &serde_json::Value| value.as_str().unwrap_or_default().to_owned();
    let mut out = format!("# {}\n", text(&conversation["title"]));
    for turn in conversation["messages"].as_array().into_iter().flatten() {
        let asked = text(&turn["asked"]);
        if !asked.is_empty() {
            out.push_str(&format!("\n> {}\n", asked.replace('\n', "\n> ")));
        }
        let answer = text(&turn["answer"]);
        match text(&turn["outcome"]).as_str() {
            "ok" => out.push_str(&format!("\n{answer}\n")),
            outcome => out.push_str(&format!("\n({outcome}: {})\n", text(&turn["error"]))),
        }
    }
    out
}
