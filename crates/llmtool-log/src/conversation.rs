//! Conversations in the run log: each turn is a run (with its conversation's id and its turn
//! number), and the conversation's own row keeps the tool as it started and the placeholders
//! of the values data-loss prevention hid. `llmtool reply` and `run -c` read one back to go on
//! with it; `llmtool logs --conversations` lists them.

use std::collections::BTreeMap;

use serde::Serialize;
use sqlx::Row as _;

use crate::record::{Record, Thread};
use crate::store::{LogError, RunLog, record};

/// A conversation as the log keeps it: where it started, on which model, and its turns in
/// order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Conversation {
    pub id: String,
    pub started_at: String,
    /// What started it: `run` or `chat`.
    pub origin: String,
    pub tool_path: Option<String>,
    pub tool_name: Option<String>,
    pub provider: String,
    pub model: String,
    pub turns: Vec<Record>,
    /// The tool as it started, and the placeholders' values: private, never listed.
    #[serde(skip)]
    pub thread: Thread,
}

/// One line of `llmtool logs --conversations`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConversationSummary {
    pub id: String,
    pub started_at: String,
    /// When its last turn started.
    pub last_at: String,
    pub tool: String,
    pub provider: String,
    pub model: String,
    pub turns: u64,
    /// US dollars, over the turns whose cost is known.
    pub cost_usd: f64,
}

/// Writes the conversation of each record that has one (before the runs, which refer to it):
/// created by its first record to arrive, its placeholders replaced by the latest turn's (a
/// turn's are all the conversation's so far).
pub(crate) async fn keep_threads(
    connection: &mut sqlx::SqliteConnection,
    records: &[Record],
) -> Result<(), sqlx::Error> {
    for record in records {
        let Some(id) = &record.conversation else { continue };
        let thread = record.thread.clone().unwrap_or_default();
        let placeholders = (!thread.placeholders.is_empty())
            .then(|| serde_json::to_string(&thread.placeholders).unwrap_or_default());
        sqlx::query(
            "INSERT INTO conversations (id, started_at, origin, tool_path, tool_name, tool,
                provider, model, placeholders, dlp)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
             ON CONFLICT (id) DO UPDATE SET
                tool = COALESCE(conversations.tool, excluded.tool),
                dlp = COALESCE(conversations.dlp, excluded.dlp),
                placeholders = COALESCE(excluded.placeholders, conversations.placeholders)",
        )
        .bind(id)
        .bind(&record.started_at)
        .bind(&record.origin)
        .bind(&record.tool_path)
        .bind(&record.tool_name)
        .bind(&thread.tool)
        .bind(&record.provider)
        .bind(&record.model)
        .bind(placeholders)
        .bind(&thread.dlp)
        .execute(&mut *connection)
        .await?;
    }
    Ok(())
}

impl RunLog {
    /// The conversation `id`, with its turns in order; `None` when the log has none by that
    /// id.
    pub async fn conversation(&self, id: &str) -> Result<Option<Conversation>, LogError> {
        let Some(row) = sqlx::query("SELECT * FROM conversations WHERE id = ?1")
            .bind(id)
            .fetch_optional(&self.pool)
            .await
            .map_err(|e| self.error(e))?
        else {
            return Ok(None);
        };
        let turns = sqlx::query("SELECT * FROM runs WHERE conversation = ?1 ORDER BY turn, id")
            .bind(id)
            .fetch_all(&self.pool)
            .await
            .map_err(|e| self.error(e))?;
        let read = || -> Result<Conversation, sqlx::Error> {
            let placeholders: Option<String> = row.try_get("placeholders")?;
            Ok(Conversation {
                id: row.try_get("id")?,
                started_at: row.try_get("started_at")?,
                origin: row.try_get("origin")?,
                tool_path: row.try_get("tool_path")?,
                tool_name: row.try_get("tool_name")?,
                provider: row.try_get("provider")?,
                model: row.try_get("model")?,
                turns: turns.iter().map(record).collect::<Result<_, _>>()?,
                thread: Thread {
                    tool: row.try_get("tool")?,
                    dlp: row.try_get("dlp")?,
                    placeholders: placeholders
                        .and_then(|text| serde_json::from_str::<BTreeMap<_, _>>(&text).ok())
                        .unwrap_or_default(),
                },
            })
        };
        read().map(Some).map_err(|e| self.error(e))
    }

    /// The conversation whose last turn is the newest among those `origins` started (`run`
    /// and `chat`, for `llmtool reply`): what `-c` goes on with.
    pub async fn latest_conversation(&self, origins: &[&str]) -> Result<Option<String>, LogError> {
        let origins = serde_json::to_string(origins).unwrap_or_default();
        sqlx::query_scalar(
            "SELECT runs.conversation FROM runs JOIN conversations ON conversations.id = runs.conversation
             WHERE conversations.origin IN (SELECT value FROM json_each(?1))
             ORDER BY runs.started_at DESC, runs.id DESC LIMIT 1",
        )
        .bind(origins)
        .fetch_optional(&self.pool)
        .await
        .map_err(|e| self.error(e))
    }

    /// The newest `limit` conversations, by their last turn.
    pub async fn conversations(&self, limit: u32) -> Result<Vec<ConversationSummary>, LogError> {
        let rows = sqlx::query(
            "SELECT c.id, c.started_at, MAX(r.started_at) AS last_at,
                COALESCE(c.tool_name, c.tool_path, '') AS tool, c.provider, c.model,
                COUNT(r.id) AS turns, COALESCE(SUM(r.cost_usd), 0.0) AS cost
             FROM conversations c JOIN runs r ON r.conversation = c.id
             GROUP BY c.id ORDER BY last_at DESC, c.id DESC LIMIT ?1",
        )
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await
        .map_err(|e| self.error(e))?;
        rows.iter()
            .map(|row| {
                Ok(ConversationSummary {
                    id: row.try_get("id")?,
                    started_at: row.try_get("started_at")?,
                    last_at: row.try_get("last_at")?,
                    tool: row.try_get("tool")?,
                    provider: row.try_get("provider")?,
                    model: row.try_get("model")?,
                    turns: u64::try_from(row.try_get::<i64, _>("turns")?).unwrap_or(0),
                    cost_usd: row.try_get("cost")?,
                })
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(|e| self.error(e))
    }
}
