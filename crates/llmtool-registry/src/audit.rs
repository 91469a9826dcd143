//! The audit log: who changed what in the library, when, from which address, and what it was
//! before and after. Rows are only ever added (the database refuses anything else); what is
//! recorded never holds a secret (a token's or key's value is never in `before` or `after`).

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::store::StoreError;

/// A change to record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AuditEntry {
    /// Who made it: a token's name, a member's e-mail, or `cli:USER` on the library's database.
    pub actor: String,
    /// The client's address, when the change came over HTTP.
    pub address: Option<String>,
    /// What was done, as `thing.verb` (`member.add`, `tool.publish`, `tag.remove`).
    pub action: String,
    /// What it was done to (an e-mail, a team, a slug, `slug:tag`).
    pub target: String,
    #[schema(value_type = Option<Object>)]
    pub before: Option<serde_json::Value>,
    #[schema(value_type = Option<Object>)]
    pub after: Option<serde_json::Value>,
}

/// A recorded change.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct AuditRecord {
    pub id: i64,
    /// RFC 3339, in UTC.
    pub at: String,
    #[serde(flatten)]
    pub entry: AuditEntry,
}

/// Which records to list, newest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuditQuery {
    pub actor: Option<String>,
    pub action: Option<String>,
    pub target: Option<String>,
    /// At or after this time (RFC 3339).
    pub since: Option<String>,
    /// Older than the record of this id (a page's `next`).
    pub before_id: Option<i64>,
    pub limit: u32,
}

/// A page of records, and the cursor of the next one.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct AuditPage {
    pub records: Vec<AuditRecord>,
    pub next: Option<String>,
}

/// What the storage does with the audit log.
#[async_trait]
pub trait Audit: Send + Sync {
    /// Adds `entry`; its id.
    async fn record(&self, entry: &AuditEntry) -> Result<i64, StoreError>;
    /// The records `query` asks for, newest first (at most 500 a page).
    async fn audit(&self, query: &AuditQuery) -> Result<AuditPage, StoreError>;
}
