//! Collaboration for [`SqlStore`]: a conversation opened to the members who join by its link
//! (kept as the token's SHA-256), its collaborators joining, leaving and removed; each change
//! recorded in the audit log (never with the token).

use crate::audit;
use crate::conversation::{Collaborator, MAX_COLLABORATORS};
use crate::db::statement;
use crate::sql_store::SqlStore;
use crate::store::StoreError;
use crate::store::now;

impl SqlStore {
    pub(crate) async fn open_collaboration_on(
        &self,
        id: &str,
        token_hash: &str,
    ) -> Result<(), StoreError> {
        let mut tx = self.db.begin_write().await?;
        let open = statement("UPDATE conversations SET collab_hash = $1 WHERE id = $2");
        if tx.execute(open.bind(token_hash).bind(id)).await? == 0 {
            return Err(StoreError::NoSuchConversation(id.to_owned()));
        }
        self.record(&mut tx, audit::Change::new("conversation.collaboration_on", id)).await?;
        tx.commit().await?;
        Ok(())
    }

    pub(crate) async fn close_collaboration_on(&self, id: &str) -> Result<u64, StoreError> {
        let mut tx = self.db.begin_write().await?;
        let close = statement("UPDATE conversations SET collab_hash = NULL WHERE id = $1");
        if tx.execute(close.bind(id)).await? == 0 {
            return Err(StoreError::NoSuchConversation(id.to_owned()));
        }
        let gone = statement("DELETE FROM collaborators WHERE conversation = $1");
        let gone = tx.execute(gone.bind(id)).await?;
        let after = serde_json::json!({ "collaborators": gone });
        let change = audit::Change::new("conversation.collaboration_off", id).after(after);
        self.record(&mut tx, change).await?;
        tx.commit().await?;
        Ok(gone)
    }

    pub(crate) async fn join(
        &self,
        token_hash: &str,
        member_id: &str,
    ) -> Result<Option<String>, StoreError> {
        let mut tx = self.db.begin_write().await?;
        // The link is read in the transaction that joins: one turned off meanwhile joins nobody.
        let found = statement("SELECT id FROM conversations WHERE collab_hash = $1");
        let Some((id,)) = tx.optional::<(String,)>(found.bind(token_hash)).await? else {
            return Ok(None);
        };
        let id = id.as_str();
        // Counted and added in turn with any other join.
        tx.lock_conversation(id).await?;
        let count = statement("SELECT COUNT(*) FROM collaborators WHERE conversation = $1");
        let (count,): (i64,) = tx.optional(count.bind(id)).await?.unwrap_or((0,));
        let known = statement(
            "SELECT 1::bigint FROM collaborators WHERE conversation = $1 AND member_id = $2",
        );
        if tx.optional::<(i64,)>(known.bind(id).bind(member_id)).await?.is_some() {
            return Ok(Some(id.to_owned()));
        }
        if count >= i64::from(MAX_COLLABORATORS) {
            return Err(StoreError::CollaboratorsFull(id.to_owned()));
        }
        let join = statement(
            "INSERT INTO collaborators (conversation, member_id, joined_at) VALUES ($1, $2, $3)
             ON CONFLICT DO NOTHING",
        );
        tx.execute(join.bind(id).bind(member_id).bind(now())).await?;
        let after = serde_json::json!({ "member": member_id });
        self.record(&mut tx, audit::Change::new("conversation.join", id).after(after)).await?;
        tx.commit().await?;
        Ok(Some(id.to_owned()))
    }

    pub(crate) async fn drop_member(
        &self,
        id: &str,
        member_id: &str,
        action: &'static str,
    ) -> Result<bool, StoreError> {
        let mut tx = self.db.begin_write().await?;
        let drop =
            statement("DELETE FROM collaborators WHERE conversation = $1 AND member_id = $2");
        if tx.execute(drop.bind(id).bind(member_id)).await? == 0 {
            return Ok(false);
        }
        let after = serde_json::json!({ "member": member_id });
        self.record(&mut tx, audit::Change::new(action, id).after(after)).await?;
        tx.commit().await?;
        Ok(true)
    }

    pub(crate) async fn collaboration_is_open(&self, id: &str) -> Result<bool, StoreError> {
        let open = statement("SELECT collab_hash IS NOT NULL FROM conversations WHERE id = $1");
        Ok(self.db.optional::<(bool,)>(open.bind(id)).await?.is_some_and(|(open,)| open))
    }

    pub(crate) async fn by_link(&self, token_hash: &str) -> Result<Option<String>, StoreError> {
        let found = statement("SELECT id FROM conversations WHERE collab_hash = $1");
        Ok(self.db.optional::<(String,)>(found.bind(token_hash)).await?.map(|(id,)| id))
    }

    pub(crate) async fn collaborates(&self, id: &str, member_id: &str) -> Result<bool, StoreError> {
        let known = statement(
            "SELECT 1::bigint FROM collaborators WHERE conversation = $1 AND member_id = $2",
        );
        Ok(self.db.optional::<(i64,)>(known.bind(id).bind(member_id)).await?.is_some())
    }

    pub(crate) async fn collaborators_of(&self, id: &str) -> Result<Vec<Collaborator>, StoreError> {
        let listed = statement(
            "SELECT k.member_id, COALESCE(m.name, ''), k.joined_at FROM collaborators k
             LEFT JOIN members m ON m.id = k.member_id
             WHERE k.conversation = $1 ORDER BY k.joined_at, k.member_id",
        );
        let rows: Vec<(String, String, String)> = self.db.all(listed.bind(id)).await?;
        Ok(rows
            .into_iter()
            .map(|(id, name, joined_at)| Collaborator { id, name, joined_at })
            .collect())
    }
}
