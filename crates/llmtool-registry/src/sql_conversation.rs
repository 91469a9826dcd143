//! [`Conversations`] for [`SqlStore`]: each conversation's row, written with its turns' runs
//! ([`keep_turn`], in the run's own transaction), read back whole or listed, and shared by a
//! link (recorded in the audit log), written once over `Db`.

use async_trait::async_trait;
use llmtool_log::conversation::{
    KEEP_SUMMARY, KEPT_PLACEHOLDERS, NEWEST_FIRST, SUMMARY_COLUMNS, SummaryRow, after_condition,
    default_title, merge_placeholders, placeholders_from, placeholders_text, turn_words,
};
use llmtool_log::{Conversation, Record, Thread};

use crate::audit;
use crate::conversation::{
    Collaborator, ConversationEdit, ConversationInfo, ConversationQuery, Conversations,
    DeletedConversation, KeptConversation, KeptSnapshot, NewSnapshot, SnapshotInfo, SnapshotOf,
    owner_of,
};
use crate::db::{Arg, Db, Statement, Tx, statement};
use crate::sql_store::SqlStore;
use crate::store::StoreError;

/// What the library keeps of a conversation beyond its summary: its owner, version, whether it
/// is shared; then, for reading it whole, its policy and placeholders.
const EXTRAS: &str = "c.owner, c.slug, c.version::bigint, (c.share_hash IS NOT NULL),
    c.archived, c.dlp, c.placeholders";

/// The columns of a list: [`SUMMARY_COLUMNS`], then [`EXTRAS`].
type ListRow = (
    String,
    String,
    String,
    String,
    String,
    String,
    i64,
    f64,
    String,
    String,
    i64,
    bool,
    bool,
    Option<String>,
    Option<String>,
);

/// A conversation's row as the library lists it (the summary and what the library adds), and
/// what it keeps for its owner and follow-ups (the tool itself is its version's).
fn listed(row: ListRow) -> (ConversationInfo, Thread) {
    let summary: SummaryRow = (row.0, row.1, row.2, row.3, row.4, row.5, row.6, row.7);
    let info = ConversationInfo {
        summary: summary.into(),
        owner: row.8.clone(),
        slug: row.9.clone(),
        version: u32::try_from(row.10).unwrap_or(0),
        shared: row.11,
        archived: row.12,
    };
    (info, Thread { tool: None, dlp: row.13, placeholders: placeholders_from(row.14) })
}

/// Keeps the conversation `run` is a turn of (when it is one) in `tx`, the transaction that
/// keeps the run (and holds the budgets' lock, so kept runs take turns here): created by its
/// first turn (as a run of `slug` at `version`, by `by` charged to `member`), its placeholders
/// merged with the turn's and its summary grown by it, by the rules the run log keeps its own
/// conversations by.
pub(crate) async fn keep_turn(
    tx: &mut Tx,
    slug: &str,
    version: u32,
    (by, member): (Option<&str>, &str),
    (run_id, run): (i64, &Record),
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
    let kept: Option<(Option<String>,)> =
        tx.optional(statement(KEPT_PLACEHOLDERS).bind(id)).await?;
    let placeholders =
        merge_placeholders(placeholders_from(kept.and_then(|(text,)| text)), &thread.placeholders);
    let title = default_title(
        run.tool_name.as_deref().unwrap_or(slug),
        run.variables.as_ref(),
        &placeholders,
    );
    let keep = statement(
        "INSERT INTO conversations (id, started_at, owner, slug, version, provider, model, dlp,
            placeholders, title, last_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $2)
         ON CONFLICT (id) DO UPDATE SET
            dlp = COALESCE(conversations.dlp, excluded.dlp),
            placeholders = excluded.placeholders",
    )
    .bind(id)
    .bind(&run.started_at)
    .bind(owner)
    .bind(slug)
    .bind(i64::from(version))
    .bind(&run.provider)
    .bind(&run.model)
    .bind(thread.dlp)
    .bind(placeholders_text(&placeholders))
    .bind(title);
    tx.execute(keep).await?;
    let summary = statement(KEEP_SUMMARY).bind(id).bind(&run.started_at).bind(run.cost_usd);
    tx.execute(summary).await?;
    let index = match tx {
        Tx::Sqlite(_) => crate::sqlite::index_turn(run_id, id, turn_words(run)),
        Tx::Postgres(_) => crate::postgres::index_turn(run_id, id, turn_words(run)),
    };
    tx.execute(index).await?;
    Ok(())
}

/// The statement of the page `query` asks for, on `db`'s backend: only the conditions asked
/// for, so that one owner's page walks the sidebar's index (owner, archived, last turn, id) from
/// where it starts and stops at its limit.
fn page(db: &Db, query: &ConversationQuery<'_>) -> Statement {
    let mut values: Vec<Arg> = Vec::new();
    let mut parameter = |value: Arg| {
        values.push(value);
        format!("${}", values.len())
    };
    let mut conditions = Vec::new();
    let owner = query.owner.map(|owner| format!("{}::text", parameter(owner.into())));
    let collaborator = match (&owner, query.collaborator) {
        (Some(_), Some(member)) => Some(format!("{}::text", parameter(member.into()))),
        _ => None,
    };
    if let Some(archived) = query.archived {
        conditions.push(format!("c.archived = {}::boolean", parameter(archived.into())));
    }
    if let Some(after) = query.after {
        let (at, id) =
            (parameter(after.last_at.as_str().into()), parameter(after.id.as_str().into()));
        conditions.push(after_condition(&format!("{at}::text"), &format!("{id}::text")));
    }
    if let Some(text) = query.text.map(str::trim).filter(|text| !text.is_empty()) {
        let held = format!("{}::text", parameter(text.into()));
        let (title, words) = match db {
            Db::Sqlite(_) => (crate::sqlite::title_holds(&held), crate::sqlite::words_query(text)),
            Db::Postgres(_) => {
                (crate::postgres::title_holds(&held), crate::postgres::words_query(text))
            }
        };
        let turns = words.map(|words| {
            let words = format!("{}::text", parameter(words.into()));
            match db {
                Db::Sqlite(_) => crate::sqlite::turns_hold(&words),
                Db::Postgres(_) => crate::postgres::turns_hold(&words),
            }
        });
        conditions.push(match turns {
            Some(turns) => format!("({title} OR {turns})"),
            None => title,
        });
    }
    let limit = parameter(i64::from(query.limit.clamp(1, 500)).into());
    let select = |from: &str, first: Option<String>| {
        let condition = first.into_iter().chain(conditions.iter().cloned()).collect::<Vec<_>>();
        let condition =
            if condition.is_empty() { "TRUE".to_owned() } else { condition.join(" AND ") };
        format!(
            "SELECT {SUMMARY_COLUMNS}, {EXTRAS} FROM {from} WHERE {condition}
             {NEWEST_FIRST} LIMIT {limit}"
        )
    };
    let their_own = select("conversations c", owner.map(|owner| format!("c.owner = {owner}")));
    let sql = match collaborator {
        // Each part walks its own index; the two pages merge into one.
        Some(member) => {
            let joined = select(
                "conversations c JOIN collaborators k ON k.conversation = c.id",
                Some(format!("k.member_id = {member}")),
            );
            format!(
                "SELECT * FROM ({their_own}) own UNION ALL SELECT * FROM ({joined}) joined
                 ORDER BY 3 DESC, 1 DESC LIMIT {limit}"
            )
        }
        None => their_own,
    };
    values.into_iter().fold(statement(sql), Statement::bind)
}

impl SqlStore {
    /// The conversation `id` with its runs up to `last_run` (all when `None`).
    async fn whole(
        &self,
        id: &str,
        last_run: Option<i64>,
    ) -> Result<Option<KeptConversation>, StoreError> {
        let one = statement(format!(
            "SELECT {SUMMARY_COLUMNS}, {EXTRAS} FROM conversations c WHERE c.id = $1"
        ));
        let Some(row) = self.db.optional::<ListRow>(one.bind(id)).await? else {
            return Ok(None);
        };
        let (mut info, thread) = listed(row);
        let turns = statement(
            "SELECT r.id, r.record::text, m.name FROM runs r LEFT JOIN members m ON m.email = r.member
             WHERE r.conversation = $1 AND ($2::bigint IS NULL OR r.id <= $2) ORDER BY r.turn, r.id",
        );
        let rows: Vec<(i64, String, Option<String>)> =
            self.db.all(turns.bind(id).bind(last_run)).await?;
        let (turns, asked_by): (Vec<Record>, Vec<Option<String>>) = rows
            .into_iter()
            .filter_map(|(run, text, name)| {
                let mut record: Record = serde_json::from_str(&text).ok()?;
                record.id = Some(run);
                Some((record, name))
            })
            .unzip();
        if last_run.is_some() {
            let summary = &mut info.summary;
            summary.turns = turns.len() as u64;
            summary.cost_usd = turns.iter().filter_map(|turn| turn.cost_usd).sum();
            summary.last_at =
                turns.last().map_or(summary.started_at.clone(), |t| t.started_at.clone());
        }
        let conversation = Conversation {
            id: info.summary.id.clone(),
            started_at: info.summary.started_at.clone(),
            origin: "server".to_owned(),
            tool_path: None,
            tool_name: Some(info.slug.clone()),
            provider: info.summary.provider.clone(),
            model: info.summary.model.clone(),
            turns,
            thread,
        };
        Ok(Some(KeptConversation { info, conversation, asked_by }))
    }
}

#[async_trait]
impl Conversations for SqlStore {
    async fn conversation(&self, id: &str) -> Result<Option<KeptConversation>, StoreError> {
        self.whole(id, None).await
    }

    async fn conversation_info(&self, id: &str) -> Result<Option<ConversationInfo>, StoreError> {
        let one = statement(format!(
            "SELECT {SUMMARY_COLUMNS}, {EXTRAS} FROM conversations c WHERE c.id = $1"
        ));
        let row = self.db.optional::<ListRow>(one.bind(id)).await?;
        Ok(row.map(|row| listed(row).0))
    }

    async fn conversations(
        &self,
        query: &ConversationQuery<'_>,
    ) -> Result<Vec<ConversationInfo>, StoreError> {
        let rows: Vec<ListRow> = self.db.all(page(&self.db, query)).await?;
        Ok(rows.into_iter().map(|row| listed(row).0).collect())
    }

    async fn edit_conversation(
        &self,
        id: &str,
        edit: &ConversationEdit,
    ) -> Result<ConversationInfo, StoreError> {
        self.edit(id, edit).await
    }

    async fn delete_conversation(&self, id: &str) -> Result<DeletedConversation, StoreError> {
        self.delete(id).await
    }

    async fn open_collaboration(&self, id: &str, token_hash: &str) -> Result<(), StoreError> {
        self.open_collaboration_on(id, token_hash).await
    }

    async fn close_collaboration(&self, id: &str) -> Result<u64, StoreError> {
        self.close_collaboration_on(id).await
    }

    async fn collaboration_open(&self, id: &str) -> Result<bool, StoreError> {
        self.collaboration_is_open(id).await
    }

    async fn collaboration_by_link(&self, token_hash: &str) -> Result<Option<String>, StoreError> {
        self.by_link(token_hash).await
    }

    async fn join_conversation(
        &self,
        token_hash: &str,
        member_id: &str,
    ) -> Result<Option<String>, StoreError> {
        self.join(token_hash, member_id).await
    }

    async fn drop_collaborator(
        &self,
        id: &str,
        member_id: &str,
        action: &'static str,
    ) -> Result<bool, StoreError> {
        self.drop_member(id, member_id, action).await
    }

    async fn is_collaborator(&self, id: &str, member_id: &str) -> Result<bool, StoreError> {
        self.collaborates(id, member_id).await
    }

    async fn collaborators(&self, id: &str) -> Result<Vec<Collaborator>, StoreError> {
        self.collaborators_of(id).await
    }

    async fn publish_snapshot(
        &self,
        snapshot: &NewSnapshot<'_>,
    ) -> Result<SnapshotInfo, StoreError> {
        self.publish(snapshot).await
    }

    async fn snapshot(&self, which: SnapshotOf<'_>) -> Result<Option<KeptSnapshot>, StoreError> {
        self.snapshot_of(which).await
    }

    async fn snapshot_exists(&self, token_hash: &str) -> Result<bool, StoreError> {
        self.snapshot_known(token_hash).await
    }

    async fn snapshots(&self, id: &str) -> Result<Vec<SnapshotInfo>, StoreError> {
        self.snapshots_of(id).await
    }

    async fn revoke_snapshot(&self, which: SnapshotOf<'_>) -> Result<bool, StoreError> {
        self.revoke(which).await
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

#[cfg(test)]
mod tests {
    use super::*;
    use llmtool_log::After;

    /// A member's page, on a library of 20,000 conversations, is read from the sidebar's index
    /// in its order: no sort of every conversation the member has, wherever the page starts.
    #[tokio::test]
    async fn a_members_page_walks_the_sidebars_index() {
        let folder = tempfile::tempdir().unwrap();
        let store = SqlStore::open_sqlite(&folder.path().join("library.db")).await.unwrap();
        let fill = statement(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
             INSERT INTO conversations (id, started_at, owner, slug, version, provider, model,
                title, last_at, turns)
             SELECT printf('01jq%022d', i), '2026-11-01T10:00:00.000Z',
                CASE i % 2 WHEN 0 THEN 'member:ana' ELSE 'member:bo' END, 'chatty', 1, 'openai',
                'gpt-4o', 'chatty', strftime('%Y-%m-%dT%H:%M:%fZ', '2026-11-01', '+' || i || ' minutes'), 1
             FROM n",
        );
        store.db.execute(fill).await.unwrap();
        let after = After { last_at: "2026-11-05T10:00:00.000Z".into(), id: "01jqz".into() };
        for after in [None, Some(&after)] {
            let query = ConversationQuery {
                owner: Some("member:ana"),
                archived: Some(false),
                after,
                limit: 50,
                ..ConversationQuery::default()
            };
            let listed = store.conversations(&query).await.unwrap();
            assert_eq!(listed.len(), 50);
            assert!(listed.windows(2).all(|w| w[0].summary.last_at > w[1].summary.last_at));
            let explain = page(&store.db, &query).query_plan();
            let plan: Vec<(i64, i64, i64, String)> = store.db.all(explain).await.unwrap();
            let plan: Vec<&str> = plan.iter().map(|row| row.3.as_str()).collect();
            assert!(plan.iter().any(|step| step.contains("conversations_sidebar")), "{plan:?}");
            assert!(!plan.iter().any(|step| step.contains("TEMP B-TREE")), "a sort: {plan:?}");
        }
    }
}
