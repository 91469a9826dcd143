//! The library's conversations: a run of a tool's version, then the follow-ups its owner asked
//! after the answer, each a run of its own. The runs are kept as every run is
//! ([`crate::Store::log_run`]), which also keeps their conversation: who started it, the
//! version, the model, the data-loss prevention policy and placeholders. Only the owner goes
//! on with a conversation; a share link shows the turns it had when shared.

use async_trait::async_trait;
use llmtool_log::{After, Conversation, Summary};
use serde::Serialize;
use utoipa::ToSchema;

use crate::store::StoreError;

/// How a conversation names its owner: `member:ID` for a member (signed in, or with one of
/// their tokens), by the id the member was given when added (never their address: a member
/// removed and added again is someone new), else `token:NAME` (a token of no member). Two kinds
/// of name never meet, and a member is the same owner however they come.
pub fn owner_of(member_id: &str, token: Option<&str>) -> String {
    if member_id.is_empty() {
        format!("token:{}", token.unwrap_or_default())
    } else {
        format!("member:{member_id}")
    }
}

/// A conversation as the lists show it: its summary (as the run log's conversations have it),
/// and who owns it, on which version, whether it is shared.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ConversationInfo {
    #[serde(flatten)]
    pub summary: Summary,
    /// Who started it, as [`owner_of`] names a caller.
    pub owner: String,
    /// The tool's version it started on (and every turn uses).
    pub slug: String,
    pub version: u32,
    /// Whether a share link shows it.
    pub shared: bool,
    /// Whether its owner archived it (out of their sidebar's list, not deleted).
    pub archived: bool,
}

/// Which conversations a page lists, newest last turn first.
#[derive(Debug, Clone, Copy, Default)]
pub struct ConversationQuery<'a> {
    /// One owner's (as [`owner_of`] names them), or everyone's when `None`.
    pub owner: Option<&'a str>,
    /// With an owner, also those this member (their id) collaborates on.
    pub collaborator: Option<&'a str>,
    /// Only archived ones, or only the others; both when `None`.
    pub archived: Option<bool>,
    /// Text its title holds, or words its turns hold (each word a prefix).
    pub text: Option<&'a str>,
    /// Where the page starts: after this conversation.
    pub after: Option<&'a After>,
    /// At most this many (1 to 500).
    pub limit: u32,
}

/// What an owner changes of a conversation (what is left out stays).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConversationEdit {
    pub title: TitleChange,
    pub archived: Option<bool>,
}

/// What becomes of a conversation's title.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum TitleChange {
    /// It stays.
    #[default]
    Keep,
    /// This one (some text on one line, at most [`TITLE_MAX_CHARS`] characters, trimmed).
    Rename(String),
    /// The default again: the tool and its first value.
    Default,
}

/// How many characters a title given by its owner may have.
pub const TITLE_MAX_CHARS: usize = 200;

/// `title` as kept: trimmed, on one line, 1 to [`TITLE_MAX_CHARS`] characters.
pub fn checked_title(title: &str) -> Result<String, StoreError> {
    let trimmed = title.trim();
    let length = trimmed.chars().count();
    if length == 0 || length > TITLE_MAX_CHARS || trimmed.chars().any(char::is_control) {
        return Err(StoreError::BadTitle(title.chars().take(TITLE_MAX_CHARS).collect()));
    }
    Ok(trimmed.to_owned())
}

/// What deleting a conversation took away: the text of its turns (their runs stay, with their
/// cost and tokens) and their pictures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeletedConversation {
    pub turns: u64,
    pub pictures: u64,
    /// Its public snapshots, revoked with it.
    pub snapshots: u64,
}

/// A conversation whole: what the lists show, and the conversation as the runtime goes on with
/// it (its turns in order, and what it keeps for its owner and its follow-ups: the policy, the
/// placeholders' values, never shown to others), read as the run log reads its own.
#[derive(Debug, Clone, PartialEq)]
pub struct KeptConversation {
    pub info: ConversationInfo,
    pub conversation: Conversation,
    /// Who asked each turn (in the order of `conversation.turns`): the member's name, or
    /// `None` for a token of no member or a member since removed.
    pub asked_by: Vec<Option<String>>,
}

/// How many members may collaborate on one conversation at most.
pub const MAX_COLLABORATORS: u32 = 100;

/// A member who joined a conversation by its collaboration link.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct Collaborator {
    /// The member's id (never their e-mail address).
    pub id: String,
    /// Their name, as the library knows it.
    pub name: String,
    pub joined_at: String,
}

/// How many public snapshots one conversation may have at once.
pub const MAX_SNAPSHOTS: u32 = 20;

/// How many bytes a public snapshot's body may have at most: 8 MiB.
pub const MAX_SNAPSHOT_BYTES: usize = 8 << 20;

/// A public snapshot to keep: a conversation's transcript frozen as published.
#[derive(Debug, Clone, Copy)]
pub struct NewSnapshot<'a> {
    /// What names it to its owner (to list and revoke it).
    pub id: &'a str,
    /// The SHA-256 of its address's token.
    pub token_hash: &'a str,
    pub conversation: &'a str,
    /// Who published it, as [`owner_of`] names a caller.
    pub created_by: &'a str,
    /// How many turns it shows.
    pub turns: u32,
    /// The transcript, as JSON (at most [`MAX_SNAPSHOT_BYTES`]).
    pub body: &'a str,
}

/// A public snapshot, as its owner lists it (never with its token).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct SnapshotInfo {
    pub id: String,
    pub created_at: String,
    /// How many turns it shows: those the conversation had when it was published.
    pub turns: u32,
}

/// A public snapshot as kept: what it is, of which conversation, and its frozen body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptSnapshot {
    pub info: SnapshotInfo,
    pub conversation: String,
    pub body: String,
}

/// Which public snapshot: the one behind an address (by its token's SHA-256), or one of a
/// conversation's by its id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnapshotOf<'a> {
    TokenHash(&'a str),
    Id { conversation: &'a str, id: &'a str },
}

/// The conversations of a library.
#[async_trait]
pub trait Conversations {
    /// The conversation `id`, whole; `None` when there is none.
    async fn conversation(&self, id: &str) -> Result<Option<KeptConversation>, StoreError>;

    /// Conversation `id` as the lists show it, its turns unread; `None` when there is none.
    async fn conversation_info(&self, id: &str) -> Result<Option<ConversationInfo>, StoreError>;

    /// A page of the conversations `query` picks, newest last turn first.
    async fn conversations(
        &self,
        query: &ConversationQuery<'_>,
    ) -> Result<Vec<ConversationInfo>, StoreError>;

    /// Renames or archives conversation `id` (the caller is its owner); it as listed now.
    async fn edit_conversation(
        &self,
        id: &str,
        edit: &ConversationEdit,
    ) -> Result<ConversationInfo, StoreError>;

    /// Deletes conversation `id`: its turns' text and pictures, its share link. Its runs stay,
    /// with their cost and tokens (the spend and usage do not change), and no text; recorded in
    /// the audit log.
    async fn delete_conversation(&self, id: &str) -> Result<DeletedConversation, StoreError>;

    /// Opens conversation `id` to the members who join by a link whose token hashes to
    /// `token_hash` (an older link stops working); recorded in the audit log.
    async fn open_collaboration(&self, id: &str, token_hash: &str) -> Result<(), StoreError>;

    /// Closes conversation `id` to collaborators: its link stops working and every collaborator
    /// loses it; how many did. Recorded in the audit log.
    async fn close_collaboration(&self, id: &str) -> Result<u64, StoreError>;

    /// Whether conversation `id` is open to collaborators.
    async fn collaboration_open(&self, id: &str) -> Result<bool, StoreError>;

    /// The conversation whose collaboration link's token hashes to `token_hash`, if it is open.
    async fn collaboration_by_link(&self, token_hash: &str) -> Result<Option<String>, StoreError>;

    /// Adds the member `member_id` to the collaborators of the conversation whose open link's
    /// token hashes to `token_hash` (once; at most [`MAX_COLLABORATORS`]), in one transaction
    /// with reading the link; recorded in the audit log when new. The conversation, or `None`
    /// for no such open link.
    async fn join_conversation(
        &self,
        token_hash: &str,
        member_id: &str,
    ) -> Result<Option<String>, StoreError>;

    /// Takes the member `member_id` off conversation `id`'s collaborators, as `action`
    /// (`conversation.leave`, `conversation.remove_collaborator`) says in the audit log;
    /// whether they were one.
    async fn drop_collaborator(
        &self,
        id: &str,
        member_id: &str,
        action: &'static str,
    ) -> Result<bool, StoreError>;

    /// Whether the member `member_id` collaborates on conversation `id`.
    async fn is_collaborator(&self, id: &str, member_id: &str) -> Result<bool, StoreError>;

    /// Conversation `id`'s collaborators, by when they joined.
    async fn collaborators(&self, id: &str) -> Result<Vec<Collaborator>, StoreError>;

    /// Keeps a public snapshot of a conversation (at most [`MAX_SNAPSHOTS`] a conversation);
    /// recorded in the audit log (never with its token).
    async fn publish_snapshot(
        &self,
        snapshot: &NewSnapshot<'_>,
    ) -> Result<SnapshotInfo, StoreError>;

    /// The public snapshot `which`; `None` when there is none (or it was revoked).
    async fn snapshot(&self, which: SnapshotOf<'_>) -> Result<Option<KeptSnapshot>, StoreError>;

    /// Whether a public snapshot's address's token hashes to `token_hash` (its body unread).
    async fn snapshot_exists(&self, token_hash: &str) -> Result<bool, StoreError>;

    /// Conversation `id`'s public snapshots, oldest first.
    async fn snapshots(&self, id: &str) -> Result<Vec<SnapshotInfo>, StoreError>;

    /// Revokes the public snapshot `which` (its address shows nothing any more); whether there
    /// was one. Recorded in the audit log.
    async fn revoke_snapshot(&self, which: SnapshotOf<'_>) -> Result<bool, StoreError>;

    /// Shares conversation `id` behind a link whose token hashes to `token_hash` (any older
    /// link stops working): the link shows the runs it has now (not one kept later, whatever
    /// its turn's number), how many is returned.
    async fn share_conversation(&self, id: &str, token_hash: &str) -> Result<u32, StoreError>;

    /// Stops sharing conversation `id`.
    async fn unshare_conversation(&self, id: &str) -> Result<(), StoreError>;

    /// What the share link whose token hashes to `token_hash` shows: the conversation with the
    /// turns it had when shared; `None` for no such link.
    async fn shared_conversation(
        &self,
        token_hash: &str,
    ) -> Result<Option<KeptConversation>, StoreError>;
}
