//! What an owner changes of a conversation in [`SqlStore`]: its title (or the default again)
//! and whether it is archived; and deleting it, which takes away its turns' text and pictures
//! and keeps its runs' cost and tokens, in one transaction recorded in the audit log.

use llmtool_log::Record;
use llmtool_log::conversation::{default_title, placeholders_from};

use crate::audit;
use crate::conversation::{
    ConversationEdit, ConversationInfo, Conversations as _, DeletedConversation, TitleChange,
    checked_title,
};
use crate::db::{Arg, Tx, statement};
use crate::sql_store::SqlStore;
use crate::store::StoreError;

impl SqlStore {
    /// Renames or archives conversation `id`; it as listed now.
    pub(crate) async fn edit(
        &self,
        id: &str,
        edit: &ConversationEdit,
    ) -> Result<ConversationInfo, StoreError> {
        let missing = || StoreError::NoSuchConversation(id.to_owned());
        let mut tx = self.db.begin_write().await?;
        let title = match &edit.title {
            TitleChange::Rename(title) => Some(checked_title(title)?),
            TitleChange::Default => Some(first_title(&mut tx, id).await?.ok_or_else(missing)?),
            TitleChange::Keep => None,
        };
        let change = statement(
            "UPDATE conversations SET title = COALESCE($2, title),
                archived = COALESCE($3::boolean, archived)
             WHERE id = $1",
        );
        if tx.execute(change.bind(id).bind(title).bind(edit.archived)).await? == 0 {
            return Err(missing());
        }
        tx.commit().await?;
        let listed = self.conversation(id).await?.ok_or_else(missing)?;
        Ok(listed.info)
    }

    /// Deletes conversation `id`'s turns' text, pictures and search words, and the
    /// conversation; its runs stay, with their cost and tokens and no text.
    pub(crate) async fn delete(&self, id: &str) -> Result<DeletedConversation, StoreError> {
        let mut tx = self.db.begin_write().await?;
        let turns = statement("SELECT id, record::text FROM runs WHERE conversation = $1");
        let turns: Vec<(i64, String)> = tx.all(turns.bind(id)).await?;
        let pictures = statement(
            "DELETE FROM run_pictures WHERE run_id IN (SELECT id FROM runs WHERE conversation = $1)",
        );
        let pictures = tx.execute(pictures.bind(id)).await?;
        let unindex = match &tx {
            Tx::Sqlite(_) => crate::sqlite::unindex_turns(id),
            Tx::Postgres(_) => crate::postgres::unindex_turns(id),
        };
        tx.execute(unindex).await?;
        for (run, text) in &turns {
            let scrub = statement(
                "UPDATE runs SET record = $2, conversation = NULL, turn = NULL WHERE id = $1",
            );
            tx.execute(scrub.bind(*run).bind(Arg::Json(without_text(text)))).await?;
        }
        let snapshots = statement("DELETE FROM snapshots WHERE conversation = $1");
        let snapshots = tx.execute(snapshots.bind(id)).await?;
        // Its Slack threads are threads again, no conversation's.
        tx.execute(statement("DELETE FROM slack_threads WHERE conversation = $1").bind(id)).await?;
        tx.execute(statement("DELETE FROM slack_syncs WHERE conversation = $1").bind(id)).await?;
        let delete = statement("DELETE FROM conversations WHERE id = $1");
        if tx.execute(delete.bind(id)).await? == 0 {
            return Err(StoreError::NoSuchConversation(id.to_owned()));
        }
        let deleted = DeletedConversation { turns: turns.len() as u64, pictures, snapshots };
        let after = serde_json::json!({
            "turns": deleted.turns,
            "pictures": deleted.pictures,
            "snapshots": deleted.snapshots,
        });
        self.record(&mut tx, audit::Change::new("conversation.delete", id).after(after)).await?;
        tx.commit().await?;
        Ok(deleted)
    }
}

/// Conversation `id`'s default title again, from its first turn (`None` when there is no such
/// conversation).
async fn first_title(tx: &mut Tx, id: &str) -> Result<Option<String>, sqlx::Error> {
    let kept = statement("SELECT slug, placeholders FROM conversations WHERE id = $1");
    let Some((slug, placeholders)): Option<(String, Option<String>)> =
        tx.optional(kept.bind(id)).await?
    else {
        return Ok(None);
    };
    let first = statement(
        "SELECT record::text FROM runs WHERE conversation = $1 ORDER BY turn, id LIMIT 1",
    );
    let first: Option<(String,)> = tx.optional(first.bind(id)).await?;
    let record = first.and_then(|(text,)| serde_json::from_str::<Record>(&text).ok());
    let tool = record.as_ref().and_then(|r| r.tool_name.clone()).unwrap_or(slug);
    let variables = record.as_ref().and_then(|r| r.variables.as_ref());
    Ok(Some(default_title(&tool, variables, &placeholders_from(placeholders))))
}

/// A run's record as a deleted conversation leaves it: its cost, tokens, model and outcome,
/// and none of its text (values, prompt, answer, error) or its place in the conversation.
fn without_text(text: &str) -> serde_json::Value {
    let Ok(record) = serde_json::from_str::<Record>(text) else {
        return serde_json::Value::Object(serde_json::Map::new());
    };
    let scrubbed = Record {
        variables: None,
        prompt: None,
        answer: None,
        error: None,
        conversation: None,
        turn: None,
        thread: None,
        ..record
    };
    serde_json::to_value(scrubbed).unwrap_or_default()
}
