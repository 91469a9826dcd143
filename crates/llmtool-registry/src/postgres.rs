//! [`PostgresStore`]: the library in PostgreSQL, for several servers behind one database.
//! Publishing locks the tool's row (`SELECT ... FOR UPDATE`) inside a transaction, so version
//! numbers never repeat or skip whatever server publishes; full text is a `tsvector` with a
//! GIN index.

use std::time::Duration;

use async_trait::async_trait;
use llmtool_log::{Grouping, Record, Total};
use sqlx::postgres::{PgListener, PgPool, PgPoolOptions};
use tokio::sync::OnceCell;

use crate::changes::{Announcer, CHANNEL, Change, Changes};
use crate::model::{
    KeptRun, Page, Published, Query, Role, Selector, SessionInfo, TagCount, TokenInfo, ToolVersion,
};
use crate::publication::Publication;
use crate::rows::{self, TokenRow, VERSION_COLUMNS, VersionRow};
use crate::store::{
    MAX_LABELS, MAX_SESSIONS_PER_TOKEN, MAX_TAGS, Store, StoreError, check_base, check_name,
    check_slug, expiry, now, shown,
};

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");

/// The library in a PostgreSQL database.
#[derive(Debug, Clone)]
pub struct PostgresStore {
    pool: PgPool,
    announcer: Announcer,
    /// Set once the task that hears other servers' changes runs.
    listening: std::sync::Arc<OnceCell<()>>,
}

impl PostgresStore {
    /// Connects to the database at `url` (`postgres://...`) and brings its schema up to date.
    pub async fn connect(url: &str) -> Result<PostgresStore, StoreError> {
        let pool = PgPoolOptions::new().max_connections(16).connect(url).await?;
        MIGRATOR.run(&pool).await?;
        Ok(PostgresStore {
            pool,
            announcer: Announcer::new(),
            listening: std::sync::Arc::default(),
        })
    }

    /// Tells this process's listeners that `slug` changed; the write's own `NOTIFY` (see
    /// [`notify`]) tells the other servers when it commits.
    fn changed(&self, slug: &str) {
        self.announcer.announce(Change::Tool(slug.to_owned()));
    }

    /// Commits `tx`, a change to `slug`, telling every server.
    async fn commit_change(
        &self,
        mut tx: sqlx::Transaction<'_, sqlx::Postgres>,
        slug: &str,
    ) -> Result<(), StoreError> {
        notify(&mut tx, slug).await?;
        tx.commit().await?;
        self.changed(slug);
        Ok(())
    }

    /// Starts the task that turns the database's notifications into announcements.
    async fn listen(&self) -> Result<(), StoreError> {
        let mut listener = listen_on(&self.pool).await?;
        let (pool, announcer) = (self.pool.clone(), self.announcer.clone());
        tokio::spawn(async move {
            loop {
                if let Ok(Some(notification)) = listener.try_recv().await {
                    announcer.announce(Change::Tool(notification.payload().to_owned()));
                    continue;
                }
                // The connection was lost (`Ok(None)`), or failed.
                // Listen again before saying that anything may have changed, so that a reader
                // who acts on it cannot miss a change made while this was away.
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

    async fn tool_id(&self, slug: &str) -> Result<i64, StoreError> {
        sqlx::query_scalar("SELECT id FROM tools WHERE slug = $1 AND deleted_at IS NULL")
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
        let tags = sqlx::query_scalar("SELECT tag FROM tags WHERE tool_id = $1 ORDER BY tag")
            .bind(id)
            .fetch_all(&self.pool)
            .await?;
        let labels = sqlx::query_scalar(
            "SELECT label FROM labels WHERE tool_id = $1 AND number = $2 ORDER BY label",
        )
        .bind(id)
        .bind(row.0)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows::tool_version(slug, row, tags, labels))
    }
}

/// A connection listening on the library's channel (one of the pool's, kept for as long as
/// it listens).
async fn listen_on(pool: &PgPool) -> Result<PgListener, sqlx::Error> {
    let mut listener = PgListener::connect_with(pool).await?;
    listener.listen(CHANNEL).await?;
    Ok(listener)
}

/// Queues the notification that `slug` changed, sent to every listening server when the
/// transaction commits (and never if it does not).
async fn notify(tx: &mut sqlx::PgConnection, slug: &str) -> Result<(), StoreError> {
    sqlx::query("SELECT pg_notify($1, $2)").bind(CHANNEL).bind(slug).execute(tx).await?;
    Ok(())
}

/// `text` as a `tsquery`: each word (its letters and digits) a required prefix (`tide:*`), so
/// that what a user types is never read as query syntax.
fn ts_query(text: &str) -> Option<String> {
    // Split where PostgreSQL's `simple` parser splits (`sql-assistant` is `sql` and
    // `assistant`), so that punctuation never glues words into one that matches nothing.
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(|word| format!("{}:*", word.to_lowercase()))
        .collect();
    (!words.is_empty()).then(|| words.join(" & "))
}

#[async_trait]
impl Store for PostgresStore {
    async fn publish(
        &self,
        slug: &str,
        publication: &Publication,
        note: Option<&str>,
        by: Option<&str>,
    ) -> Result<Published, StoreError> {
        check_slug(slug)?;
        let now = now();
        let mut tx = self.pool.begin().await?;
        sqlx::query(
            "INSERT INTO tools (slug, latest, created_at) VALUES ($1, 0, $2) ON CONFLICT (slug) DO NOTHING",
        )
        .bind(slug)
        .bind(&now)
        .execute(&mut *tx)
        .await?;
        let (id, latest): (i64, i64) =
            sqlx::query_as("SELECT id, latest FROM tools WHERE slug = $1 FOR UPDATE")
                .bind(slug)
                .fetch_one(&mut *tx)
                .await?;
        if latest > 0 {
            let hash: String = sqlx::query_scalar(
                "SELECT content_hash FROM versions WHERE tool_id = $1 AND number = $2",
            )
            .bind(id)
            .bind(latest)
            .fetch_one(&mut *tx)
            .await?;
            if hash == publication.content_hash {
                // The same content: no new version (a deleted tool comes back).
                sqlx::query("UPDATE tools SET deleted_at = NULL WHERE id = $1")
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
                notify(&mut tx, slug).await?;
                tx.commit().await?;
                self.changed(slug);
                let version = u32::try_from(latest).unwrap_or(0);
                return Ok(Published {
                    slug: slug.to_owned(),
                    version,
                    content_hash: hash,
                    created: false,
                });
            }
        }
        if latest > 0 {
            check_base(slug, publication, latest)?;
        }
        let number = latest + 1;
        sqlx::query(
            "INSERT INTO versions (tool_id, number, content_hash, body, name, description,
                usage_notes, prompt, variable_types, output_type, models, note, published_at,
                published_by)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
        )
        .bind(id)
        .bind(number)
        .bind(&publication.content_hash)
        .bind(&publication.text)
        .bind(&publication.name)
        .bind(&publication.description)
        .bind(&publication.usage_notes)
        .bind(&publication.prompt)
        .bind(&publication.variable_types)
        .bind(&publication.output_type)
        .bind(&publication.models)
        .bind(note)
        .bind(&now)
        .bind(by)
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "UPDATE tools SET latest = $1, deleted_at = NULL,
                search = to_tsvector('simple', concat_ws(' ', $2::text, $3::text, $4::text, $5::text))
             WHERE id = $6",
        )
        .bind(number)
        .bind(&publication.name)
        .bind(&publication.description)
        .bind(&publication.usage_notes)
        .bind(&publication.prompt)
        .bind(id)
        .execute(&mut *tx)
        .await?;
        notify(&mut tx, slug).await?;
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
            format!("SELECT {VERSION_COLUMNS} FROM versions WHERE tool_id = $1 AND number =");
        let row: Option<VersionRow> = match selector {
            Selector::Latest => {
                let sql = format!("{select} (SELECT latest FROM tools WHERE id = $1)");
                sqlx::query_as(&sql).bind(id).fetch_optional(&self.pool).await?
            }
            Selector::Version(number) => {
                let sql = format!("{select} $2");
                sqlx::query_as(&sql)
                    .bind(id)
                    .bind(i64::from(*number))
                    .fetch_optional(&self.pool)
                    .await?
            }
            Selector::Label(label) => {
                let sql = format!(
                    "{select} (SELECT number FROM labels WHERE tool_id = $1 AND label = $2)"
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
            "SELECT {VERSION_COLUMNS} FROM versions WHERE tool_id = $1 ORDER BY number DESC"
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
        let mut tx = self.pool.begin().await?;
        // The tool's row locked, so that adds at once cannot pass the cap together.
        sqlx::query("SELECT id FROM tools WHERE id = $1 FOR UPDATE")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        let added = sqlx::query(
            "INSERT INTO tags (tool_id, tag) SELECT $1, $2
             WHERE (SELECT COUNT(*) FROM tags WHERE tool_id = $1) < $3
             ON CONFLICT DO NOTHING",
        )
        .bind(id)
        .bind(tag)
        .bind(i64::from(MAX_TAGS))
        .execute(&mut *tx)
        .await?;
        if added.rows_affected() == 0 {
            let has: Option<i32> =
                sqlx::query_scalar("SELECT 1 FROM tags WHERE tool_id = $1 AND tag = $2")
                    .bind(id)
                    .bind(tag)
                    .fetch_optional(&mut *tx)
                    .await?;
            if has.is_none() {
                let slug = slug.to_owned();
                return Err(StoreError::TooMany { slug, what: "tags", max: MAX_TAGS });
            }
        }
        self.commit_change(tx, slug).await
    }

    async fn remove_tag(&self, slug: &str, tag: &str) -> Result<(), StoreError> {
        let id = self.tool_id(slug).await?;
        let mut tx = self.pool.begin().await?;
        sqlx::query("DELETE FROM tags WHERE tool_id = $1 AND tag = $2")
            .bind(id)
            .bind(tag)
            .execute(&mut *tx)
            .await?;
        self.commit_change(tx, slug).await
    }

    async fn set_label(&self, slug: &str, label: &str, version: u32) -> Result<(), StoreError> {
        check_name(label)?;
        let id = self.tool_id(slug).await?;
        let mut tx = self.pool.begin().await?;
        sqlx::query("SELECT id FROM tools WHERE id = $1 FOR UPDATE")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        // A label moves at the cap; a new one is refused there.
        let set = sqlx::query(
            "INSERT INTO labels (tool_id, label, number)
             SELECT $1, $2, number FROM versions WHERE tool_id = $1 AND number = $3
               AND (EXISTS (SELECT 1 FROM labels WHERE tool_id = $1 AND label = $2)
                    OR (SELECT COUNT(*) FROM labels WHERE tool_id = $1) < $4)
             ON CONFLICT (tool_id, label) DO UPDATE SET number = excluded.number",
        )
        .bind(id)
        .bind(label)
        .bind(i64::from(version))
        .bind(i64::from(MAX_LABELS))
        .execute(&mut *tx)
        .await?;
        if set.rows_affected() == 0 {
            let exists: Option<i64> = sqlx::query_scalar(
                "SELECT number FROM versions WHERE tool_id = $1 AND number = $2",
            )
            .bind(id)
            .bind(i64::from(version))
            .fetch_optional(&mut *tx)
            .await?;
            if exists.is_some() {
                let slug = slug.to_owned();
                return Err(StoreError::TooMany { slug, what: "labels", max: MAX_LABELS });
            }
            let selector = shown(&Selector::Version(version));
            return Err(StoreError::NoSuchVersion { slug: slug.to_owned(), selector });
        }
        self.commit_change(tx, slug).await
    }

    async fn delete(&self, slug: &str) -> Result<(), StoreError> {
        let id = self.tool_id(slug).await?;
        let mut tx = self.pool.begin().await?;
        sqlx::query("UPDATE tools SET deleted_at = $1 WHERE id = $2")
            .bind(now())
            .bind(id)
            .execute(&mut *tx)
            .await?;
        self.commit_change(tx, slug).await
    }

    async fn search(&self, query: &Query) -> Result<Page, StoreError> {
        let after = match &query.cursor {
            Some(cursor) if crate::publication::is_slug(cursor) => Some(cursor.as_str()),
            Some(_) => return Err(StoreError::BadCursor),
            None => None,
        };
        let limit = query.limit.clamp(1, 200);
        let results: Vec<(String, i64, Option<String>, Option<String>, Option<String>, Option<String>, Option<String>, bool, Vec<String>)> =
            sqlx::query_as(
            "SELECT t.slug, t.latest, v.name, v.description, v.output_type,
                (SELECT string_agg(tag, ' ' ORDER BY tag) FROM tags WHERE tool_id = t.id),
                CASE jsonb_typeof(v.body::jsonb #> '{metadata,creator}') WHEN 'string'
                    THEN v.body::jsonb #>> '{metadata,creator}' ELSE v.body::jsonb #>> '{metadata,creator,name}' END,
                (lower(COALESCE(v.body::jsonb #>> '{metadata,avatar_type}',
                        v.body::jsonb #>> '{metadata,avatar,avatar_type}', '')) = 'base64'
                    OR COALESCE(CASE jsonb_typeof(v.body::jsonb #> '{metadata,avatar}') WHEN 'string'
                        THEN v.body::jsonb #>> '{metadata,avatar}' END,
                        v.body::jsonb #>> '{metadata,avatar,avatar}', '') LIKE 'data:%;base64,%'),
                v.models
             FROM tools t JOIN versions v ON v.tool_id = t.id AND v.number = t.latest
             WHERE t.deleted_at IS NULL
               AND ($1::text IS NULL OR t.search @@ to_tsquery('simple', $1))
               AND ($2::text IS NULL OR EXISTS (SELECT 1 FROM tags g WHERE g.tool_id = t.id AND g.tag = $2))
               AND ($3::text IS NULL OR $3 = ANY (v.variable_types))
               AND ($4::text IS NULL OR v.output_type = $4)
               AND ($5::text IS NULL OR $5 = ANY (v.models))
               AND ($6::text IS NULL OR t.slug COLLATE \"C\" > $6)
             ORDER BY t.slug COLLATE \"C\" LIMIT $7",
        )
        .bind(query.text.as_deref().and_then(ts_query))
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
                    models,
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
            "INSERT INTO tokens (name, role, token_hash, created_at) VALUES ($1, $2, $3, $4)
             ON CONFLICT DO NOTHING",
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
            sqlx::query("UPDATE tokens SET revoked_at = $1 WHERE name = $2 AND revoked_at IS NULL")
                .bind(now())
                .bind(name)
                .execute(&self.pool)
                .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NoSuchToken(name.to_owned()));
        }
        Ok(())
    }

    async fn backup(&self, _to: &std::path::Path) -> Result<(), StoreError> {
        Err(StoreError::Backup(
            "a PostgreSQL library is backed up with PostgreSQL's own tools (`pg_dump`)".into(),
        ))
    }

    async fn token(&self, token_hash: &str) -> Result<Option<(String, Role)>, StoreError> {
        let row: Option<(String, String)> = sqlx::query_as(
            "SELECT name, role FROM tokens WHERE token_hash = $1 AND revoked_at IS NULL",
        )
        .bind(token_hash)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.and_then(|(name, role)| Some((name, Role::parse(&role)?))))
    }

    async fn changes(&self) -> Result<Changes, StoreError> {
        // Subscribed before listening starts, so nothing heard from then on is missed.
        let changes = self.announcer.subscribe();
        self.listening.get_or_try_init(|| self.listen()).await?;
        Ok(changes)
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
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id",
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
        .bind(sqlx::types::Json(run))
        .fetch_one(&self.pool)
        .await?)
    }

    async fn usage(&self, by: Grouping, since: Option<&str>) -> Result<Vec<Total>, StoreError> {
        let totals: Vec<rows::TotalRow> = sqlx::query_as(&rows::usage_sql(by, "$1::text"))
            .bind(since)
            .fetch_all(&self.pool)
            .await?;
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
        sqlx::query("DELETE FROM sessions WHERE expires_at <= $1")
            .bind(&now)
            .execute(&mut *tx)
            .await?;
        sqlx::query(
            "INSERT INTO sessions (id_hash, token_name, csrf, created_at, expires_at)
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(id_hash)
        .bind(token_name)
        .bind(csrf)
        .bind(&now)
        .bind(expiry(lifetime))
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "DELETE FROM sessions WHERE token_name = $1 AND id_hash NOT IN
               (SELECT id_hash FROM sessions WHERE token_name = $1
                ORDER BY created_at DESC, id_hash LIMIT $2)",
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
             WHERE s.id_hash = $1 AND s.expires_at > $2 AND t.revoked_at IS NULL",
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
        sqlx::query("DELETE FROM sessions WHERE id_hash = $1")
            .bind(id_hash)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn runs(&self, slug: &str, limit: u32) -> Result<Vec<KeptRun>, StoreError> {
        let found: Vec<rows::RunRow> = sqlx::query_as(
            "SELECT id, slug, version, run_by, record::text FROM runs WHERE slug = $1
             ORDER BY id DESC LIMIT $2",
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
               AND v.number = CASE WHEN $1::text IS NULL THEN t.latest
                 ELSE (SELECT number FROM labels l WHERE l.tool_id = t.id AND l.label = $1) END
             WHERE t.deleted_at IS NULL ORDER BY t.slug COLLATE \"C\"",
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
