//! Posting the conversations connected to Slack: an outbox kept in the library. Each
//! connected conversation records how many of its turns are posted whole and how many
//! messages of the next; the poster claims the conversations due (one server posts each, the
//! claim renewed at every message) and posts what is left, in order, one message at a time,
//! recording each. When Slack cannot take a message (down, busy, the bot out of the channel)
//! nothing is lost: the conversation waits (longer after each failure) and goes on from
//! where it stopped. A turn asked in the thread (a mention) has its question there already:
//! only its answer is posted. The poster is woken when a turn is kept or a conversation
//! connected, and looks every two seconds in any case (for other servers' turns and waits).

use std::time::{Duration, Instant};

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
/// The longest a question is quoted in the channel, in characters.
const QUESTION_CHARS: usize = 2_800;
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

/// How long a conversation waits after its `failures`-th failure in a row: from 5 s,
/// doubling, to 10 minutes while Slack is down or busy; an hour for a refusal (the bot out of
/// the channel, the channel archived), which someone has to fix first.
fn wait_after(failures: u32, transient: bool) -> f64 {
    if transient { (5.0 * f64::from(1u32 << failures.min(7))).min(600.0) } else { 3_600.0 }
}

async fn post_due(state: &ServerState, slack: &Slack) {
    let due = match state.store.slack_due(AT_ONCE).await {
        Ok(due) => due,
        Err(error) => return tracing::warn!("the Slack outbox could not be read: {error}"),
    };
    for due in due {
        let conversation = due.sync.conversation.clone();
        match post(state, slack, &due).await {
            Ok(()) => {
                if let Err(error) = state.store.slack_release(&conversation).await {
                    tracing::warn!("a posted conversation could not be let go of: {error}");
                }
            }
            Err(Stopped::Revoked(reason)) => return revoked(state, &reason).await,
            Err(Stopped::Failed { error, transient }) => {
                let wait = wait_after(due.sync.failures, transient);
                tracing::info!("a conversation waits {wait:.0} s to be posted in Slack: {error}");
                if let Err(error) = state.store.slack_failed(&conversation, wait, &error).await {
                    tracing::warn!("a Slack failure could not be recorded: {error}");
                }
            }
        }
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
    let thread = match &sync.thread_ts {
        Some(thread) => thread.clone(),
        None => {
            let first = first_message(state, &kept, &sync.connected_by).await;
            let thread = slack.api.post_message(&sync.channel, None, &first).await?;
            state.store.slack_progress(id, &thread, sync.posted, sync.part).await?;
            thread
        }
    };
    let pictures = state.store.pictures_of(PicturesOf::Conversation(id)).await?;
    let (mut posted, mut part) = (sync.posted, sync.part);
    while let Some(record) = kept.conversation.turns.get(posted as usize) {
        let asked_by = kept.asked_by.get(posted as usize).cloned().flatten();
        let run = record.id.unwrap_or_default();
        let its_pictures: Vec<_> = pictures.iter().filter(|p| p.run == run).collect();
        let messages = turn_messages(record, asked_by.as_deref(), !its_pictures.is_empty());
        let parts = messages.len() + its_pictures.len();
        while (part as usize) < parts {
            match messages.get(part as usize) {
                Some(message) => {
                    slack.api.post_message(&sync.channel, Some(&thread), message).await?;
                }
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
            state.store.slack_progress(id, &thread, posted, part).await?;
        }
        posted += 1;
        part = 0;
        state.store.slack_progress(id, &thread, posted, part).await?;
    }
    Ok(())
}

/// The thread's first message: the conversation's title, who connected it, and where the
/// studio shows it.
async fn first_message(
    state: &ServerState,
    kept: &KeptConversation,
    connected_by: &str,
) -> SlackMessage {
    let title = &kept.info.summary.title;
    let who = match state.store.member(connected_by).await {
        Ok(member) => member.name,
        Err(_) => "a member".to_owned(),
    };
    let mut text = format!("*{}* · connected by {}", escaped(title), escaped(&who));
    if let Some(url) = &state.sign_in.public_url {
        text.push_str(&format!(
            " · <{url}/conversations/{}|open in the studio>",
            kept.info.summary.id
        ));
    }
    SlackMessage {
        text: format!("{title}, a conversation connected by {who}"),
        blocks: vec![json!({"type": "section", "text": {"type": "mrkdwn", "text": text}})],
    }
}

/// The messages of one turn: who asked and what (unless it was asked in the thread, where
/// it is already), then the answer, or why there is none; a turn that made `pictures` has
/// them for its answer (its text only describes them), uploaded after these. The prompt and
/// the answer are as the library keeps them: values data-loss prevention hid stay
/// placeholders.
fn turn_messages(record: &Record, asked_by: Option<&str>, pictures: bool) -> Vec<SlackMessage> {
    let mut messages = Vec::new();
    if record.origin != FROM_SLACK {
        let who = asked_by.unwrap_or("A member");
        let question = record.prompt.as_deref().unwrap_or_default();
        let mut quoted: String = question.chars().take(QUESTION_CHARS).collect();
        if quoted.len() < question.len() {
            quoted.push('…');
        }
        let quoted: Vec<String> =
            escaped(&quoted).lines().map(|line| format!("> {line}")).collect();
        let text = format!("*{}* asked in the studio:\n{}", escaped(who), quoted.join("\n"));
        messages.push(SlackMessage {
            text: format!("{who} asked in the studio"),
            blocks: vec![json!({"type": "section", "text": {"type": "mrkdwn", "text": text}})],
        });
    }
    if pictures {
        return messages;
    }
    let answer = match (&record.outcome, &record.answer) {
        (Outcome::Ok | Outcome::Rejected, Some(answer)) => answer.clone(),
        _ => format!(
            "The run did not answer: {}",
            record.error.as_deref().unwrap_or("it ended without an answer")
        ),
    };
    messages.extend(answer_messages(&answer));
    messages
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_grow_while_slack_is_down_and_a_refusal_waits_an_hour() {
        let waits: Vec<f64> = (0..9).map(|failures| wait_after(failures, true)).collect();
        assert_eq!(waits, [5.0, 10.0, 20.0, 40.0, 80.0, 160.0, 320.0, 600.0, 600.0]);
        assert!((wait_after(0, false) - 3_600.0).abs() < f64::EPSILON);
    }
}
