//! Posting the conversations connected to Slack: an outbox kept in the library. Each
//! connected conversation records how many of its turns are posted whole and how many
//! messages of the next; the poster claims the conversations due (one server posts each, the
//! claim renewed at every message) and posts what is left, in order, one message at a time,
//! recording each. When Slack cannot take a message (down, busy, the bot out of the channel)
//! nothing is lost: the conversation waits (longer after each failure) and goes on from
//! where it stopped. A turn asked in the thread (a mention) has its question there already:
//! only its answer is posted. The poster is woken when a turn is kept or a conversation
//! connected, and looks every two seconds in any case (for other servers' turns and waits).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use llmtool_log::conversation::{masked, value_text};
use llmtool_log::{Outcome, Record};
use llmtool_registry::{KeptConversation, PicturesOf, SlackDue};
use llmtool_slack::WebApiError;
use llmtool_slack::blocks::{SlackMessage, answer_messages, escaped};
use serde_json::json;

use super::Slack;
use super::app::{RELOAD_EVERY, reload, revoked};
use crate::ServerState;

/// How often the poster looks for turns to post without being woken.
const TICK: Duration = Duration::from_secs(2);
/// The most conversations one look posts.
const AT_ONCE: u32 = 16;
/// The longest a question's message is, in characters (escaped and quoted): within the 3,000
/// of a section.
const QUESTION_CHARS: usize = 2_900;
/// The origin of the turns asked from Slack.
const FROM_SLACK: &str = "slack";

/// Posts the connected conversations until the server stops.
pub(crate) async fn run(state: ServerState) {
    let mut reloaded: Option<Instant> = None;
    loop {
        if reloaded.is_none_or(|at| at.elapsed() >= RELOAD_EVERY) {
            reload(&state).await;
            reloaded = Some(Instant::now());
        }
        if let Some(slack) = state.slack() {
            post_due(&state, &slack).await;
        }
        tokio::select! {
            () = state.slack_wake.notified() => {}
            () = tokio::time::sleep(TICK) => {}
            () = state.stopping.cancelled() => return,
        }
    }
}

/// Why posting a conversation stopped.
enum Stopped {
    /// Slack refused the token: nothing more is posted anywhere.
    Revoked(String),
    /// This conversation waits; `transient` when Slack was down or busy.
    Failed { error: String, transient: bool },
    /// The conversation is no longer this poster's (disconnected, connected again, or taken
    /// over by another server after a long silence): it stops at once.
    Lost,
}

impl From<WebApiError> for Stopped {
    fn from(error: WebApiError) -> Stopped {
        match error {
            WebApiError::Revoked(reason) => Stopped::Revoked(reason),
            error => Stopped::Failed { transient: error.is_transient(), error: error.to_string() },
        }
    }
}

impl From<llmtool_registry::StoreError> for Stopped {
    fn from(error: llmtool_registry::StoreError) -> Stopped {
        Stopped::Failed { error: format!("the library: {error}"), transient: true }
    }
}

/// Slack's refusals of a message itself (too long, blocks it will not take): posting it again
/// would fail again, so a short note takes its place and the conversation goes on.
const UNPOSTABLE: &[&str] = &[
    "invalid_blocks",
    "msg_too_long",
    "msg_blocks_too_long",
    "invalid_attachments",
    "too_many_attachments",
];

/// How long a conversation waits after its `failures`-th failure in a row: from 5 s,
/// doubling, to 10 minutes while Slack is down or busy; an hour for a refusal (the bot out of
/// the channel, the channel archived), which someone has to fix first.
fn wait_after(failures: u32, transient: bool) -> f64 {
    if transient { (5.0 * f64::from(1u32 << failures.min(7))).min(600.0) } else { 3_600.0 }
}

/// Claims the conversations due one at a time (so that each claim is fresh when its posting
/// starts) and posts each.
async fn post_due(state: &ServerState, slack: &Slack) {
    for _ in 0..AT_ONCE {
        let due = match state.store.slack_due(1).await {
            Ok(mut due) => match due.pop() {
                Some(due) => due,
                None => return,
            },
            Err(error) => return tracing::warn!("the Slack outbox could not be read: {error}"),
        };
        let (conversation, claim) = (due.sync.conversation.as_str(), due.claim.as_str());
        match post(state, slack, &due).await {
            Ok(()) => {
                if let Err(error) = state.store.slack_release(conversation, claim).await {
                    tracing::warn!("a posted conversation could not be let go of: {error}");
                }
            }
            Err(Stopped::Lost) => {}
            Err(Stopped::Revoked(reason)) => return revoked(state, slack, &reason).await,
            Err(Stopped::Failed { error, transient }) => {
                let wait = wait_after(due.sync.failures, transient);
                tracing::info!("a conversation waits {wait:.0} s to be posted in Slack: {error}");
                let failed = state.store.slack_failed(conversation, claim, wait, &error).await;
                if let Err(error) = failed {
                    tracing::warn!("a Slack failure could not be recorded: {error}");
                }
            }
        }
    }
}

/// Records how far `due`'s conversation is posted: [`Stopped::Lost`] when it is no longer
/// this poster's.
async fn progress(
    state: &ServerState,
    due: &SlackDue,
    thread: &str,
    posted: u32,
    part: u32,
) -> Result<(), Stopped> {
    let id = &due.sync.conversation;
    let held = state.store.slack_progress(id, &due.claim, thread, posted, part).await?;
    if held { Ok(()) } else { Err(Stopped::Lost) }
}

/// Posts `message` in the thread; a message Slack refuses as such is replaced by a short note.
async fn post_one(
    slack: &Slack,
    channel: &str,
    thread: &str,
    message: &SlackMessage,
) -> Result<(), Stopped> {
    match slack.api.post_message(channel, Some(thread), message).await {
        Ok(_) => Ok(()),
        Err(WebApiError::Refused { error, .. }) if UNPOSTABLE.contains(&error.as_str()) => {
            tracing::warn!("Slack refused a message of a conversation ({error}): a note is posted");
            let note = format!(
                "_This message could not be posted in Slack ({error}): the studio shows it._"
            );
            let note = SlackMessage {
                text: note.clone(),
                blocks: vec![json!({"type": "section", "text": {"type": "mrkdwn", "text": note}})],
            };
            slack.api.post_message(channel, Some(thread), &note).await?;
            Ok(())
        }
        Err(error) => Err(error.into()),
    }
}

/// Posts what is left of `due`'s conversation: its thread's first message if it has none yet,
/// then each turn not posted, recording each message as it goes.
async fn post(state: &ServerState, slack: &Slack, due: &SlackDue) -> Result<(), Stopped> {
    let sync = &due.sync;
    let id = sync.conversation.as_str();
    let Some(kept) = state.store.conversation(id).await? else {
        // Deleted meanwhile: nothing is left to post.
        state.store.disconnect_slack(id).await?;
        return Ok(());
    };
    let hidden = &kept.conversation.thread.placeholders;
    let thread = match &sync.thread_ts {
        Some(thread) => thread.clone(),
        None => {
            let first = first_message(state, &kept, &sync.connected_by).await;
            let thread = slack.api.post_message(&sync.channel, None, &first).await?;
            progress(state, due, &thread, sync.posted, sync.part).await?;
            thread
        }
    };
    let pictures = state.store.pictures_of(PicturesOf::Conversation(id)).await?;
    let (mut posted, mut part) = (sync.posted, sync.part);
    while let Some(record) = kept.conversation.turns.get(posted as usize) {
        let asked_by = kept.asked_by.get(posted as usize).cloned().flatten();
        let run = record.id.unwrap_or_default();
        let its_pictures: Vec<_> = pictures.iter().filter(|p| p.run == run).collect();
        if its_pictures.is_empty() && record.answer.as_deref().is_some_and(describes_pictures) {
            // Its pictures are being kept: it is posted with them, in a moment.
            return Err(Stopped::Failed {
                error: "a turn's pictures are not kept yet".into(),
                transient: true,
            });
        }
        let turn =
            Turn { record, asked_by: asked_by.as_deref(), pictures: !its_pictures.is_empty() };
        let messages = turn.messages(&kept.info.summary.title, hidden);
        let parts = messages.len() + its_pictures.len();
        while (part as usize) < parts {
            match messages.get(part as usize) {
                Some(message) => post_one(slack, &sync.channel, &thread, message).await?,
                None => {
                    let info = its_pictures[part as usize - messages.len()];
                    let Some(picture) = state.store.picture(id, run, info.position).await? else {
                        part += 1;
                        continue;
                    };
                    let name = format!("turn-{}-{}.{}", posted + 1, info.position, info.format);
                    slack
                        .api
                        .upload_file(&sync.channel, Some(&thread), &name, picture.data)
                        .await?;
                }
            }
            part += 1;
            progress(state, due, &thread, posted, part).await?;
        }
        posted += 1;
        part = 0;
        progress(state, due, &thread, posted, part).await?;
    }
    Ok(())
}

/// Whether `answer` is what an image tool's record keeps of its pictures: a line for each,
/// ending `sha256:HEX WIDTHxHEIGHT FORMAT`.
fn describes_pictures(answer: &str) -> bool {
    let described = |line: &str| {
        let mut words = line.rsplit(' ');
        let (Some(format), Some(size), Some(hash)) = (words.next(), words.next(), words.next())
        else {
            return false;
        };
        let hex = hash.strip_prefix("sha256:").unwrap_or_default();
        hex.len() == 64
            && hex.bytes().all(|b| b.is_ascii_hexdigit())
            && size.split_once('x').is_some_and(|(w, h)| {
                w.bytes().all(|b| b.is_ascii_digit()) && h.bytes().all(|b| b.is_ascii_digit())
            })
            && !format.is_empty()
    };
    !answer.is_empty() && answer.lines().all(described)
}

/// The thread's first message: the conversation's title, who connected it, and where the
/// studio shows it.
async fn first_message(
    state: &ServerState,
    kept: &KeptConversation,
    connected_by: &str,
) -> SlackMessage {
    let title = masked(&kept.info.summary.title, &kept.conversation.thread.placeholders);
    let who = match state.store.member(connected_by).await {
        Ok(member) => member.name,
        Err(_) => "a member".to_owned(),
    };
    let mut text = format!("*{}* · connected by {}", escaped(&title), escaped(&who));
    if let Some(url) = &state.sign_in.public_url {
        text.push_str(&format!(
            " · <{url}/conversations/{}|open in the studio>",
            kept.info.summary.id
        ));
    }
    SlackMessage {
        text: escaped(&format!("{title}, a conversation connected by {who}")),
        blocks: vec![json!({"type": "section", "text": {"type": "mrkdwn", "text": text}})],
    }
}

/// One turn to post: its record, who asked it, and whether it made pictures.
struct Turn<'a> {
    record: &'a Record,
    asked_by: Option<&'a str>,
    pictures: bool,
}

impl Turn<'_> {
    /// The turn's messages: who asked and what (unless it was asked in the thread, where it is
    /// already), then the answer, or why there is none; a turn that made pictures has them for
    /// its answer (its text only describes them), uploaded after these. The first turn is
    /// shown by its values, not the prompt they made (the tool's prompt is the tool's). Every
    /// text is masked with the conversation's `hidden` values: data-loss prevention's
    /// placeholders stay placeholders.
    fn messages(&self, tool: &str, hidden: &BTreeMap<String, String>) -> Vec<SlackMessage> {
        let record = self.record;
        let mut messages = Vec::new();
        if record.origin != FROM_SLACK {
            let who = self.asked_by.unwrap_or("A member");
            let (said, asked) = match record.turn {
                Some(turn) if turn > 1 => ("asked", record.prompt.clone().unwrap_or_default()),
                _ => ("ran the tool", values_of(record, tool)),
            };
            let heading = format!("*{}* {said} in the studio:", escaped(who));
            let quoted: Vec<String> =
                escaped(&masked(&asked, hidden)).lines().map(|line| format!("> {line}")).collect();
            let text = within(&format!("{heading}\n{}", quoted.join("\n")), QUESTION_CHARS);
            messages.push(SlackMessage {
                text: escaped(&format!("{who} {said} in the studio")),
                blocks: vec![json!({"type": "section", "text": {"type": "mrkdwn", "text": text}})],
            });
        }
        if self.pictures {
            return messages;
        }
        let answer = match (&record.outcome, &record.answer) {
            (Outcome::Ok | Outcome::Rejected, Some(answer)) => answer.clone(),
            _ => format!(
                "The run did not answer: {}",
                record.error.as_deref().unwrap_or("it ended without an answer")
            ),
        };
        messages.extend(answer_messages(&masked(&answer, hidden)));
        messages
    }
}

/// The values a first turn was run with, a line each (`topic: tides`), or the tool's name
/// when it takes none.
fn values_of(record: &Record, tool: &str) -> String {
    let values = record.variables.as_ref().and_then(|v| v.as_object());
    let lines: Vec<String> = values
        .into_iter()
        .flatten()
        .map(|(name, value)| format!("{name}: {}", value_text(value)))
        .collect();
    if lines.is_empty() { tool.to_owned() } else { lines.join("\n") }
}

/// `text` cut to at most `chars` characters (with `…` when cut): a section of Slack's takes
/// 3,000.
fn within(text: &str, chars: usize) -> String {
    if text.chars().count() <= chars {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(chars - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A turn's record: `fields` over a run that answered.
    fn record(fields: &serde_json::Value) -> Record {
        let mut whole = json!({"started_at": "2026-12-05T10:00:00Z", "origin": "studio",
            "tool_hash": "", "variables_hash": "", "provider": "mock", "model": "m",
            "repairs": 0, "outcome": "ok", "redactions": {}, "calls": []});
        for (name, value) in fields.as_object().into_iter().flatten() {
            whole[name] = value.clone();
        }
        serde_json::from_value(whole).unwrap()
    }

    #[test]
    fn an_image_tools_kept_answer_is_told_from_a_text() {
        let hash = "ab07eff0aa21f760ea9611f3e76e7f46fce20efff97bbc957a760fe5cf3d0f29";
        assert!(describes_pictures(&format!("sha256:{hash} 64x48 png")));
        assert!(describes_pictures(&format!(
            "out/a.png sha256:{hash} 64x48 png\nsha256:{hash} 8x8 webp"
        )));
        assert!(!describes_pictures("Tides turn twice a day."));
        assert!(!describes_pictures(&format!("see sha256:{hash} twice")));
        assert!(!describes_pictures(""));
    }

    #[test]
    fn a_long_question_fits_a_section_and_hidden_values_stay_hidden() {
        let record = record(&json!({"turn": 2,
            "prompt": format!("{} <b> ana@example.org", "word & ".repeat(1_000)),
            "answer": "Write to ana@example.org."}));
        let hidden = BTreeMap::from([("[EMAIL_1]".to_owned(), "ana@example.org".to_owned())]);
        let turn = Turn { record: &record, asked_by: Some("Sam"), pictures: false };
        let messages = turn.messages("Poet", &hidden);
        let question = messages[0].blocks[0]["text"]["text"].as_str().unwrap();
        assert!(question.chars().count() <= 3_000, "{}", question.chars().count());
        assert!(question.starts_with("*Sam* asked in the studio:\n> word &amp; "), "{question}");
        assert!(!question.contains("ana@"));
        let answer = messages[1].blocks[0]["text"]["text"].as_str().unwrap();
        assert_eq!(answer, "Write to [EMAIL_1].");
    }

    #[test]
    fn a_first_turn_is_shown_by_its_values_not_the_tools_prompt() {
        let record = record(&json!({"turn": 1, "prompt": "SECRET INSTRUCTIONS about tides",
            "variables": {"topic": "tides", "tone": ["calm", "dry"]}, "answer": "Waves."}));
        let turn = Turn { record: &record, asked_by: None, pictures: false };
        let question = turn.messages("Poet", &BTreeMap::new())[0].blocks[0]["text"]["text"].clone();
        assert_eq!(
            question,
            "*A member* ran the tool in the studio:\n> topic: tides\n> tone: calm, dry"
        );
    }

    #[test]
    fn waits_grow_while_slack_is_down_and_a_refusal_waits_an_hour() {
        let waits: Vec<f64> = (0..9).map(|failures| wait_after(failures, true)).collect();
        assert_eq!(waits, [5.0, 10.0, 20.0, 40.0, 80.0, 160.0, 320.0, 600.0, 600.0]);
        assert!((wait_after(0, false) - 3_600.0).abs() < f64::EPSILON);
    }
}
