//! `/llmtool`: with no words, the tools the member sees (only they see the list); with a
//! tool's slug, that tool's modal, built from its variables. A tool the member does not see
//! is answered as one that does not exist.

use std::fmt::Write as _;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse as _, Response};
use llmtool_format::template::ToolTemplate;
use llmtool_registry::{Query, Selector, StoreError};
use llmtool_slack::modal::run_modal;
use llmtool_slack::payloads::SlashCommand;

use super::people::{Asker, not_a_member};
use super::{Slack, ephemeral, received};
use crate::ServerState;
use crate::runs::RunFor;

/// The most tools `/llmtool` lists.
const LISTED: u32 = 50;

/// `POST /slack/commands`.
pub(super) async fn command(
    State(state): State<ServerState>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (slack, command) = match received(&state, &headers, &body, SlashCommand::from_form) {
        Ok(received) => received,
        Err(status) => return status.into_response(),
    };
    // Slack waits three seconds, and a modal must open within them.
    let answered = tokio::time::timeout(IN_TIME, answer(&state, &slack, &command)).await;
    answered.unwrap_or_else(|_| {
        ephemeral("Slack or the library took too long to answer this time: try again.")
    })
}

/// How long the command may take: Slack's three seconds, less the way back.
const IN_TIME: std::time::Duration = std::time::Duration::from_millis(2500);

/// The answer to `command`.
async fn answer(state: &ServerState, slack: &Slack, command: &SlashCommand) -> Response {
    let who = match slack.asker(state, &command.user_id).await {
        Ok(Asker::Member(who)) => who,
        Ok(Asker::Unknown { email }) => return ephemeral(&not_a_member(email.as_deref())),
        Err(error) => return ephemeral(&error.said()),
    };
    let asked = command.text.split_whitespace().next().unwrap_or_default();
    if asked.is_empty() || asked == "help" {
        return ephemeral(&listed(state, &who).await);
    }
    let slug = asked.strip_prefix("registry:").unwrap_or(asked);
    let version = match state.store.version(slug, &Selector::Latest).await {
        Ok(version) if who.visibility.sees(&version.tags) => version,
        Ok(_) | Err(StoreError::NoSuchTool(_) | StoreError::NoSuchVersion { .. }) => {
            return ephemeral(&format!(
                "There is no tool `{slug}` you can run. `/llmtool` lists the ones you can."
            ));
        }
        Err(error) => return ephemeral(&format!("The library could not be read: {error}")),
    };
    let Some(tool) = llmtool_format::Document::from_text(version.text).tool else {
        return ephemeral(&format!("`{slug}` does not read as a tool."));
    };
    if tool.kind() == llmtool_format::model::ToolKind::Smart {
        return ephemeral(&format!(
            "`{slug}` is a smart tool: run it in the studio (Slack runs prompt tools)."
        ));
    }
    let template = ToolTemplate::new(&tool);
    let metadata = serde_json::json!({"slug": slug, "version": version.version,
        "channel": command.channel_id})
    .to_string();
    let modal = run_modal(tool.name().unwrap_or(slug), &metadata, template.variables());
    match slack.api.open_view(&command.trigger_id, &modal).await {
        Ok(()) => StatusCode::OK.into_response(),
        Err(error) => ephemeral(&format!("The tool's form could not be opened: {error}")),
    }
}

/// The tools `who` sees, as `mrkdwn` lines (the first [`LISTED`]).
async fn listed(state: &ServerState, who: &RunFor) -> String {
    let query = Query {
        text: None,
        tag: None,
        variable_type: None,
        output_type: None,
        model: None,
        cursor: None,
        limit: LISTED,
        visible: who.visibility.clone(),
    };
    let page = match state.store.search(&query).await {
        Ok(page) => page,
        Err(error) => return format!("The library could not be read: {error}"),
    };
    if page.tools.is_empty() {
        return "You see no tools in this library yet.".to_owned();
    }
    let mut text = String::from("The tools you can run (`/llmtool SLUG` opens one):\n");
    for tool in &page.tools {
        let _ = write!(text, "\n• `{}`", tool.slug);
        if let Some(name) = &tool.name {
            let _ = write!(text, ": *{name}*");
        }
        if let Some(description) = tool.description.as_deref().filter(|d| !d.is_empty()) {
            let _ = write!(text, " — {description}");
        }
    }
    if page.next.is_some() {
        let _ = write!(text, "\n\n…and more: the studio lists them all.");
    }
    text
}
