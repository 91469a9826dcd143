//! Restoring a PostgreSQL backup, its rows only. Inside one transaction the library's tables
//! are dropped, made again by this llmtool's own migrations up to the version the backup was
//! at, and filled with the backup's rows: `COPY` data that `pg_restore` reads out of the
//! archive, one table at a time, referenced tables first; then its sequences are set where
//! they were. Nothing else in the archive is run, so a function, trigger or view slipped into a
//! backup (one that makes an owner's token whenever a tool is published, say) never reaches
//! the library. Newer migrations run afterwards, as when a server starts.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Stdio;

use sqlx::migrate::{Migrate as _, Migration};
use sqlx::{Connection as _, PgConnection};
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::{Child, ChildStdout};

use crate::store::StoreError;

/// Rows go to the database in chunks of about this many bytes.
const CHUNK: usize = 1 << 20;

/// The table in which sqlx records the migrations a database has had.
const MIGRATIONS_TABLE: &str = "_sqlx_migrations";

/// Replaces the library at `url` with the rows of the `pg_dump` archive `from`.
pub(crate) async fn restore(url: &str, from: &Path) -> Result<(), StoreError> {
    let ours: Vec<&Migration> = crate::postgres::MIGRATOR.iter().collect();
    let archived = archived_versions(from).await?;
    let known = archived.len() <= ours.len()
        && archived.iter().zip(&ours).all(|(version, ours)| *version == ours.version);
    if !known {
        return Err(StoreError::Backup(format!(
            "{} holds a library at migrations {}, which this llmtool does not know (it knows {}): nothing was restored",
            from.display(),
            versions(archived.iter().copied()),
            versions(ours.iter().map(|m| m.version)),
        )));
    }

    let mut connection = PgConnection::connect(url).await?;
    let mut tx = connection.begin().await?;
    let newest = newest_schema(&mut tx, &ours).await?;
    drop_library(&mut tx, &newest).await?;
    let before = Schema::read(&mut tx).await?;
    for migration in &ours[..archived.len()] {
        sqlx::raw_sql(&migration.sql).execute(&mut *tx).await?;
    }
    tx.ensure_migrations_table().await?;
    let made = Schema::read(&mut tx).await?.without(&before);
    if !made.tables.is_empty() {
        let all: Vec<String> = made.tables.keys().map(|name| quoted(name)).collect();
        sqlx::raw_sql(&format!("TRUNCATE {}", all.join(", "))).execute(&mut *tx).await?;
    }
    for table in made.in_reference_order() {
        copy_rows(&mut tx, from, table, &made.tables[table]).await?;
    }
    set_sequences(&mut tx, from, &made.sequences).await?;
    tx.commit().await?;
    Ok(())
}

/// The versions of the migrations the archive's library had, in order, read from its rows of
/// sqlx's migrations table (a failed one refuses the backup).
async fn archived_versions(from: &Path) -> Result<Vec<i64>, StoreError> {
    let mut archive = Archive::open(from, &[MIGRATIONS_TABLE])?;
    let mut versions = Vec::new();
    let mut inside = false;
    let mut line = Vec::new();
    while archive.next_line(&mut line).await? {
        if !inside {
            inside = copy_header(&line).is_some_and(|h| h.table == MIGRATIONS_TABLE);
            continue;
        }
        if line == b"\\." {
            inside = false;
            continue;
        }
        let text = String::from_utf8_lossy(&line);
        let fields: Vec<&str> = text.split('\t').collect();
        let version = fields.first().and_then(|v| v.parse::<i64>().ok());
        match (version, fields.get(3)) {
            (Some(version), Some(&"t")) => versions.push(version),
            _ => {
                return Err(StoreError::Backup(format!(
                    "{} holds a library whose migration `{}` did not finish: nothing was restored",
                    from.display(),
                    fields.first().unwrap_or(&"")
                )));
            }
        }
    }
    archive.close().await?;
    if versions.is_empty() {
        return Err(StoreError::Backup(format!(
            "{} holds no llmtool library (no migrations were recorded in it): nothing was restored",
            from.display()
        )));
    }
    versions.sort_unstable();
    Ok(versions)
}

fn versions(versions: impl Iterator<Item = i64>) -> String {
    let all: Vec<String> = versions.map(|v| v.to_string()).collect();
    if all.is_empty() { "none".to_owned() } else { all.join(", ") }
}

/// The tables and functions this llmtool's newest schema has: its migrations run in a schema
/// of their own, read, and dropped, all inside `tx`.
async fn newest_schema(tx: &mut PgConnection, ours: &[&Migration]) -> Result<Schema, StoreError> {
    let probe = format!("llmtool_restore_probe_{}", std::process::id());
    sqlx::raw_sql(&format!("CREATE SCHEMA {probe}; SET LOCAL search_path TO {probe}"))
        .execute(&mut *tx)
        .await?;
    for migration in ours {
        sqlx::raw_sql(&migration.sql).execute(&mut *tx).await?;
    }
    let schema = Schema::read(&mut *tx).await?;
    sqlx::raw_sql(&format!("DROP SCHEMA {probe} CASCADE; SET LOCAL search_path TO DEFAULT"))
        .execute(&mut *tx)
        .await?;
    Ok(schema)
}

/// Drops the library's tables (with what depends on them) and functions, as the newest
/// schema names them, and sqlx's record of its migrations.
async fn drop_library(tx: &mut PgConnection, newest: &Schema) -> Result<(), StoreError> {
    let mut tables: Vec<String> = newest.tables.keys().map(|name| quoted(name)).collect();
    tables.push(MIGRATIONS_TABLE.to_owned());
    sqlx::raw_sql(&format!("DROP TABLE IF EXISTS {} CASCADE", tables.join(", ")))
        .execute(&mut *tx)
        .await?;
    for function in &newest.functions {
        sqlx::raw_sql(&format!("DROP FUNCTION IF EXISTS {function} CASCADE"))
            .execute(&mut *tx)
            .await?;
    }
    Ok(())
}

/// Tables (each with its columns and the tables it references), sequences and functions of
/// the first schema on the search path.
#[derive(Debug, Default)]
struct Schema {
    tables: BTreeMap<String, Table>,
    sequences: BTreeSet<String>,
    functions: BTreeSet<String>,
}

#[derive(Debug, Default)]
struct Table {
    columns: BTreeSet<String>,
    references: BTreeSet<String>,
}

impl Schema {
    async fn read(tx: &mut PgConnection) -> Result<Schema, StoreError> {
        let here = "current_schema()::regnamespace";
        let columns: Vec<(String, String)> = sqlx::query_as(&format!(
            "SELECT c.relname::text, a.attname::text FROM pg_class c
             JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
             WHERE c.relnamespace = {here} AND c.relkind IN ('r', 'p')"
        ))
        .fetch_all(&mut *tx)
        .await?;
        let references: Vec<(String, String)> = sqlx::query_as(&format!(
            "SELECT a.relname::text, b.relname::text FROM pg_constraint k
             JOIN pg_class a ON a.oid = k.conrelid JOIN pg_class b ON b.oid = k.confrelid
             WHERE k.contype = 'f' AND a.relnamespace = {here}"
        ))
        .fetch_all(&mut *tx)
        .await?;
        let sequences: Vec<(String,)> = sqlx::query_as(&format!(
            "SELECT relname::text FROM pg_class WHERE relnamespace = {here} AND relkind = 'S'"
        ))
        .fetch_all(&mut *tx)
        .await?;
        let functions: Vec<(String,)> = sqlx::query_as(&format!(
            "SELECT format('%I(%s)', proname, pg_get_function_identity_arguments(oid))
             FROM pg_proc WHERE pronamespace = {here}"
        ))
        .fetch_all(&mut *tx)
        .await?;
        let mut schema = Schema::default();
        for (table, column) in columns {
            schema.tables.entry(table).or_default().columns.insert(column);
        }
        for (table, referenced) in references {
            if table != referenced {
                schema.tables.entry(table).or_default().references.insert(referenced);
            }
        }
        schema.sequences = sequences.into_iter().map(|(name,)| name).collect();
        schema.functions = functions.into_iter().map(|(name,)| name).collect();
        Ok(schema)
    }

    /// What this schema has that `before` did not.
    fn without(mut self, before: &Schema) -> Schema {
        self.tables.retain(|name, _| !before.tables.contains_key(name));
        self.sequences.retain(|name| !before.sequences.contains(name));
        self.functions.retain(|name| !before.functions.contains(name));
        self
    }

    /// The tables, each after those it references (by name where there is a choice).
    fn in_reference_order(&self) -> Vec<&str> {
        let mut placed: Vec<&str> = Vec::with_capacity(self.tables.len());
        let mut left: BTreeSet<&str> = self.tables.keys().map(String::as_str).collect();
        while !left.is_empty() {
            let ready = left.iter().copied().find(|name| {
                self.tables[*name].references.iter().all(|r| !left.contains(r.as_str()))
            });
            // A cycle (none in llmtool's schema): the rest in name order, for the database to judge.
            let next = ready.or_else(|| left.first().copied()).unwrap_or_default();
            left.remove(next);
            placed.push(next);
        }
        placed
    }
}

/// `name` as a quoted SQL identifier.
fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// Copies the archive's rows of `name` into the table of that name, with the columns the
/// archive names (each checked to be one of the table's).
async fn copy_rows(
    tx: &mut PgConnection,
    from: &Path,
    name: &str,
    table: &Table,
) -> Result<(), StoreError> {
    let mut archive = Archive::open(from, &[name])?;
    let mut line = Vec::new();
    let header = loop {
        if !archive.next_line(&mut line).await? {
            // No rows of this table in the archive.
            return archive.close().await;
        }
        if let Some(header) = copy_header(&line).filter(|header| header.table == name) {
            break header;
        }
    };
    if let Some(stranger) = header.columns.iter().find(|c| !table.columns.contains(*c)) {
        return Err(StoreError::Backup(format!(
            "{}: the table `{name}` has a column `{stranger}` that llmtool does not make: nothing was restored",
            from.display()
        )));
    }
    let columns: Vec<String> = header.columns.iter().map(|c| quoted(c)).collect();
    let statement = format!("COPY {} ({}) FROM STDIN", quoted(name), columns.join(", "));
    let mut copying = tx.copy_in_raw(&statement).await?;
    let mut chunk: Vec<u8> = Vec::with_capacity(CHUNK);
    let mut ended = false;
    while archive.next_line(&mut line).await? {
        if line == b"\\." {
            ended = true;
            break;
        }
        chunk.extend_from_slice(&line);
        chunk.push(b'\n');
        if chunk.len() >= CHUNK {
            copying.send(std::mem::replace(&mut chunk, Vec::with_capacity(CHUNK))).await?;
        }
    }
    if !ended {
        let _ = copying.abort("the backup's rows ended early").await;
        return Err(StoreError::Backup(format!(
            "{}: the rows of `{name}` end before their end mark: nothing was restored",
            from.display()
        )));
    }
    if !chunk.is_empty() {
        copying.send(chunk).await?;
    }
    copying.finish().await?;
    // A second table of that name (in another schema) would make the rows ambiguous.
    while archive.next_line(&mut line).await? {
        if copy_header(&line).is_some_and(|header| header.table == name) {
            return Err(StoreError::Backup(format!(
                "{} holds two tables named `{name}`: nothing was restored",
                from.display()
            )));
        }
    }
    archive.close().await
}

/// Sets each of `sequences` where the archive's `setval` puts it.
async fn set_sequences(
    tx: &mut PgConnection,
    from: &Path,
    sequences: &BTreeSet<String>,
) -> Result<(), StoreError> {
    if sequences.is_empty() {
        return Ok(());
    }
    let names: Vec<&str> = sequences.iter().map(String::as_str).collect();
    let mut archive = Archive::open(from, &names)?;
    let mut line = Vec::new();
    while archive.next_line(&mut line).await? {
        let Some(set) = sequence_position(&line) else { continue };
        if sequences.contains(&set.sequence) {
            sqlx::query("SELECT setval($1::regclass, $2, $3)")
                .bind(quoted(&set.sequence))
                .bind(set.value)
                .bind(set.called)
                .execute(&mut *tx)
                .await?;
        }
    }
    archive.close().await
}

/// The text `pg_restore` writes for the data of some tables of an archive, read line by line.
struct Archive {
    child: Child,
    lines: BufReader<ChildStdout>,
}

impl Archive {
    /// The data (rows and sequence positions) of the tables or sequences `names`.
    fn open(from: &Path, names: &[&str]) -> Result<Archive, StoreError> {
        let mut command = tokio::process::Command::new("pg_restore");
        command.args(["--data-only", "--file", "-"]);
        for name in names {
            command.arg("--table").arg(name);
        }
        let mut child = command
            .arg(from)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|error| {
                StoreError::Backup(format!(
                    "cannot run pg_restore (PostgreSQL's client programs; on Debian, the postgresql-client package): {error}"
                ))
            })?;
        let stdout = child.stdout.take().ok_or_else(|| {
            StoreError::Backup("pg_restore's output could not be read".to_owned())
        })?;
        Ok(Archive { child, lines: BufReader::new(stdout) })
    }

    /// Reads the next line into `line`, without its end; false at the end of the text.
    async fn next_line(&mut self, line: &mut Vec<u8>) -> Result<bool, StoreError> {
        line.clear();
        let read = self.lines.read_until(b'\n', line).await.map_err(|error| {
            StoreError::Backup(format!("pg_restore's output could not be read: {error}"))
        })?;
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        Ok(read > 0)
    }

    /// Waits for `pg_restore` to end, and says what it said if it failed.
    async fn close(self) -> Result<(), StoreError> {
        let Archive { child, lines } = self;
        drop(lines);
        let output = child
            .wait_with_output()
            .await
            .map_err(|error| StoreError::Backup(format!("pg_restore did not end: {error}")))?;
        if output.status.success() {
            return Ok(());
        }
        let said = String::from_utf8_lossy(&output.stderr);
        Err(StoreError::Backup(format!("pg_restore failed: {}", said.trim())))
    }
}

/// A `COPY schema.table (columns) FROM stdin;` line, as `pg_restore` writes it.
#[derive(Debug, PartialEq, Eq)]
struct CopyHeader {
    table: String,
    columns: Vec<String>,
}

fn copy_header(line: &[u8]) -> Option<CopyHeader> {
    let rest = std::str::from_utf8(line).ok()?.strip_prefix("COPY ")?;
    let (_schema, rest) = identifier(rest)?;
    let (table, rest) = identifier(rest.strip_prefix('.')?)?;
    let mut rest = rest.strip_prefix(" (")?;
    let mut columns = Vec::new();
    loop {
        let (column, after) = identifier(rest)?;
        columns.push(column);
        if let Some(after) = after.strip_prefix(", ") {
            rest = after;
        } else {
            (after == ") FROM stdin;").then_some(())?;
            return Some(CopyHeader { table, columns });
        }
    }
}

/// A `SELECT pg_catalog.setval('schema.sequence', 42, true);` line.
#[derive(Debug, PartialEq, Eq)]
struct SequencePosition {
    sequence: String,
    value: i64,
    called: bool,
}

fn sequence_position(line: &[u8]) -> Option<SequencePosition> {
    let rest = std::str::from_utf8(line).ok()?.strip_prefix("SELECT pg_catalog.setval('")?;
    let (named, rest) = rest.split_once("', ")?;
    let (_schema, name) = identifier(named)?;
    let (sequence, end) = identifier(name.strip_prefix('.')?)?;
    end.is_empty().then_some(())?;
    let (value, called) = rest.strip_suffix(");")?.split_once(", ")?;
    let called = match called {
        "true" => true,
        "false" => false,
        _ => return None,
    };
    Some(SequencePosition { sequence, value: value.parse().ok()?, called })
}

/// An SQL identifier at the start of `text` (quoted, with `""` for a quote, or plain), and
/// what follows it.
fn identifier(text: &str) -> Option<(String, &str)> {
    if let Some(mut rest) = text.strip_prefix('"') {
        let mut name = String::new();
        loop {
            let (part, after) = rest.split_once('"')?;
            name.push_str(part);
            match after.strip_prefix('"') {
                Some(more) => {
                    name.push('"');
                    rest = more;
                }
                None => return (!name.is_empty()).then_some((name, after)),
            }
        }
    }
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$'))
        .unwrap_or(text.len());
    (end > 0).then(|| (text[..end].to_owned(), &text[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_headers_read_as_pg_restore_writes_them() {
        assert_eq!(
            copy_header(b"COPY public.audit (id, at, \"before\", \"we\"\"ird\") FROM stdin;"),
            Some(CopyHeader {
                table: "audit".into(),
                columns: vec!["id".into(), "at".into(), "before".into(), "we\"ird".into()],
            })
        );
        assert_eq!(copy_header(b"COPY public.audit (id) FROM stdin; DROP TABLE x"), None);
        assert_eq!(copy_header(b"COPY public.audit (id FROM stdin;"), None);
        assert_eq!(copy_header(b"SELECT 1;"), None);
    }

    #[test]
    fn sequence_positions_read_as_pg_restore_writes_them() {
        assert_eq!(
            sequence_position(b"SELECT pg_catalog.setval('public.runs_id_seq', 42, true);"),
            Some(SequencePosition { sequence: "runs_id_seq".into(), value: 42, called: true })
        );
        assert_eq!(sequence_position(b"SELECT pg_catalog.setval('public.x', 1, maybe);"), None);
        assert_eq!(sequence_position(b"SELECT pg_catalog.setval('x', 1, true);"), None);
    }

    #[test]
    fn referenced_tables_come_first() {
        let mut schema = Schema::default();
        for (table, references) in [
            ("integration_teams", &["integrations", "teams"][..]),
            ("integrations", &[]),
            ("teams", &[]),
            ("audit", &[]),
        ] {
            let entry = schema.tables.entry(table.into()).or_default();
            entry.references = references.iter().map(|r| (*r).to_owned()).collect();
        }
        assert_eq!(
            schema.in_reference_order(),
            ["audit", "integrations", "teams", "integration_teams"]
        );
    }
}
