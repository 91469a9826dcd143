//! Moving a library from one backend to the other (`llmtool admin migrate`): every table read
//! in one snapshot of the source and written, row by row and unchanged, into an empty library
//! on the other backend; then the conversations' search index rebuilt from their turns and
//! PostgreSQL's id sequences moved past the copied ids. Afterwards both libraries are
//! fingerprinted and compared, table by table.
//!
//! The two backends keep the same tables and columns (their migrations go in step); only a few
//! columns store a value differently, and PostgreSQL's catalogue says which: `TEXT[]` (in
//! SQLite, words between spaces or a JSON array), `JSONB` (text), `BOOLEAN` (0 or 1) and the
//! `tsvector` of the conversations' search, which is derived, never copied. Every value is read into one
//! canonical form ([`serde_json::Value`], objects' keys sorted), which is what is written and
//! what the fingerprints hash.

use std::collections::{BTreeMap, BTreeSet};

use futures_util::TryStreamExt as _;
use serde_json::Value;
use sha2::{Digest as _, Sha256};
use sqlx::postgres::PgRow;
use sqlx::sqlite::SqliteRow;
use sqlx::{Column as _, Row as _, TypeInfo as _, ValueRef as _};

use crate::db::{Arg, Db, Tx, statement};
use crate::sql_store::SqlStore;
use crate::store::StoreError;
use crate::{postgres, sqlite};

/// Rows written in one transaction of the target.
const BATCH: usize = 500;

/// How a column's values are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Int,
    Real,
    Text,
    Bool,
    Json,
    /// `TEXT[]`; in SQLite, words between spaces (looked up with `instr`).
    Words,
    /// `TEXT[]`; in SQLite, a JSON array.
    List,
    /// `BYTEA`; in SQLite, a `BLOB` (canonically, their hex).
    Bytes,
    /// Computed from other columns (the conversations' search's `tsvector`): not copied.
    Derived,
}

/// The tables of what the servers share for a moment (rate limits, follow-ups under way, the
/// Slack events handled), not of the library: never copied or compared.
const FLEETING: [&str; 4] = ["rate_limits", "follow_ups", "slack_events", "slack_oauth_states"];

/// The SQLite columns that keep a `TEXT[]` as words between spaces (the rest are JSON arrays).
const WORDS: [(&str, &str); 1] = [("versions", "variable_types")];

/// A table, its columns and how each is kept.
#[derive(Debug, Clone)]
struct Table {
    name: String,
    columns: Vec<(String, Kind)>,
}

impl Table {
    fn copied(&self) -> impl Iterator<Item = &(String, Kind)> {
        self.columns.iter().filter(|(_, kind)| *kind != Kind::Derived)
    }

    fn select(&self) -> String {
        let names: Vec<&str> = self.copied().map(|(name, _)| name.as_str()).collect();
        format!("SELECT {} FROM {}", names.join(", "), self.name)
    }

    fn insert(&self) -> String {
        let names: Vec<&str> = self.copied().map(|(name, _)| name.as_str()).collect();
        let places: Vec<String> = (1..=names.len()).map(|n| format!("${n}")).collect();
        format!("INSERT INTO {} ({}) VALUES ({})", self.name, names.join(", "), places.join(", "))
    }
}

/// One table's fingerprint: its rows, and the SHA-256 of their canonical forms' hashes in
/// order (so the same rows in any order give the same fingerprint).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableFingerprint {
    pub rows: u64,
    pub sha256: String,
}

/// Every table's fingerprint, by name.
pub type Fingerprint = BTreeMap<String, TableFingerprint>;

/// What a migration copied: each table's fingerprint, the same in both libraries.
#[derive(Debug, Clone)]
pub struct Migrated {
    pub tables: Fingerprint,
}

/// Copies the library `from` into `to`, an empty library on the other backend, and checks
/// that both then hold the same rows. Refuses a target that holds anything, and two
/// libraries on the same backend (PostgreSQL has `pg_dump`, SQLite `VACUUM INTO`).
pub async fn migrate(from: &SqlStore, to: &SqlStore) -> Result<Migrated, StoreError> {
    let tables = schema(&from.db, &to.db).await?;
    for table in &tables {
        let (count,): (i64,) = to
            .db
            .optional(statement(format!("SELECT COUNT(*) FROM {}", table.name)))
            .await?
            .unwrap_or((0,));
        if count > 0 {
            return Err(StoreError::Backup(format!(
                "the target library is not empty ({count} row(s) in `{}`): migrate into a new database",
                table.name
            )));
        }
    }
    // One transaction on each side: the source's one moment, and all or nothing written.
    let mut source = from.db.begin_read().await?;
    let mut target = to.db.begin_write().await?;
    for table in &tables {
        copy_table(&mut source, table, &mut target).await?;
    }
    drop(source);
    reindex(&mut target).await?;
    restart_sequences(&mut target, &tables).await?;
    target.commit().await?;
    let (before, after) =
        (fingerprint(&from.db, &tables).await?, fingerprint(&to.db, &tables).await?);
    if before != after {
        let differ: Vec<&str> = before
            .iter()
            .filter(|(name, print)| after.get(*name) != Some(print))
            .map(|(name, _)| name.as_str())
            .collect();
        return Err(StoreError::Backup(format!(
            "the copy differs from the source in {} (was the source written meanwhile?)",
            differ.join(", ")
        )));
    }
    Ok(Migrated { tables: after })
}

/// Both libraries' fingerprints, table by table, each read in one snapshot: equal when they
/// hold the same rows (on one backend or on the two).
pub async fn compare(a: &SqlStore, b: &SqlStore) -> Result<(Fingerprint, Fingerprint), StoreError> {
    let tables = match (&a.db, &b.db) {
        (Db::Sqlite(_), Db::Sqlite(_)) => sqlite_schema(&a.db).await?,
        (Db::Postgres(_), Db::Postgres(_)) => postgres_schema(&a.db).await?.0,
        _ => schema(&a.db, &b.db).await?,
    };
    Ok((fingerprint(&a.db, &tables).await?, fingerprint(&b.db, &tables).await?))
}

/// The tables of a SQLite library as its declared column types say (enough to compare two
/// SQLite libraries, whose values are kept alike), without the search index's.
async fn sqlite_schema(db: &Db) -> Result<Vec<Table>, StoreError> {
    let names: Vec<(String,)> = db
        .all(statement(
            "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'
               AND name <> '_sqlx_migrations' AND name NOT LIKE 'search%' ORDER BY name",
        ))
        .await?;
    let mut tables = Vec::with_capacity(names.len());
    for (name,) in names.into_iter().filter(|(name,)| !FLEETING.contains(&name.as_str())) {
        let columns: Vec<(String, String)> = db
            .all(statement(format!("SELECT name, type FROM pragma_table_info('{name}')")))
            .await?;
        let columns = columns
            .into_iter()
            .map(|(column, declared)| {
                let declared = declared.to_ascii_uppercase();
                let kind = if declared.contains("INT") {
                    Kind::Int
                } else if declared.contains("REAL") {
                    Kind::Real
                } else if declared.contains("BLOB") {
                    Kind::Bytes
                } else {
                    Kind::Text
                };
                (column, kind)
            })
            .collect();
        tables.push(Table { name, columns });
    }
    Ok(tables)
}

/// The tables of the two libraries, in an order where each comes after those it refers to,
/// with how each column is kept (read off the PostgreSQL one's catalogue). Refuses two
/// libraries on one backend, and two whose tables or columns differ.
async fn schema(a: &Db, b: &Db) -> Result<Vec<Table>, StoreError> {
    let (postgres, sqlite) = match (a, b) {
        (Db::Postgres(_), Db::Sqlite(_)) => (a, b),
        (Db::Sqlite(_), Db::Postgres(_)) => (b, a),
        _ => {
            return Err(StoreError::Backup(
                "a library moves between SQLite and PostgreSQL; on one backend, back it up and restore it (`llmtool admin backup`)".into(),
            ));
        }
    };
    let (tables, columns_by_table) = postgres_schema(postgres).await?;
    for (name, columns) in &columns_by_table {
        let there: Vec<(String,)> =
            sqlite.all(statement(format!("SELECT name FROM pragma_table_info('{name}')"))).await?;
        let there: BTreeSet<String> = there.into_iter().map(|(column,)| column).collect();
        let here: BTreeSet<String> = columns
            .iter()
            .filter(|(_, kind)| *kind != Kind::Derived)
            .map(|(column, _)| column.clone())
            .collect();
        if here != there {
            return Err(StoreError::Backup(format!(
                "the table `{name}` has other columns in the two libraries: are both of this version of llmtool?"
            )));
        }
    }
    Ok(tables)
}

/// The tables of a PostgreSQL library in reference order, with how each column is kept; and
/// the columns by table.
async fn postgres_schema(
    postgres: &Db,
) -> Result<(Vec<Table>, BTreeMap<String, Vec<(String, Kind)>>), StoreError> {
    let columns: Vec<(String, String, String)> = postgres
        .all(statement(
            "SELECT c.table_name::text, c.column_name::text, c.data_type::text
               FROM information_schema.columns c
               JOIN information_schema.tables t
                 ON t.table_schema = c.table_schema AND t.table_name = c.table_name
              WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
                AND c.table_name <> '_sqlx_migrations'
              ORDER BY c.table_name, c.ordinal_position",
        ))
        .await?;
    let mut tables: BTreeMap<String, Vec<(String, Kind)>> = BTreeMap::new();
    for (table, column, data_type) in columns {
        if FLEETING.contains(&table.as_str()) {
            continue;
        }
        let kind = match data_type.as_str() {
            "bigint" | "integer" | "smallint" => Kind::Int,
            "double precision" | "real" | "numeric" => Kind::Real,
            "boolean" => Kind::Bool,
            "jsonb" | "json" => Kind::Json,
            "tsvector" => Kind::Derived,
            "bytea" => Kind::Bytes,
            "ARRAY" if WORDS.contains(&(table.as_str(), column.as_str())) => Kind::Words,
            "ARRAY" => Kind::List,
            _ => Kind::Text,
        };
        tables.entry(table).or_default().push((column, kind));
    }
    let refers: Vec<(String, String)> = postgres
        .all(statement(
            "SELECT DISTINCT tc.table_name::text, ccu.table_name::text
               FROM information_schema.table_constraints tc
               JOIN information_schema.constraint_column_usage ccu
                 ON ccu.constraint_name = tc.constraint_name AND ccu.table_schema = tc.table_schema
              WHERE tc.constraint_type = 'FOREIGN KEY' AND tc.table_schema = current_schema()",
        ))
        .await?;
    Ok((in_reference_order(tables.clone(), &refers), tables))
}

/// The tables, each after the tables it refers to (`refers`: table, referred table), else by
/// name.
fn in_reference_order(
    mut tables: BTreeMap<String, Vec<(String, Kind)>>,
    refers: &[(String, String)],
) -> Vec<Table> {
    let mut ordered = Vec::with_capacity(tables.len());
    while !tables.is_empty() {
        let ready = tables
            .keys()
            .find(|name| {
                refers
                    .iter()
                    .all(|(from, to)| from != *name || to == *name || !tables.contains_key(to))
            })
            // A cycle would stall: take the first table and let the database say what fails.
            .or_else(|| tables.keys().next())
            .cloned()
            .unwrap_or_default();
        let columns = tables.remove(&ready).unwrap_or_default();
        ordered.push(Table { name: ready, columns });
    }
    ordered
}

/// Copies every row of `table` from the snapshot `source` into the transaction `target`, read
/// `BATCH` rows ahead.
async fn copy_table(source: &mut Tx, table: &Table, target: &mut Tx) -> Result<(), StoreError> {
    let kinds: Vec<Kind> = table.copied().map(|(_, kind)| *kind).collect();
    let select = table.select();
    let insert = table.insert();
    let mut pending: Vec<Vec<Value>> = Vec::with_capacity(BATCH);
    let mut flush = async |rows: &mut Vec<Vec<Value>>| -> Result<(), StoreError> {
        for row in rows.drain(..) {
            let mut insert = statement(insert.clone());
            for (value, kind) in row.into_iter().zip(&kinds) {
                insert = insert.bind(argument(value, *kind));
            }
            target.execute(insert).await?;
        }
        Ok(())
    };
    match source {
        Tx::Sqlite(tx) => {
            let mut rows = sqlx::query(&select).fetch(&mut **tx);
            while let Some(row) = rows.try_next().await? {
                pending.push(sqlite_values(&row, &kinds)?);
                if pending.len() == BATCH {
                    flush(&mut pending).await?;
                }
            }
        }
        Tx::Postgres(tx) => {
            let mut rows = sqlx::query(&select).fetch(&mut **tx);
            while let Some(row) = rows.try_next().await? {
                pending.push(postgres_values(&row, &kinds)?);
                if pending.len() == BATCH {
                    flush(&mut pending).await?;
                }
            }
        }
    }
    if !pending.is_empty() {
        flush(&mut pending).await?;
    }
    Ok(())
}

/// Every table's row count and hash, read in one snapshot of `db`.
async fn fingerprint(db: &Db, tables: &[Table]) -> Result<Fingerprint, StoreError> {
    let mut source = db.begin_read().await?;
    let mut prints = Fingerprint::new();
    for table in tables {
        let kinds: Vec<Kind> = table.copied().map(|(_, kind)| *kind).collect();
        let select = table.select();
        let mut hashes: Vec<[u8; 32]> = Vec::new();
        let hash = |values: Vec<Value>| -> [u8; 32] {
            Sha256::digest(Value::Array(values).to_string()).into()
        };
        match &mut source {
            Tx::Sqlite(tx) => {
                let mut rows = sqlx::query(&select).fetch(&mut **tx);
                while let Some(row) = rows.try_next().await? {
                    hashes.push(hash(sqlite_values(&row, &kinds)?));
                }
            }
            Tx::Postgres(tx) => {
                let mut rows = sqlx::query(&select).fetch(&mut **tx);
                while let Some(row) = rows.try_next().await? {
                    hashes.push(hash(postgres_values(&row, &kinds)?));
                }
            }
        }
        hashes.sort_unstable();
        let mut all = Sha256::new();
        for hash in &hashes {
            all.update(hash);
        }
        let print =
            TableFingerprint { rows: hashes.len() as u64, sha256: hex::encode(all.finalize()) };
        prints.insert(table.name.clone(), print);
    }
    Ok(prints)
}

/// A SQLite row's values in their canonical forms.
fn sqlite_values(row: &SqliteRow, kinds: &[Kind]) -> Result<Vec<Value>, StoreError> {
    let mut values = Vec::with_capacity(kinds.len());
    for (index, kind) in kinds.iter().enumerate() {
        if row.try_get_raw(index)?.is_null() {
            values.push(Value::Null);
            continue;
        }
        let value = match kind {
            Kind::Int => Value::from(row.try_get::<i64, _>(index)?),
            Kind::Real => Value::from(row.try_get::<f64, _>(index)?),
            Kind::Bool => Value::from(row.try_get::<i64, _>(index)? != 0),
            Kind::Text | Kind::Derived => Value::from(row.try_get::<String, _>(index)?),
            Kind::Json => sorted(parsed(&row.try_get::<String, _>(index)?, row, index)?),
            Kind::Words => {
                let text: String = row.try_get(index)?;
                Value::from(text.split_whitespace().collect::<Vec<_>>())
            }
            Kind::List => parsed(&row.try_get::<String, _>(index)?, row, index)?,
            Kind::Bytes => Value::from(hex::encode(row.try_get::<Vec<u8>, _>(index)?)),
        };
        values.push(value);
    }
    Ok(values)
}

fn parsed(text: &str, row: &SqliteRow, index: usize) -> Result<Value, StoreError> {
    serde_json::from_str(text).map_err(|error| {
        let column = row.columns().get(index).map_or("?", |column| column.name());
        StoreError::Backup(format!("the column `{column}` holds JSON that does not read: {error}"))
    })
}

/// A PostgreSQL row's values in their canonical forms.
fn postgres_values(row: &PgRow, kinds: &[Kind]) -> Result<Vec<Value>, StoreError> {
    let mut values = Vec::with_capacity(kinds.len());
    for (index, kind) in kinds.iter().enumerate() {
        let raw = row.try_get_raw(index)?;
        if raw.is_null() {
            values.push(Value::Null);
            continue;
        }
        let value = match kind {
            Kind::Int => match raw.type_info().name() {
                "INT4" => Value::from(row.try_get::<i32, _>(index)?),
                "INT2" => Value::from(row.try_get::<i16, _>(index)?),
                _ => Value::from(row.try_get::<i64, _>(index)?),
            },
            Kind::Real => Value::from(row.try_get::<f64, _>(index)?),
            Kind::Bool => Value::from(row.try_get::<bool, _>(index)?),
            Kind::Text | Kind::Derived => Value::from(row.try_get::<String, _>(index)?),
            Kind::Json => sorted(row.try_get::<sqlx::types::JsonValue, _>(index)?),
            Kind::Words | Kind::List => Value::from(row.try_get::<Vec<String>, _>(index)?),
            Kind::Bytes => Value::from(hex::encode(row.try_get::<Vec<u8>, _>(index)?)),
        };
        values.push(value);
    }
    Ok(values)
}

/// `value` with every object's keys in order (PostgreSQL's `JSONB` reorders them).
fn sorted(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(entries.into_iter().map(|(key, value)| (key, sorted(value))).collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}

/// A canonical value bound as a column of `kind`.
fn argument(value: Value, kind: Kind) -> Arg {
    let text_list = |value: Value| -> Vec<String> {
        match value {
            Value::Array(items) => items
                .into_iter()
                .map(|item| match item {
                    Value::String(text) => text,
                    other => other.to_string(),
                })
                .collect(),
            _ => Vec::new(),
        }
    };
    match (kind, value) {
        (Kind::Int, value) => Arg::Int(value.as_i64()),
        (Kind::Real, value) => Arg::Real(value.as_f64()),
        (Kind::Bool, value) => Arg::Bool(Some(value.as_bool().unwrap_or(false))),
        (Kind::Json, value) => Arg::Json(value),
        (Kind::Words, value) => Arg::Words(text_list(value)),
        (Kind::List, value) => Arg::List(text_list(value)),
        (Kind::Bytes, value) => {
            Arg::Bytes(hex::decode(value.as_str().unwrap_or("")).unwrap_or_default())
        }
        (Kind::Text | Kind::Derived, Value::String(text)) => Arg::Text(Some(text)),
        (Kind::Text | Kind::Derived, _) => Arg::Text(None),
    }
}

/// Indexes each conversation's turns for search, as keeping them would have (a tool's words are
/// the server's index's, built from the versions).
async fn reindex(tx: &mut Tx) -> Result<(), StoreError> {
    let turns: Vec<(i64, String, String)> = tx
        .all(statement(
            "SELECT id, conversation, record::text FROM runs WHERE conversation IS NOT NULL",
        ))
        .await?;
    for (run, conversation, text) in turns {
        let Ok(record) = serde_json::from_str::<llmtool_log::Record>(&text) else { continue };
        let words = llmtool_log::conversation::turn_words(&record);
        let index = match tx {
            Tx::Sqlite(_) => sqlite::index_turn(run, &conversation, words),
            Tx::Postgres(_) => postgres::index_turn(run, &conversation, words),
        };
        tx.execute(index).await?;
    }
    Ok(())
}

/// On PostgreSQL, moves each table's id sequence past the ids copied in.
async fn restart_sequences(tx: &mut Tx, tables: &[Table]) -> Result<(), StoreError> {
    if !matches!(tx, Tx::Postgres(_)) {
        return Ok(());
    }
    let numbered = |table: &&Table| {
        table.columns.iter().any(|(name, kind)| name == "id" && *kind == Kind::Int)
    };
    for table in tables.iter().filter(numbered) {
        let name = &table.name;
        tx.execute(statement(format!(
            "SELECT setval(pg_get_serial_sequence('{name}', 'id'), COALESCE(MAX(id), 0) + 1, false)
               FROM {name} WHERE pg_get_serial_sequence('{name}', 'id') IS NOT NULL"
        )))
        .await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_come_after_the_tables_they_refer_to() {
        let tables: BTreeMap<String, Vec<(String, Kind)>> =
            ["audit", "members", "member_teams", "teams", "tools", "versions"]
                .into_iter()
                .map(|name| (name.to_owned(), Vec::new()))
                .collect();
        let refers: Vec<(String, String)> = [
            ("member_teams", "members"),
            ("member_teams", "teams"),
            ("versions", "tools"),
            ("tools", "tools"),
        ]
        .into_iter()
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
        .collect();
        let order: Vec<String> =
            in_reference_order(tables, &refers).into_iter().map(|table| table.name).collect();
        let at = |name: &str| order.iter().position(|n| n == name).unwrap();
        assert!(at("members") < at("member_teams") && at("teams") < at("member_teams"));
        assert!(at("tools") < at("versions"));
        assert_eq!(order.len(), 6);
    }

    #[test]
    fn values_are_written_back_as_their_columns_keep_them() {
        assert_eq!(
            argument(Value::from(vec!["text", "code"]), Kind::Words),
            Arg::Words(vec!["text".into(), "code".into()])
        );
        assert_eq!(argument(Value::Null, Kind::Int), Arg::Int(None));
        assert_eq!(argument(Value::Null, Kind::Text), Arg::Text(None));
        assert_eq!(argument(Value::from(true), Kind::Bool), Arg::Bool(Some(true)));
        assert_eq!(argument(Value::from("00ff"), Kind::Bytes), Arg::Bytes(vec![0, 255]));
        let object = serde_json::json!({"b": 1, "a": {"d": 2, "c": 3}});
        assert_eq!(sorted(object).to_string(), r#"{"a":{"c":3,"d":2},"b":1}"#);
    }
}
