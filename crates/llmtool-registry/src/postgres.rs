//! The library in PostgreSQL, for several servers behind one database: the
//! conversations' full text by a `tsvector` with a GIN index, writers' rows locked (`FOR UPDATE`) inside their transaction,
//! and every server told of each change (`LISTEN`/`NOTIFY`, see [`listen`]).

use std::time::Duration;

use sqlx::postgres::{PgListener, PgPool, PgPoolOptions};

use crate::changes::{Announcer, CHANNEL, Change};
use crate::db::{Statement, statement};
use crate::store::StoreError;

/// The library's schema on PostgreSQL, oldest change first.
pub const MIGRATIONS: &[llmtool_log::migrations::Embedded] = llmtool_log::embed_migrations!(
    "../migrations/postgres": "0001_library.sql", "0002_runs.sql", "0003_sessions.sql", "0004_runs_by_tool.sql", "0005_members.sql", "0006_sign_in.sql", "0007_audit.sql", "0008_control_center.sql", "0009_conversations.sql", "0010_several_servers.sql", "0011_faster_search.sql", "0012_run_pictures.sql", "0013_image_prices.sql", "0014_member_ids.sql", "0015_conversation_summaries.sql", "0016_collaboration.sql", "0017_public_snapshots.sql", "0018_personal_tokens.sql", "0019_data_integrations.sql", "0020_slack.sql", "0021_slack_app.sql", "0022_tools_searched_in_memory.sql"
);

pub(crate) static MIGRATOR: std::sync::LazyLock<sqlx::migrate::Migrator> =
    std::sync::LazyLock::new(|| llmtool_log::migrations::migrator(MIGRATIONS));

/// Connects to the database at `url` (`postgres://...`) and brings its schema up to date.
pub(crate) async fn connect(url: &str) -> Result<PgPool, StoreError> {
    let pool = PgPoolOptions::new().max_connections(16).connect(url).await?;
    MIGRATOR.run(&pool).await?;
    Ok(pool)
}

/// The search without words (see [`crate::Store::search`]), with SQLite's parameters and
/// columns. The page is found on the tools alone (their versions looked at only when a filter
/// asks), walking the slug index, and only its tools' versions are read.
pub(crate) const SEARCH: &str = "SELECT t.slug, t.latest, v.name, v.description, v.output_type,
        (SELECT string_agg(tag, ' ' ORDER BY tag) FROM tags WHERE tool_id = t.id),
        v.creator, v.has_avatar, array_to_json(v.models)::text, v.smart
     FROM (SELECT t.id, t.slug, t.latest FROM tools t
         WHERE t.deleted_at IS NULL
           AND t.slug COLLATE \"C\" > COALESCE($5::text, '')
           AND ($1::text IS NULL OR EXISTS (SELECT 1 FROM tags g WHERE g.tool_id = t.id AND g.tag = $1))
           AND ($2::text IS NULL AND $3::text IS NULL AND $4::text IS NULL
             OR EXISTS (SELECT 1 FROM versions v WHERE v.tool_id = t.id AND v.number = t.latest
               AND ($2::text IS NULL OR $2 = ANY (v.variable_types))
               AND ($3::text IS NULL OR v.output_type = $3)
               AND ($4::text IS NULL OR $4 = ANY (v.models))))
           AND ($7::text IS NULL OR (EXISTS (SELECT 1 FROM tags g WHERE g.tool_id = t.id
                 AND strpos($7, ' ' || g.tag || ' ') > 0)
               AND NOT EXISTS (SELECT 1 FROM tags g WHERE g.tool_id = t.id
                 AND strpos($7, ' !' || g.tag || ' ') > 0)))
         ORDER BY t.slug COLLATE \"C\" LIMIT $6) t
     JOIN versions v ON v.tool_id = t.id AND v.number = t.latest
     ORDER BY t.slug COLLATE \"C\"";

/// Whether the tool `id` carries a tag seen in the words `$words` and none hidden there
/// (` all sales !built-in `).
pub(crate) fn tagged(id: &str, words: &str) -> String {
    format!(
        "(EXISTS (SELECT 1 FROM tags g WHERE g.tool_id = {id} AND strpos({words}, ' ' || g.tag || ' ') > 0)
          AND NOT EXISTS (SELECT 1 FROM tags g WHERE g.tool_id = {id} AND strpos({words}, ' !' || g.tag || ' ') > 0))"
    )
}

/// `text` as a `tsquery`: each word (its letters and digits) a required prefix (`tide:*`), so
/// that what a user types is never read as query syntax.
pub(crate) fn words_query(text: &str) -> Option<String> {
    // Split where PostgreSQL's `simple` parser splits (`sql-assistant` is `sql` and
    // `assistant`), so that punctuation never glues words into one that matches nothing.
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(|word| format!("{}:*", word.to_lowercase()))
        .collect();
    (!words.is_empty()).then(|| words.join(" & "))
}

/// Whether conversation `c` has a turn with the words `{words}` (a parameter holding a
/// [`words_query`]).
pub(crate) fn turns_hold(words: &str) -> String {
    format!(
        "c.id IN (SELECT r.conversation FROM runs r
                  WHERE r.conversation IS NOT NULL AND r.words @@ to_tsquery('simple', {words}))"
    )
}

/// Whether conversation `c`'s title holds the text `{text}` (a parameter), letters in any case.
pub(crate) fn title_holds(text: &str) -> String {
    format!("strpos(lower(c.title), lower({text})) > 0")
}

/// What makes the run `run`, a turn of a conversation, found by its `words`
/// ([`llmtool_log::conversation::turn_words`]), without their positions.
pub(crate) fn index_turn(run: i64, _conversation: &str, words: String) -> Statement {
    statement("UPDATE runs SET words = strip(to_tsvector('simple', $1)) WHERE id = $2")
        .bind(words)
        .bind(run)
}

/// What makes no turn of `conversation` found any more.
pub(crate) fn unindex_turns(conversation: &str) -> Statement {
    statement("UPDATE runs SET words = NULL WHERE conversation = $1").bind(conversation)
}

/// Starts the task that turns the database's notifications (other servers' changes, and
/// this one's) into announcements to `announcer`'s listeners.
pub(crate) async fn listen(pool: PgPool, announcer: Announcer) -> Result<(), StoreError> {
    let mut listener = listen_on(&pool).await?;
    tokio::spawn(async move {
        loop {
            if let Ok(Some(notification)) = listener.try_recv().await {
                announcer.announce(Change::of(notification.payload()));
                continue;
            }
            // The connection was lost (`Ok(None)`), or failed. Listen again before saying
            // that anything may have changed, so that a reader who acts on it cannot miss a
            // change made while this was away.
            loop {
                match listen_on(&pool).await {
                    Ok(again) => {
                        listener = again;
                        break;
                    }
                    Err(_) => tokio::time::sleep(Duration::from_secs(1)).await,
                }
            }
            announcer.announce(Change::Unknown);
        }
    });
    Ok(())
}

/// A connection listening on the library's channel (one of the pool's, kept for as long as
/// it listens).
async fn listen_on(pool: &PgPool) -> Result<PgListener, sqlx::Error> {
    let mut listener = PgListener::connect_with(pool).await?;
    listener.listen(CHANNEL).await?;
    Ok(listener)
}
