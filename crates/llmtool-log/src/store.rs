//! The SQLite database of the run log: opening it (WAL, a short busy timeout, migrations),
//! appending a record, and the queries of `llmtool logs` and `llmtool usage`.

use std::path::Path;
use std::str::FromStr as _;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use sqlx::Row as _;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};

use crate::record::{Outcome, Record};

/// How long a write waits for another writer before it gives up (the run goes on).
const BUSY_TIMEOUT: Duration = Duration::from_millis(500);

#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error("the run log {path}: {source}")]
    Database { path: String, source: sqlx::Error },
    #[error("the run log {path}: {source}")]
    Migration { path: String, source: sqlx::migrate::MigrateError },
    #[error("cannot create the data directory {path}: {source}")]
    Directory { path: String, source: std::io::Error },
}

/// The run log's database.
#[derive(Debug, Clone)]
pub struct RunLog {
    pub(crate) pool: SqlitePool,
    path: String,
}

/// Which runs `llmtool logs` lists: the newest `limit`, of a tool, of a model, since a time.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    pub limit: u32,
    pub tool: Option<String>,
    pub model: Option<String>,
    /// As [`crate::time_text`] writes it.
    pub since: Option<String>,
    /// What ran them (`run`, `batch`, ...).
    pub origin: Option<String>,
}

/// What `llmtool usage` totals by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grouping {
    Tool,
    Model,
    Day,
    /// What ran them: `run`, `mcp`, `batch`, `test`, `server`, `studio`.
    Origin,
}

/// The runs of one tool, model, day or origin, and what they used and cost: a row of
/// `llmtool usage`, and of a library's `GET /usage` (as `UsageRow`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = UsageRow))]
pub struct Total {
    pub key: String,
    pub runs: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// US dollars, over the runs whose cost is known.
    pub cost_usd: f64,
    /// Runs whose cost is not known, left out of `cost_usd`: on a model with no price, or
    /// with no usage reported (a failed or cancelled run).
    pub unpriced_runs: u64,
}

/// The log's schema, oldest change first.
pub(crate) const MIGRATIONS: &[crate::migrations::Embedded] = crate::embed_migrations!(
    "../migrations": "0001_runs.sql", "0002_redactions.sql", "0003_prompt.sql", "0004_conversations.sql",
    "0005_conversation_summaries.sql", "0006_function_calls.sql"
);

impl RunLog {
    /// Opens the log at `path`, creating it (and its folder) if needed.
    pub async fn open(path: &Path) -> Result<RunLog, LogError> {
        let shown = path.display().to_string();
        // Prompts, values and answers: the folder and the database are the user's alone.
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            crate::private::private_dir(parent).map_err(|source| LogError::Directory {
                path: parent.display().to_string(),
                source,
            })?;
        }
        crate::private::private_sqlite(path)
            .map_err(|source| LogError::Directory { path: shown.clone(), source })?;
        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            // In WAL mode, NORMAL loses no committed record when the process is killed (only,
            // at worst, the last ones on a power cut), and spares a run an fsync per record.
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(BUSY_TIMEOUT);
        let pool = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(options)
            .await
            .map_err(|source| LogError::Database { path: shown.clone(), source })?;
        crate::migrations::migrator(MIGRATIONS)
            .run(&pool)
            .await
            .map_err(|source| LogError::Migration { path: shown.clone(), source })?;
        Ok(RunLog { pool, path: shown })
    }

    /// Opens the log at `path` to read it, or `None` when there is none yet.
    pub async fn open_existing(path: &Path) -> Result<Option<RunLog>, LogError> {
        if !path.exists() {
            return Ok(None);
        }
        Self::open(path).await.map(Some)
    }

    pub(crate) fn error(&self, source: sqlx::Error) -> LogError {
        LogError::Database { path: self.path.clone(), source }
    }

    /// Appends `record`; its id.
    pub async fn append(&self, record: &Record) -> Result<i64, LogError> {
        let mut ids = self.append_all(std::slice::from_ref(record)).await?;
        ids.pop().ok_or_else(|| self.error(sqlx::Error::RowNotFound))
    }

    /// Appends `records` in one transaction (one commit for all of them, which is what many
    /// runs finishing together need); their ids, in order.
    pub async fn append_all(&self, records: &[Record]) -> Result<Vec<i64>, LogError> {
        let mut transaction = self.pool.begin().await.map_err(|e| self.error(e))?;
        let ids = insert(&mut transaction, records).await.map_err(|e| self.error(e))?;
        transaction.commit().await.map_err(|e| self.error(e))?;
        Ok(ids)
    }

    /// The runs `filter` picks, newest first.
    pub async fn recent(&self, filter: &Filter) -> Result<Vec<Record>, LogError> {
        let rows = sqlx::query(
            "SELECT * FROM runs
             WHERE (?1 IS NULL OR tool_name = ?1 OR tool_path = ?1)
               AND (?2 IS NULL OR model = ?2 OR provider || '/' || model = ?2)
               AND (?3 IS NULL OR started_at >= ?3)
               AND (?5 IS NULL OR origin = ?5)
             ORDER BY started_at DESC, id DESC LIMIT ?4",
        )
        .bind(&filter.tool)
        .bind(&filter.model)
        .bind(&filter.since)
        .bind(i64::from(filter.limit))
        .bind(&filter.origin)
        .fetch_all(&self.pool)
        .await
        .map_err(|e| self.error(e))?;
        rows.iter().map(|row| record(row).map_err(|e| self.error(e))).collect()
    }

    /// The run numbered `id`, if the log has it.
    pub async fn get(&self, id: i64) -> Result<Option<Record>, LogError> {
        let row = sqlx::query("SELECT * FROM runs WHERE id = ?1")
            .bind(id)
            .fetch_optional(&self.pool)
            .await
            .map_err(|e| self.error(e))?;
        row.as_ref().map(record).transpose().map_err(|e| self.error(e))
    }

    /// The totals of the runs since `since` (RFC 3339), by tool, model or day, largest cost
    /// first (by day: in date order).
    pub async fn totals(&self, by: Grouping, since: Option<&str>) -> Result<Vec<Total>, LogError> {
        let (key, order) = match by {
            Grouping::Tool => ("COALESCE(tool_name, tool_path, tool_hash)", "cost DESC, key"),
            Grouping::Model => ("provider || '/' || model", "cost DESC, key"),
            Grouping::Day => ("substr(started_at, 1, 10)", "key"),
            Grouping::Origin => ("origin", "cost DESC, key"),
        };
        let query = format!(
            "SELECT {key} AS key, COUNT(*) AS runs,
                COALESCE(SUM(input_tokens), 0) AS input, COALESCE(SUM(output_tokens), 0) AS output,
                COALESCE(SUM(cost_usd), 0.0) AS cost,
                SUM(CASE WHEN cost_usd IS NULL THEN 1 ELSE 0 END) AS unpriced
             FROM runs WHERE (?1 IS NULL OR started_at >= ?1)
             GROUP BY key ORDER BY {order}"
        );
        let rows = sqlx::query(&query)
            .bind(since)
            .fetch_all(&self.pool)
            .await
            .map_err(|e| self.error(e))?;
        let count = |n: i64| u64::try_from(n).unwrap_or(0);
        rows.iter()
            .map(|row| {
                Ok(Total {
                    key: row.try_get("key")?,
                    runs: count(row.try_get("runs")?),
                    input_tokens: count(row.try_get("input")?),
                    output_tokens: count(row.try_get("output")?),
                    cost_usd: row.try_get("cost")?,
                    unpriced_runs: count(row.try_get("unpriced")?),
                })
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(|e| self.error(e))
    }
}

pub(crate) fn record(row: &sqlx::sqlite::SqliteRow) -> Result<Record, sqlx::Error> {
    let count = |name: &str| -> Result<Option<u64>, sqlx::Error> {
        Ok(row.try_get::<Option<i64>, _>(name)?.and_then(|n| u64::try_from(n).ok()))
    };
    let variables: Option<String> = row.try_get("variables")?;
    let redactions: Option<String> = row.try_get("redactions")?;
    let calls: Option<String> = row.try_get("calls")?;
    let outcome: String = row.try_get("outcome")?;
    Ok(Record {
        id: Some(row.try_get("id")?),
        started_at: row.try_get("started_at")?,
        origin: row.try_get("origin")?,
        tool_path: row.try_get("tool_path")?,
        tool_name: row.try_get("tool_name")?,
        tool_hash: row.try_get("tool_hash")?,
        variables: variables.and_then(|text| serde_json::Value::from_str(&text).ok()),
        prompt: row.try_get("prompt")?,
        variables_hash: row.try_get("variables_hash")?,
        provider: row.try_get("provider")?,
        model: row.try_get("model")?,
        input_tokens: count("input_tokens")?,
        cached_input_tokens: count("cached_input_tokens")?,
        cache_write_tokens: count("cache_write_tokens")?,
        output_tokens: count("output_tokens")?,
        reasoning_tokens: count("reasoning_tokens")?,
        cost_usd: row.try_get("cost_usd")?,
        price_entry: row.try_get("price_entry")?,
        latency_ms: count("latency_ms")?,
        first_token_ms: count("first_token_ms")?,
        repairs: u32::try_from(row.try_get::<i64, _>("repairs")?).unwrap_or(0),
        outcome: Outcome::parse(&outcome),
        error: row.try_get("error")?,
        answer: row.try_get("answer")?,
        redactions: redactions
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default(),
        conversation: row.try_get("conversation")?,
        turn: row.try_get::<Option<i64>, _>("turn")?.and_then(|n| u32::try_from(n).ok()),
        calls: calls.and_then(|text| serde_json::from_str(&text).ok()).unwrap_or_default(),
        thread: None,
    })
}

/// How many records one INSERT statement writes at most: 27 values each stays well under
/// SQLite's limit on a statement's parameters.
const STATEMENT_RECORDS: usize = 256;

/// Inserts `records`, many to a statement (each statement is a round trip to SQLite's
/// thread); their ids, in order.
async fn insert(
    connection: &mut sqlx::SqliteConnection,
    records: &[Record],
) -> Result<Vec<i64>, sqlx::Error> {
    let count = |n: Option<u64>| n.and_then(|n| i64::try_from(n).ok());
    let mut ids = Vec::with_capacity(records.len());
    crate::conversation::keep_threads(connection, records).await?;
    for records in records.chunks(STATEMENT_RECORDS) {
        let mut insert = sqlx::QueryBuilder::<sqlx::Sqlite>::new(
            "INSERT INTO runs (started_at, origin, tool_path, tool_name, tool_hash, variables,
                variables_hash, provider, model, input_tokens, cached_input_tokens,
                cache_write_tokens, output_tokens, reasoning_tokens, cost_usd, price_entry,
                latency_ms, first_token_ms, repairs, outcome, error, answer, redactions, prompt,
                conversation, turn, calls) ",
        );
        insert.push_values(records, |mut row, record| {
            let variables = record.variables.as_ref().map(serde_json::Value::to_string);
            let redactions = (!record.redactions.is_empty())
                .then(|| serde_json::to_string(&record.redactions).unwrap_or_default());
            row.push_bind(&record.started_at)
                .push_bind(&record.origin)
                .push_bind(&record.tool_path)
                .push_bind(&record.tool_name)
                .push_bind(&record.tool_hash)
                .push_bind(variables)
                .push_bind(&record.variables_hash)
                .push_bind(&record.provider)
                .push_bind(&record.model)
                .push_bind(count(record.input_tokens))
                .push_bind(count(record.cached_input_tokens))
                .push_bind(count(record.cache_write_tokens))
                .push_bind(count(record.output_tokens))
                .push_bind(count(record.reasoning_tokens))
                .push_bind(record.cost_usd)
                .push_bind(&record.price_entry)
                .push_bind(count(record.latency_ms))
                .push_bind(count(record.first_token_ms))
                .push_bind(i64::from(record.repairs))
                .push_bind(record.outcome.as_str())
                .push_bind(&record.error)
                .push_bind(&record.answer)
                .push_bind(redactions)
                .push_bind(&record.prompt)
                .push_bind(&record.conversation)
                .push_bind(record.turn.map(i64::from))
                .push_bind(crate::record::calls_json(&record.calls));
        });
        insert.push(" RETURNING id");
        // One statement's rows take ids one above another, in the order of its VALUES (the
        // writer holds the database alone); RETURNING gives them in no promised order.
        let mut given: Vec<i64> = insert.build_query_scalar().fetch_all(&mut *connection).await?;
        given.sort_unstable();
        ids.extend(given);
    }
    Ok(ids)
}

#[cfg(test)]
mod migration_tests {
    use super::MIGRATIONS;
    use crate::migrations::differences_from_folder;

    /// A log kept before conversations had summaries gets them from its runs when opened.
    #[tokio::test]
    async fn an_older_logs_conversations_get_their_summaries() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("log.db");
        let options = sqlx::sqlite::SqliteConnectOptions::new().filename(&path);
        let pool = sqlx::SqlitePool::connect_with(options.create_if_missing(true)).await.unwrap();
        crate::migrations::migrator(&MIGRATIONS[..4]).run(&pool).await.unwrap();
        let older = "INSERT INTO conversations (id, started_at, origin, tool_name, provider, model)
                VALUES ('c1', '2026-11-01T10:00:00.000Z', 'run', 'chatty', 'openai', 'gpt-4o');
            INSERT INTO runs (started_at, origin, tool_hash, variables_hash, provider, model,
                outcome, repairs, conversation, turn)
            VALUES ('2026-11-01T10:00:00.000Z', 'run', '', '', 'openai', 'gpt-4o', 'ok', 0, 'c1', 1),
                ('2026-11-04T10:00:00.000Z', 'run', '', '', 'openai', 'gpt-4o', 'ok', 0, 'c1', 2);
            UPDATE runs SET cost_usd = 0.5 WHERE turn = 2;";
        sqlx::raw_sql(older).execute(&pool).await.unwrap();
        pool.close().await;

        let log = crate::RunLog::open(&path).await.unwrap();
        let listed = log.conversations(None, 10).await.unwrap();
        let summary = &listed[0].summary;
        assert_eq!((summary.turns, summary.cost_usd), (2, 0.5));
        assert_eq!(
            (summary.last_at.as_str(), summary.title.as_str()),
            ("2026-11-04T10:00:00.000Z", "chatty")
        );
    }

    #[tokio::test]
    async fn the_listed_migrations_are_the_folders() {
        let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
        assert_eq!(differences_from_folder(MIGRATIONS, &folder).await, Vec::<String>::new());
    }
}
