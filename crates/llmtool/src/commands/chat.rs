//! `llmtool chat`: a tool's answer, then follow-ups read one at a time at a prompt (line
//! editing and the session's history by `rustyline`), each sent with the conversation so far.
//! Ctrl-C stops the answer in progress and the session goes on; Ctrl-D or `/exit` ends it.
//! Every turn is logged, so `llmtool reply` can go on with the conversation later.

use std::path::PathBuf;

use clap::Args;
use llmtool_providers::run::RunOptions;
use llmtool_runtime::{Conversation, ParamOverrides};
use rustyline::error::ReadlineError;

use crate::cli::{ModelArgs, VariableArgs};
use crate::commands::render::read_inputs;
use crate::commands::run::turn::{Printing, TurnEnd, say_notices, take_turn};
use crate::commands::run::{RunFormat, TurnArgs, load, on_server, open, sendable};
use crate::outcome::Outcome;
use crate::secrets;

/// Run a tool, then ask follow-ups interactively: each is sent with the whole conversation to
/// the same model.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  llmtool chat examples/strategy-consultant.json --var situation=\"...\"\n  llmtool chat tool.json --model anthropic/claude-sonnet-4-5\n\nAt the prompt: Enter sends, Up and Down recall earlier lines, Ctrl-C stops an answer (or\nclears the line), Ctrl-D or /exit ends. The session's lines are not written to disk."
)]
pub(crate) struct ChatArgs {
    /// The tool file, or `registry:SLUG` for a tool of the library.
    #[arg(value_name = "TOOL")]
    pub(crate) tool: PathBuf,
    #[command(flatten)]
    pub(crate) variables: VariableArgs,
    #[command(flatten)]
    pub(crate) target: ModelArgs,
    #[command(flatten)]
    pub(crate) turn: TurnArgs,
    /// How many times to ask again when the tool's answer misses its expected output.
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub(crate) max_repairs: u32,
    /// Keep a code answer whole instead of extracting its fenced block.
    #[arg(long)]
    pub(crate) raw: bool,
    /// Chat with a `registry:` tool on this machine even when signed in to the library (which
    /// would otherwise run the conversation, as `llmtool run` does).
    #[arg(long)]
    pub(crate) local: bool,
}

/// What ends a session, typed at the prompt.
const ENDINGS: [&str; 2] = ["/exit", "/quit"];

pub(crate) fn chat(args: &ChatArgs) -> anyhow::Result<Outcome> {
    if let Some((library, reference)) = on_server::library_for(&args.tool, args.local)? {
        let Some(loaded) = load(&args.tool)? else { return Ok(Outcome::Problems) };
        let inputs = read_inputs(&args.variables, loaded.template.variables())?;
        let model = args.target.model.as_deref();
        return on_server::chat(&library, &reference, &inputs, model);
    }
    let mut opening = match open(&args.tool, &args.variables, &args.target, &args.turn, false)? {
        Ok(opening) => opening,
        Err(outcome) => return Ok(outcome),
    };
    // Follow-ups are what a chat is for: the provider may cache the prompt for them.
    opening.request.cache = true;
    let tokio = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    tokio.block_on(opening.runtime.prepare(&opening.request))?;
    let target = &opening.request.target;
    eprintln!(
        "conversation {} on {}/{} (Ctrl-C stops an answer, Ctrl-D or /exit ends)",
        opening.conversation, target.endpoint.provider, target.model
    );
    let printing = Printing {
        format: RunFormat::Text,
        usage: args.turn.usage,
        preview: !args.turn.no_preview,
    };
    let options = RunOptions {
        max_repairs: args.max_repairs,
        raw: args.raw,
        ..RunOptions::streamed(!args.turn.no_stream)
    };
    let subject = opening.subject("chat");
    let runtime = &opening.runtime;
    let first = take_turn(&tokio, runtime, &opening.request, options, &subject, printing)?;
    let Some(report) = first.report else { return Ok(first.outcome) };
    let id = opening.conversation.clone();
    let dlp = runtime.dlp_policy(&opening.tool);
    let mut conversation =
        Conversation::start(id, opening.tool.clone(), dlp, &opening.request, &report);
    let overrides =
        ParamOverrides { temperature: args.turn.temperature, max_tokens: args.turn.max_tokens };
    let follow_options = RunOptions::streamed(!args.turn.no_stream);
    prompt_lines(|text| {
        let request = match sendable(runtime.follow_up(&conversation, text.to_owned(), overrides)) {
            Ok(Ok(request)) => request,
            // Its problem is said; the session goes on.
            Ok(Err(_)) => return,
            Err(error) => {
                eprintln!("error: {}", secrets::redact(&format!("{error:#}")));
                return;
            }
        };
        say_notices(&request);
        let subject = conversation.subject("chat", Some(opening.name.clone()));
        match take_turn(&tokio, runtime, &request, follow_options, &subject, printing) {
            Ok(TurnEnd { report: Some(report), .. }) => conversation.push(&request, &report),
            Ok(TurnEnd { report: None, .. }) => conversation.skip(),
            Err(error) => {
                conversation.skip();
                eprintln!("error: {}", secrets::redact(&format!("{error:#}")));
            }
        }
    })?;
    Ok(Outcome::Ok)
}

/// Reads lines at the `> ` prompt (line editing and the session's history), handing each
/// non-empty one to `ask`, until Ctrl-D or one of [`ENDINGS`]; Ctrl-C clears the line.
pub(crate) fn prompt_lines(mut ask: impl FnMut(&str)) -> anyhow::Result<()> {
    let mut editor = rustyline::DefaultEditor::new()?;
    loop {
        let line = match editor.readline("> ") {
            Ok(line) => line,
            // Ctrl-C at the prompt: a fresh line, as shells do.
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => return Ok(()),
            Err(error) => return Err(error.into()),
        };
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        if ENDINGS.contains(&text) {
            return Ok(());
        }
        let _ = editor.add_history_entry(text);
        ask(text);
    }
}
