//! One turn of a run or a conversation, as every command that talks to a model prints it: the
//! request's notes, the answer streamed to standard output (Ctrl-C stops it, and only it), the
//! answer printed as `--format` asks, its usage, and how it ended.

use std::io::Write as _;
use std::sync::Arc;

use llmtool_providers::ProviderError;
use llmtool_providers::functions::{FunctionEvent, Observer};

use llmtool_providers::run::{RunOptions, RunReport, RunRequest};
use llmtool_runtime::{Rejected, RunError, Runtime, Subject};

use crate::commands::cost;
use crate::commands::run::RunFormat;
use crate::outcome::Outcome;
use crate::{io, secrets};

/// How a turn's answer is printed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Printing {
    pub(crate) format: RunFormat,
    /// Tokens, cost and latency on standard error after the answer (`--usage`).
    pub(crate) usage: bool,
    /// An image tool's pictures drawn under their paths, in a terminal that can
    /// (`--no-preview` turns it off).
    pub(crate) preview: bool,
}

/// How a turn ended: its outcome, and its report when the model answered.
#[derive(Debug)]
pub(crate) struct TurnEnd {
    pub(crate) outcome: Outcome,
    pub(crate) report: Option<RunReport>,
}

/// Says what the user should hear before `request` is sent: its model's note and data-loss
/// prevention's findings (or the turns a conversation left out).
pub(crate) fn say_notices(request: &RunRequest) {
    if let Some(note) = &request.target.note {
        eprintln!("note: {note}");
    }
    for notice in &request.notices {
        eprintln!("warning: {notice}");
    }
}

/// The most characters of a call's arguments or result shown on standard error.
const SHOWN_CALL_CHARS: usize = 160;

/// Tells the user, on standard error, of each function the model calls and what came back.
fn say_call(event: FunctionEvent<'_>) {
    // Keys hidden first, then cut: a key across the cut would otherwise show its start.
    let short = |text: &str| {
        let text = secrets::redact(text);
        let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
        match line.char_indices().nth(SHOWN_CALL_CHARS) {
            Some((edge, _)) => format!("{}…", &line[..edge]),
            None => line,
        }
    };
    match event {
        FunctionEvent::Calling(call) => {
            eprintln!(
                "{}",
                secrets::redact(&format!("→ {} {}", call.name, short(&call.arguments)))
            );
        }
        FunctionEvent::Returned(call) => {
            let how = if call.failed { "failed" } else { "returned" };
            eprintln!("← {} {how} in {} ms: {}", call.name, call.ms, short(&call.result));
        }
    }
}

/// Sends `request`, a run of `subject`, and prints its answer. A failure to get an answer at
/// all is the error; an answer that misses the expected output is [`Outcome::Problems`].
pub(crate) fn take_turn(
    tokio: &tokio::runtime::Runtime,
    runtime: &Runtime,
    request: &RunRequest,
    options: RunOptions,
    subject: &Subject,
    printing: Printing,
) -> anyhow::Result<TurnEnd> {
    let mut streamed = false;
    let mut stdout_error = None;
    let mut on_text = |text: &str| {
        streamed = true;
        let mut stdout = std::io::stdout().lock();
        if let Err(error) = stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
            stdout_error.get_or_insert(error);
        }
    };
    let observed;
    let request = match &request.functions {
        Some(functions) => {
            let printer: Observer = Arc::new(say_call);
            observed = RunRequest {
                functions: Some(functions.clone().with_observer(printer)),
                ..request.clone()
            };
            &observed
        }
        None => request,
    };
    let ctrl_c = async {
        // A Ctrl-C that cannot be listened for never comes.
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    let finished =
        tokio.block_on(runtime.execute(request, options, Some(subject), &mut on_text, ctrl_c));
    if let Some(problem) = &finished.not_kept {
        eprintln!("warning: the run is not logged: {problem}");
    }
    if let Some(error) = stdout_error {
        return Err(error.into());
    }
    let cancelled = finished.cancelled();
    let report = match finished.result {
        Ok(report) => report,
        Err(_) if cancelled => {
            eprintln!("\ncancelled");
            return Ok(TurnEnd { outcome: Outcome::Cancelled, report: None });
        }
        Err(error) => {
            if streamed {
                eprintln!();
            }
            if let RunError::Provider(ProviderError::FunctionLoop(why)) = &error {
                // The model did not converge on an answer: its output's problem.
                eprintln!("error: {why}");
                return Ok(TurnEnd { outcome: Outcome::Problems, report: None });
            }
            return Err(error.into());
        }
    };
    for warning in &report.warnings {
        eprintln!("warning: {}", secrets::redact(warning));
    }
    match printing.format {
        RunFormat::Json => {
            let mut shown = serde_json::to_value(&report)?;
            if let (Some(turn), Some(fields)) = (&subject.turn, shown.as_object_mut()) {
                fields.insert("conversation".into(), turn.conversation.clone().into());
                fields.insert("turn".into(), turn.number.into());
            }
            let text = serde_json::to_string_pretty(&shown)? + "\n";
            io::write_stdout(secrets::redact(&text).as_bytes())?;
        }
        RunFormat::Text if streamed => {
            if io::stdout_is_terminal() && !report.raw.ends_with('\n') {
                io::write_stdout(b"\n")?;
            }
        }
        RunFormat::Text => {
            if let Some(output) = &report.output {
                let mut text = output.clone();
                if io::stdout_is_terminal() && !text.ends_with('\n') {
                    text.push('\n');
                }
                io::write_stdout(text.as_bytes())?;
            }
            let protocol = crate::preview::protocol().filter(|_| printing.preview);
            if let Some(protocol) = protocol.filter(|_| io::stdout_is_terminal()) {
                for image in report.images.iter().filter(|image| image.format == "png") {
                    // A picture that cannot be read back is only not shown: it is saved.
                    let png = image.path.as_ref().and_then(|p| std::fs::read(p).ok());
                    if let Some(drawn) = png.and_then(|png| crate::preview::draw(protocol, &png)) {
                        io::write_stdout(drawn.as_bytes())?;
                    }
                }
            }
        }
    }
    if printing.usage {
        eprintln!("{}", cost::summary(&report));
        if let Some(turn) = &subject.turn {
            eprintln!("conversation {} turn {}", turn.conversation, turn.number);
        }
    }
    if let Err(rejected) = Rejected::check(&report) {
        eprintln!("{}", secrets::redact(&format!("error: {rejected}")));
        return Ok(TurnEnd { outcome: Outcome::Problems, report: Some(report) });
    }
    Ok(TurnEnd { outcome: Outcome::Ok, report: Some(report) })
}
