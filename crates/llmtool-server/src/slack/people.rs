//! Who is asking from Slack: the member whose e-mail Slack has verified for the Slack user
//! (`users.info`), looked up again after ten minutes (a member added meanwhile is found, one
//! removed is not); the e-mails are kept for at most 10,000 Slack users.

use std::time::{Duration, Instant};

use llmtool_registry::{StoreError, Visibility};
use llmtool_slack::{WebApi, WebApiError};

use crate::ServerState;
use crate::runs::RunFor;

/// How long a Slack user's e-mail is trusted before Slack is asked again.
const KEPT_FOR: Duration = Duration::from_mins(10);
/// The most Slack users whose e-mail is kept.
const MOST_KEPT: usize = 10_000;

/// The e-mails of the Slack users seen, with when Slack gave them.
pub(super) struct People {
    emails: quick_cache::sync::Cache<String, (Option<String>, Instant)>,
}

/// Who a Slack user is to the library.
pub(super) enum Asker {
    /// A member: the run is theirs.
    Member(RunFor),
    /// No member has the e-mail Slack gives (or Slack gives none).
    Unknown { email: Option<String> },
}

impl People {
    pub(super) fn new() -> People {
        People { emails: quick_cache::sync::Cache::new(MOST_KEPT) }
    }

    /// Who the Slack user `user` is (a person of `team`, the bot's workspace).
    pub(super) async fn asker(
        &self,
        state: &ServerState,
        api: &WebApi,
        team: &str,
        user: &str,
    ) -> Result<Asker, AskerError> {
        let email = match self.emails.get(user) {
            Some((email, at)) if at.elapsed() < KEPT_FOR => email,
            _ => {
                let email = api.user_email(user, team).await.map_err(AskerError::Slack)?;
                self.emails.insert(user.to_owned(), (email.clone(), Instant::now()));
                email
            }
        };
        let Some(email) = email else { return Ok(Asker::Unknown { email: None }) };
        let member = match state.store.member(&email).await {
            Ok(member) => member,
            Err(StoreError::NoSuchMember(_)) => return Ok(Asker::Unknown { email: Some(email) }),
            Err(error) => return Err(AskerError::Library(error.to_string())),
        };
        let workspace =
            crate::auth::workspace(state).await.map_err(|p| AskerError::Library(p.detail))?;
        let role = member.role;
        Ok(Asker::Member(RunFor {
            visibility: Visibility::of(role, &member.teams, &workspace),
            member: member.email,
            role,
            teams: member.teams,
            by: Some(format!("slack:{user}")),
            depth: 0,
        }))
    }
}

/// Why who is asking is not known.
#[derive(Debug)]
pub(super) enum AskerError {
    Slack(WebApiError),
    Library(String),
}

impl AskerError {
    /// What the Slack user is told.
    pub(super) fn said(&self) -> String {
        match self {
            AskerError::Slack(error) => format!("llmtool could not ask Slack who you are: {error}"),
            AskerError::Library(error) => {
                tracing::warn!("who asks from Slack could not be looked up: {error}");
                "llmtool's library could not be read; try again".to_owned()
            }
        }
    }
}

/// What a Slack user who is no member is told.
pub(super) fn not_a_member(email: Option<&str>) -> String {
    match email {
        Some(email) => format!(
            "You are not a member of this llmtool library yet: an admin must add {email} (`llmtool member add {email}`)."
        ),
        None => "Slack gives no verified e-mail for you, so llmtool cannot tell which member you are: an admin must add you with the e-mail of your Slack account.".to_owned(),
    }
}
