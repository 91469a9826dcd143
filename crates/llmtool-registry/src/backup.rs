//! Backups of a library and their restoring (`llmtool admin backup` and `restore`), each with
//! its backend's own tool: SQLite's `VACUUM INTO` (a consistent, compact copy made while
//! servers read and write), and PostgreSQL's `pg_dump` in its custom format, whose rows
//! `pg_restore` reads back into the schema llmtool makes, in one transaction
//! ([`crate::pg_restore`]). Both files are readable by their owner only: they hold the runs'
//! prompts and answers. Only the schema llmtool makes is ever restored: a trigger or function
//! slipped into a backup does not reach the library.
//!
//! Restoring replaces the library. Unless it is empty, the current library is first backed up
//! beside the backup being restored (`NAME-before-restore-TIMESTAMP`), so that nothing is lost
//! by restoring the wrong file.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::changes::{ANY_TOOL, CHANNEL};
use crate::db::{Db, statement};
use crate::sql_store::SqlStore;
use crate::store::StoreError;

/// Where a library is, as `--db` names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    Sqlite(PathBuf),
    /// A `postgres://` URL.
    Postgres(String),
}

impl Location {
    /// `database` read as [`crate::open`] reads it.
    pub fn of(database: &str) -> Location {
        if database.starts_with("postgres://") || database.starts_with("postgresql://") {
            Location::Postgres(database.to_owned())
        } else {
            Location::Sqlite(PathBuf::from(database.strip_prefix("sqlite://").unwrap_or(database)))
        }
    }
}

/// What a restore did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restored {
    /// Where the library as it was before is kept (none when it was empty or new).
    pub before: Option<PathBuf>,
}

/// Writes a consistent copy of the library at `location` to the new file `to` (never over a
/// file), while servers go on using it.
pub async fn backup(location: &Location, to: &Path) -> Result<(), StoreError> {
    match location {
        Location::Sqlite(path) => {
            let store = SqlStore::open_sqlite(path).await?;
            let Db::Sqlite(pool) = &store.db else { unreachable!("a SQLite store") };
            crate::sqlite::backup(pool, to).await
        }
        Location::Postgres(url) => {
            new_private_file(to)?;
            let mut dump = postgres_tool("pg_dump", url)?;
            dump.args(["--format=custom", "--no-owner", "--no-privileges", "--file"]).arg(to);
            let made = run(dump, "pg_dump").await;
            if made.is_err() {
                let _ = std::fs::remove_file(to);
            }
            made
        }
    }
}

/// Makes `to`, a new empty file only its owner may read, for a backup to be written into (so
/// that what the backup holds is private from its first byte).
pub(crate) fn new_private_file(to: &Path) -> Result<(), StoreError> {
    let mut options = std::fs::OpenOptions::new();
    match llmtool_log::private::open_private(options.write(true).create_new(true), to) {
        Ok(_) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
            Err(StoreError::Backup(format!("{} exists; a backup goes to a new file", to.display())))
        }
        Err(error) => Err(StoreError::Backup(format!("cannot write {}: {error}", to.display()))),
    }
}

/// Replaces the library at `location` with the backup `from` (a SQLite file, or a `pg_dump`
/// custom-format file). The library as it was is kept first, unless it was empty. Servers of
/// a SQLite library must be stopped first; those of a PostgreSQL one are told that every tool
/// may have changed.
pub async fn restore(location: &Location, from: &Path) -> Result<Restored, StoreError> {
    if !from.is_file() {
        return Err(StoreError::Backup(format!("{} is not a file", from.display())));
    }
    let before = if holds_anything(location).await? {
        let kept = beside(from, location);
        backup(location, &kept).await?;
        Some(kept)
    } else {
        None
    };
    match location {
        Location::Sqlite(path) => restore_sqlite(path, from).await?,
        Location::Postgres(url) => {
            crate::pg_restore::restore(url, from).await?;
            let store = SqlStore::connect_postgres(url).await?;
            let notify = statement("SELECT pg_notify($1, $2)::text").bind(CHANNEL).bind(ANY_TOOL);
            store.db.execute(notify).await?;
        }
    }
    Ok(Restored { before })
}

/// Puts the SQLite library `from` in place of the one at `path`: checked first (it opens as a
/// library, its pages are whole), copied beside it, then renamed over it in one step.
async fn restore_sqlite(path: &Path, from: &Path) -> Result<(), StoreError> {
    let checked = SqlStore::open_sqlite(from).await?;
    let (verdict,): (String,) = checked
        .db
        .optional(statement("PRAGMA integrity_check"))
        .await?
        .unwrap_or(("no answer".into(),));
    if verdict != "ok" {
        return Err(StoreError::Backup(format!(
            "{} is damaged ({verdict}): nothing was restored",
            from.display()
        )));
    }
    let found = sqlite_schema(&checked.db).await?;
    let Db::Sqlite(pool) = &checked.db else { unreachable!("a SQLite store") };
    pool.close().await;
    let expected = fresh_sqlite_schema(path).await?;
    let foreign: Vec<String> =
        found.difference(&expected).map(|(kind, name, _)| format!("{kind} `{name}`")).collect();
    let missing: Vec<String> =
        expected.difference(&found).map(|(kind, name, _)| format!("{kind} `{name}`")).collect();
    if !foreign.is_empty() || !missing.is_empty() {
        return Err(StoreError::Backup(format!(
            "{} does not hold the schema llmtool makes (not made by llmtool: {}; missing or changed: {}): nothing was restored",
            from.display(),
            listed(&foreign),
            listed(&missing),
        )));
    }
    let staged = path.with_extension("restoring");
    let _ = std::fs::remove_file(&staged);
    backup(&Location::Sqlite(from.to_owned()), &staged).await?;
    for suffix in ["-wal", "-shm"] {
        let mut side = path.as_os_str().to_owned();
        side.push(suffix);
        let _ = std::fs::remove_file(PathBuf::from(side));
    }
    std::fs::rename(&staged, path).map_err(|error| {
        StoreError::Backup(format!("cannot put the backup in place of {}: {error}", path.display()))
    })?;
    Ok(())
}

/// A SQLite library's schema: each table, index, view and trigger with the SQL that makes it
/// (SQLite's own tables left out). A backup restores only the schema llmtool makes: a trigger
/// slipped into a backup (one that adds an owner's token, say) would otherwise run in the
/// restored library.
async fn sqlite_schema(db: &Db) -> Result<BTreeSet<(String, String, String)>, StoreError> {
    let sql = "SELECT type, name, COALESCE(sql, '') FROM sqlite_master
               WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\'";
    Ok(db.all::<(String, String, String)>(statement(sql)).await?.into_iter().collect())
}

/// The schema of a new library of this llmtool's, made beside `path` and removed.
async fn fresh_sqlite_schema(
    path: &Path,
) -> Result<BTreeSet<(String, String, String)>, StoreError> {
    let fresh = path.with_extension(format!("schema-{}", std::process::id()));
    let _ = std::fs::remove_file(&fresh);
    let made = SqlStore::open_sqlite(&fresh).await;
    let schema = match &made {
        Ok(store) => sqlite_schema(&store.db).await,
        Err(_) => Ok(BTreeSet::new()),
    };
    if let Ok(store) = &made
        && let Db::Sqlite(pool) = &store.db
    {
        pool.close().await;
    }
    for suffix in ["", "-wal", "-shm"] {
        let mut side = fresh.as_os_str().to_owned();
        side.push(suffix);
        let _ = std::fs::remove_file(PathBuf::from(side));
    }
    made?;
    schema
}

/// `items` for a message: the first five, and how many more.
fn listed(items: &[String]) -> String {
    match items.len() {
        0 => "none".to_owned(),
        n if n <= 5 => items.join(", "),
        n => format!("{} and {} more", items[..5].join(", "), n - 5),
    }
}

/// Whether the library at `location` holds a tool, a member, a token or a run.
async fn holds_anything(location: &Location) -> Result<bool, StoreError> {
    let store = match location {
        Location::Sqlite(path) if !path.exists() => return Ok(false),
        Location::Sqlite(path) => SqlStore::open_sqlite(path).await?,
        Location::Postgres(url) => SqlStore::connect_postgres(url).await?,
    };
    let sql = "SELECT (SELECT COUNT(*) FROM tools) + (SELECT COUNT(*) FROM members)
                    + (SELECT COUNT(*) FROM tokens) + (SELECT COUNT(*) FROM runs)";
    let (count,): (i64,) = store.db.optional(statement(sql)).await?.unwrap_or((0,));
    Ok(count > 0)
}

/// Where the library as it was is kept by a restore: beside the backup restored.
fn beside(from: &Path, location: &Location) -> PathBuf {
    let stamp = jiff::Timestamp::now().strftime("%Y%m%dT%H%M%SZ").to_string();
    let extension = match location {
        Location::Sqlite(_) => "db",
        Location::Postgres(_) => "dump",
    };
    let stem = from.file_stem().map_or_else(|| "library".into(), |s| s.to_string_lossy());
    from.with_file_name(format!("{stem}-before-restore-{stamp}.{extension}"))
}

/// A PostgreSQL client program for the database `url`: its password (if the URL has one) goes
/// in `PGPASSWORD`, not on the command line, where other users' `ps` would show it.
fn postgres_tool(program: &str, url: &str) -> Result<tokio::process::Command, StoreError> {
    let mut parsed = url::Url::parse(url)
        .map_err(|error| StoreError::Backup(format!("the database URL does not read: {error}")))?;
    let password = parsed
        .password()
        .map(|p| percent_encoding::percent_decode_str(p).decode_utf8_lossy().into_owned());
    let _ = parsed.set_password(None);
    let mut command = tokio::process::Command::new(program);
    command.arg("--dbname").arg(parsed.as_str()).stdin(std::process::Stdio::null());
    if let Some(password) = password {
        command.env("PGPASSWORD", password);
    }
    Ok(command)
}

/// Runs `command`, its standard error kept for the error it may say.
async fn run(mut command: tokio::process::Command, name: &str) -> Result<(), StoreError> {
    let output = command.output().await.map_err(|error| {
        StoreError::Backup(format!(
            "cannot run {name} (PostgreSQL's client programs; on Debian, the postgresql-client package): {error}"
        ))
    })?;
    if output.status.success() {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&output.stderr);
    Err(StoreError::Backup(format!("{name} failed: {}", said.trim())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_library_is_located_as_open_reads_it() {
        assert_eq!(
            Location::of("sqlite:///srv/library.db"),
            Location::Sqlite("/srv/library.db".into())
        );
        assert_eq!(Location::of("library.db"), Location::Sqlite("library.db".into()));
        assert!(matches!(Location::of("postgresql://db/library"), Location::Postgres(_)));
    }

    /// A backup whose schema is not llmtool's (a trigger slipped in that makes a token each
    /// time a tool is published) is refused whole; the same library without it restores.
    #[tokio::test]
    async fn only_the_schema_llmtool_makes_is_restored() {
        let dir = tempfile::tempdir().unwrap();
        let source = dir.path().join("source.db");
        let store = SqlStore::open_sqlite(&source).await.unwrap();
        let planted = "CREATE TRIGGER planted AFTER INSERT ON tools BEGIN
            INSERT INTO tokens (name, role, token_hash, created_at)
            VALUES ('backdoor', 'owner', 'known-hash', '2026-01-01T00:00:00Z'); END";
        store.db.execute(statement(planted)).await.unwrap();
        let tampered = dir.path().join("tampered.db");
        backup(&Location::Sqlite(source.clone()), &tampered).await.unwrap();
        let target = Location::Sqlite(dir.path().join("library.db"));
        let refused = restore(&target, &tampered).await;
        let said = refused.err().map(|error| error.to_string()).unwrap_or_default();
        assert!(said.contains("trigger `planted`"), "{said}");
        assert!(!dir.path().join("library.db").exists(), "nothing was restored");

        store.db.execute(statement("DROP TRIGGER planted")).await.unwrap();
        let clean = dir.path().join("clean.db");
        backup(&Location::Sqlite(source), &clean).await.unwrap();
        restore(&target, &clean).await.unwrap();
    }

    /// A PostgreSQL backup brings back its rows and none of its schema: a function and a
    /// trigger slipped into it (one that makes an owner's token whenever a tool is published),
    /// and llmtool's own append-only rule rewritten, stay out of the restored library.
    #[tokio::test]
    async fn a_postgres_backup_restores_rows_into_the_schema_llmtool_makes() {
        let Some(source) = llmtool_testkit::postgres::database().await else { return };
        let Some(target) = llmtool_testkit::postgres::database().await else { return };
        let store = SqlStore::connect_postgres(&source.url).await.unwrap();
        let Db::Postgres(pool) = &store.db else { unreachable!("a PostgreSQL store") };
        sqlx::raw_sql(
            "INSERT INTO tokens (name, role, token_hash, created_at)
                 VALUES ('ops', 'admin', 'ops-hash', '2026-01-01T00:00:00Z');
             INSERT INTO audit (at, actor, action, target, before)
                 VALUES ('2026-01-01T00:00:00Z', 'ops', 'token.create', 'ops', E'two\\nlines\\tand a tab');
             CREATE FUNCTION planted() RETURNS trigger LANGUAGE plpgsql AS $$
             BEGIN
                 INSERT INTO tokens (name, role, token_hash, created_at)
                     VALUES ('backdoor', 'owner', 'known-hash', '2026-01-01T00:00:00Z');
                 RETURN NEW;
             END $$;
             CREATE TRIGGER planted AFTER INSERT ON tools FOR EACH ROW EXECUTE FUNCTION planted();
             CREATE OR REPLACE FUNCTION audit_append_only() RETURNS trigger LANGUAGE plpgsql
                 AS $$ BEGIN RETURN NEW; END $$;",
        )
        .execute(pool)
        .await
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let dump = dir.path().join("library.dump");
        backup(&Location::Postgres(source.url.clone()), &dump).await.unwrap();

        restore(&Location::Postgres(target.url.clone()), &dump).await.unwrap();
        let restored = SqlStore::connect_postgres(&target.url).await.unwrap();
        let Db::Postgres(pool) = &restored.db else { unreachable!("a PostgreSQL store") };
        let count = |sql: &'static str| async move {
            sqlx::query_scalar::<_, i64>(sql).fetch_one(pool).await.unwrap()
        };
        assert_eq!(count("SELECT COUNT(*) FROM pg_proc WHERE proname = 'planted'").await, 0);
        assert_eq!(count("SELECT COUNT(*) FROM pg_trigger WHERE tgname = 'planted'").await, 0);
        assert_eq!(count("SELECT COUNT(*) FROM tokens WHERE name = 'ops'").await, 1);
        let (before,): (String,) =
            sqlx::query_as("SELECT before FROM audit").fetch_one(pool).await.unwrap();
        assert_eq!(before, "two\nlines\tand a tab");
        let edited = sqlx::query("UPDATE audit SET actor = 'someone else'").execute(pool).await;
        assert!(edited.is_err(), "the audit log stays append-only");
        let (next,): (i64,) = sqlx::query_as(
            "INSERT INTO audit (at, actor, action, target)
             VALUES ('2026-01-02T00:00:00Z', 'ops', 'token.create', 'ci') RETURNING id",
        )
        .fetch_one(pool)
        .await
        .unwrap();
        assert_eq!(next, 2, "the sequences go on from where they were");

        // Again, over the library that now holds something: it is kept first.
        let again = restore(&Location::Postgres(target.url.clone()), &dump).await.unwrap();
        assert!(again.before.is_some_and(|kept| kept.is_file()));
        assert_eq!(count("SELECT COUNT(*) FROM audit").await, 1);
    }

    /// A file that is not a library's backup restores nothing and says why.
    #[tokio::test]
    async fn a_postgres_restore_refuses_what_is_not_a_library() {
        let Some(target) = llmtool_testkit::postgres::database().await else { return };
        let dir = tempfile::tempdir().unwrap();
        let junk = dir.path().join("junk.dump");
        std::fs::write(&junk, "not an archive").unwrap();
        let refused = restore(&Location::Postgres(target.url.clone()), &junk).await;
        let said = refused.err().map(|error| error.to_string()).unwrap_or_default();
        assert!(said.contains("pg_restore failed"), "{said}");
    }

    #[test]
    fn the_password_leaves_the_command_line() {
        let command =
            postgres_tool("pg_dump", "postgres://ops:p%40ss%2Fword@db:5432/library").unwrap();
        let command = command.as_std();
        let args: Vec<_> = command.get_args().map(|a| a.to_string_lossy().into_owned()).collect();
        assert_eq!(args, ["--dbname", "postgres://ops@db:5432/library"]);
        let password = command.get_envs().find(|(name, _)| *name == "PGPASSWORD");
        assert_eq!(
            password.and_then(|(_, value)| value).and_then(|v| v.to_str()),
            Some("p@ss/word")
        );
    }
}
