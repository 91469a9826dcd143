//! What Slack sends: the Events API's JSON (a URL check, or an event with its id), a slash
//! command's form, and an interaction's form (`payload=JSON`: a modal submitted, a button).
//! Only the fields llmtool uses are read; anything else is ignored, and a payload that does
//! not read is an error for the route to answer (400), never a panic.

use serde::Deserialize;
use serde_json::Value;

/// A request to the Events API's URL.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventRequest {
    /// Slack checking the URL: answered with its `challenge`.
    UrlVerification { challenge: String },
    /// An event of the workspace the app is in.
    EventCallback {
        /// The same for every retry of one event: what makes it handled once.
        event_id: String,
        #[serde(default)]
        team_id: String,
        event: Event,
    },
    /// Anything else (`app_rate_limited`, new kinds): acknowledged and ignored.
    #[serde(other)]
    Other,
}

/// An event llmtool acts on; the rest are [`Event::Other`].
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// A message that mentions the app.
    AppMention(Said),
    /// The app's token was revoked, or the app uninstalled.
    TokensRevoked,
    AppUninstalled,
    #[serde(other)]
    Other,
}

/// A message in a channel: who wrote what, where, and in which thread.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Said {
    #[serde(default)]
    pub user: String,
    #[serde(default)]
    pub text: String,
    pub channel: String,
    /// The message's own time stamp (its id in the channel).
    pub ts: String,
    /// The thread it is in: the time stamp of the thread's first message.
    #[serde(default)]
    pub thread_ts: Option<String>,
}

impl Said {
    /// The thread this message is in, or starts.
    pub fn thread(&self) -> &str {
        self.thread_ts.as_deref().unwrap_or(&self.ts)
    }

    /// The text without mentions of the app (`<@U0APP>`), trimmed.
    pub fn words(&self, app_user: &str) -> String {
        let mention = format!("<@{app_user}>");
        self.text.replace(&mention, " ").split_whitespace().collect::<Vec<_>>().join(" ")
    }
}

/// A slash command (`/llmtool ...`), as Slack posts it (a form).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct SlashCommand {
    pub command: String,
    #[serde(default)]
    pub text: String,
    pub user_id: String,
    pub channel_id: String,
    #[serde(default)]
    pub team_id: String,
    /// Lets the app open a modal, within three seconds.
    #[serde(default)]
    pub trigger_id: String,
}

impl SlashCommand {
    /// Reads the form Slack posted.
    pub fn from_form(body: &[u8]) -> Result<SlashCommand, String> {
        serde_urlencoded::from_bytes(body).map_err(|e| format!("not a slash command: {e}"))
    }
}

/// An interaction llmtool acts on, from the form's `payload` field.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Interaction {
    /// A modal was submitted.
    ViewSubmission { user: SlackUser, view: View },
    /// Anything else (a modal closed, a button): acknowledged.
    #[serde(other)]
    Other,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct SlackUser {
    pub id: String,
}

/// A submitted modal: what the app put in it (`callback_id`, `private_metadata`) and the
/// values of its inputs (`state.values`, by block and action).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct View {
    #[serde(default)]
    pub callback_id: String,
    #[serde(default)]
    pub private_metadata: String,
    #[serde(default)]
    pub state: ViewState,
}

#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
pub struct ViewState {
    #[serde(default)]
    pub values: serde_json::Map<String, Value>,
}

impl Interaction {
    /// Reads the form Slack posted (`payload=JSON`).
    pub fn from_form(body: &[u8]) -> Result<Interaction, String> {
        #[derive(Deserialize)]
        struct Form {
            payload: String,
        }
        let form: Form =
            serde_urlencoded::from_bytes(body).map_err(|e| format!("not an interaction: {e}"))?;
        serde_json::from_str(&form.payload).map_err(|e| format!("not an interaction: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_url_checks_and_unknown_kinds_are_read() {
        let check: EventRequest = serde_json::from_str(
            r#"{"token": "x", "challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P", "type": "url_verification"}"#,
        )
        .unwrap();
        assert!(
            matches!(check, EventRequest::UrlVerification { challenge } if challenge.starts_with("3eZ"))
        );
        let mention: EventRequest = serde_json::from_str(
            r#"{"type": "event_callback", "team_id": "T1", "event_id": "Ev1", "event_time": 1,
                "event": {"type": "app_mention", "user": "U1", "text": "<@UAPP> go on, please", "ts": "2.0",
                          "channel": "C1", "thread_ts": "1.0", "event_ts": "2.0"}}"#,
        )
        .unwrap();
        let EventRequest::EventCallback { event_id, event: Event::AppMention(said), .. } = mention
        else {
            panic!("{mention:?}")
        };
        assert_eq!((event_id.as_str(), said.thread()), ("Ev1", "1.0"));
        assert_eq!(said.words("UAPP"), "go on, please");
        let other: EventRequest =
            serde_json::from_str(r#"{"type": "app_rate_limited", "minute_rate_limited": 1}"#)
                .unwrap();
        assert_eq!(other, EventRequest::Other);
        let reaction: EventRequest = serde_json::from_str(
            r#"{"type": "event_callback", "event_id": "Ev2", "event": {"type": "reaction_added"}}"#,
        )
        .unwrap();
        assert!(matches!(reaction, EventRequest::EventCallback { event: Event::Other, .. }));
    }

    #[test]
    fn a_command_and_a_submitted_modal_are_read_from_their_forms() {
        let command = SlashCommand::from_form(
            b"command=%2Fllmtool&text=poet&user_id=U1&channel_id=C1&team_id=T1&trigger_id=13345224609.738474920.8088930838d88f008e0",
        )
        .unwrap();
        assert_eq!((command.command.as_str(), command.text.as_str()), ("/llmtool", "poet"));
        let payload = serde_json::json!({"type": "view_submission", "user": {"id": "U1"},
            "view": {"callback_id": "run", "private_metadata": "poet",
                "state": {"values": {"topic": {"value": {"type": "plain_text_input", "value": "tides"}}}}}});
        let form = serde_urlencoded::to_string([("payload", payload.to_string())]).unwrap();
        let Interaction::ViewSubmission { user, view } =
            Interaction::from_form(form.as_bytes()).unwrap()
        else {
            panic!()
        };
        assert_eq!((user.id.as_str(), view.private_metadata.as_str()), ("U1", "poet"));
        assert!(SlashCommand::from_form(b"text=x").is_err());
        assert!(Interaction::from_form(b"payload=%7Bnope").is_err());
    }
}
