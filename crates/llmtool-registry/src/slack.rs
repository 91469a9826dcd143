//! Slack as the library keeps it (docs/slack.md): the app an admin added from the Control
//! Center (its secrets sealed by the server, never in the clear here), the states of "Add to
//! Slack" under way, and the conversations connected to a channel with how far their posting
//! has got.

use serde::Serialize;
use utoipa::ToSchema;

/// The Slack app of the library, as an admin set it up.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct SlackApp {
    pub client_id: String,
    /// Sealed by the server (`v1.KEY-ID.BASE64`): never sent to a client.
    #[serde(skip)]
    pub sealed_client_secret: String,
    #[serde(skip)]
    pub sealed_signing_secret: String,
    /// The bot's token, once "Add to Slack" has run.
    #[serde(skip)]
    pub sealed_bot_token: Option<String>,
    /// The workspace it is installed in.
    pub team_id: Option<String>,
    pub team_name: Option<String>,
    pub bot_user_id: Option<String>,
    /// Whether Slack's requests are answered and conversations posted.
    pub enabled: bool,
    /// Why it is off (a revoked token, say).
    pub disabled_reason: Option<String>,
    /// The member who ran "Add to Slack" (their e-mail address), and when.
    pub installed_by: Option<String>,
    pub installed_at: Option<String>,
    pub updated_at: String,
}

/// A conversation connected to a Slack channel, and how far its posting has got.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct SlackSync {
    pub conversation: String,
    pub channel: String,
    /// The thread its turns go to, once its first message is posted.
    pub thread_ts: Option<String>,
    /// How many of its turns are posted whole.
    pub posted: u32,
    /// How many messages of the next turn are posted already.
    #[serde(skip)]
    pub part: u32,
    /// The member who connected it (their e-mail address).
    pub connected_by: String,
    pub connected_at: String,
    /// Attempts that failed in a row, and what the last one met.
    pub failures: u32,
    pub last_error: Option<String>,
}

/// A connected conversation with turns to post, and how many turns it has, claimed by the
/// caller: its writes carry `claim`, and are refused once the claim is gone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlackDue {
    pub sync: SlackSync,
    pub turns: u32,
    pub claim: String,
}

/// How long a server holds a conversation it posts, renewed at each message: another server
/// takes it over only after that long without news (its poster stopped). Longer than one
/// message can take: a call of 30 s and three waits of a minute for rate limits, three calls
/// for a picture.
pub const POSTING_LEASE_SECONDS: f64 = 900.0;

/// How long an "Add to Slack" state stays good: Slack's page, the admin's choice, and back.
pub const OAUTH_STATE_SECONDS: f64 = 600.0;

/// How many "Add to Slack" states an admin holds at once: starting again forgets the oldest,
/// so a script pressing the button cannot grow the table.
pub const OAUTH_STATES_PER_ADMIN: i64 = 8;
