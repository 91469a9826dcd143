//! The journal beside a batch's output (`OUT.journal`, SQLite): the rows done, each with its
//! record, and how many bytes of the output are committed. One transaction records a group of
//! rows and the output's new length together, after the output was synced, so the two never
//! disagree about what is done.

use std::collections::HashMap;
use std::path::Path;
use std::str::FromStr as _;

use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{QueryBuilder, Sqlite};

/// Rows written by one statement at most (7 values each, well under SQLite's limit of 32,766).
const STATEMENT_ROWS: usize = 256;

/// The journal's schema, oldest change first.
pub(crate) const MIGRATIONS: &[llmtool_log::migrations::Embedded] = llmtool_log::embed_migrations!(
    "../migrations": "0001_journal.sql", "0002_provider_batches.sql"
);

#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("the batch journal {path}: {source}")]
    Database { path: String, source: sqlx::Error },
    #[error("the batch journal {path}: {source}")]
    Migration { path: String, source: sqlx::migrate::MigrateError },
}

/// A row done: its key, place and id, how it ended, its cost and its output record.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub key: String,
    pub row_index: u64,
    pub row_id: String,
    pub outcome: String,
    pub cost_usd: Option<f64>,
    /// The row's line in the output, as written.
    pub record: String,
    /// The journal had this key already (a failed row run again): the output's old record
    /// of it must go, so the output is written again.
    pub replaces: bool,
}

/// A row the journal has done, met again by a run: its place now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Met {
    pub key: String,
    pub row_index: u64,
}

/// What a run starts from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Start {
    /// This run's number.
    pub pass: i64,
    /// What the previous run was run with, if it differs from this run's.
    pub setup_changed: bool,
}

/// A batch's journal. Reads and writes go through pools of their own, so that a lookup that
/// waits (its future not polled while the batch commits) never holds the connection a commit
/// needs.
#[derive(Debug, Clone)]
pub struct Journal {
    pub(crate) pool: SqlitePool,
    reads: SqlitePool,
    path: String,
}

impl Journal {
    /// Opens (creating it if needed) the journal at `path`.
    pub async fn open(path: &Path) -> Result<Journal, JournalError> {
        let shown = path.display().to_string();
        // Its records hold the answers: the journal is its owner's alone.
        llmtool_log::private::private_sqlite(path).map_err(|source| JournalError::Database {
            path: shown.clone(),
            source: sqlx::Error::Io(source),
        })?;
        let options = SqliteConnectOptions::from_str("sqlite:")
            .map_err(|source| JournalError::Database { path: shown.clone(), source })?
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            // A commit is on disk when it returns: it stands for output already synced.
            .synchronous(SqliteSynchronous::Full);
        let pool = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(options.clone())
            .await
            .map_err(|source| JournalError::Database { path: shown.clone(), source })?;
        llmtool_log::migrations::migrator(MIGRATIONS)
            .run(&pool)
            .await
            .map_err(|source| JournalError::Migration { path: shown.clone(), source })?;
        // A lookup's future may sit unpolled, holding its connection, while the batch waits on
        // models; so a long wait for one is not an error.
        let reads = SqlitePoolOptions::new()
            .max_connections(4)
            .acquire_timeout(std::time::Duration::from_hours(1))
            .connect_with(options.read_only(true))
            .await
            .map_err(|source| JournalError::Database { path: shown.clone(), source })?;
        let journal = Journal { pool, reads, path: shown };
        sqlx::query("INSERT OR IGNORE INTO batch (id, out_bytes) VALUES (1, 0)")
            .execute(&journal.pool)
            .await
            .map_err(|e| journal.error(e))?;
        Ok(journal)
    }

    pub(crate) fn error(&self, source: sqlx::Error) -> JournalError {
        JournalError::Database { path: self.path.clone(), source }
    }

    /// How many bytes of the output are committed.
    pub async fn committed_bytes(&self) -> Result<u64, JournalError> {
        let bytes: i64 = sqlx::query_scalar("SELECT out_bytes FROM batch WHERE id = 1")
            .fetch_one(&self.pool)
            .await
            .map_err(|e| self.error(e))?;
        Ok(u64::try_from(bytes).unwrap_or(0))
    }

    /// How the rows of `keys` ended, for those done.
    pub async fn outcomes(&self, keys: &[&str]) -> Result<HashMap<String, String>, JournalError> {
        if keys.is_empty() {
            return Ok(HashMap::new());
        }
        let placeholders = vec!["?"; keys.len()].join(", ");
        let sql = format!("SELECT key, outcome FROM rows WHERE key IN ({placeholders})");
        let mut query = sqlx::query_as::<_, (String, String)>(&sql);
        for key in keys {
            query = query.bind(*key);
        }
        let rows = query.fetch_all(&self.reads).await.map_err(|e| self.error(e))?;
        Ok(rows.into_iter().collect())
    }

    /// Begins run number one more than the last, run with `setup`.
    pub async fn start(&self, setup: &str) -> Result<Start, JournalError> {
        let mut tx = self.pool.begin().await.map_err(|e| self.error(e))?;
        let before: Option<String> = sqlx::query_scalar("SELECT setup FROM batch WHERE id = 1")
            .fetch_one(&mut *tx)
            .await
            .map_err(|e| self.error(e))?;
        let pass: i64 = sqlx::query_scalar(
            "UPDATE batch SET pass = pass + 1, setup = ? WHERE id = 1 RETURNING pass",
        )
        .bind(setup)
        .fetch_one(&mut *tx)
        .await
        .map_err(|e| self.error(e))?;
        tx.commit().await.map_err(|e| self.error(e))?;
        let rows_done = self.count().await? > 0;
        Ok(Start { pass, setup_changed: rows_done && before.is_some_and(|b| b != setup) })
    }

    /// How many rows the journal has.
    pub async fn count(&self) -> Result<u64, JournalError> {
        let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM rows")
            .fetch_one(&self.pool)
            .await
            .map_err(|e| self.error(e))?;
        Ok(u64::try_from(count).unwrap_or(0))
    }

    /// Records `entries` (replacing earlier ones of the same keys), stamps the rows `met`
    /// again with run `pass` and their place now, and records the output's committed length,
    /// in one transaction.
    pub async fn commit(
        &self,
        entries: &[Entry],
        met: &[Met],
        pass: i64,
        out_bytes: u64,
    ) -> Result<(), JournalError> {
        let mut tx = self.pool.begin().await.map_err(|e| self.error(e))?;
        self.commit_in(&mut tx, entries, met, pass, out_bytes).await?;
        tx.commit().await.map_err(|e| self.error(e))
    }

    /// [`Journal::commit`] within the transaction `tx`.
    pub(crate) async fn commit_in(
        &self,
        tx: &mut sqlx::Transaction<'_, Sqlite>,
        entries: &[Entry],
        met: &[Met],
        pass: i64,
        out_bytes: u64,
    ) -> Result<(), JournalError> {
        // Many rows a statement: a statement is a round trip to SQLite's thread.
        for entries in entries.chunks(STATEMENT_ROWS) {
            let mut insert = QueryBuilder::<Sqlite>::new(
                "INSERT INTO rows (key, row_index, row_id, outcome, cost_usd, record, pass) ",
            );
            insert.push_values(entries, |mut row, entry| {
                row.push_bind(&entry.key)
                    .push_bind(i64::try_from(entry.row_index).unwrap_or(i64::MAX))
                    .push_bind(&entry.row_id)
                    .push_bind(&entry.outcome)
                    .push_bind(entry.cost_usd)
                    .push_bind(&entry.record)
                    .push_bind(pass);
            });
            insert.push(
                " ON CONFLICT (key) DO UPDATE SET row_index = excluded.row_index,
                   row_id = excluded.row_id, outcome = excluded.outcome,
                   cost_usd = excluded.cost_usd, record = excluded.record, pass = excluded.pass",
            );
            insert.build().execute(&mut **tx).await.map_err(|e| self.error(e))?;
        }
        for met in met.chunks(STATEMENT_ROWS) {
            let mut update = QueryBuilder::<Sqlite>::new("WITH met (key, row_index) AS (");
            update.push_values(met, |mut row, met| {
                row.push_bind(&met.key).push_bind(i64::try_from(met.row_index).unwrap_or(i64::MAX));
            });
            update.push(") UPDATE rows SET pass = ");
            update.push_bind(pass);
            update.push(", row_index = met.row_index FROM met WHERE rows.key = met.key");
            update.build().execute(&mut **tx).await.map_err(|e| self.error(e))?;
        }
        let replaced = entries.iter().any(|entry| entry.replaces);
        sqlx::query(
            "UPDATE batch SET out_bytes = ?, rewrite_pending = rewrite_pending OR ? WHERE id = 1",
        )
        .bind(i64::try_from(out_bytes).unwrap_or(i64::MAX))
        .bind(replaced)
        .execute(&mut **tx)
        .await
        .map_err(|e| self.error(e))?;
        Ok(())
    }

    /// Drops the rows that run `pass` did not meet (rows no longer in the dataset, or made
    /// with another tool or model): how many. The output is then due to be written again.
    pub async fn drop_unmet(&self, pass: i64) -> Result<u64, JournalError> {
        let mut tx = self.pool.begin().await.map_err(|e| self.error(e))?;
        let dropped = sqlx::query("DELETE FROM rows WHERE pass < ?")
            .bind(pass)
            .execute(&mut *tx)
            .await
            .map_err(|e| self.error(e))?
            .rows_affected();
        if dropped > 0 {
            sqlx::query("UPDATE batch SET rewrite_pending = 1 WHERE id = 1")
                .execute(&mut *tx)
                .await
                .map_err(|e| self.error(e))?;
        }
        tx.commit().await.map_err(|e| self.error(e))?;
        Ok(dropped)
    }

    /// Whether the output holds records the journal replaced or dropped.
    pub async fn rewrite_pending(&self) -> Result<bool, JournalError> {
        sqlx::query_scalar("SELECT rewrite_pending FROM batch WHERE id = 1")
            .fetch_one(&self.pool)
            .await
            .map_err(|e| self.error(e))
    }

    /// Records that the output was written again from the journal, `out_bytes` long.
    pub async fn rewritten(&self, out_bytes: u64) -> Result<(), JournalError> {
        sqlx::query("UPDATE batch SET out_bytes = ?, rewrite_pending = 0 WHERE id = 1")
            .bind(i64::try_from(out_bytes).unwrap_or(i64::MAX))
            .execute(&self.pool)
            .await
            .map_err(|e| self.error(e))?;
        Ok(())
    }

    /// Up to `limit` records in row order, after the row at `after` (place and key; `None`
    /// starts at the top): to write the output again, a page at a time.
    pub async fn records_after(
        &self,
        after: Option<&(u64, String)>,
        limit: u32,
    ) -> Result<Vec<((u64, String), String)>, JournalError> {
        let (index, key) = after.map_or((-1, ""), |(index, key)| {
            (i64::try_from(*index).unwrap_or(i64::MAX), key.as_str())
        });
        let rows: Vec<(i64, String, String)> = sqlx::query_as(
            "SELECT row_index, key, record FROM rows WHERE (row_index, key) > (?, ?)
             ORDER BY row_index, key LIMIT ?",
        )
        .bind(index)
        .bind(key)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await
        .map_err(|e| self.error(e))?;
        Ok(rows
            .into_iter()
            .map(|(index, key, record)| ((u64::try_from(index).unwrap_or(0), key), record))
            .collect())
    }

    /// The total cost of the rows done.
    pub async fn cost(&self) -> Result<f64, JournalError> {
        sqlx::query_scalar("SELECT COALESCE(SUM(cost_usd), 0.0) FROM rows")
            .fetch_one(&self.pool)
            .await
            .map_err(|e| self.error(e))
    }
}

#[cfg(test)]
mod migration_tests {
    use super::MIGRATIONS;
    use llmtool_log::migrations::differences_from_folder;

    #[tokio::test]
    async fn the_listed_migrations_are_the_folders() {
        let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
        assert_eq!(differences_from_folder(MIGRATIONS, &folder).await, Vec::<String>::new());
    }
}
