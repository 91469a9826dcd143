//! `llmtool logs --conversations` and `llmtool logs --cid ID`: the conversations of the run
//! log, and one of them as a transcript (text, Markdown or JSON). The log is its owner's, so
//! the transcript shows the values data-loss prevention hid from the model, put back.

use std::fmt::Write as _;

use llmtool_log::{Conversation, ConversationSummary, Outcome as RunOutcome, Record};

use crate::commands::cost::{dollars, thousands};
use crate::commands::logs::args::LogsFormat;

/// The list of `conversations`, newest first.
pub(crate) fn list(conversations: &[ConversationSummary], format: LogsFormat) -> String {
    if format == LogsFormat::Json {
        return serde_json::to_string_pretty(conversations).unwrap_or_default() + "\n";
    }
    if conversations.is_empty() {
        return "no conversations logged\n".to_owned();
    }
    let mut text = String::new();
    for ConversationSummary { summary: c, tool } in conversations {
        let noun = if c.turns == 1 { "turn" } else { "turns" };
        let _ = writeln!(
            text,
            "{}  {}  {}  {}/{}  {} {noun}  {}",
            c.id,
            second(&c.last_at),
            tool,
            c.provider,
            c.model,
            c.turns,
            dollars(c.cost_usd)
        );
    }
    text
}

/// `conversation` as a transcript in `format`, its hidden values put back.
pub(crate) fn transcript(conversation: &Conversation, format: LogsFormat) -> String {
    let shown = llmtool_runtime::revealer(&conversation.thread.placeholders);
    match format {
        LogsFormat::Json => {
            let turns: Vec<serde_json::Value> = conversation
                .turns
                .iter()
                .map(|turn| {
                    let mut value = serde_json::to_value(turn).unwrap_or_default();
                    if let Some(fields) = value.as_object_mut() {
                        for field in ["prompt", "answer", "error"] {
                            if let Some(serde_json::Value::String(text)) = fields.get_mut(field) {
                                *text = shown(text);
                            }
                        }
                    }
                    value
                })
                .collect();
            let mut whole = serde_json::to_value(conversation).unwrap_or_default();
            whole["turns"] = turns.into();
            serde_json::to_string_pretty(&whole).unwrap_or_default() + "\n"
        }
        LogsFormat::Markdown => markdown(conversation, &shown),
        LogsFormat::Text => text(conversation, &shown),
    }
}

fn text(conversation: &Conversation, shown: &dyn Fn(&str) -> String) -> String {
    let mut out = heading(conversation);
    for turn in &conversation.turns {
        let number = turn.turn.unwrap_or_default();
        let asker = if number == 1 { "prompt" } else { "you" };
        let _ = writeln!(out, "\n── {number} {asker} ──");
        let _ = writeln!(out, "{}", shown(turn.prompt.as_deref().unwrap_or("(not kept)")));
        let _ = writeln!(out, "\n── {number} {}/{}{} ──", turn.provider, turn.model, usage(turn));
        let _ = writeln!(out, "{}", shown(&said(turn)));
    }
    out
}

fn markdown(conversation: &Conversation, shown: &dyn Fn(&str) -> String) -> String {
    let mut out = format!("# Conversation {}\n\n{}", conversation.id, heading(conversation));
    for turn in &conversation.turns {
        let number = turn.turn.unwrap_or_default();
        let asked = if number == 1 { "Prompt" } else { "Follow-up" };
        let _ = write!(out, "\n## {number}. {asked}\n\n");
        let _ = writeln!(out, "{}", shown(turn.prompt.as_deref().unwrap_or("_(not kept)_")));
        let _ = write!(out, "\n## {number}. Answer\n\n");
        let _ = writeln!(out, "_{}/{}{}_\n", turn.provider, turn.model, usage(turn));
        let _ = writeln!(out, "{}", shown(&said(turn)));
    }
    out
}

/// The conversation's first line: its id, tool, model, start, turns and cost.
fn heading(conversation: &Conversation) -> String {
    let tool = conversation.tool_name.as_deref().or(conversation.tool_path.as_deref());
    let cost: f64 = conversation.turns.iter().filter_map(|turn| turn.cost_usd).sum();
    let turns = conversation.turns.len();
    format!(
        "conversation {} · {} · {}/{} · started {} · {turns} {} · {}\n",
        conversation.id,
        tool.unwrap_or("?"),
        conversation.provider,
        conversation.model,
        second(&conversation.started_at),
        if turns == 1 { "turn" } else { "turns" },
        dollars(cost)
    )
}

/// What a turn's answer line says: its tokens and cost, or how it ended without one.
fn usage(turn: &Record) -> String {
    let mut text = String::new();
    if let (Some(input), Some(output)) = (turn.input_tokens, turn.output_tokens) {
        let _ = write!(text, " · {} in, {} out", thousands(input), thousands(output));
        if let Some(cached) = turn.cached_input_tokens.filter(|&n| n > 0) {
            let _ = write!(text, " ({} cached)", thousands(cached));
        }
    }
    if let Some(cost) = turn.cost_usd {
        let _ = write!(text, " · {}", dollars(cost));
    }
    if turn.outcome != RunOutcome::Ok {
        let _ = write!(text, " · {}", turn.outcome.as_str());
    }
    text
}

/// The answer of a turn, or why there is none.
fn said(turn: &Record) -> String {
    match (&turn.answer, &turn.error, turn.outcome) {
        (Some(answer), _, _) => answer.clone(),
        (None, Some(error), _) => format!("(no answer: {error})"),
        (None, None, RunOutcome::Cancelled) => "(cancelled)".to_owned(),
        (None, None, _) => "(no answer)".to_owned(),
    }
}

/// `2026-11-23 14:46:18Z` from the log's time: to the second.
pub(crate) fn second(time: &str) -> String {
    time.get(..19).map_or(time.to_owned(), |s| s.replace('T', " ") + "Z")
}
