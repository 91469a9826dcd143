//! [`SqliteStore`]: the library in one SQLite file (WAL mode, a busy timeout, migrations on
//! open), full text by FTS5. Publishing takes the write lock first (`BEGIN IMMEDIATE`), so
//! concurrent publishers queue rather than race, and version numbers never repeat or skip.

use std::path::Path;
use std::time::Duration;

use async_trait::async_trait;
use llmtool_log::{Grouping, Record, Total};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};

use crate::changes::{Announcer, Change, Changes};
use crate::model::{
    KeptRun, Page, Published, Query, Role, Selector, SessionInfo, TagCount, TokenInfo, ToolVersion,
};
use crate::publication::Publication;
use crate::rows::{self, TokenRow, VERSION_COLUMNS, VersionRow};
use crate::store::{
    MAX_LABELS, MAX_SESSIONS_PER_TOKEN, MAX_TAGS, Store, StoreError, check_base, check_name,
    check_slug, expiry, now, shown,
};

/// How long a writer waits for another before it gives up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");

/// The library in a SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteStore {
    pool: SqlitePool,
    announcer: Announcer,
}

impl SqliteStore {
    /// Opens (creating it if needed) the library at `path`.
    pub async fn open(path: &Path) -> Result<SqliteStore, StoreError> {
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
        Ok(SqliteStore { pool, announcer: Announcer::new() })
    }

    /// Tells the listeners that `slug` changed.
    fn changed(&self, slug: &str) {
        self.announcer.announce(Change::Tool(slug.to_owned()));
    }

    /// The tool's id, if it exists and is not deleted.
    async fn tool_id(&self, slug: &str) -> Result<i64, StoreError> {
        sqlx::query_scalar("SELECT id FROM tools WHERE slug = ? AND deleted_at IS NULL")
            .bind(slug)
            .fetch_optional(&self.pool)
            .await?
            .ok_or_else(|| StoreError::NoSuchTool(slug.to_owned()))
    }

    /// The version of `row`, with the tool's tags and the labels pointing at it.
    async fn version_of(
        &self,
        slug: &str,
        id: i64,
        row: VersionRow,
    ) -> Result<ToolVersion, StoreError> {
        let tags = sqlx::query_scalar("SELECT tag FROM tags WHERE tool_id = ? ORDER BY tag")
            .bind(id)
            .fetch_all(&self.pool)
            .await?;
        let labels = sqlx::query_scalar(
            "SELECT label FROM labels WHERE tool_id = ? AND number = ? ORDER BY label",
        )
        .bind(id)
        .bind(row.0)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows::tool_version(slug, row, tags, labels))
    }
}

/// `text` as an FTS5 query: each word a quoted prefix (`"tide"*`), all of them required, so
/// that what a user types is never read as query syntax.
fn fts_query(text: &str) -> Option<String> {
    let words: Vec<String> =
        text.split_whitespace().map(|word| format!("\"{}\"*", word.replace('"', "\"\""))).collect();
    (!words.is_empty()).then(|| words.join(" "))
}

#[async_trait]
impl Store for SqliteStore {
    async fn publish(
        &self,
        slug: &str,
        publication: &Publication,
        note: Option<&str>,
        by: Option<&str>,
    ) -> Result<Published, StoreError> {
        check_slug(slug)?;
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let existing: Option<(i64, i64)> =
            sqlx::query_as("SELECT id, latest FROM tools WHERE slug = ?")
                .bind(slug)
                .fetch_optional(&mut *tx)
                .await?;
        let now = now();
        let (id, latest) = match existing {
            Some((id, latest)) => {
                let hash: String = sqlx::query_scalar(
                    "SELECT content_hash FROM versions WHERE tool_id = ? AND number = ?",
                )
                .bind(id)
                .bind(latest)
                .fetch_one(&mut *tx)
                .await?;
                if hash == publication.content_hash {
                    // The same content: no new version (a deleted tool comes back).
                    sqlx::query("UPDATE tools SET deleted_at = NULL WHERE id = ?")
                        .bind(id)
                        .execute(&mut *tx)
                        .await?;
                    tx.commit().await?;
                    self.changed(slug);
                    let version = u32::try_from(latest).unwrap_or(0);
                    let content_hash = hash;
                    return Ok(Published {
                        slug: slug.to_owned(),
                        version,
                        content_hash,
                        created: false,
                    });
                }
                check_base(slug, publication, latest)?;
                (id, latest)
            }
            None => {
                let id =
                    sqlx::query("INSERT INTO tools (slug, latest, created_at) VALUES (?, 0, ?)")
                        .bind(slug)
                        .bind(&now)
                        .execute(&mut *tx)
                        .await?
                        .last_insert_rowid();
                (id, 0)
            }
        };
        let number = latest + 1;
        let variable_types = format!(" {} ", publication.variable_types.join(" "));
        let models = serde_json::to_string(&publication.models).unwrap_or_else(|_| "[]".into());
        sqlx::query(
            "INSERT INTO versions (tool_id, number, content_hash, body, name, description,
                usage_notes, prompt, variable_types, output_type, models, note, published_at,
                published_by)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(id)
        .bind(number)
        .bind(&publication.content_hash)
        .bind(&publication.text)
        .bind(&publication.name)
        .bind(&publication.description)
        .bind(&publication.usage_notes)
        .bind(&publication.prompt)
        .bind(variable_types)
        .bind(&publication.output_type)
        .bind(models)
        .bind(note)
        .bind(&now)
        .bind(by)
        .execute(&mut *tx)
        .await?;
        sqlx::query("UPDATE tools SET latest = ?, deleted_at = NULL WHERE id = ?")
            .bind(number)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        sqlx::query("DELETE FROM search WHERE rowid = ?").bind(id).execute(&mut *tx).await?;
        sqlx::query(
            "INSERT INTO search (rowid, name, description, usage_notes, prompt) VALUES (?, ?, ?, ?, ?)",
        )
        .bind(id)
        .bind(&publication.name)
        .bind(&publication.description)
        .bind(&publication.usage_notes)
        .bind(&publication.prompt)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        self.changed(slug);
        Ok(Published {
            slug: slug.to_owned(),
            version: u32::try_from(number).unwrap_or(0),
            content_hash: publication.content_hash.clone(),
            created: true,
        })
    }

    async fn version(&self, slug: &str, selector: &Selector) -> Result<ToolVersion, StoreError> {
        let id = self.tool_id(slug).await?;
        let select =
            format!("SELECT {VERSION_COLUMNS} FROM versions WHERE tool_id = ?1 AND number =");
        let row: Option<VersionRow> = match selector {
            Selector::Latest => {
                let sql = format!("{select} (SELECT latest FROM tools WHERE id = ?1)");
                sqlx::query_as(&sql).bind(id).fetch_optional(&self.pool).await?
            }
            Selector::Version(number) => {
                let sql = format!("{select} ?2");
                sqlx::query_as(&sql)
                    .bind(id)
                    .bind(i64::from(*number))
                    .fetch_optional(&self.pool)
                    .await?
            }
            Selector::Label(label) => {
                let sql = format!(
                    "{select} (SELECT number FROM labels WHERE tool_id = ?1 AND label = ?2)"
                );
                sqlx::query_as(&sql).bind(id).bind(label).fetch_optional(&self.pool).await?
            }
        };
        let Some(row) = row else {
            return Err(StoreError::NoSuchVersion {
                slug: slug.to_owned(),
                selector: shown(selector),
            });
        };
        self.version_of(slug, id, row).await
    }

    async fn versions(&self, slug: &str) -> Result<Vec<ToolVersion>, StoreError> {
        let id = self.tool_id(slug).await?;
        let rows: Vec<VersionRow> = sqlx::query_as(&format!(
            "SELECT {VERSION_COLUMNS} FROM versions WHERE tool_id = ? ORDER BY number DESC"
        ))
        .bind(id)
        .fetch_all(&self.pool)
        .await?;
        let mut versions = Vec::with_capacity(rows.len());
        for row in rows {
            versions.push(self.version_of(slug, id, row).await?);
        }
        Ok(versions)
    }

    async fn add_tag(&self, slug: &str, tag: &str) -> Result<(), StoreError> {
        check_name(tag)?;
        let id = self.tool_id(slug).await?;
        // One statement, so that adds at once cannot pass the cap together.
        let added = sqlx::query(
            "INSERT OR IGNORE INTO tags (tool_id, tag) SELECT ?1, ?2
             WHERE (SELECT COUNT(*) FROM tags WHERE tool_id = ?1) < ?3",
        )
        .bind(id)
        .bind(tag)
        .bind(i64::from(MAX_TAGS))
        .execute(&self.pool)
        .await?;
        if added.rows_affected() == 0 {
            let has: Option<i64> =
                sqlx::query_scalar("SELECT 1 FROM tags WHERE tool_id = ? AND tag = ?")
                    .bind(id)
                    .bind(tag)
                    .fetch_optional(&self.pool)
                    .await?;
            if has.is_none() {
                let slug = slug.to_owned();
                return Err(StoreError::TooMany { slug, what: "tags", max: MAX_TAGS });
            }
        }
        self.changed(slug);
        Ok(())
    }

    async fn remove_tag(&self, slug: &str, tag: &str) -> Result<(), StoreError> {
        let id = self.tool_id(slug).await?;
        sqlx::query("DELETE FROM tags WHERE tool_id = ? AND tag = ?")
            .bind(id)
            .bind(tag)
            .execute(&self.pool)
            .await?;
        self.changed(slug);
        Ok(())
    }

    async fn set_label(&self, slug: &str, label: &str, version: u32) -> Result<(), StoreError> {
        check_name(label)?;
        let id = self.tool_id(slug).await?;
        let exists: Option<i64> =
            sqlx::query_scalar("SELECT number FROM versions WHERE tool_id = ? AND number = ?")
                .bind(id)
                .bind(i64::from(version))
                .fetch_optional(&self.pool)
                .await?;
        if exists.is_none() {
            let selector = shown(&Selector::Version(version));
            return Err(StoreError::NoSuchVersion { slug: slug.to_owned(), selector });
        }
        // A label moves at the cap; a new one is refused there (one statement, as for tags).
        let set = sqlx::query(
            "INSERT INTO labels (tool_id, label, number) SELECT ?1, ?2, ?3
             WHERE EXISTS (SELECT 1 FROM labels WHERE tool_id = ?1 AND label = ?2)
                OR (SELECT COUNT(*) FROM labels WHERE tool_id = ?1) < ?4
             ON CONFLICT (tool_id, label) DO UPDATE SET number = excluded.number",
        )
        .bind(id)
        .bind(label)
        .bind(i64::from(version))
        .bind(i64::from(MAX_LABELS))
        .execute(&self.pool)
        .await?;
        if set.rows_affected() == 0 {
            let slug = slug.to_owned();
            return Err(StoreError::TooMany { slug, what: "labels", max: MAX_LABELS });
        }
        self.changed(slug);
        Ok(())
    }

    async fn delete(&self, slug: &str) -> Result<(), StoreError> {
        let id = self.tool_id(slug).await?;
        sqlx::query("UPDATE tools SET deleted_at = ? WHERE id = ?")
            .bind(now())
            .bind(id)
            .execute(&self.pool)
            .await?;
        self.changed(slug);
        Ok(())
    }

    async fn search(&self, query: &Query) -> Result<Page, StoreError> {
        let after = match &query.cursor {
            Some(cursor) if crate::publication::is_slug(cursor) => Some(cursor.as_str()),
            Some(_) => return Err(StoreError::BadCursor),
            None => None,
        };
        let limit = query.limit.clamp(1, 200);
        let results: Vec<(String, i64, Option<String>, Option<String>, Option<String>, Option<String>, Option<String>, bool, String)> =
            sqlx::query_as(
            "SELECT t.slug, t.latest, v.name, v.description, v.output_type,
                (SELECT group_concat(tag, ' ') FROM (SELECT tag FROM tags WHERE tool_id = t.id ORDER BY tag)),
                CASE json_type(v.body, '$.metadata.creator') WHEN 'text' THEN json_extract(v.body, '$.metadata.creator')
                    ELSE json_extract(v.body, '$.metadata.creator.name') END,
                (lower(COALESCE(json_extract(v.body, '$.metadata.avatar_type'),
                        json_extract(v.body, '$.metadata.avatar.avatar_type'), '')) = 'base64'
                    OR COALESCE(CASE json_type(v.body, '$.metadata.avatar') WHEN 'text'
                        THEN json_extract(v.body, '$.metadata.avatar') END,
                        json_extract(v.body, '$.metadata.avatar.avatar'), '') GLOB 'data:*;base64,*'),
                v.models
             FROM tools t JOIN versions v ON v.tool_id = t.id AND v.number = t.latest
             WHERE t.deleted_at IS NULL
               AND (?1 IS NULL OR t.id IN (SELECT rowid FROM search WHERE search MATCH ?1))
               AND (?2 IS NULL OR EXISTS (SELECT 1 FROM tags g WHERE g.tool_id = t.id AND g.tag = ?2))
               AND (?3 IS NULL OR instr(v.variable_types, ' ' || ?3 || ' ') > 0)
               AND (?4 IS NULL OR v.output_type = ?4)
               AND (?5 IS NULL OR EXISTS (SELECT 1 FROM json_each(v.models) WHERE value = ?5))
               AND (?6 IS NULL OR t.slug > ?6)
             ORDER BY t.slug LIMIT ?7",
        )
        .bind(query.text.as_deref().and_then(fts_query))
        .bind(&query.tag)
        .bind(&query.variable_type)
        .bind(&query.output_type)
        .bind(&query.model)
        .bind(after)
        .bind(i64::from(limit) + 1)
        .fetch_all(&self.pool)
        .await?;
        let found = results
            .into_iter()
            .map(|(slug, latest, name, description, output, tags, creator, avatar, models)| {
                rows::summary(
                    (slug, latest, name, description, output, tags, creator, avatar),
                    serde_json::from_str(&models).unwrap_or_default(),
                )
            })
            .collect();
        Ok(rows::page(found, limit))
    }

    async fn create_token(
        &self,
        name: &str,
        role: Role,
        token_hash: &str,
    ) -> Result<(), StoreError> {
        let inserted = sqlx::query(
            "INSERT OR IGNORE INTO tokens (name, role, token_hash, created_at) VALUES (?, ?, ?, ?)",
        )
        .bind(name)
        .bind(role.as_str())
        .bind(token_hash)
        .bind(now())
        .execute(&self.pool)
        .await?;
        if inserted.rows_affected() == 0 {
            return Err(StoreError::TokenExists(name.to_owned()));
        }
        Ok(())
    }

    async fn tokens(&self) -> Result<Vec<TokenInfo>, StoreError> {
        let rows: Vec<TokenRow> =
            sqlx::query_as("SELECT name, role, created_at, revoked_at FROM tokens ORDER BY name")
                .fetch_all(&self.pool)
                .await?;
        Ok(rows.into_iter().map(rows::token_info).collect())
    }

    async fn revoke_token(&self, name: &str) -> Result<(), StoreError> {
        let done =
            sqlx::query("UPDATE tokens SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL")
                .bind(now())
                .bind(name)
                .execute(&self.pool)
                .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NoSuchToken(name.to_owned()));
        }
        Ok(())
    }

    async fn backup(&self, to: &Path) -> Result<(), StoreError> {
        if to.exists() {
            return Err(StoreError::Backup(format!(
                "{} exists; a backup goes to a new file",
                to.display()
            )));
        }
        // SQLite's `VACUUM INTO` writes a consistent, compact copy while others read and write.
        sqlx::query("VACUUM INTO ?")
            .bind(to.to_string_lossy().into_owned())
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn token(&self, token_hash: &str) -> Result<Option<(String, Role)>, StoreError> {
        let row: Option<(String, String)> = sqlx::query_as(
            "SELECT name, role FROM tokens WHERE token_hash = ? AND revoked_at IS NULL",
        )
        .bind(token_hash)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.and_then(|(name, role)| Some((name, Role::parse(&role)?))))
    }

    async fn changes(&self) -> Result<Changes, StoreError> {
        // One file, one server: this process's writes are all there is to hear.
        Ok(self.announcer.subscribe())
    }

    async fn log_run(
        &self,
        slug: &str,
        version: u32,
        by: Option<&str>,
        run: &Record,
    ) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar(
            "INSERT INTO runs (started_at, origin, slug, version, run_by, provider, model,
                input_tokens, output_tokens, cost_usd, outcome, record)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        )
        .bind(&run.started_at)
        .bind(&run.origin)
        .bind(slug)
        .bind(i64::from(version))
        .bind(by)
        .bind(&run.provider)
        .bind(&run.model)
        .bind(rows::tokens(run.input_tokens))
        .bind(rows::tokens(run.output_tokens))
        .bind(run.cost_usd)
        .bind(run.outcome.as_str())
        .bind(serde_json::to_string(run).unwrap_or_default())
        .fetch_one(&self.pool)
        .await?)
    }

    async fn usage(&self, by: Grouping, since: Option<&str>) -> Result<Vec<Total>, StoreError> {
        let totals: Vec<rows::TotalRow> =
            sqlx::query_as(&rows::usage_sql(by, "?1")).bind(since).fetch_all(&self.pool).await?;
        Ok(totals.into_iter().map(rows::total).collect())
    }

    async fn create_session(
        &self,
        id_hash: &str,
        token_name: &str,
        csrf: &str,
        lifetime: std::time::Duration,
    ) -> Result<(), StoreError> {
        let now = now();
        let mut tx = self.pool.begin().await?;
        sqlx::query("DELETE FROM sessions WHERE expires_at <= ?1")
            .bind(&now)
            .execute(&mut *tx)
            .await?;
        sqlx::query(
            "INSERT INTO sessions (id_hash, token_name, csrf, created_at, expires_at)
             VALUES (?1, ?2, ?3, ?4, ?5)",
        )
        .bind(id_hash)
        .bind(token_name)
        .bind(csrf)
        .bind(&now)
        .bind(expiry(lifetime))
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "DELETE FROM sessions WHERE token_name = ?1 AND id_hash NOT IN
               (SELECT id_hash FROM sessions WHERE token_name = ?1
                ORDER BY created_at DESC, id_hash LIMIT ?2)",
        )
        .bind(token_name)
        .bind(MAX_SESSIONS_PER_TOKEN)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    async fn session(&self, id_hash: &str) -> Result<Option<SessionInfo>, StoreError> {
        let row: Option<(String, String, String)> = sqlx::query_as(
            "SELECT t.name, t.role, s.csrf FROM sessions s JOIN tokens t ON t.name = s.token_name
             WHERE s.id_hash = ?1 AND s.expires_at > ?2 AND t.revoked_at IS NULL",
        )
        .bind(id_hash)
        .bind(now())
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.and_then(|(name, role, csrf)| {
            Some(SessionInfo { name, role: Role::parse(&role)?, csrf })
        }))
    }

    async fn delete_session(&self, id_hash: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM sessions WHERE id_hash = ?1")
            .bind(id_hash)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn runs(&self, slug: &str, limit: u32) -> Result<Vec<KeptRun>, StoreError> {
        let found: Vec<rows::RunRow> = sqlx::query_as(
            "SELECT id, slug, version, run_by, record FROM runs WHERE slug = ?1
             ORDER BY id DESC LIMIT ?2",
        )
        .bind(slug)
        .bind(i64::from(limit.clamp(1, 500)))
        .fetch_all(&self.pool)
        .await?;
        Ok(found.into_iter().filter_map(rows::kept_run).collect())
    }

    async fn tags(&self) -> Result<Vec<TagCount>, StoreError> {
        let found: Vec<(String, i64)> = sqlx::query_as(
            "SELECT g.tag, COUNT(*) AS tools FROM tags g JOIN tools t ON t.id = g.tool_id
             WHERE t.deleted_at IS NULL GROUP BY g.tag ORDER BY tools DESC, g.tag",
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(found.into_iter().map(rows::tag_count).collect())
    }

    async fn current(&self, label: Option<&str>) -> Result<Vec<(String, u32, String)>, StoreError> {
        let rows: Vec<(String, i64, String)> = sqlx::query_as(
            "SELECT t.slug, v.number, v.body FROM tools t JOIN versions v ON v.tool_id = t.id
               AND v.number = CASE WHEN ?1 IS NULL THEN t.latest
                 ELSE (SELECT number FROM labels l WHERE l.tool_id = t.id AND l.label = ?1) END
             WHERE t.deleted_at IS NULL ORDER BY t.slug",
        )
        .bind(label)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(slug, number, text)| (slug, u32::try_from(number).unwrap_or(0), text))
            .collect())
    }
}
