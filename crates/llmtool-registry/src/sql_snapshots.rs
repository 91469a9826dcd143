//! Public snapshots for [`SqlStore`]: a conversation's transcript frozen when published, found
//! by its address's token (kept as the token's SHA-256) or by its id; published and revoked in
//! the audit log, never with the token.

use crate::audit;
use crate::conversation::{
    KeptSnapshot, MAX_SNAPSHOT_BYTES, MAX_SNAPSHOTS, NewSnapshot, SnapshotInfo, SnapshotOf,
};
use crate::db::{Statement, statement};
use crate::sql_store::SqlStore;
use crate::store::{StoreError, now};

/// A snapshot's row: `id`, `created_at`, `turns`, `conversation`, `body`.
type SnapshotRow = (String, String, i64, String, String);

impl SqlStore {
    pub(crate) async fn publish(
        &self,
        snapshot: &NewSnapshot<'_>,
    ) -> Result<SnapshotInfo, StoreError> {
        if snapshot.body.len() > MAX_SNAPSHOT_BYTES {
            return Err(StoreError::SnapshotTooLarge(snapshot.body.len()));
        }
        let id = snapshot.conversation;
        let mut tx = self.db.begin_write().await?;
        if !tx.lock_conversation(id).await? {
            return Err(StoreError::NoSuchConversation(id.to_owned()));
        }
        let count = statement("SELECT COUNT(*) FROM snapshots WHERE conversation = $1");
        let (count,): (i64,) = tx.optional(count.bind(id)).await?.unwrap_or((0,));
        if count >= i64::from(MAX_SNAPSHOTS) {
            return Err(StoreError::SnapshotsFull(id.to_owned()));
        }
        let created_at = now();
        let keep = statement(
            "INSERT INTO snapshots (id, token_hash, conversation, created_by, created_at, turns, body)
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        );
        let keep = keep.bind(snapshot.id).bind(snapshot.token_hash).bind(id);
        let keep = keep.bind(snapshot.created_by).bind(&created_at);
        tx.execute(keep.bind(i64::from(snapshot.turns)).bind(snapshot.body)).await?;
        let after = serde_json::json!({ "snapshot": snapshot.id, "turns": snapshot.turns });
        self.record(&mut tx, audit::Change::new("conversation.snapshot", id).after(after)).await?;
        tx.commit().await?;
        Ok(SnapshotInfo { id: snapshot.id.to_owned(), created_at, turns: snapshot.turns })
    }

    pub(crate) async fn snapshot_of(
        &self,
        which: SnapshotOf<'_>,
    ) -> Result<Option<KeptSnapshot>, StoreError> {
        let found = which_one("SELECT id, created_at, turns, conversation, body", which, "");
        let row: Option<SnapshotRow> = self.db.optional(found).await?;
        Ok(row.map(|(id, created_at, turns, conversation, body)| KeptSnapshot {
            info: SnapshotInfo { id, created_at, turns: u32::try_from(turns).unwrap_or(0) },
            conversation,
            body,
        }))
    }

    pub(crate) async fn snapshot_known(&self, token_hash: &str) -> Result<bool, StoreError> {
        let known = statement("SELECT 1::bigint FROM snapshots WHERE token_hash = $1");
        Ok(self.db.optional::<(i64,)>(known.bind(token_hash)).await?.is_some())
    }

    pub(crate) async fn snapshots_of(&self, id: &str) -> Result<Vec<SnapshotInfo>, StoreError> {
        let listed = statement(
            "SELECT id, created_at, turns FROM snapshots WHERE conversation = $1
             ORDER BY created_at, id",
        );
        let rows: Vec<(String, String, i64)> = self.db.all(listed.bind(id)).await?;
        Ok(rows
            .into_iter()
            .map(|(id, created_at, turns)| SnapshotInfo {
                id,
                created_at,
                turns: u32::try_from(turns).unwrap_or(0),
            })
            .collect())
    }

    pub(crate) async fn revoke(&self, which: SnapshotOf<'_>) -> Result<bool, StoreError> {
        let mut tx = self.db.begin_write().await?;
        let gone = which_one("DELETE", which, "RETURNING id, conversation");
        let Some((snapshot, conversation)): Option<(String, String)> = tx.optional(gone).await?
        else {
            return Ok(false);
        };
        let after = serde_json::json!({ "snapshot": snapshot });
        let change = audit::Change::new("conversation.snapshot_revoke", conversation).after(after);
        self.record(&mut tx, change).await?;
        tx.commit().await?;
        Ok(true)
    }
}

/// `verb` (a `SELECT` of columns, or `DELETE`) on the snapshot `which`, then `tail`, its
/// values bound.
fn which_one(verb: &str, which: SnapshotOf<'_>, tail: &str) -> Statement {
    match which {
        SnapshotOf::TokenHash(hash) => {
            statement(format!("{verb} FROM snapshots WHERE token_hash = $1 {tail}")).bind(hash)
        }
        SnapshotOf::Id { conversation, id } => {
            statement(format!("{verb} FROM snapshots WHERE id = $1 AND conversation = $2 {tail}"))
                .bind(id)
                .bind(conversation)
        }
    }
}
