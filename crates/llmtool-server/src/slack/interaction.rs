//! A submitted tool modal: Slack is answered at once (the modal closes), and the tool runs
//! afterwards as the member who submitted it, through the same admission as the studio's runs
//! (the rule of who sees which tool, budgets, data-loss prevention, spend). Its answer is
//! posted in the channel the command came from: a message naming the tool and who asked, and
//! the answer in its thread, which is the run's conversation from then on.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse as _, Response};
use llmtool_format::model::Tool;
use llmtool_format::template::{Inputs, ToolTemplate};
use llmtool_registry::{Reference, Selector};
use llmtool_runtime::{ParamOverrides, Subject, new_conversation_id};
use llmtool_slack::blocks::{SlackMessage, escaped};
use llmtool_slack::modal::{RUN_CALLBACK, submitted_values};
use llmtool_slack::payloads::{Interaction, View};
use serde_json::json;

use super::people::{Asker, not_a_member};
use super::{Slack, received};
use crate::ServerState;
use crate::runs::{Ask, RunFor};

/// `POST /slack/interactivity`.
pub(super) async fn interaction(
    State(state): State<ServerState>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (slack, interaction) = match received(&state, &headers, &body, Interaction::from_form) {
        Ok(received) => received,
        Err(status) => return status.into_response(),
    };
    if let Interaction::ViewSubmission { user, view } = interaction
        && view.callback_id == RUN_CALLBACK
    {
        // Slack waits three seconds at most: the run goes on after the answer.
        let job = submitted(state, Arc::clone(&slack), user.id, view);
        slack.spawn("a submitted modal", job);
    }
    StatusCode::OK.into_response()
}

/// Where a modal's answer goes, as the command put it in the modal.
struct Asked {
    slug: String,
    /// The version the modal was made from: its inputs are that version's variables.
    version: u32,
    channel: String,
    user: String,
}

/// Runs the tool of a submitted modal and posts what came of it.
async fn submitted(state: ServerState, slack: Arc<Slack>, user: String, view: View) {
    let metadata: serde_json::Value =
        serde_json::from_str(&view.private_metadata).unwrap_or_default();
    let text = |key: &str| metadata[key].as_str().unwrap_or_default().to_owned();
    let version = metadata["version"].as_u64().and_then(|v| u32::try_from(v).ok()).unwrap_or(0);
    let asked = Asked { slug: text("slug"), version, channel: text("channel"), user };
    if asked.slug.is_empty() || asked.channel.is_empty() || asked.version == 0 {
        return;
    }
    let who = match slack.asker(&state, &asked.user).await {
        Ok(Asker::Member(who)) => who,
        Ok(Asker::Unknown { email }) => {
            return slack.tell(&asked.channel, &asked.user, &not_a_member(email.as_deref())).await;
        }
        Err(error) => return slack.tell(&asked.channel, &asked.user, &error.said()).await,
    };
    if let Err(problem) = run_and_post(&state, &slack, &who, &asked, &view).await {
        slack.tell(&asked.channel, &asked.user, &problem).await;
    }
}

/// Runs the tool `asked.slug` for `who` with the modal's values; its answer is posted, or
/// the reason there is none (a refusal before the run is returned, for the user alone).
async fn run_and_post(
    state: &ServerState,
    slack: &Slack,
    who: &RunFor,
    asked: &Asked,
    view: &View,
) -> Result<(), String> {
    let runs = state.runs().cloned().ok_or("this server runs no tools")?;
    let version = state
        .store
        .version(&asked.slug, &Selector::Version(asked.version))
        .await
        .ok()
        .filter(|version| who.visibility.sees(&version.tags))
        .ok_or_else(|| format!("There is no tool `{}` you can run.", asked.slug))?;
    let tool: Tool = llmtool_format::Document::from_text(version.text)
        .tool
        .filter(|tool| tool.kind() == llmtool_format::model::ToolKind::Prompt)
        .ok_or_else(|| format!("`{}` is no prompt tool Slack can run.", asked.slug))?;
    let template = ToolTemplate::new(&tool);
    let values = serde_json::Value::Object(submitted_values(view, template.variables()));
    let inputs = Inputs::from_json(&values, template.variables()).map_err(|e| e.to_string())?;
    let prompt = template.render(&inputs).map_err(|problems| {
        problems.iter().map(|p| p.message.clone()).collect::<Vec<_>>().join("; ")
    })?;
    let _turn = runs.turn_or_busy().await.map_err(|problem| problem.detail)?;
    let choice = llmtool_runtime::Choice::default();
    let ask =
        Ask::Prompt { tool: &tool, prompt, overrides: ParamOverrides::default(), choice: &choice };
    let mut prepared = Box::pin(runs.prepare(state, who, (&asked.slug, &version.tags), ask))
        .await
        .map_err(|problem| problem.detail)?;
    let path = Reference::pinned(&asked.slug, version.version).path();
    let subject = Subject {
        by: who.by.clone(),
        account: Some(prepared.account.clone()),
        ..Subject::new("slack", Some(path), &tool, &inputs)
    };
    let conversation = new_conversation_id();
    prepared.request.cache_key = Some(conversation.clone());
    let subject = prepared.runtime.first_turn(subject, &conversation, &tool);
    // The thread first, so that the answer has a place even when the run fails.
    let name = tool.name().unwrap_or(&asked.slug);
    let heading = SlackMessage {
        text: format!("{name}, asked by a member"),
        blocks: vec![json!({"type": "section", "text": {"type": "mrkdwn",
            "text": format!("*{}* · asked by <@{}>", escaped(name), asked.user)}})],
    };
    let thread = slack
        .api
        .post_message(&asked.channel, None, &heading)
        .await
        .map_err(|error| format!("The answer could not be posted in this channel: {error}"))?;
    // The conversation is connected to its thread: the poster posts its answer there (once,
    // whatever Slack's state), then every turn after.
    let sync = llmtool_registry::SlackSync {
        conversation: conversation.clone(),
        channel: asked.channel.clone(),
        thread_ts: Some(thread),
        posted: 0,
        part: 0,
        connected_by: who.member.clone(),
        connected_at: jiff::Timestamp::now().to_string(),
        failures: 0,
        last_error: None,
    };
    if let Err(error) = state.store.connect_slack(&sync).await {
        tracing::warn!("the Slack thread of a conversation was not kept: {error}");
    }
    let runtime = &prepared.runtime;
    let answered =
        runtime.answer_request(&prepared.request, Some(&subject), std::future::pending()).await;
    if let Err(error) = answered {
        tracing::info!(
            "a tool run from Slack did not answer: {}",
            runtime.redact(&error.to_string())
        );
    }
    state.wake_slack();
    Ok(())
}
