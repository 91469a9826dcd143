//! The tool library's storage: tools by slug, each with immutable versions (numbered, with
//! the content hash of their canonical form and a change note), tags that curate them, labels
//! that point at a version (`production`, `staging`), soft delete, full-text search, the
//! members and teams who use it, their API tokens, the Control Center's integrations, prices and
//! budgets, what the runs spent, and the audit log. [`Store`] is the one interface; [`SqlStore`] implements it once, over SQLite (the
//! default) or PostgreSQL, and one test suite runs against both.

mod audit;
pub mod backup;
mod changes;
#[cfg(feature = "client")]
pub mod client;
#[cfg(feature = "client")]
mod client_mcp;
#[cfg(feature = "client")]
mod client_runs;
#[cfg(feature = "client")]
mod client_tokens;
#[cfg(feature = "client")]
pub use client_mcp::McpAnswer;
#[cfg(feature = "client")]
pub use client_runs::RunEvent;
#[cfg(feature = "client")]
pub use client_tokens::GrantAnswer;
mod control;
mod conversation;
mod db;
mod health;
mod model;
mod people;
pub mod people_csv;
mod pg_restore;
mod pictures;
mod postgres;
mod publication;
mod reference;
mod rows;
mod search_index;
mod shared;
pub mod slack;
mod slack_threads;
mod spend;
mod sql_audit;
mod sql_collaboration;
mod sql_control;
mod sql_conversation;
mod sql_conversation_edit;
mod sql_people;
mod sql_pictures;
mod sql_search;
mod sql_slack;
mod sql_snapshots;
mod sql_spend;
mod sql_store;
mod sql_tokens;
mod sqlite;
mod store;
mod tokens;
pub mod transfer;
mod visibility;
pub mod wire;

pub use audit::{Actor, Audit, AuditEntry, AuditPage, AuditQuery, AuditRecord};
pub use changes::{Change, Changes};
pub use control::{Budget, Control, Integration, IntegrationTest, Period, PriceOverride, Scope};
pub use conversation::{
    Collaborator, ConversationEdit, ConversationInfo, ConversationQuery, Conversations,
    DeletedConversation, KeptConversation, KeptSnapshot, MAX_COLLABORATORS, MAX_SNAPSHOT_BYTES,
    MAX_SNAPSHOTS, NewSnapshot, SnapshotInfo, SnapshotOf, TITLE_MAX_CHARS, TitleChange,
    checked_title, owner_of,
};
pub use health::{Health, PoolUse};
pub use model::{
    Holder, KeptRun, Page, Published, Query, Role, RunsPage, Selector, SessionInfo, Summary,
    TagCount, ToolVersion,
};
pub use people::{
    ALL, BUILT_IN_TAG, Member, MemberEdit, NewMember, People, SessionFor, SignIn, TOKENS_DOMAIN,
    Team, Workspace, WorkspaceChange, fold_email,
};
pub use pictures::{NewPicture, PictureInfo, PicturesKept, PicturesOf, RunPictures, StoredPicture};
pub use publication::{
    MAX_DIAGNOSTICS, Publication, Rejection, content_hash, diagnostics_json, is_slug, slug_of,
};
pub use reference::{PATH_PREFIX, Reference};
pub use shared::{Bucket, Spend, Taken};
pub use slack::{SlackApp, SlackDue, SlackSync};
pub use spend::{
    BudgetStatus, Charge, DaySpend, OverBudget, Reserved, SpendLine, SpendQuery, SpendReport,
    SpendRow, SpendTotals, Spending,
};
pub use sql_store::SqlStore;

/// The library's schema changes, compiled in, for each database (oldest first).
pub mod migrations {
    pub use crate::postgres::MIGRATIONS as POSTGRES;
    pub use crate::sqlite::MIGRATIONS as SQLITE;
}
pub use store::{InviteProblem, MAX_LABELS, MAX_SESSIONS, MAX_TAGS, RunsOf, Store, StoreError};
pub use tokens::{
    DEFAULT_TOKEN_DAYS, DEVICE_GRANT_MINUTES, DeviceGrant, MAX_TOKEN_DAYS, MAX_TOKENS_PER_MEMBER,
    MAX_WAITING_GRANTS, NewToken, Redeemed, TokenInfo, TokensOf,
};
pub use visibility::{Visibility, may_tag};

/// Opens the library `database` names: a `postgres://` (or `postgresql://`) URL, or a SQLite
/// file (a path, or `sqlite://PATH`).
pub async fn open(database: &str) -> Result<std::sync::Arc<dyn Store>, StoreError> {
    if database.starts_with("postgres://") || database.starts_with("postgresql://") {
        return Ok(std::sync::Arc::new(SqlStore::connect_postgres(database).await?));
    }
    let path = database.strip_prefix("sqlite://").unwrap_or(database);
    Ok(std::sync::Arc::new(SqlStore::open_sqlite(std::path::Path::new(path)).await?))
}
