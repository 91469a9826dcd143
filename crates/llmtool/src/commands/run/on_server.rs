//! `llmtool run registry:SLUG` on the library's server, when signed in to it: the values are
//! read here as for a run here (files, documents, lists), then the run is the server's (its
//! integrations, budgets, data-loss policy and spend; the conversation in the member's
//! studio sidebar), its answer streamed back as it comes. A refusal (a budget, a model the
//! member may not use, a tool they do not see) is printed in the library's words, exit 1.

use std::io::Write as _;
use std::path::Path;

use llmtool_format::template::Inputs;

use llmtool_registry::client::{ClientError, LibraryClient};
use llmtool_registry::{Reference, RunEvent};

use super::{RunArgs, RunFormat, load};
use crate::commands::render::read_inputs;
use crate::outcome::Outcome;
use crate::{io, registry};

/// The library to run `tool` on: a `registry:` tool, a library signed in to (a token for it),
/// and not asked to run here (`local`).
pub(crate) fn library_for(
    tool: &Path,
    local: bool,
) -> anyhow::Result<Option<(LibraryClient, Reference)>> {
    let Some(Some(reference)) = tool.to_str().and_then(Reference::from_path) else {
        return Ok(None);
    };
    let client = registry::named()?;
    if !client.has_token() {
        return Ok(None);
    }
    if local {
        let url = client.url().trim_end_matches("/api/v1");
        eprintln!(
            "running {reference} here (--local): the library at {url} sees nothing of this run"
        );
        return Ok(None);
    }
    Ok(Some((client, reference)))
}

/// `llmtool run registry:…` on the library: the values read here, the run there.
pub(crate) fn run(
    client: &LibraryClient,
    reference: &Reference,
    args: &RunArgs,
) -> anyhow::Result<Outcome> {
    // The tool itself, for its variables: the values are read as a run here reads them.
    let Some(loaded) = load(&args.tool)? else { return Ok(Outcome::Problems) };
    let inputs = read_inputs(&args.variables, loaded.template.variables())?;
    send(client, reference, &inputs, args.target.model.as_deref(), args.format)
}

/// Runs `reference` on the library with `inputs` (on `model`, if given), its answer printed
/// as `format` says.
pub(crate) fn send(
    client: &LibraryClient,
    reference: &Reference,
    inputs: &Inputs,
    model: Option<&str>,
    format: RunFormat,
) -> anyhow::Result<Outcome> {
    let values = llmtool_runtime::log::values_json(inputs);
    streamed(client, format, Ask::Run { reference, values, model })
}

/// `llmtool reply` to the library's conversation `id`: its next turn, asked there.
pub(crate) fn follow_up(
    client: &LibraryClient,
    id: &str,
    text: &str,
    format: RunFormat,
) -> anyhow::Result<Outcome> {
    streamed(client, format, Ask::Message { id, text })
}

/// What is asked of the library: a tool's run, or a conversation's next turn.
enum Ask<'a> {
    Run { reference: &'a Reference, values: serde_json::Value, model: Option<&'a str> },
    Message { id: &'a str, text: &'a str },
}

/// Asks the library and shows its events as they come; the outcome.
fn streamed(client: &LibraryClient, format: RunFormat, ask: Ask<'_>) -> anyhow::Result<Outcome> {
    Ok(asked(client, format, ask)?.0)
}

/// [`streamed`], with the conversation the turn was a turn of (when the library named it).
fn asked(
    client: &LibraryClient,
    format: RunFormat,
    ask: Ask<'_>,
) -> anyhow::Result<(Outcome, Option<String>)> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let url = client.url().trim_end_matches("/api/v1");
    let mut shown = Shown { format, streamed: false, done: None, url, conversation: None };
    let mut on_event = |event: RunEvent| shown.event(event);
    let ran = runtime.block_on(async {
        match ask {
            Ask::Run { reference, values, model } => {
                let (slug, selector) = (&reference.slug, &reference.selector);
                client.run_on_server(slug, selector, &values, model, &mut on_event).await
            }
            Ask::Message { id, text } => client.message(id, text, None, &mut on_event).await,
        }
    });
    match ran {
        Ok(()) => {
            let conversation = shown.conversation.clone();
            Ok((shown.end()?, conversation))
        }
        Err(ClientError::Refused { status, detail, .. }) if status != 401 => {
            eprintln!("the library at {url} refused the run: {detail}");
            Ok((Outcome::Problems, None))
        }
        Err(error) => Err(registry::explained(error, client, "viewer")),
    }
}

/// `llmtool chat registry:…` on the library: the tool's answer, then each line read at the
/// prompt asked as the conversation's next turn there, until Ctrl-D or `/exit`.
pub(crate) fn chat(
    client: &LibraryClient,
    reference: &Reference,
    inputs: &Inputs,
    model: Option<&str>,
) -> anyhow::Result<Outcome> {
    let values = llmtool_runtime::log::values_json(inputs);
    let first = asked(client, RunFormat::Text, Ask::Run { reference, values, model })?;
    let (Outcome::Ok, Some(id)) = first else { return Ok(first.0) };
    eprintln!("(Ctrl-D or /exit ends the conversation; `llmtool reply` goes on with it later)");
    crate::commands::chat::prompt_lines(|text| {
        // A turn's problem is said; the session goes on.
        if let Err(error) = asked(client, RunFormat::Text, Ask::Message { id: &id, text }) {
            eprintln!("error: {error:#}");
        }
    })?;
    Ok(Outcome::Ok)
}

/// What has been shown of a run so far.
struct Shown<'a> {
    format: RunFormat,
    /// Whether any of the answer came as text events.
    streamed: bool,
    /// The `done` event's run, once it came.
    done: Option<serde_json::Value>,
    /// The conversation the run is a turn of, once `start` named it.
    conversation: Option<String>,
    url: &'a str,
}

impl Shown<'_> {
    fn event(&mut self, event: RunEvent) {
        let data = event.data;
        match event.event.as_str() {
            "start" => {
                let at = format!("{}@{}", text(&data["slug"]), data["version"]);
                let model = format!("{}/{}", text(&data["provider"]), text(&data["model"]));
                let id = text(&data["conversation"]);
                eprintln!(
                    "{at} on {model}, run by the library at {} (conversation {id})",
                    self.url
                );
                if !id.is_empty() {
                    note_last(self.url, id);
                    self.conversation = Some(id.to_owned());
                }
                for line in data["warnings"].as_array().into_iter().flatten() {
                    eprintln!("warning: {}", text(line));
                }
                for notice in data["notices"].as_array().into_iter().flatten() {
                    match text(&notice["message"]) {
                        "" => eprintln!("notice: {notice}"),
                        message => eprintln!("notice: {message}"),
                    }
                }
            }
            "text" if self.format == RunFormat::Text => {
                self.streamed = true;
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(text(&data["text"]).as_bytes());
                let _ = out.flush();
            }
            "done" => self.done = Some(data),
            _ => {}
        }
    }

    fn end(self) -> anyhow::Result<Outcome> {
        let Some(done) = self.done else {
            anyhow::bail!("the library's run ended before it said how (no `done` event)");
        };
        // The run as the library keeps it is flattened into the event.
        let run = &done;
        if self.format == RunFormat::Json {
            io::write_stdout(format!("{}\n", serde_json::to_string_pretty(&done)?).as_bytes())?;
        } else if !self.streamed {
            io::write_stdout(format!("{}\n", text(&run["answer"])).as_bytes())?;
        } else {
            println!();
        }
        match text(&run["outcome"]) {
            "ok" => Ok(Outcome::Ok),
            outcome => {
                let why = text(&run["error"]);
                eprintln!(
                    "the run on the library ended `{outcome}`{}",
                    if why.is_empty() { String::new() } else { format!(": {why}") }
                );
                Ok(Outcome::Problems)
            }
        }
    }
}

/// A JSON string's text, or nothing.
fn text(value: &serde_json::Value) -> &str {
    value.as_str().unwrap_or_default()
}

/// Where the last conversation asked on a library is noted, for `llmtool reply` without
/// `--cid`: the library, the conversation's id and when (a file of the data directory, private
/// as the run log is).
fn last_path() -> Option<std::path::PathBuf> {
    llmtool_log::data_dir().map(|dir| dir.join("last-library-conversation.json"))
}

/// Notes that the conversation `id` of the library at `url` was asked just now. Losing the
/// note costs only `reply`'s default, so a failure to write it is not the run's.
fn note_last(url: &str, id: &str) {
    let Some(path) = last_path() else { return };
    let at = jiff::Timestamp::now().to_string();
    let noted = serde_json::json!({"library": url, "id": id, "at": at});
    if let Some(folder) = path.parent() {
        let _ = std::fs::create_dir_all(folder);
    }
    let _ = io::write_privately(&path, noted.to_string().as_bytes());
}

/// The last conversation asked on the library at `url`, and when, if one was noted.
pub(crate) fn last_on(url: &str) -> Option<(String, jiff::Timestamp)> {
    let noted: serde_json::Value =
        serde_json::from_slice(&std::fs::read(last_path()?).ok()?).ok()?;
    let url = url.trim_end_matches("/api/v1");
    if !registry::same_library(text(&noted["library"]), url) {
        return None;
    }
    Some((text(&noted["id"]).to_owned(), text(&noted["at"]).parse().ok()?))
}
