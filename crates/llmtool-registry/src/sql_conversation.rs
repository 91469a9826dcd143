//! [`Conversations`] for [`SqlStore`]: each conversation's row, written with its turns' runs
//! ([`keep_turn`], in the run's own transaction), read back whole or listed, and shared by a
//! link (recorded in the audit log), written once over `Db`.

use std::collections::BTreeMap;

use async_trait::async_trait;
use llmtool_log::{Record, Thread};

use crate::audit;
use crate::conversation::{ConversationInfo, Conversations, KeptConversation, owner_of};
use crate::db::{Tx, statement};
use crate::sql_store::SqlStore;
use crate::store::StoreError;

/// What the lists show of a conversation, totalled over its runs.
const INFO: &str =
    "SELECT c.id, c.started_at, MAX(r.started_at), c.owner, c.slug, c.version::bigint,
        c.provider, c.model, COUNT(r.id), COALESCE(SUM(r.cost_usd), 0.0),
        (c.share_hash IS NOT NULL), c.dlp, c.placeholders, c.shared_run::bigint
     FROM conversations c JOIN runs r ON r.conversation = c.id";

/// The columns of [`INFO`].
type InfoRow = (
    String,
    String,
    String,
    String,
    String,
    i64,
    String,
    String,
    i64,
    f64,
    bool,
    Option<String>,
    Option<String>,
    Option<i64>,
);

/// What a row of [`INFO`] says: the conversation as listed, what it keeps, and the last run its
/// share link shows.
fn info(row: InfoRow) -> (ConversationInfo, Thread, Option<i64>) {
    let (id, started_at, last_at, owner, slug, version, provider, model, turns, cost, shared) =
        (row.0, row.1, row.2, row.3, row.4, row.5, row.6, row.7, row.8, row.9, row.10);
    let info = ConversationInfo {
        id,
        started_at,
        last_at,
        owner,
        slug,
        version: u32::try_from(version).unwrap_or(0),
        provider,
        model,
        turns: u64::try_from(turns).unwrap_or(0),
        cost_usd: cost,
        shared,
    };
    let placeholders: BTreeMap<String, String> =
        row.12.and_then(|text| serde_json::from_str(&text).ok()).unwrap_or_default();
    let thread = Thread { tool: None, dlp: row.11, placeholders };
    (info, thread, row.13)
}

/// Keeps the conversation `run` is a turn of (when it is one) in `tx`, the transaction that
/// keeps the run (and holds the budgets' lock, so kept runs take turns here): created by its
/// first turn (as a run of `slug` at `version`, by `by` charged to `member`), its placeholders
/// merged with the turn's (a placeholder keeps the value it was kept with first).
pub(crate) async fn keep_turn(
    tx: &mut Tx,
    slug: &str,
    version: u32,
    (by, member): (Option<&str>, &str),
    run: &Record,
) -> Result<(), sqlx::Error> {
    let Some(id) = &run.conversation else { return Ok(()) };
    let thread = run.thread.clone().unwrap_or_default();
    // Owned by the member as they are now (their id), not by their address: a member removed
    // and added again is someone new.
    let member_id = if member.is_empty() {
        None
    } else {
        let of = statement("SELECT COALESCE(id, '') FROM members WHERE email = $1");
        tx.optional::<(String,)>(of.bind(member)).await?.map(|(id,)| id)
    };
    let owner = match member_id {
        Some(member_id) if !member_id.is_empty() => owner_of(&member_id, by),
        _ if member.is_empty() => owner_of("", by),
        // Removed meanwhile: the conversation is nobody's but the admins'.
        _ => format!("removed:{member}"),
    };
    let kept = statement("SELECT placeholders FROM conversations WHERE id = $1");
    let kept: Option<(Option<String>,)> = tx.optional(kept.bind(id)).await?;
    let mut placeholders: BTreeMap<String, String> = kept
        .and_then(|(text,)| text)
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default();
    for (placeholder, value) in thread.placeholders {
        placeholders.entry(placeholder).or_insert(value);
    }
    let placeholders = (!placeholders.is_empty())
        .then(|| serde_json::to_string(&placeholders).unwrap_or_default());
    let keep = statement(
        "INSERT INTO conversations (id, started_at, owner, slug, version, provider, model, dlp,
            placeholders)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT (id) DO UPDATE SET
            dlp = COALESCE(conversations.dlp, excluded.dlp),
            placeholders = COALESCE(excluded.placeholders, conversations.placeholders)",
    )
    .bind(id)
    .bind(&run.started_at)
    .bind(owner)
    .bind(slug)
    .bind(i64::from(version))
    .bind(&run.provider)
    .bind(&run.model)
    .bind(thread.dlp)
    .bind(placeholders);
    tx.execute(keep).await?;
    Ok(())
}

impl SqlStore {
    /// The conversation `id` with its runs up to `last_run` (all when `None`).
    async fn whole(
        &self,
        id: &str,
        last_run: Option<i64>,
    ) -> Result<Option<KeptConversation>, StoreError> {
        let one = statement(format!("{INFO} WHERE c.id = $1 GROUP BY c.id"));
        let Some(row) = self.db.optional::<InfoRow>(one.bind(id)).await? else {
            return Ok(None);
        };
        let (mut info, thread, _) = info(row);
        let turns = statement(
            "SELECT id, record::text FROM runs
             WHERE conversation = $1 AND ($2::bigint IS NULL OR id <= $2) ORDER BY turn, id",
        );
        let rows: Vec<(i64, String)> = self.db.all(turns.bind(id).bind(last_run)).await?;
        let turns: Vec<Record> = rows
            .into_iter()
            .filter_map(|(run, text)| {
                let mut record: Record = serde_json::from_str(&text).ok()?;
                record.id = Some(run);
                Some(record)
            })
            .collect();
        if last_run.is_some() {
            info.turns = turns.len() as u64;
            info.cost_usd = turns.iter().filter_map(|turn| turn.cost_usd).sum();
            info.last_at = turns.last().map_or(info.started_at.clone(), |t| t.started_at.clone());
        }
        Ok(Some(KeptConversation { info, turns, thread }))
    }
}

#[async_trait]
impl Conversations for SqlStore {
    async fn conversation(&self, id: &str) -> Result<Option<KeptConversation>, StoreError> {
        self.whole(id, None).await
    }

    async fn conversations(
        &self,
        owner: Option<&str>,
        limit: u32,
    ) -> Result<Vec<ConversationInfo>, StoreError> {
        let list = statement(format!(
            "{INFO} WHERE ($1::text IS NULL OR c.owner = $1) GROUP BY c.id
             ORDER BY MAX(r.started_at) DESC, c.id DESC LIMIT $2"
        ));
        let rows: Vec<InfoRow> =
            self.db.all(list.bind(owner).bind(i64::from(limit.clamp(1, 500)))).await?;
        Ok(rows.into_iter().map(|row| info(row).0).collect())
    }

    async fn share_conversation(&self, id: &str, token_hash: &str) -> Result<u32, StoreError> {
        let share = statement(
            "UPDATE conversations SET share_hash = $1,
                shared_run = (SELECT MAX(id) FROM runs WHERE conversation = $2)
             WHERE id = $2 RETURNING shared_run::bigint",
        );
        let mut tx = self.db.begin_write().await?;
        let shared: Option<(Option<i64>,)> = tx.optional(share.bind(token_hash).bind(id)).await?;
        let Some((last,)) = shared else {
            return Err(StoreError::NoSuchConversation(id.to_owned()));
        };
        let count = statement("SELECT COUNT(*) FROM runs WHERE conversation = $1 AND id <= $2");
        let (turns,): (i64,) =
            tx.optional(count.bind(id).bind(last)).await?.ok_or(sqlx::Error::RowNotFound)?;
        let turns = u32::try_from(turns).unwrap_or(0);
        let after = serde_json::json!({ "turns": turns });
        self.record(&mut tx, audit::Change::new("conversation.share", id).after(after)).await?;
        tx.commit().await?;
        Ok(turns)
    }

    async fn unshare_conversation(&self, id: &str) -> Result<(), StoreError> {
        let unshare = statement(
            "UPDATE conversations SET share_hash = NULL, shared_run = NULL WHERE id = $1",
        );
        let mut tx = self.db.begin_write().await?;
        if tx.execute(unshare.bind(id)).await? == 0 {
            return Err(StoreError::NoSuchConversation(id.to_owned()));
        }
        self.record(&mut tx, audit::Change::new("conversation.unshare", id)).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn shared_conversation(
        &self,
        token_hash: &str,
    ) -> Result<Option<KeptConversation>, StoreError> {
        let find =
            statement("SELECT id, shared_run::bigint FROM conversations WHERE share_hash = $1");
        let found: Option<(String, Option<i64>)> = self.db.optional(find.bind(token_hash)).await?;
        let Some((id, last)) = found else { return Ok(None) };
        self.whole(&id, Some(last.unwrap_or(0))).await
    }
}
