//! A mention of the app in a thread that is a conversation: a turn of it, asked by the member
//! behind the Slack user, run and charged as theirs; its answer is posted in the thread by the
//! poster, as every turn of a connected conversation is (once, in order).
//!
//! Who may go on with it is the studio's rule: its owner, and the members who joined it by
//! its collaboration link, while they may see its tool; anyone else is told the thread's
//! conversation is not one they can go on with. Since the channel reads the answer, every
//! turn asked from Slack goes on as a collaborator's does: the values data-loss prevention
//! hid stay placeholders, and the asker's own hidden values are masked again before posting.
//! One turn at a time, as in the studio.

use std::sync::Arc;

use llmtool_registry::{Reference, Selector};
use llmtool_runtime::Subject;
use llmtool_slack::payloads::Said;

use super::Slack;
use super::people::{Asker, not_a_member};
use crate::ServerState;
use crate::conversation_api::{Standing, conversation_of};
use crate::runs::Ask;

/// Answers the mention `said`, when its thread is a conversation.
pub(super) async fn mentioned(state: ServerState, slack: Arc<Slack>, said: Said) {
    let conversation = match state.store.slack_thread(&said.channel, said.thread()).await {
        Ok(Some(conversation)) => conversation,
        Ok(None) => {
            let hint = "I answer in the threads of the tools run here: `/llmtool` lists them, and a mention in an answer's thread goes on with it.";
            return slack.tell(&said.channel, &said.user, hint).await;
        }
        Err(error) => return tracing::warn!("a Slack thread could not be looked up: {error}"),
    };
    let who = match slack.asker(&state, &said.user).await {
        Ok(Asker::Member(who)) => who,
        Ok(Asker::Unknown { email }) => {
            return slack.tell(&said.channel, &said.user, &not_a_member(email.as_deref())).await;
        }
        Err(error) => return slack.tell(&said.channel, &said.user, &error.said()).await,
    };
    let bot = slack.bot().await.map(|bot| bot.user_id.clone()).unwrap_or_default();
    let text = said.words(&bot);
    if text.is_empty() {
        return slack
            .tell(&said.channel, &said.user, "Ask your follow-up after the mention.")
            .await;
    }
    match turn(&state, &who, &conversation, text, &said).await {
        Ok(()) => state.wake_slack(),
        Err(problem) => slack.tell(&said.channel, &said.user, &problem).await,
    }
}

/// Makes sure the thread's conversation is connected to it, so that the poster posts the
/// turn about to be asked (a thread kept before conversations were connected has no
/// connection yet: its turns so far count as posted).
async fn connected(
    state: &ServerState,
    conversation: &str,
    said: &Said,
    member: &str,
) -> Result<(), llmtool_registry::StoreError> {
    if state.store.slack_sync(conversation).await?.is_some() {
        return Ok(());
    }
    let turns =
        state.store.conversation_info(conversation).await?.map_or(0, |info| info.summary.turns);
    let sync = llmtool_registry::SlackSync {
        conversation: conversation.to_owned(),
        channel: said.channel.clone(),
        thread_ts: Some(said.thread().to_owned()),
        posted: u32::try_from(turns).unwrap_or(u32::MAX),
        part: 0,
        connected_by: member.to_owned(),
        connected_at: jiff::Timestamp::now().to_string(),
        failures: 0,
        last_error: None,
    };
    state.store.connect_slack(&sync).await
}

/// Runs the follow-up `text` in `conversation`, asked by `who` (its answer, or why the run
/// gave none, is kept as the turn, for the poster); else why it was not run (a conversation
/// they may not go on with is one that does not exist).
async fn turn(
    state: &ServerState,
    who: &crate::runs::RunFor,
    conversation: &str,
    text: String,
    said: &Said,
) -> Result<(), String> {
    let runs = state.runs().cloned().ok_or("this server runs no tools")?;
    let missing = || "This thread's conversation is not one you can go on with.".to_owned();
    let read = |error: llmtool_registry::StoreError| error.to_string();
    // Who may go on with it is decided before anything is held.
    let info =
        state.store.conversation_info(conversation).await.map_err(read)?.ok_or_else(missing)?;
    let member_id = state.store.member_id(&who.member).await.map_err(read)?.ok_or_else(missing)?;
    let owns = info.owner == llmtool_registry::owner_of(&member_id, None);
    if !owns && !state.store.is_collaborator(conversation, &member_id).await.map_err(read)? {
        return Err(missing());
    }
    let version = state
        .store
        .version(&info.slug, &Selector::Version(info.version))
        .await
        .ok()
        .filter(|version| who.visibility.sees(&version.tags))
        .ok_or_else(missing)?;
    // Its thread is where the poster posts the turn about to be asked (of someone who may go
    // on with it: checked above).
    connected(state, conversation, said, &who.member).await.map_err(read)?;
    let following = runs.follow(conversation).await.map_err(|problem| problem.detail)?;
    let kept = state.store.conversation(conversation).await.map_err(read)?.ok_or_else(missing)?;
    let info = &kept.info;
    let going_on =
        conversation_of(&kept, version.text, Standing::Collaborator).map_err(|e| e.to_string())?;
    let _turn = runs.turn_or_busy().await.map_err(|problem| problem.detail)?;
    let ask = Ask::FollowUp { conversation: &going_on, text, choice: None };
    let prepared = Box::pin(runs.prepare(state, who, (&info.slug, &version.tags), ask))
        .await
        .map_err(|problem| problem.detail)?;
    let path = Reference::pinned(&info.slug, info.version).path();
    let subject = Subject {
        by: who.by.clone(),
        account: Some(prepared.account.clone()),
        ..going_on.subject("slack", Some(path))
    };
    let runtime = &prepared.runtime;
    let answered =
        runtime.answer_request(&prepared.request, Some(&subject), std::future::pending()).await;
    drop(following);
    if let Err(error) = answered {
        tracing::info!(
            "a turn asked from Slack did not answer: {}",
            runtime.redact(&error.to_string())
        );
    }
    Ok(())
}
