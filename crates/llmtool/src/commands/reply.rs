//! `llmtool reply` (and `run -c`, `run --cid`): a follow-up to a conversation of the run log,
//! sent with the whole conversation to the model it started on, as the tool was then.

use std::io::Read as _;

use clap::Args;
use llmtool_log::Conversation as Kept;
use llmtool_providers::run::RunOptions;
use llmtool_runtime::{Conversation, ParamOverrides, Runtime};

use crate::cli::{ModelArgs, SetupArgs};
use crate::commands::logs::with_log;
use crate::commands::run::turn::{Printing, say_notices, take_turn};
use crate::commands::run::{RunArgs, RunFormat, TurnArgs, on_server, runtime_options, sendable};
use crate::outcome::Outcome;
use crate::registry;
use crate::settings;
use llmtool_registry::client::LibraryClient;

/// Ask a follow-up after a tool's answer: the whole conversation so far is sent to the model it
/// started on, and the answer streams back (free text: the tool's expected output binds its
/// own answer).
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  llmtool run examples/strategy-consultant.json --var situation=\"...\"\n  llmtool reply \"Why that order?\"          # the last conversation\n  llmtool reply --cid 01jq... \"And then?\"  # another one (`llmtool logs --conversations`)\n  echo \"Shorter, please\" | llmtool reply -\n\nThe conversation keeps the tool as it started, so a follow-up uses that version whatever\nthe file holds now. `llmtool chat TOOL` does the same interactively."
)]
pub(crate) struct ReplyArgs {
    /// The follow-up's text (`-`: read it from standard input).
    #[arg(value_name = "TEXT")]
    pub(crate) text: String,
    /// The conversation to go on with (its id, as `llmtool logs` shows it); default: the last
    /// one started by `run` or `chat`.
    #[arg(long, value_name = "ID")]
    pub(crate) cid: Option<String>,
    /// How the answer is printed.
    #[arg(long, value_enum, default_value_t = RunFormat::Text)]
    pub(crate) format: RunFormat,
    #[command(flatten)]
    pub(crate) setup: SetupArgs,
    #[command(flatten)]
    pub(crate) turn: TurnArgs,
}

pub(crate) fn reply(args: &ReplyArgs) -> anyhow::Result<Outcome> {
    let target = ModelArgs { model: None, provider: None, setup: args.setup.clone() };
    follow_up(&args.text, args.cid.as_deref(), &target, &args.turn, args.format)
}

/// `run -c TEXT` and `run --cid ID TEXT`: `reply` by another name.
pub(crate) fn from_run(args: &RunArgs) -> anyhow::Result<Outcome> {
    let with_values = !args.variables.vars.is_empty() || args.variables.vars_file.is_some();
    if with_values || args.dry_run || args.target.model.is_some() || args.target.provider.is_some()
    {
        anyhow::bail!(
            "a follow-up (`-c`, `--cid`) takes only its text: the tool, its values and its \
             model are the conversation's"
        );
    }
    let text = args.tool.to_string_lossy();
    follow_up(&text, args.cid.as_deref(), &args.target, &args.turn, args.format)
}

/// Sends `text` as the next turn of conversation `cid` (the last one when `None`).
fn follow_up(
    text: &str,
    cid: Option<&str>,
    target: &ModelArgs,
    turn: &TurnArgs,
    format: RunFormat,
) -> anyhow::Result<Outcome> {
    let text = if text == "-" {
        let mut read = String::new();
        std::io::stdin().read_to_string(&mut read)?;
        read
    } else {
        text.to_owned()
    };
    if text.trim().is_empty() {
        anyhow::bail!("the follow-up is empty");
    }
    // The run log is read once: for the choice of where the follow-up goes, then for it.
    let local = local_conversation(cid)?;
    if let Some((library, id)) = on_the_library(cid, local.as_ref())? {
        return on_server::follow_up(&library, &id, &text, format);
    }
    let kept = found(local, cid)?;
    let conversation = Conversation::from_log(&kept)?;
    let providers = settings::load_providers(target.setup.config.as_deref())?;
    let runtime = Runtime::new(providers, runtime_options(target, turn))?;
    // A follow-up offers the tool's functions too: its library tools as its first turn did.
    let runtime =
        crate::commands::run::library_functions::with_library_tools(runtime, &conversation.tool);
    let overrides = ParamOverrides { temperature: turn.temperature, max_tokens: turn.max_tokens };
    let request = match sendable(runtime.follow_up(&conversation, text, overrides))? {
        Ok(request) => request,
        Err(outcome) => return Ok(outcome),
    };
    say_notices(&request);
    let tokio = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    tokio.block_on(runtime.prepare(&request))?;
    let subject = conversation.subject("run", kept.tool_path.clone());
    let options =
        RunOptions { live: format == RunFormat::Text, ..RunOptions::streamed(!turn.no_stream) };
    let printing = Printing { format, usage: turn.usage, preview: !turn.no_preview };
    Ok(take_turn(&tokio, &runtime, &request, options, &subject, printing)?.outcome)
}

/// The library's conversation a follow-up goes to, when signed in to a library: `cid` when the
/// run log has no such conversation, or with no `cid` the one last asked there when it is
/// newer than the run log's last.
fn on_the_library(
    cid: Option<&str>,
    local: Option<&Kept>,
) -> anyhow::Result<Option<(LibraryClient, String)>> {
    let library = registry::named()?;
    if !library.has_token() {
        return Ok(None);
    }
    let noted = on_server::last_on(library.url());
    Ok(match (cid, local) {
        (Some(_), Some(_)) => None,
        (Some(id), None) => Some((library, id.trim().to_owned())),
        (None, local) => {
            let Some((id, at)) = noted else { return Ok(None) };
            let local_at = local
                .and_then(|kept| kept.turns.last().map(|turn| turn.started_at.clone()))
                .and_then(|at| at.parse::<jiff::Timestamp>().ok());
            local_at.is_none_or(|local_at| local_at < at).then_some((library, id))
        }
    })
}

/// The conversation `cid` of the run log, or its last one, if there is one.
fn local_conversation(cid: Option<&str>) -> anyhow::Result<Option<Kept>> {
    let wanted = cid.map(|id| id.trim().to_lowercase());
    Ok(with_log(|log| async move {
        let id = match wanted {
            Some(id) => Some(id),
            None => log.latest_conversation(&["run", "chat"]).await?,
        };
        match id {
            Some(id) => log.conversation(&id).await,
            None => Ok(None),
        }
    })?
    .flatten())
}

/// The conversation `cid` of the run log, or its last one; an unknown id is an error that
/// says where the ids are listed.
pub(crate) fn find(cid: Option<&str>) -> anyhow::Result<Kept> {
    found(local_conversation(cid)?, cid)
}

/// The conversation the run log gave for `cid`, or the error that says why there is none.
fn found(local: Option<Kept>, cid: Option<&str>) -> anyhow::Result<Kept> {
    match (local, cid) {
        (Some(kept), _) => Ok(kept),
        (None, Some(id)) => anyhow::bail!(
            "the run log has no conversation `{}` (`llmtool logs --conversations` lists them)",
            id.trim()
        ),
        (None, None) => {
            anyhow::bail!("no conversation to go on with: run a tool first (`llmtool run TOOL`)")
        }
    }
}
