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
}

/// A conversation whole: what the lists show, and the conversation as the runtime goes on with
/// it (its turns in order, and what it keeps for its owner and its follow-ups: the policy, the
/// placeholders' values, never shown to others), read as the run log reads its own.
#[derive(Debug, Clone, PartialEq)]
pub struct KeptConversation {
    pub info: ConversationInfo,
    pub conversation: Conversation,
}

/// The conversations of a library.
#[async_trait]
pub trait Conversations {
    /// The conversation `id`, whole; `None` when there is none.
    async fn conversation(&self, id: &str) -> Result<Option<KeptConversation>, StoreError>;

    /// A page of `limit` conversations, newest last turn first, starting `after` one:
    /// `owner`'s, or everyone's.
    async fn conversations(
        &self,
        owner: Option<&str>,
        after: Option<&After>,
        limit: u32,
    ) -> Result<Vec<ConversationInfo>, StoreError>;

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
