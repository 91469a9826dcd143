//! The journal's part for `--via provider-batch`: each batch handed to a provider's batch
//! engine, and its rows until their answers are collected. A batch is written down before it
//! is sent and given its provider id once the provider took it; its answers go into `rows`
//! in the same transaction that marks it collected, so a row is never written twice.

use std::collections::HashSet;

use sqlx::{QueryBuilder, Sqlite};

use crate::journal::{Entry, Journal, JournalError};

/// A row sent in a provider's batch.
#[derive(Debug, Clone, PartialEq)]
pub struct SubmittedRow {
    pub custom_id: String,
    pub key: String,
    pub row_index: u64,
    /// The row's output record so far (JSON), completed by its answer.
    pub record: String,
    /// The worst case of its cost, held against the budget until it is answered.
    pub worst_cost: Option<f64>,
}

/// A batch handed to a provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderBatch {
    pub label: String,
    pub provider: String,
    /// `None` while it is being sent.
    pub batch_id: Option<String>,
    pub submitted_at: String,
    pub collected_at: Option<String>,
}

/// Rows written by one statement at most (6 values each).
const STATEMENT_ROWS: usize = 256;

impl Journal {
    /// Writes down batch `label` for `provider` with its `rows`, before it is sent.
    pub async fn begin_submission(
        &self,
        label: &str,
        provider: &str,
        rows: &[SubmittedRow],
    ) -> Result<(), JournalError> {
        let mut tx = self.pool.begin().await.map_err(|e| self.error(e))?;
        sqlx::query(
            "INSERT INTO provider_batches (label, provider, submitted_at) VALUES (?, ?, ?)",
        )
        .bind(label)
        .bind(provider)
        .bind(jiff::Timestamp::now().to_string())
        .execute(&mut *tx)
        .await
        .map_err(|e| self.error(e))?;
        for rows in rows.chunks(STATEMENT_ROWS) {
            let mut insert = QueryBuilder::<Sqlite>::new(
                "INSERT INTO submitted_rows (label, custom_id, key, row_index, record, worst_cost) ",
            );
            insert.push_values(rows, |mut values, row| {
                values
                    .push_bind(label)
                    .push_bind(&row.custom_id)
                    .push_bind(&row.key)
                    .push_bind(i64::try_from(row.row_index).unwrap_or(i64::MAX))
                    .push_bind(&row.record)
                    .push_bind(row.worst_cost);
            });
            insert.build().execute(&mut *tx).await.map_err(|e| self.error(e))?;
        }
        tx.commit().await.map_err(|e| self.error(e))
    }

    /// Records that the provider took batch `label` as `batch_id`.
    pub async fn submitted(&self, label: &str, batch_id: &str) -> Result<(), JournalError> {
        sqlx::query("UPDATE provider_batches SET batch_id = ? WHERE label = ?")
            .bind(batch_id)
            .bind(label)
            .execute(&self.pool)
            .await
            .map_err(|e| self.error(e))?;
        Ok(())
    }

    /// Forgets the batches whose sending never finished (no provider id), so that their rows
    /// are to do again: how many rows.
    pub async fn forget_unsent(&self) -> Result<u64, JournalError> {
        let mut tx = self.pool.begin().await.map_err(|e| self.error(e))?;
        let rows = sqlx::query(
            "DELETE FROM submitted_rows WHERE label IN
               (SELECT label FROM provider_batches WHERE batch_id IS NULL)",
        )
        .execute(&mut *tx)
        .await
        .map_err(|e| self.error(e))?
        .rows_affected();
        sqlx::query("DELETE FROM provider_batches WHERE batch_id IS NULL")
            .execute(&mut *tx)
            .await
            .map_err(|e| self.error(e))?;
        tx.commit().await.map_err(|e| self.error(e))?;
        Ok(rows)
    }

    /// Every batch handed to a provider, oldest first.
    pub async fn provider_batches(&self) -> Result<Vec<ProviderBatch>, JournalError> {
        type Row = (String, String, Option<String>, String, Option<String>);
        let rows: Vec<Row> = sqlx::query_as(
            "SELECT label, provider, batch_id, submitted_at, collected_at FROM provider_batches
             ORDER BY submitted_at, label",
        )
        .fetch_all(&self.pool)
        .await
        .map_err(|e| self.error(e))?;
        Ok(rows
            .into_iter()
            .map(|(label, provider, batch_id, submitted_at, collected_at)| ProviderBatch {
                label,
                provider,
                batch_id,
                submitted_at,
                collected_at,
            })
            .collect())
    }

    /// The keys of the rows in batches not collected yet.
    pub async fn pending_keys(&self) -> Result<HashSet<String>, JournalError> {
        let keys: Vec<String> = sqlx::query_scalar("SELECT key FROM submitted_rows")
            .fetch_all(&self.pool)
            .await
            .map_err(|e| self.error(e))?;
        Ok(keys.into_iter().collect())
    }

    /// The worst case of what the rows not collected yet may cost.
    pub async fn reserved_cost(&self) -> Result<f64, JournalError> {
        sqlx::query_scalar("SELECT COALESCE(SUM(worst_cost), 0.0) FROM submitted_rows")
            .fetch_one(&self.pool)
            .await
            .map_err(|e| self.error(e))
    }

    /// The rows of batch `label`.
    pub async fn submitted_rows(&self, label: &str) -> Result<Vec<SubmittedRow>, JournalError> {
        let rows: Vec<(String, String, i64, String, Option<f64>)> = sqlx::query_as(
            "SELECT custom_id, key, row_index, record, worst_cost FROM submitted_rows
             WHERE label = ? ORDER BY row_index, key",
        )
        .bind(label)
        .fetch_all(&self.pool)
        .await
        .map_err(|e| self.error(e))?;
        Ok(rows
            .into_iter()
            .map(|(custom_id, key, row_index, record, worst_cost)| SubmittedRow {
                custom_id,
                key,
                row_index: u64::try_from(row_index).unwrap_or(0),
                record,
                worst_cost,
            })
            .collect())
    }

    /// Records the answers of batch `label` as `entries` (see [`Journal::commit`]) and marks
    /// it collected, in one transaction.
    pub async fn collect(
        &self,
        label: &str,
        entries: &[Entry],
        pass: i64,
        out_bytes: u64,
    ) -> Result<(), JournalError> {
        let mut tx = self.pool.begin().await.map_err(|e| self.error(e))?;
        self.commit_in(&mut tx, entries, &[], pass, out_bytes).await?;
        sqlx::query("DELETE FROM submitted_rows WHERE label = ?")
            .bind(label)
            .execute(&mut *tx)
            .await
            .map_err(|e| self.error(e))?;
        sqlx::query("UPDATE provider_batches SET collected_at = ? WHERE label = ?")
            .bind(jiff::Timestamp::now().to_string())
            .bind(label)
            .execute(&mut *tx)
            .await
            .map_err(|e| self.error(e))?;
        tx.commit().await.map_err(|e| self.error(e))
    }
}
