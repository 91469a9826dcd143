//! The library in one SQLite file: WAL mode, a busy timeout, migrations on open; the
//! conversations' full text by FTS5; backups by `VACUUM INTO`. Writers take the write lock as they begin (see
//! [`crate::db::Db::begin_write`]), so concurrent publishers queue rather than race.

use std::path::Path;
use std::time::Duration;

use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};

use crate::db::{Statement, statement};
use crate::store::StoreError;

/// How long a writer waits for another before it gives up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The library's schema on SQLite, oldest change first.
pub const MIGRATIONS: &[llmtool_log::migrations::Embedded] = llmtool_log::embed_migrations!(
    "../migrations/sqlite": "0001_library.sql", "0002_runs.sql", "0003_sessions.sql", "0004_runs_by_tool.sql", "0005_members.sql", "0006_sign_in.sql", "0007_audit.sql", "0008_control_center.sql", "0009_conversations.sql", "0010_several_servers.sql", "0011_faster_search.sql", "0012_run_pictures.sql", "0013_image_prices.sql", "0014_member_ids.sql", "0015_conversation_summaries.sql", "0016_collaboration.sql", "0017_public_snapshots.sql", "0018_personal_tokens.sql", "0019_data_integrations.sql", "0020_slack.sql", "0021_slack_app.sql", "0022_tools_searched_in_memory.sql"
);

pub(crate) static MIGRATOR: std::sync::LazyLock<sqlx::migrate::Migrator> =
    std::sync::LazyLock::new(|| llmtool_log::migrations::migrator(MIGRATIONS));

/// Opens (creating it if needed) the library at `path`, its schema brought up to date.
pub(crate) async fn open(path: &Path) -> Result<SqlitePool, StoreError> {
    // Runs are kept with their values and answers: the database is its owner's alone.
    llmtool_log::private::private_sqlite(path)
        .map_err(|e| StoreError::Database(sqlx::Error::Io(e)))?;
    let options = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .foreign_keys(true)
        .busy_timeout(BUSY_TIMEOUT);
    let pool = SqlitePoolOptions::new().max_connections(8).connect_with(options).await?;
    MIGRATOR.run(&pool).await?;
    Ok(pool)
}

/// The search without words, a list in slug order (see [`crate::Store::search`]; words are
/// the index's, [`crate::search_index`]): `$1` the tag, then the variable type, output type,
/// model, the slug to start after, the limit, and the caller's visibility words. The tags come joined by spaces and the models as a JSON array, as on
/// PostgreSQL. No tool file is read: what a result shows was put in columns at publishing.
pub(crate) const SEARCH: &str = "SELECT t.slug, t.latest, v.name, v.description, v.output_type,
        (SELECT group_concat(tag, ' ') FROM (SELECT tag FROM tags WHERE tool_id = t.id ORDER BY tag)),
        v.creator, v.has_avatar, v.models, v.smart
     FROM tools t JOIN versions v ON v.tool_id = t.id AND v.number = t.latest
     WHERE t.deleted_at IS NULL
       AND ($1 IS NULL OR EXISTS (SELECT 1 FROM tags g WHERE g.tool_id = t.id AND g.tag = $1))
       AND ($2 IS NULL OR instr(v.variable_types, ' ' || $2 || ' ') > 0)
       AND ($3 IS NULL OR v.output_type = $3)
       AND ($4 IS NULL OR EXISTS (SELECT 1 FROM json_each(v.models) WHERE value = $4))
       AND t.slug > COALESCE($5, '')
       AND ($7 IS NULL OR (EXISTS (SELECT 1 FROM tags g WHERE g.tool_id = t.id
             AND instr($7, ' ' || g.tag || ' ') > 0)
           AND NOT EXISTS (SELECT 1 FROM tags g WHERE g.tool_id = t.id
             AND instr($7, ' !' || g.tag || ' ') > 0)))
     ORDER BY t.slug LIMIT $6";

/// Whether the tool `id` carries a tag seen in the words `$words` and none hidden there
/// (` all sales !built-in `).
pub(crate) fn tagged(id: &str, words: &str) -> String {
    format!(
        "(EXISTS (SELECT 1 FROM tags g WHERE g.tool_id = {id} AND instr({words}, ' ' || g.tag || ' ') > 0)
          AND NOT EXISTS (SELECT 1 FROM tags g WHERE g.tool_id = {id} AND instr({words}, ' !' || g.tag || ' ') > 0))"
    )
}

/// `text` as an FTS5 query: each word a quoted prefix (`"tide"*`), all of them required, so
/// that what a user types is never read as query syntax.
pub(crate) fn words_query(text: &str) -> Option<String> {
    let words: Vec<String> =
        text.split_whitespace().map(|word| format!("\"{}\"*", word.replace('"', "\"\""))).collect();
    (!words.is_empty()).then(|| words.join(" "))
}

/// Whether conversation `c` has a turn with the words `{words}` (a parameter holding a
/// [`words_query`]).
pub(crate) fn turns_hold(words: &str) -> String {
    format!("c.id IN (SELECT conversation FROM search_turns WHERE search_turns MATCH {words})")
}

/// Whether conversation `c`'s title holds the text `{text}` (a parameter), letters in any case.
pub(crate) fn title_holds(text: &str) -> String {
    format!("instr(lower(c.title), lower({text})) > 0")
}

/// What makes the run `run`, a turn of `conversation`, found by its `words`
/// ([`llmtool_log::conversation::turn_words`]).
pub(crate) fn index_turn(run: i64, conversation: &str, words: String) -> Statement {
    statement("INSERT INTO search_turns (rowid, conversation, words) VALUES ($1, $2, $3)")
        .bind(run)
        .bind(conversation)
        .bind(words)
}

/// What makes no turn of `conversation` found any more.
pub(crate) fn unindex_turns(conversation: &str) -> Statement {
    statement("DELETE FROM search_turns WHERE conversation = $1").bind(conversation)
}

/// Writes a consistent, compact copy of the library to the new file `to`, readable by its
/// owner only, while others read and write (`VACUUM INTO`, which takes an empty file).
pub(crate) async fn backup(pool: &SqlitePool, to: &Path) -> Result<(), StoreError> {
    crate::backup::new_private_file(to)?;
    let vacuum = sqlx::query("VACUUM INTO ?").bind(to.to_string_lossy().into_owned());
    if let Err(error) = vacuum.execute(pool).await {
        let _ = std::fs::remove_file(to);
        return Err(error.into());
    }
    Ok(())
}

#[cfg(test)]
mod migration_tests {
    use llmtool_log::migrations::differences_from_folder;

    #[tokio::test]
    async fn the_listed_migrations_are_the_folders() {
        let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
        for (files, name) in
            [(super::MIGRATIONS, "sqlite"), (crate::postgres::MIGRATIONS, "postgres")]
        {
            let differences = differences_from_folder(files, &folder.join(name)).await;
            assert_eq!(differences, Vec::<String>::new(), "{name}");
        }
    }
}
