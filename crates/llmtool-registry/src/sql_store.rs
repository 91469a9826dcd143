//! [`SqlStore`]: the library's storage logic, written once over [`Db`]: publishing (version
//! numbers that never repeat or skip, the same content making no new version, an edit from an
//! old version refused), tags and labels under their caps, soft delete, search, tokens,
//! sessions and kept runs. What differs between SQLite and PostgreSQL (opening, full-text
//! search, backups, hearing other servers' changes) is in `sqlite.rs` and `postgres.rs`.

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use llmtool_log::{Grouping, Record, Total};
use tokio::sync::OnceCell;

use crate::Visibility;
use crate::audit::{self, Actor};
use crate::changes::{Announcer, Change, Changes};
use crate::db::{Arg, Db, Tx, statement};
use crate::model::{
    Holder, Page, Published, Query, Role, RunsPage, Selector, SessionInfo, TagCount, ToolVersion,
};
use crate::people::{ALL, SessionFor, email_key};
use crate::publication::Publication;
use crate::rows::{self, VERSION_COLUMNS, VersionRow};
use crate::spend::Charge;
use crate::sql_search::{Searcher, has_words};
use crate::store::{
    MAX_LABELS, MAX_SESSIONS, MAX_TAGS, RunsOf, Store, StoreError, check_base, check_name,
    check_slug, expiry, now, shown,
};
use crate::tokens::{DeviceGrant, NewToken, Redeemed, TokenInfo, TokensOf};
use crate::{postgres, sqlite};

/// The library in a SQLite file or a PostgreSQL database.
#[derive(Debug, Clone)]
pub struct SqlStore {
    pub(crate) db: Db,
    pub(crate) announcer: Announcer,
    /// The word search's index, shared by every handle on this store.
    pub(crate) searcher: Arc<Searcher>,
    /// Set once the task that hears other servers' changes runs (PostgreSQL).
    pub(crate) listening: Arc<OnceCell<()>>,
    /// Who the changes made through this handle are recorded as ([`Store::acting_as`]).
    pub(crate) actor: Arc<Actor>,
    /// Held by every handle but the search's follower: when the last one is dropped, the
    /// follower hears it and ends ([`SqlStore::follow_in_background`]).
    pub(crate) handles: Arc<std::sync::OnceLock<tokio::sync::oneshot::Sender<()>>>,
}

impl SqlStore {
    /// Opens (creating it if needed) the library in the SQLite file at `path`.
    pub async fn open_sqlite(path: &Path) -> Result<SqlStore, StoreError> {
        Ok(SqlStore::on(Db::Sqlite(sqlite::open(path).await?)))
    }

    /// Connects to the PostgreSQL library at `url` (`postgres://...`).
    pub async fn connect_postgres(url: &str) -> Result<SqlStore, StoreError> {
        Ok(SqlStore::on(Db::Postgres(postgres::connect(url).await?)))
    }

    fn on(db: Db) -> SqlStore {
        SqlStore {
            db,
            announcer: Announcer::new(),
            searcher: Arc::default(),
            listening: Arc::default(),
            actor: Arc::new(Actor::system()),
            handles: Arc::default(),
        }
    }

    /// Tells this process's listeners that `slug` changed (other servers hear it from the
    /// database: see [`crate::db::Tx::commit_change`]).
    pub(crate) fn changed(&self, slug: &str) {
        self.announcer.announce(Change::of(slug));
    }

    /// The SQL that the tool `id` carries one of the tags of the words `words` (a parameter,
    /// ` all sales `), in this database's dialect.
    fn tagged(&self, id: &str, words: &str) -> String {
        match &self.db {
            Db::Sqlite(_) => sqlite::tagged(id, words),
            Db::Postgres(_) => postgres::tagged(id, words),
        }
    }

    /// The teams of the member `email`, by name.
    async fn teams_of(&self, email: &str) -> Result<Vec<String>, StoreError> {
        let sql = "SELECT team FROM member_teams WHERE email = $1 ORDER BY team COLLATE \"C\"";
        let teams: Vec<(String,)> = self.db.all(statement(sql).bind(email)).await?;
        Ok(teams.into_iter().map(|(team,)| team).collect())
    }

    /// The tool's id, if it exists and is not deleted.
    async fn tool_id(&self, slug: &str) -> Result<i64, StoreError> {
        let sql = "SELECT id FROM tools WHERE slug = $1 AND deleted_at IS NULL";
        let found: Option<(i64,)> = self.db.optional(statement(sql).bind(slug)).await?;
        found.map(|(id,)| id).ok_or_else(|| StoreError::NoSuchTool(slug.to_owned()))
    }

    /// The version of `row`, with the tool's tags and the labels pointing at it.
    async fn version_of(
        &self,
        slug: &str,
        id: i64,
        row: VersionRow,
    ) -> Result<ToolVersion, StoreError> {
        let tags = statement("SELECT tag FROM tags WHERE tool_id = $1 ORDER BY tag").bind(id);
        let tags: Vec<(String,)> = self.db.all(tags).await?;
        let labels =
            statement("SELECT label FROM labels WHERE tool_id = $1 AND number = $2 ORDER BY label");
        let labels: Vec<(String,)> = self.db.all(labels.bind(id).bind(row.0)).await?;
        let names = |rows: Vec<(String,)>| rows.into_iter().map(|(name,)| name).collect();
        Ok(rows::tool_version(slug, row, names(tags), names(labels)))
    }
}

#[async_trait]
impl Store for SqlStore {
    fn acting_as(&self, actor: Actor) -> Arc<dyn Store> {
        Arc::new(SqlStore { actor: Arc::new(actor), ..self.clone() })
    }

    async fn publish(
        &self,
        slug: &str,
        publication: &Publication,
        note: Option<&str>,
        by: Option<&str>,
    ) -> Result<Published, StoreError> {
        check_slug(slug)?;
        let now = now();
        let mut tx = self.db.begin_write().await?;
        let new = "INSERT INTO tools (slug, latest, created_at) VALUES ($1, 0, $2)
                   ON CONFLICT (slug) DO NOTHING";
        let created = tx.execute(statement(new).bind(slug).bind(&now)).await? > 0;
        let id = statement("SELECT id FROM tools WHERE slug = $1").bind(slug);
        let (id,): (i64,) = tx.optional(id).await?.ok_or(sqlx::Error::RowNotFound)?;
        if created {
            self.first_tags(&mut tx, id, slug, &publication.tags).await?;
        }
        // Publishers of one tool take turns from here: the numbers never repeat or skip.
        tx.lock_tool(id).await?;
        let latest = statement("SELECT latest, deleted_at FROM tools WHERE id = $1").bind(id);
        let (latest, deleted_at): (i64, Option<String>) =
            tx.optional(latest).await?.ok_or(sqlx::Error::RowNotFound)?;
        let deleted = deleted_at.is_some();
        let before =
            (latest > 0).then(|| serde_json::json!({"version": latest, "deleted": deleted}));
        if latest > 0 {
            let hash = "SELECT content_hash FROM versions WHERE tool_id = $1 AND number = $2";
            let hash: Option<(String,)> =
                tx.optional(statement(hash).bind(id).bind(latest)).await?;
            if let Some((hash,)) = hash.filter(|(hash,)| *hash == publication.content_hash) {
                // The same content: no new version (a deleted tool comes back).
                if deleted {
                    let revive = statement("UPDATE tools SET deleted_at = NULL WHERE id = $1");
                    tx.execute(revive.bind(id)).await?;
                    let after = serde_json::json!({"version": latest, "deleted": false});
                    let change = audit::Change::new("tool.publish", slug).after(after);
                    self.record(&mut tx, audit::Change { before, ..change }).await?;
                }
                let tags = tags_in(&mut tx, id).await?;
                tx.commit_change(slug).await?;
                self.changed(slug);
                let version = u32::try_from(latest).unwrap_or(0);
                return Ok(Published {
                    slug: slug.to_owned(),
                    version,
                    content_hash: hash,
                    created: false,
                    tags,
                });
            }
            check_base(slug, publication, latest)?;
        }
        let number = latest + 1;
        let version = statement(
            "INSERT INTO versions (tool_id, number, content_hash, body, name, description,
                usage_notes, prompt, variable_types, output_type, models, creator, has_avatar,
                smart, note, published_at, published_by)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)",
        )
        .bind(id)
        .bind(number)
        .bind(&publication.content_hash)
        .bind(&publication.text)
        .bind(&publication.name)
        .bind(&publication.description)
        .bind(&publication.usage_notes)
        .bind(&publication.prompt)
        .bind(Arg::Words(publication.variable_types.clone()))
        .bind(&publication.output_type)
        .bind(Arg::List(publication.models.clone()))
        .bind(&publication.creator)
        .bind(publication.has_avatar)
        .bind(publication.smart)
        .bind(note)
        .bind(&now)
        .bind(by);
        tx.execute(version).await?;
        let latest = statement("UPDATE tools SET latest = $1, deleted_at = NULL WHERE id = $2");
        tx.execute(latest.bind(number).bind(id)).await?;
        let tags = tags_in(&mut tx, id).await?;
        let mut after = serde_json::json!({
            "version": number, "content_hash": publication.content_hash, "note": note,
        });
        if created {
            after["tags"] = serde_json::json!(tags);
        }
        let change = audit::Change::new("tool.publish", slug).after(after);
        self.record(&mut tx, audit::Change { before, ..change }).await?;
        tx.commit_change(slug).await?;
        self.changed(slug);
        Ok(Published {
            slug: slug.to_owned(),
            version: u32::try_from(number).unwrap_or(0),
            content_hash: publication.content_hash.clone(),
            created: true,
            tags,
        })
    }

    async fn version(&self, slug: &str, selector: &Selector) -> Result<ToolVersion, StoreError> {
        let id = self.tool_id(slug).await?;
        let select =
            format!("SELECT {VERSION_COLUMNS} FROM versions WHERE tool_id = $1 AND number =");
        let query = match selector {
            Selector::Latest => {
                statement(format!("{select} (SELECT latest FROM tools WHERE id = $1)")).bind(id)
            }
            Selector::Version(number) => {
                statement(format!("{select} $2")).bind(id).bind(i64::from(*number))
            }
            Selector::Label(label) => statement(format!(
                "{select} (SELECT number FROM labels WHERE tool_id = $1 AND label = $2)"
            ))
            .bind(id)
            .bind(label),
        };
        let Some(row) = self.db.optional::<VersionRow>(query).await? else {
            let selector = shown(selector);
            return Err(StoreError::NoSuchVersion { slug: slug.to_owned(), selector });
        };
        self.version_of(slug, id, row).await
    }

    async fn versions(&self, slug: &str) -> Result<Vec<ToolVersion>, StoreError> {
        let id = self.tool_id(slug).await?;
        let sql = format!(
            "SELECT {VERSION_COLUMNS} FROM versions WHERE tool_id = $1 ORDER BY number DESC"
        );
        let found: Vec<VersionRow> = self.db.all(statement(sql).bind(id)).await?;
        let mut versions = Vec::with_capacity(found.len());
        for row in found {
            versions.push(self.version_of(slug, id, row).await?);
        }
        Ok(versions)
    }

    async fn add_tag(&self, slug: &str, tag: &str) -> Result<(), StoreError> {
        check_name(tag)?;
        let id = self.tool_id(slug).await?;
        let mut tx = self.db.begin_write().await?;
        // Adds at once take turns, so that they cannot pass the cap together.
        tx.lock_tool(id).await?;
        let add = statement(
            "INSERT INTO tags (tool_id, tag) SELECT $1, $2
             WHERE (SELECT COUNT(*) FROM tags WHERE tool_id = $1) < $3
             ON CONFLICT DO NOTHING",
        );
        if tx.execute(add.bind(id).bind(tag).bind(i64::from(MAX_TAGS))).await? == 0 {
            let has = statement("SELECT COUNT(*) FROM tags WHERE tool_id = $1 AND tag = $2");
            let (has,): (i64,) = tx.optional(has.bind(id).bind(tag)).await?.unwrap_or((0,));
            if has == 0 {
                let slug = slug.to_owned();
                return Err(StoreError::TooMany { slug, what: "tags", max: MAX_TAGS });
            }
        } else {
            let change = audit::Change::new("tag.add", slug);
            self.record(&mut tx, change.after(serde_json::json!({"tag": tag}))).await?;
        }
        tx.commit_change(slug).await?;
        self.changed(slug);
        Ok(())
    }

    async fn remove_tag(&self, slug: &str, tag: &str) -> Result<(), StoreError> {
        let id = self.tool_id(slug).await?;
        let mut tx = self.db.begin_write().await?;
        let remove = statement("DELETE FROM tags WHERE tool_id = $1 AND tag = $2");
        if tx.execute(remove.bind(id).bind(tag)).await? > 0 {
            let change = audit::Change::new("tag.remove", slug);
            self.record(&mut tx, change.before(serde_json::json!({"tag": tag}))).await?;
        }
        tx.commit_change(slug).await?;
        self.changed(slug);
        Ok(())
    }

    async fn set_label(&self, slug: &str, label: &str, version: u32) -> Result<(), StoreError> {
        check_name(label)?;
        let id = self.tool_id(slug).await?;
        let mut tx = self.db.begin_write().await?;
        tx.lock_tool(id).await?;
        let was = statement("SELECT number FROM labels WHERE tool_id = $1 AND label = $2");
        let was: Option<(i64,)> = tx.optional(was.bind(id).bind(label)).await?;
        // A label moves at the cap; a new one is refused there.
        let set = statement(
            "INSERT INTO labels (tool_id, label, number)
             SELECT $1, $2, number FROM versions WHERE tool_id = $1 AND number = $3
               AND (EXISTS (SELECT 1 FROM labels WHERE tool_id = $1 AND label = $2)
                    OR (SELECT COUNT(*) FROM labels WHERE tool_id = $1) < $4)
             ON CONFLICT (tool_id, label) DO UPDATE SET number = excluded.number",
        )
        .bind(id)
        .bind(label)
        .bind(i64::from(version))
        .bind(i64::from(MAX_LABELS));
        if tx.execute(set).await? == 0 {
            let exists =
                statement("SELECT COUNT(*) FROM versions WHERE tool_id = $1 AND number = $2");
            let exists = exists.bind(id).bind(i64::from(version));
            let (exists,): (i64,) = tx.optional(exists).await?.unwrap_or((0,));
            let slug = slug.to_owned();
            if exists > 0 {
                return Err(StoreError::TooMany { slug, what: "labels", max: MAX_LABELS });
            }
            return Err(StoreError::NoSuchVersion {
                slug,
                selector: shown(&Selector::Version(version)),
            });
        }
        if was.is_none_or(|(was,)| was != i64::from(version)) {
            let label_at = |version: i64| serde_json::json!({"label": label, "version": version});
            let change = audit::Change::new("label.set", slug).after(label_at(version.into()));
            let before = was.map(|(was,)| label_at(was));
            self.record(&mut tx, audit::Change { before, ..change }).await?;
        }
        tx.commit_change(slug).await?;
        self.changed(slug);
        Ok(())
    }

    async fn delete(&self, slug: &str) -> Result<(), StoreError> {
        let id = self.tool_id(slug).await?;
        let mut tx = self.db.begin_write().await?;
        let delete =
            statement("UPDATE tools SET deleted_at = $1 WHERE id = $2 AND deleted_at IS NULL");
        if tx.execute(delete.bind(now()).bind(id)).await? > 0 {
            self.record(&mut tx, audit::Change::new("tool.delete", slug)).await?;
        }
        tx.commit_change(slug).await?;
        self.changed(slug);
        Ok(())
    }

    async fn warm_search(&self) -> Result<(), StoreError> {
        // Following first: a first build that fails is tried again at the next change.
        self.follow_in_background().await?;
        let started = std::time::Instant::now();
        self.catch_up().await?;
        let tools = self.searcher.tools();
        tracing::info!("the search index holds {tools} tool(s), built in {:?}", started.elapsed());
        Ok(())
    }

    async fn search(&self, query: &Query) -> Result<Page, StoreError> {
        let limit = query.limit.clamp(1, 200);
        if let Some(text) = has_words(query) {
            return self.word_search(text, query, limit as usize).await;
        }
        let after = match &query.cursor {
            Some(cursor) if crate::publication::is_slug(cursor) => Some(cursor.as_str()),
            Some(_) => return Err(StoreError::BadCursor),
            None => None,
        };
        let sql = match &self.db {
            Db::Sqlite(_) => sqlite::SEARCH,
            Db::Postgres(_) => postgres::SEARCH,
        };
        let search = statement(sql)
            .bind(&query.tag)
            .bind(&query.variable_type)
            .bind(&query.output_type)
            .bind(&query.model)
            .bind(after)
            .bind(i64::from(limit) + 1)
            .bind(query.visible.as_words());
        let found: Vec<rows::SummaryRow> = self.db.all(search).await?;
        Ok(rows::page(found.into_iter().map(rows::summary).collect(), limit))
    }

    async fn issue_token(&self, token: &NewToken<'_>) -> Result<TokenInfo, StoreError> {
        self.issue(token).await
    }

    async fn tokens(&self, of: TokensOf<'_>) -> Result<Vec<TokenInfo>, StoreError> {
        self.listed_tokens(of).await
    }

    async fn revoke_token(&self, name: &str, of: TokensOf<'_>) -> Result<(), StoreError> {
        self.revoke_named(name, of).await
    }

    async fn open_device_grant(
        &self,
        device_hash: &str,
        user_code: &str,
        client: &str,
    ) -> Result<DeviceGrant, StoreError> {
        self.open_grant(device_hash, user_code, client).await
    }

    async fn device_grant(&self, user_code: &str) -> Result<Option<DeviceGrant>, StoreError> {
        self.grant(user_code).await
    }

    async fn answer_device_grant(
        &self,
        user_code: &str,
        member: &str,
        allow: bool,
    ) -> Result<(), StoreError> {
        self.answer_grant(user_code, member, allow).await
    }

    async fn redeem_device_grant(
        &self,
        device_hash: &str,
        name: &str,
        token_hash: &str,
    ) -> Result<Redeemed, StoreError> {
        self.redeem_grant(device_hash, name, token_hash).await
    }

    async fn backup(&self, to: &Path) -> Result<(), StoreError> {
        match &self.db {
            Db::Sqlite(pool) => sqlite::backup(pool, to).await,
            Db::Postgres(_) => Err(StoreError::Backup(
                "a PostgreSQL library is backed up with PostgreSQL's own tools (`pg_dump`)".into(),
            )),
        }
    }

    async fn token(&self, token_hash: &str) -> Result<Option<Holder>, StoreError> {
        match self.live_token(token_hash).await? {
            Some(row) => self.holder(row).await,
            None => Ok(None),
        }
    }

    async fn health(&self) -> Result<crate::Health, StoreError> {
        let sql = "SELECT version FROM _sqlx_migrations WHERE success ORDER BY version";
        let applied: Vec<(i64,)> = self.db.all(statement(sql)).await?;
        let known = match &self.db {
            Db::Sqlite(_) => &sqlite::MIGRATOR,
            Db::Postgres(_) => &postgres::MIGRATOR,
        };
        Ok(crate::Health {
            applied: applied.into_iter().map(|(version,)| version).collect(),
            known: known
                .iter()
                .filter(|m| m.migration_type.is_up_migration())
                .map(|m| m.version)
                .collect(),
        })
    }

    fn pool_use(&self) -> crate::PoolUse {
        self.db.pool_use()
    }

    fn shared_by_servers(&self) -> bool {
        matches!(self.db, Db::Postgres(_))
    }

    async fn spend_rate(
        &self,
        key: &str,
        bucket: crate::Bucket,
        spend: crate::Spend,
    ) -> Result<crate::Taken, StoreError> {
        crate::shared::spend(&self.db, key, bucket, spend).await
    }

    async fn forget_idle_rates(&self, idle: std::time::Duration) -> Result<u64, StoreError> {
        crate::shared::forget_idle(&self.db, idle).await
    }

    async fn first_slack_event(&self, event_id: &str) -> Result<bool, StoreError> {
        crate::shared::first_slack_event(&self.db, event_id).await
    }

    async fn slack_thread(
        &self,
        channel: &str,
        thread_ts: &str,
    ) -> Result<Option<String>, StoreError> {
        crate::slack_threads::conversation_of(&self.db, channel, thread_ts).await
    }

    async fn slack_app(&self) -> Result<Option<crate::SlackApp>, StoreError> {
        self.slack_app_row().await
    }

    async fn put_slack_app(&self, app: &crate::SlackApp) -> Result<(), StoreError> {
        self.put_slack_app_row(app).await
    }

    async fn reseal_slack_app(
        &self,
        before: &crate::SlackApp,
        after: &crate::SlackApp,
    ) -> Result<(), StoreError> {
        self.reseal_slack_app_row(before, after).await
    }

    async fn remove_slack_app(&self) -> Result<bool, StoreError> {
        self.remove_slack_app_row().await
    }

    async fn disable_slack_app(&self, reason: &str, bot_token: &str) -> Result<bool, StoreError> {
        self.disable_slack_app_row(reason, bot_token).await
    }

    async fn add_slack_state(&self, state_hash: &str, member: &str) -> Result<(), StoreError> {
        self.add_slack_state_row(state_hash, member).await
    }

    async fn take_slack_state(&self, state_hash: &str) -> Result<Option<String>, StoreError> {
        self.take_slack_state_row(state_hash).await
    }

    async fn connect_slack(&self, sync: &crate::SlackSync) -> Result<(), StoreError> {
        self.connect_slack_row(sync).await
    }

    async fn disconnect_slack(&self, conversation: &str) -> Result<bool, StoreError> {
        self.disconnect_slack_row(conversation).await
    }

    async fn slack_sync(&self, conversation: &str) -> Result<Option<crate::SlackSync>, StoreError> {
        self.slack_sync_row(conversation).await
    }

    async fn slack_due(&self, limit: u32) -> Result<Vec<crate::SlackDue>, StoreError> {
        self.slack_due_rows(limit).await
    }

    async fn slack_release(&self, conversation: &str, claim: &str) -> Result<(), StoreError> {
        self.slack_release_row(conversation, claim).await
    }

    async fn slack_progress(
        &self,
        conversation: &str,
        claim: &str,
        thread_ts: &str,
        posted: u32,
        part: u32,
    ) -> Result<bool, StoreError> {
        self.slack_progress_row(conversation, claim, thread_ts, posted, part).await
    }

    async fn slack_failed(
        &self,
        conversation: &str,
        claim: &str,
        retry_in: f64,
        error: &str,
    ) -> Result<(), StoreError> {
        self.slack_failed_row(conversation, claim, retry_in, error).await
    }

    async fn begin_follow_up(
        &self,
        conversation: &str,
        lease: std::time::Duration,
    ) -> Result<bool, StoreError> {
        crate::shared::begin_follow_up(&self.db, conversation, lease).await
    }

    async fn end_follow_up(&self, conversation: &str) -> Result<(), StoreError> {
        crate::shared::end_follow_up(&self.db, conversation).await
    }

    async fn changes(&self) -> Result<Changes, StoreError> {
        // Subscribed before listening starts, so nothing heard from then on is missed.
        let changes = self.announcer.subscribe();
        if let Db::Postgres(pool) = &self.db {
            let listen = || postgres::listen(pool.clone(), self.announcer.clone());
            self.listening.get_or_try_init(listen).await?;
        }
        // On SQLite, one file is one server: this process's writes are all there is to hear.
        Ok(changes)
    }

    async fn log_run(
        &self,
        slug: &str,
        version: u32,
        by: Option<&str>,
        run: &Record,
        charge: &Charge,
        reservation: Option<i64>,
    ) -> Result<i64, StoreError> {
        let keep = statement(
            "INSERT INTO runs (started_at, origin, slug, version, run_by, provider, model,
                input_tokens, output_tokens, cost_usd, outcome, record, member, team,
                conversation, turn)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
             RETURNING id",
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
        .bind(Arg::Json(serde_json::to_value(run).unwrap_or_default()))
        .bind(&charge.member)
        .bind(&charge.team)
        .bind(&run.conversation)
        .bind(run.turn.map(i64::from));
        let mut tx = self.db.begin_write().await?;
        // A run's cost moves from held to spent while no reservation counts them.
        tx.lock_budgets().await?;
        let (id,): (i64,) = tx.optional(keep).await?.ok_or(sqlx::Error::RowNotFound)?;
        let owner = (by, charge.member.as_str());
        crate::sql_conversation::keep_turn(&mut tx, slug, version, owner, (id, run)).await?;
        crate::sql_spend::add_to_totals(&mut tx, slug, run, charge).await?;
        if let Some(reservation) = reservation {
            let release = statement("DELETE FROM reservations WHERE id = $1");
            tx.execute(release.bind(reservation)).await?;
        }
        tx.commit().await?;
        Ok(id)
    }

    async fn usage(
        &self,
        by: Grouping,
        since: Option<&str>,
        visible: &Visibility,
    ) -> Result<Vec<Total>, StoreError> {
        // Runs are kept by slug: a run counts when its tool is seen.
        let seen = format!(
            "($2::text IS NULL OR slug IN (SELECT o.slug FROM tools o WHERE {}))",
            self.tagged("o.id", "$2")
        );
        let usage = statement(rows::usage_sql(by, "$1::text", &seen));
        let usage = usage.bind(since).bind(visible.as_words());
        let totals: Vec<rows::TotalRow> = self.db.all(usage).await?;
        Ok(totals.into_iter().map(rows::total).collect())
    }

    async fn create_session(
        &self,
        id_hash: &str,
        opened_for: SessionFor<'_>,
        csrf: &str,
        lifetime: std::time::Duration,
    ) -> Result<(), StoreError> {
        let now = now();
        let mut tx = self.db.begin_write().await?;
        tx.execute(statement("DELETE FROM sessions WHERE expires_at <= $1").bind(&now)).await?;
        let (member, token) = match opened_for {
            SessionFor::Member(email) => (email_key(email)?, None),
            SessionFor::Token(name) => {
                let member = statement("SELECT member FROM tokens WHERE name = $1");
                let found: Option<(Option<String>,)> = tx.optional(member.bind(name)).await?;
                let Some((Some(member),)) = found else {
                    return Err(StoreError::NoSuchToken(name.to_owned()));
                };
                (member, Some(name))
            }
        };
        let open = statement(
            "INSERT INTO sessions (id_hash, member, token_name, csrf, created_at, expires_at)
             VALUES ($1, $2, $3, $4, $5, $6)",
        );
        let open = open.bind(id_hash).bind(&member).bind(token).bind(csrf).bind(&now);
        tx.execute(open.bind(expiry(lifetime))).await?;
        let oldest = statement(
            "DELETE FROM sessions WHERE member = $1 AND id_hash NOT IN
               (SELECT id_hash FROM sessions WHERE member = $1
                ORDER BY created_at DESC, id_hash LIMIT $2)",
        );
        tx.execute(oldest.bind(&member).bind(MAX_SESSIONS)).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn session(&self, id_hash: &str) -> Result<Option<SessionInfo>, StoreError> {
        // A session opened with a token stands for the token (its name, its role under the
        // member's); one opened without stands for the member.
        let session = statement(format!(
            "SELECT COALESCE(t.name, m.email), COALESCE(t.role, m.role), m.role, m.email,
                    COALESCE(m.id, ''), {WORKSPACE}, s.csrf
               FROM sessions s JOIN members m ON m.email = s.member
               LEFT JOIN tokens t ON t.name = s.token_name
             WHERE s.id_hash = $1 AND s.expires_at > $2
               AND (s.token_name IS NULL
                    OR (t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > $2)))"
        ));
        let found: Option<SessionRow> = self.db.optional(session.bind(id_hash).bind(now())).await?;
        let Some((name, role, member_role, email, member_id, built_ins, snapshots, csrf)) = found
        else {
            return Ok(None);
        };
        let row = (name, role, member_role, email, member_id, built_ins, snapshots);
        let holder = self.holder(row).await?;
        Ok(holder.map(|holder| SessionInfo { holder, csrf }))
    }

    async fn open_sessions(&self) -> Result<u64, StoreError> {
        let count = statement("SELECT COUNT(*) FROM sessions WHERE expires_at > $1").bind(now());
        let (open,): (i64,) = self.db.optional(count).await?.unwrap_or((0,));
        Ok(u64::try_from(open).unwrap_or(0))
    }

    async fn delete_session(&self, id_hash: &str) -> Result<(), StoreError> {
        self.db.execute(statement("DELETE FROM sessions WHERE id_hash = $1").bind(id_hash)).await?;
        Ok(())
    }

    async fn runs(
        &self,
        slug: &str,
        limit: u32,
        before: Option<i64>,
        only: Option<RunsOf<'_>>,
    ) -> Result<RunsPage, StoreError> {
        // A page starts in the `(slug, id)` index where the one before ended: a range, so the
        // hundredth page reads what the first does.
        let runs = statement(
            "SELECT id, slug, version, run_by, record::text FROM runs
             WHERE slug = $1 AND id < COALESCE($5, 9223372036854775807)
               AND ($3::text IS NULL OR run_by = $3 OR (member <> '' AND member = $4))
             ORDER BY id DESC LIMIT $2",
        );
        let limit = i64::from(limit.clamp(1, 500));
        let (run_by, member) = only.map(|o| (o.run_by, o.member)).unzip();
        let runs = runs.bind(slug).bind(limit).bind(run_by).bind(member.unwrap_or_default());
        let runs = runs.bind(before);
        let found: Vec<rows::RunRow> = self.db.all(runs).await?;
        let next =
            found.last().filter(|_| i64::try_from(found.len()) == Ok(limit)).map(|row| row.0);
        Ok(RunsPage { runs: found.into_iter().filter_map(rows::kept_run).collect(), next })
    }

    async fn tags(&self, visible: &Visibility) -> Result<Vec<TagCount>, StoreError> {
        let tags = statement(format!(
            "SELECT g.tag, COUNT(*) AS tools FROM tags g JOIN tools t ON t.id = g.tool_id
             WHERE t.deleted_at IS NULL AND ($1::text IS NULL OR {})
             GROUP BY g.tag ORDER BY tools DESC, g.tag COLLATE \"C\"",
            self.tagged("t.id", "$1")
        ));
        let found: Vec<(String, i64)> = self.db.all(tags.bind(visible.as_words())).await?;
        Ok(found.into_iter().map(rows::tag_count).collect())
    }

    async fn tags_of_tools(&self) -> Result<Vec<(String, String)>, StoreError> {
        let tags = statement(
            "SELECT t.slug, g.tag FROM tags g JOIN tools t ON t.id = g.tool_id
             WHERE t.deleted_at IS NULL ORDER BY t.slug COLLATE \"C\", g.tag COLLATE \"C\"",
        );
        Ok(self.db.all(tags).await?)
    }

    async fn tags_of(&self, slug: &str) -> Result<Option<Vec<String>>, StoreError> {
        let sql = "SELECT id FROM tools WHERE slug = $1";
        let Some((id,)) = self.db.optional::<(i64,)>(statement(sql).bind(slug)).await? else {
            return Ok(None);
        };
        let sql = "SELECT tag FROM tags WHERE tool_id = $1 ORDER BY tag COLLATE \"C\"";
        let tags: Vec<(String,)> = self.db.all(statement(sql).bind(id)).await?;
        Ok(Some(tags.into_iter().map(|(tag,)| tag).collect()))
    }

    async fn current(&self, label: Option<&str>) -> Result<Vec<(String, u32, String)>, StoreError> {
        let current = statement(
            "SELECT t.slug, v.number, v.body FROM tools t JOIN versions v ON v.tool_id = t.id
               AND v.number = CASE WHEN $1::text IS NULL THEN t.latest
                 ELSE (SELECT number FROM labels l WHERE l.tool_id = t.id AND l.label = $1) END
             WHERE t.deleted_at IS NULL ORDER BY t.slug COLLATE \"C\"",
        );
        let found: Vec<(String, i64, String)> = self.db.all(current.bind(label)).await?;
        Ok(found
            .into_iter()
            .map(|(slug, number, text)| (slug, u32::try_from(number).unwrap_or(0), text))
            .collect())
    }
}

/// What a token whose role is `token` may do, its member's role being `member`: the lower of
/// the two, since a token never has more rights than its member.
/// The workspace's settings (`built_ins`, `public_snapshots`), as two columns of a row.
pub(crate) const WORKSPACE: &str = "(SELECT value FROM settings WHERE name = 'built_ins'),
    (SELECT value FROM settings WHERE name = 'public_snapshots')";

/// A holder's row: the token's name (or the member's e-mail), the token's role (or the
/// member's), the member's role, e-mail, id, and the workspace's settings ([`WORKSPACE`]).
pub(crate) type HolderRow =
    (String, String, String, String, String, Option<String>, Option<String>);

/// A session's row: its holder's ([`HolderRow`]), then its CSRF token.
type SessionRow = (String, String, String, String, String, Option<String>, Option<String>, String);

impl SqlStore {
    /// The holder of a row, with their member's teams; `None` when a role is unknown.
    async fn holder(&self, row: HolderRow) -> Result<Option<Holder>, StoreError> {
        let (name, role, member_role, member, member_id, built_ins, snapshots) = row;
        let Some(role) = capped(&role, &member_role) else { return Ok(None) };
        let teams = self.teams_of(&member).await?;
        let workspace = crate::Workspace::from_settings(built_ins.as_deref(), snapshots.as_deref());
        Ok(Some(Holder { name, role, member, member_id, teams, workspace }))
    }
}

impl SqlStore {
    /// Tags the new tool `id` with `tags` (each a good name, at most [`MAX_TAGS`]), and with
    /// `all` when none of them is a team's or `all` is asked for: a tool published for a team
    /// is that team's alone until curated for more.
    async fn first_tags(
        &self,
        tx: &mut Tx,
        id: i64,
        slug: &str,
        tags: &[String],
    ) -> Result<(), StoreError> {
        let mut tags: Vec<&str> = tags.iter().map(String::as_str).collect();
        tags.sort_unstable();
        tags.dedup();
        for tag in &tags {
            check_name(tag)?;
        }
        if tags.len() > MAX_TAGS as usize {
            return Err(StoreError::TooMany { slug: slug.to_owned(), what: "tags", max: MAX_TAGS });
        }
        let mut teams = 0;
        for tag in &tags {
            let team = statement("SELECT COUNT(*) FROM teams WHERE name = $1").bind(*tag);
            let (found,): (i64,) = tx.optional(team).await?.unwrap_or((0,));
            teams += found;
        }
        if teams == 0 && !tags.contains(&ALL) {
            tags.push(ALL);
        }
        for tag in tags {
            let add =
                statement("INSERT INTO tags (tool_id, tag) VALUES ($1, $2) ON CONFLICT DO NOTHING");
            tx.execute(add.bind(id).bind(tag)).await?;
        }
        Ok(())
    }
}

/// The tags of the tool `id`, in order.
async fn tags_in(tx: &mut Tx, id: i64) -> Result<Vec<String>, StoreError> {
    let tags = statement("SELECT tag FROM tags WHERE tool_id = $1 ORDER BY tag COLLATE \"C\"");
    let found: Vec<(String,)> = tx.all(tags.bind(id)).await?;
    Ok(found.into_iter().map(|(tag,)| tag).collect())
}

fn capped(token: &str, member: &str) -> Option<Role> {
    Some(Role::parse(token)?.min(Role::parse(member)?))
}
