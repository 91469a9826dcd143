//! [`Audit`] for [`SqlStore`]: the audit log, written once over `Db`.

use async_trait::async_trait;

use crate::audit::{self, Audit, AuditEntry, AuditPage, AuditQuery, AuditRecord};
use crate::db::{Tx, statement};
use crate::sql_store::SqlStore;
use crate::store::{StoreError, now};

/// A record's columns: id, at, actor, address, action, target, before, after.
type AuditRow =
    (i64, String, String, Option<String>, String, String, Option<String>, Option<String>);

impl SqlStore {
    /// Records `change`, made in `tx` by the actor this store acts for, in the same
    /// transaction.
    pub(crate) async fn record(
        &self,
        tx: &mut Tx,
        change: audit::Change,
    ) -> Result<(), StoreError> {
        let json = |value: Option<serde_json::Value>| value.map(|value| value.to_string());
        let add = statement(
            "INSERT INTO audit (at, actor, address, action, target, before, after)
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(now())
        .bind(&self.actor.name)
        .bind(self.actor.address.as_deref())
        .bind(change.action)
        .bind(change.target)
        .bind(json(change.before))
        .bind(json(change.after));
        tx.execute(add).await?;
        Ok(())
    }
}

#[async_trait]
impl Audit for SqlStore {
    async fn audit(&self, query: &AuditQuery) -> Result<AuditPage, StoreError> {
        let limit = query.limit.clamp(1, 500);
        let list = statement(
            "SELECT id, at, actor, address, action, target, before, after FROM audit
             WHERE ($1::text IS NULL OR actor = $1) AND ($2::text IS NULL OR action = $2)
               AND ($3::text IS NULL OR target = $3) AND ($4::text IS NULL OR at >= $4)
               AND ($5::bigint IS NULL OR id < $5)
             ORDER BY id DESC LIMIT $6",
        )
        .bind(query.actor.as_deref())
        .bind(query.action.as_deref())
        .bind(query.target.as_deref())
        .bind(query.since.as_deref())
        .bind(query.before_id)
        .bind(i64::from(limit) + 1);
        let mut rows: Vec<AuditRow> = self.db.all(list).await?;
        let more = rows.len() > limit as usize;
        rows.truncate(limit as usize);
        let next = more.then(|| rows.last().map(|row| row.0.to_string())).flatten();
        let parse = |text: Option<String>| text.and_then(|text| serde_json::from_str(&text).ok());
        let records = rows
            .into_iter()
            .map(|(id, at, actor, address, action, target, before, after)| AuditRecord {
                id,
                at,
                entry: AuditEntry {
                    actor,
                    address,
                    action,
                    target,
                    before: parse(before),
                    after: parse(after),
                },
            })
            .collect();
        Ok(AuditPage { records, next })
    }
}
