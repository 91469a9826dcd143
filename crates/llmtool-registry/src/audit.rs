//! The audit log: who changed what in the library, when, from which address, and what it was
//! before and after. Rows are only ever added (the database refuses anything else); what is
//! recorded never holds a secret (a token's or key's value is never in `before` or `after`).

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::store::StoreError;

/// Who makes the changes a store records: what every change made through it is recorded as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    /// A token's name, a member's e-mail, `cli:USER` on the library's database, or `system`
    /// for what the server does by itself (seeding the built-in tools).
    pub name: String,
    /// The client's address, when the change came over HTTP.
    pub address: Option<String>,
}

impl Actor {
    /// The server itself, changing the library on no one's request.
    pub fn system() -> Actor {
        Actor { name: "system".to_owned(), address: None }
    }
}

/// A change, as the store that makes it records it (with its [`Actor`]) in the same
/// transaction: so a change is never made unrecorded, nor recorded unmade.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Change {
    pub(crate) action: &'static str,
    pub(crate) target: String,
    pub(crate) before: Option<serde_json::Value>,
    pub(crate) after: Option<serde_json::Value>,
}

impl Change {
    pub(crate) fn new(action: &'static str, target: impl Into<String>) -> Change {
        Change { action, target: target.into(), before: None, after: None }
    }

    pub(crate) fn before(mut self, before: serde_json::Value) -> Change {
        self.before = Some(before);
        self
    }

    pub(crate) fn after(mut self, after: serde_json::Value) -> Change {
        self.after = Some(after);
        self
    }
}

/// A recorded change's who and what.
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AuditPage {
    pub records: Vec<AuditRecord>,
    pub next: Option<String>,
}

/// What the storage does with the audit log: each write records itself, as the [`Actor`] the
/// store acts for ([`crate::Store::acting_as`]); this reads them.
#[async_trait]
pub trait Audit: Send + Sync {
    /// The records `query` asks for, newest first (at most 500 a page).
    async fn audit(&self, query: &AuditQuery) -> Result<AuditPage, StoreError>;
}
