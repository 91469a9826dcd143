//! The library's conversations: a run of a tool's version, then the follow-ups its owner asked
//! after the answer, each a run of its own. The runs are kept as every run is
//! ([`crate::Store::log_run`]), which also keeps their conversation: who started it, the
//! version, the model, the data-loss prevention policy and placeholders. Only the owner goes
//! on with a conversation; a share link shows the turns it had when shared.

use async_trait::async_trait;
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

/// A conversation as the lists show it.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ConversationInfo {
    pub id: String,
    pub started_at: String,
    /// When its last turn started.
    pub last_at: String,
    /// Who started it, as [`owner_of`] names a caller.
    pub owner: String,
    /// The tool's version it started on (and every turn uses).
    pub slug: String,
    pub version: u32,
    pub provider: String,
    pub model: String,
    pub turns: u64,
    /// US dollars, over the turns whose cost is known.
    pub cost_usd: f64,
    /// Whether a share link shows it.
    pub shared: bool,
}

/// A conversation whole: what the lists show, its turns in order, and what it keeps for its
/// owner and its follow-ups (the policy, the placeholders' values: never shown to others).
#[derive(Debug, Clone, PartialEq)]
pub struct KeptConversation {
    pub info: ConversationInfo,
    pub turns: Vec<llmtool_log::Record>,
    pub thread: llmtool_log::Thread,
}

/// The conversations of a library.
#[async_trait]
pub trait Conversations {
    /// The conversation `id`, whole; `None` when there is none.
    async fn conversation(&self, id: &str) -> Result<Option<KeptConversation>, StoreError>;

    /// The newest `limit` conversations (by their last turn): `owner`'s, or everyone's.
    async fn conversations(
        &self,
        owner: Option<&str>,
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
