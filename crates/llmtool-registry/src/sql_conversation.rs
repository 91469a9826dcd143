//! [`Conversations`] for [`SqlStore`]: each conversation's row, written with its turns' runs
//! ([`keep_turn`], in the run's own transaction), read back whole or listed, and shared by a
//! link (recorded in the audit log), written once over `Db`.

use std::collections::BTreeMap;

use async_trait::async_trait;
use llmtool_log::{Record, Thread};

use crate::audit;
use crate::conversation::{ConversationInfo, Conversations, KeptConversation};
use crate::db::{Tx, statement};
use crate::sql_store::SqlStore;
use crate::store::StoreError;

/// What the lists show of a conversation, totalled over its runs.
const INFO: &str =
    "SELECT c.id, c.started_at, MAX(r.started_at), c.owner, c.slug, c.version::bigint,
        c.provider, c.model, COUNT(r.id), COALESCE(SUM(r.cost_usd), 0.0),
        (c.share_hash IS NOT NULL), c.dlp, c.placeholders, c.shared_turns::bigint
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

/// What a row of [`INFO`] says: the conversation as listed, what it keeps, and the turns its
/// share link shows.
fn info(row: InfoRow) -> (ConversationInfo, Thread, Option<u32>) {
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
    (info, thread, row.13.and_then(|n| u32::try_from(n).ok()))
}

/// Keeps the conversation `run` is a turn of (when it is one) in `tx`, the transaction that
/// keeps the run: created by its first turn (as a run of `slug` at `version`, by `by`), its
/// placeholders replaced by the latest turn's (a turn's are all the conversation's so far).
pub(crate) async fn keep_turn(
    tx: &mut Tx,
    slug: &str,
    version: u32,
    by: Option<&str>,
    run: &Record,
) -> Result<(), sqlx::Error> {
    let Some(id) = &run.conversation else { return Ok(()) };
    let thread = run.thread.clone().unwrap_or_default();
    let placeholders = (!thread.placeholders.is_empty())
        .then(|| serde_json::to_string(&thread.placeholders).unwrap_or_default());
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
    .bind(by.unwrap_or_default())
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
    /// The conversation `id` with its turns up to `last_turn` (all when `None`).
    async fn whole(
        &self,
        id: &str,
        last_turn: Option<u32>,
    ) -> Result<Option<(KeptConversation, Option<u32>)>, StoreError> {
        let one = statement(format!("{INFO} WHERE c.id = $1 GROUP BY c.id"));
        let Some(row) = self.db.optional::<InfoRow>(one.bind(id)).await? else {
            return Ok(None);
        };
        let (mut info, thread, shared_turns) = info(row);
        let turns = statement(
            "SELECT id, record::text FROM runs WHERE conversation = $1 AND ($2::bigint IS NULL OR turn <= $2)
             ORDER BY turn, id",
        );
        let rows: Vec<(i64, String)> =
            self.db.all(turns.bind(id).bind(last_turn.map(i64::from))).await?;
        let turns: Vec<Record> = rows
            .into_iter()
            .filter_map(|(run, text)| {
                let mut record: Record = serde_json::from_str(&text).ok()?;
                record.id = Some(run);
                Some(record)
            })
            .collect();
        if last_turn.is_some() {
            info.turns = turns.len() as u64;
            info.cost_usd = turns.iter().filter_map(|turn| turn.cost_usd).sum();
            info.last_at = turns.last().map_or(info.started_at.clone(), |t| t.started_at.clone());
        }
        Ok(Some((KeptConversation { info, turns, thread }, shared_turns)))
    }
}

#[async_trait]
impl Conversations for SqlStore {
    async fn conversation(&self, id: &str) -> Result<Option<KeptConversation>, StoreError> {
        Ok(self.whole(id, None).await?.map(|(kept, _)| kept))
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
                shared_turns = (SELECT MAX(turn) FROM runs WHERE conversation = $2)
             WHERE id = $2 RETURNING shared_turns::bigint",
        );
        let mut tx = self.db.begin_write().await?;
        let shared: Option<(Option<i64>,)> = tx.optional(share.bind(token_hash).bind(id)).await?;
        let Some((turns,)) = shared else {
            return Err(StoreError::NoSuchConversation(id.to_owned()));
        };
        let turns = turns.and_then(|n| u32::try_from(n).ok()).unwrap_or(0);
        let after = serde_json::json!({ "turns": turns });
        self.record(&mut tx, audit::Change::new("conversation.share", id).after(after)).await?;
        tx.commit().await?;
        Ok(turns)
    }

    async fn unshare_conversation(&self, id: &str) -> Result<(), StoreError> {
        let unshare = statement(
            "UPDATE conversations SET share_hash = NULL, shared_turns = NULL WHERE id = $1",
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
            statement("SELECT id, shared_turns::bigint FROM conversations WHERE share_hash = $1");
        let found: Option<(String, Option<i64>)> = self.db.optional(find.bind(token_hash)).await?;
        let Some((id, turns)) = found else { return Ok(None) };
        let turns = turns.and_then(|n| u32::try_from(n).ok()).unwrap_or(0);
        Ok(self.whole(&id, Some(turns)).await?.map(|(kept, _)| kept))
    }
}
