//! The library's people: members (an e-mail, a name, a role, teams) and teams, whose names are
//! the tags that curate the tools each team sees. [`People`] is what the storage does with
//! them; the rules on what a member or team may be are here, for every store.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::model::Role;
use crate::store::StoreError;

/// The tag that reaches every member: no team may take its name, and no tool loses it for
/// want of a team.
pub const ALL: &str = "all";

/// The tag of the built-in tools, which the workspace may switch off for its members.
pub const BUILT_IN_TAG: &str = "built-in";

/// The domain of the members made for tokens that had none (reserved: no mail goes there).
pub const TOKENS_DOMAIN: &str = "tokens.invalid";

/// A member of the organisation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Member {
    /// In lower case.
    pub email: String,
    pub name: String,
    pub role: Role,
    /// The member's teams, by name.
    pub teams: Vec<String>,
    /// RFC 3339, in UTC.
    pub created_at: String,
}

/// A member to add.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, ToSchema)]
pub struct NewMember {
    pub email: String,
    pub name: String,
    pub role: Role,
    #[serde(default)]
    pub teams: Vec<String>,
}

/// What to change of a member: each field given replaces the member's.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, ToSchema)]
pub struct MemberEdit {
    pub name: Option<String>,
    pub role: Option<Role>,
    /// The member's teams, all of them.
    pub teams: Option<Vec<String>>,
}

/// A team, with how many members it has and how many tools (not deleted) carry its tag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct Team {
    pub name: String,
    pub members: u64,
    pub tools: u64,
    pub created_at: String,
}

/// The workspace's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Workspace {
    /// Whether members see the built-in tools (tagged `built-in`); owners and admins always do.
    pub built_ins: bool,
    /// Whether members may publish a conversation as a public snapshot, readable without
    /// signing in by whoever has its address. Off until an admin turns it on; while it is off,
    /// no snapshot is served.
    #[serde(default)]
    pub public_snapshots: bool,
}

impl Default for Workspace {
    fn default() -> Self {
        Workspace { built_ins: true, public_snapshots: false }
    }
}

impl Workspace {
    /// The settings as kept: each a row of `settings` (`on` or `off`; none: never set, its
    /// default).
    pub(crate) fn from_settings(built_ins: Option<&str>, public_snapshots: Option<&str>) -> Self {
        let defaults = Workspace::default();
        let on = |kept: Option<&str>, default: bool| kept.map_or(default, |kept| kept == "on");
        Workspace {
            built_ins: on(built_ins, defaults.built_ins),
            public_snapshots: on(public_snapshots, defaults.public_snapshots),
        }
    }

    /// These settings with `change` made: what it names changes, the rest stays.
    #[must_use]
    pub fn changed(self, change: &WorkspaceChange) -> Workspace {
        Workspace {
            built_ins: change.built_ins.unwrap_or(self.built_ins),
            public_snapshots: change.public_snapshots.unwrap_or(self.public_snapshots),
        }
    }
}

/// A change to the workspace's settings: the settings it names change, the others stay as they
/// are (a client that knows only `built_ins` never turns public snapshots off).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceChange {
    pub built_ins: Option<bool>,
    pub public_snapshots: Option<bool>,
}

/// Who a session is opened for: the holder of a token pasted on the sign-in page, or a member
/// who signed in by an invite link or single sign-on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionFor<'a> {
    /// The token of this name.
    Token(&'a str),
    /// The member of this e-mail.
    Member(&'a str),
}

/// A single sign-on under way: what the provider's answer is checked against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignIn {
    pub nonce: String,
    /// The PKCE code verifier.
    pub verifier: String,
    /// The studio's page to land on.
    pub next: String,
}

/// What the storage does with people.
#[async_trait]
pub trait People: Send + Sync {
    /// Adds `members`, all or none: each must be valid, new, and in teams that exist.
    async fn add_members(&self, members: &[NewMember]) -> Result<(), StoreError>;
    /// Every member, by e-mail.
    async fn members(&self) -> Result<Vec<Member>, StoreError>;
    /// The member whose e-mail is `email` (in any case).
    async fn member(&self, email: &str) -> Result<Member, StoreError>;
    /// The id of the member whose e-mail is `email` (what owns their conversations), if there
    /// is such a member.
    async fn member_id(&self, email: &str) -> Result<Option<String>, StoreError>;
    /// Changes the member `email`; the last owner stays an owner.
    async fn edit_member(&self, email: &str, edit: &MemberEdit) -> Result<Member, StoreError>;
    /// Removes the member `email`, revoking their tokens and ending their sessions; the last
    /// owner stays.
    async fn remove_member(&self, email: &str) -> Result<(), StoreError>;

    /// Makes the team `name`. Tools that carry its name as a tag already (put on by anyone
    /// who could tag, before the team existed) would show to its members at once: that is
    /// refused ([`StoreError::TaggedAhead`]) unless `adopt_tagged`, an admin's word that they
    /// are the team's.
    async fn create_team(&self, name: &str, adopt_tagged: bool) -> Result<(), StoreError>;
    /// Every team, by name.
    async fn teams(&self) -> Result<Vec<Team>, StoreError>;
    /// Renames the team `from` to `to`, and its tag on every tool with it, so that the team
    /// sees what it saw.
    async fn rename_team(&self, from: &str, to: &str) -> Result<(), StoreError>;
    /// Removes the team `name` and its members' places in it; the tools keep the tag, which
    /// then reaches owners and admins only, until a team of that name is made again.
    async fn remove_team(&self, name: &str) -> Result<(), StoreError>;

    /// Whether the member `email` has ever been here: a session (open now), a token, an invite
    /// used, or a run of theirs. A sign-in link of one who has not opens nothing of anyone's.
    async fn has_been_active(&self, email: &str) -> Result<bool, StoreError>;

    /// Keeps an invite for the member `email` (who must exist), known by the SHA-256 of its
    /// link's secret (`id_hash`), for `lifetime`, in place of their earlier invites not used
    /// yet; the member.
    async fn create_invite(
        &self,
        email: &str,
        id_hash: &str,
        lifetime: std::time::Duration,
    ) -> Result<Member, StoreError>;
    /// Uses the invite `id_hash`, once: the e-mail of its member, or why not (unknown, used,
    /// expired: [`StoreError::BadInvite`]).
    async fn use_invite(&self, id_hash: &str) -> Result<String, StoreError>;

    /// Keeps a single sign-on under way, known by the SHA-256 of its state (`state_hash`),
    /// for `lifetime`.
    async fn begin_sign_in(
        &self,
        state_hash: &str,
        sign_in: &SignIn,
        lifetime: std::time::Duration,
    ) -> Result<(), StoreError>;
    /// Takes the single sign-on `state_hash` (it can be taken once), if it has not expired.
    async fn finish_sign_in(&self, state_hash: &str) -> Result<Option<SignIn>, StoreError>;

    /// The workspace's settings.
    async fn workspace(&self) -> Result<Workspace, StoreError>;
    /// Changes the workspace's settings.
    async fn change_workspace(&self, change: &WorkspaceChange) -> Result<Workspace, StoreError>;
}

/// `email` folded as the library compares addresses: trimmed, its ASCII letters in lower case
/// and every other character as written. Unicode's case rules would make a KELVIN SIGN (`K`)
/// an ASCII `k`, so that `Kim@example.org` written with it would pass for `kim@example.org`.
pub fn fold_email(email: &str) -> String {
    email.trim().to_ascii_lowercase()
}

/// `email` as the library keeps it ([`fold_email`]), if it is an e-mail address written in one
/// script a part ([`mixes_scripts`]), or the address of a member made for a token
/// (`NAME@tokens.invalid`, whatever the name).
pub(crate) fn email_key(email: &str) -> Result<String, StoreError> {
    let key = fold_email(email);
    let made_for_token = key
        .strip_suffix(TOKENS_DOMAIN)
        .and_then(|local| local.strip_suffix('@'))
        .is_some_and(|local| !local.is_empty() && !local.contains(char::is_control));
    if made_for_token {
        return Ok(key);
    }
    if key.len() > 254 || !email_address::EmailAddress::is_valid(&key) {
        return Err(StoreError::BadEmail(email.to_owned()));
    }
    if mixes_scripts(&key) {
        return Err(StoreError::MixedScriptEmail(email.to_owned()));
    }
    Ok(key)
}

/// Whether `email` writes a part of it (the local part, or a label of the domain) in more than
/// one script, as `ana@exаmple.org` does with a Cyrillic `а`: such an address passes for
/// another to the eye. A domain's labels may each be in their own script (`ivan@пример.org`).
fn mixes_scripts(email: &str) -> bool {
    use unicode_security::MixedScript as _;
    let (local, domain) = email.rsplit_once('@').unwrap_or((email, ""));
    std::iter::once(local).chain(domain.split('.')).any(|part| !part.is_single_script())
}

/// Whether `name` may be a team's name: a tag's name, and not [`ALL`].
pub(crate) fn check_team(name: &str) -> Result<(), StoreError> {
    crate::store::check_name(name)?;
    if name == ALL || name == BUILT_IN_TAG {
        return Err(StoreError::ReservedTeam(name.to_owned()));
    }
    Ok(())
}

/// A member's display name: trimmed, not empty, at most 200 characters.
pub(crate) fn check_member_name(name: &str) -> Result<String, StoreError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 200 || name.chars().any(char::is_control) {
        return Err(StoreError::BadMemberName(name.to_owned()));
    }
    Ok(name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emails_are_kept_in_lower_case_and_checked() {
        assert_eq!(email_key(" Ana@Example.ORG ").unwrap(), "ana@example.org");
        for bad in ["", "ana", "ana@", "@example.org", "a b@example.org"] {
            assert!(matches!(email_key(bad), Err(StoreError::BadEmail(_))), "{bad:?}");
        }
    }

    #[test]
    fn only_ascii_letters_fold_so_a_look_alike_stays_itself() {
        // KELVIN SIGN, which Unicode's lower case turns into an ASCII `k`.
        assert_eq!(email_key("\u{212A}im@example.org").unwrap(), "\u{212A}im@example.org");
        assert_ne!(
            email_key("\u{212A}im@example.org").unwrap(),
            email_key("Kim@example.org").unwrap()
        );
        assert_eq!(email_key("JOSÉ@example.org").unwrap(), "josÉ@example.org");
        // A Cyrillic `а` among Latin letters, in the domain and in the local part.
        for mixed in ["ana@ex\u{430}mple.org", "\u{430}na@example.org"] {
            let refused = email_key(mixed);
            assert!(
                matches!(refused, Err(StoreError::MixedScriptEmail(_))),
                "{mixed}: {refused:?}"
            );
        }
        // Each part in one script of its own is an address like any other.
        assert!(email_key("ivan@\u{43f}\u{440}\u{438}\u{43c}\u{435}\u{440}.org").is_ok());
    }

    #[test]
    fn a_team_takes_a_tags_name_but_not_all() {
        assert!(check_team("sales").is_ok());
        assert!(matches!(check_team("all"), Err(StoreError::ReservedTeam(_))));
        assert!(matches!(check_team("Sales Team"), Err(StoreError::BadName(_))));
        assert!(check_member_name("  ").is_err());
        assert_eq!(check_member_name(" Ana Lima ").unwrap(), "Ana Lima");
    }
}
