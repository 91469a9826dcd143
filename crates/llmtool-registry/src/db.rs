//! [`Db`]: the library's database on either backend, and the few ways the store's logic speaks
//! to it, so that the logic is written once ([`crate::sql_store`]) and each backend keeps only
//! what is its own (`sqlite.rs`, `postgres.rs`).
//!
//! Statements are written in PostgreSQL's syntax. SQLite gets them rewritten by
//! [`for_sqlite`], a rewrite with three rules that hold for every statement here: `$N` is
//! `?N`; a cast (`$1::text`, `record::text`) is dropped, since SQLite's columns take any value
//! and its `NULL` needs no type; and `COLLATE "C"` is dropped, since SQLite compares text
//! byte by byte already. Values are bound as [`Arg`]s, which say what a value is rather than
//! how a backend stores it: a list of words is a `TEXT[]` in PostgreSQL and `' a b '` in
//! SQLite, where `instr` finds a word.

use std::borrow::Cow;

use sqlx::postgres::{PgArguments, PgPool, PgRow, Postgres};
use sqlx::sqlite::{Sqlite, SqliteArguments, SqlitePool, SqliteRow};
use sqlx::{Arguments as _, FromRow};
use tracing::Instrument as _;

/// A pool of connections to the library's database.
#[derive(Debug, Clone)]
pub(crate) enum Db {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// A transaction on the library's database; dropped without [`Tx::commit`], it rolls back.
pub(crate) enum Tx {
    Sqlite(sqlx::Transaction<'static, Sqlite>),
    Postgres(sqlx::Transaction<'static, Postgres>),
}

/// A value bound to a statement.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Arg {
    Int(Option<i64>),
    Real(Option<f64>),
    Bool(Option<bool>),
    Text(Option<String>),
    /// Words a query looks one up in (`TEXT[]`; in SQLite, each between spaces).
    Words(Vec<String>),
    /// A list kept whole (`TEXT[]`; in SQLite, a JSON array).
    List(Vec<String>),
    /// A JSON document (`JSONB`; in SQLite, its text).
    Json(serde_json::Value),
    /// Bytes kept as they are (`BYTEA`; in SQLite, a `BLOB`).
    Bytes(Vec<u8>),
}

/// A statement and its values, `$1` first.
#[derive(Debug, Clone)]
pub(crate) struct Statement {
    sql: Cow<'static, str>,
    args: Vec<Arg>,
}

impl Statement {
    /// SQLite's plan of this statement (`EXPLAIN QUERY PLAN`): its rows' last column says
    /// each step, and which index it uses.
    #[cfg(test)]
    pub(crate) fn query_plan(self) -> Statement {
        Statement { sql: format!("EXPLAIN QUERY PLAN {}", self.sql).into(), ..self }
    }

    /// The span of running this statement on `system` (`sqlite`, `postgresql`): a client
    /// span named by its operation, with its text (which holds no value: they are bound).
    fn span(&self, system: &'static str) -> tracing::Span {
        let operation = self.sql.split_whitespace().next().unwrap_or("query").to_ascii_uppercase();
        tracing::info_span!(
            "db",
            otel.name = %format!("{operation} {system}"),
            otel.kind = "client",
            db.system.name = system,
            db.operation.name = %operation,
            db.query.text = %self.sql,
        )
    }
}

/// `sql` with no values yet.
pub(crate) fn statement(sql: impl Into<Cow<'static, str>>) -> Statement {
    Statement { sql: sql.into(), args: Vec::new() }
}

impl Statement {
    /// The statement with `value` as its next parameter.
    #[must_use]
    pub(crate) fn bind(mut self, value: impl Into<Arg>) -> Statement {
        self.args.push(value.into());
        self
    }

    fn sqlite(&self) -> Result<(String, SqliteArguments<'static>), sqlx::Error> {
        let mut arguments = SqliteArguments::default();
        for arg in &self.args {
            match arg.clone() {
                Arg::Int(value) => arguments.add(value),
                Arg::Real(value) => arguments.add(value),
                Arg::Bool(value) => arguments.add(value),
                Arg::Text(value) => arguments.add(value),
                Arg::Words(words) => arguments.add(format!(" {} ", words.join(" "))),
                Arg::List(items) => arguments.add(serde_json::Value::from(items).to_string()),
                Arg::Json(value) => arguments.add(value.to_string()),
                Arg::Bytes(value) => arguments.add(value),
            }
            .map_err(sqlx::Error::Encode)?;
        }
        Ok((for_sqlite(&self.sql), arguments))
    }

    fn postgres(&self) -> Result<(&str, PgArguments), sqlx::Error> {
        let mut arguments = PgArguments::default();
        for arg in &self.args {
            match arg.clone() {
                Arg::Int(value) => arguments.add(value),
                Arg::Real(value) => arguments.add(value),
                Arg::Bool(value) => arguments.add(value),
                Arg::Text(value) => arguments.add(value),
                Arg::Words(items) | Arg::List(items) => arguments.add(items),
                Arg::Json(value) => arguments.add(sqlx::types::Json(value)),
                Arg::Bytes(value) => arguments.add(value),
            }
            .map_err(sqlx::Error::Encode)?;
        }
        Ok((&self.sql, arguments))
    }
}

/// A row that reads the same from both backends: a tuple of integers, reals, text,
/// booleans and bytes, or one of those alone as `(T,)`.
pub(crate) trait Decoded:
    for<'r> FromRow<'r, SqliteRow> + for<'r> FromRow<'r, PgRow> + Send + Unpin
{
}

impl<T> Decoded for T where
    T: for<'r> FromRow<'r, SqliteRow> + for<'r> FromRow<'r, PgRow> + Send + Unpin
{
}

impl Db {
    /// The database's name in OpenTelemetry's conventions.
    fn system(&self) -> &'static str {
        match self {
            Db::Sqlite(_) => "sqlite",
            Db::Postgres(_) => "postgresql",
        }
    }

    /// How the pool's connections are used now.
    pub(crate) fn pool_use(&self) -> crate::PoolUse {
        fn of<D: sqlx::Database>(pool: &sqlx::Pool<D>) -> crate::PoolUse {
            crate::PoolUse {
                open: pool.size(),
                idle: u32::try_from(pool.num_idle()).unwrap_or(u32::MAX),
                max: pool.options().get_max_connections(),
            }
        }
        match self {
            Db::Sqlite(pool) => of(pool),
            Db::Postgres(pool) => of(pool),
        }
    }

    /// Runs `statement`; how many rows it changed.
    pub(crate) async fn execute(&self, statement: Statement) -> Result<u64, sqlx::Error> {
        let span = statement.span(self.system());
        let done = async move {
            Ok::<_, sqlx::Error>(match self {
                Db::Sqlite(pool) => {
                    let (sql, arguments) = statement.sqlite()?;
                    sqlx::query_with(&sql, arguments).execute(pool).await?.rows_affected()
                }
                Db::Postgres(pool) => {
                    let (sql, arguments) = statement.postgres()?;
                    sqlx::query_with(sql, arguments).execute(pool).await?.rows_affected()
                }
            })
        }
        .instrument(span)
        .await?;
        Ok(done)
    }

    /// The rows of `statement`.
    pub(crate) async fn all<T: Decoded>(
        &self,
        statement: Statement,
    ) -> Result<Vec<T>, sqlx::Error> {
        let span = statement.span(self.system());
        async move {
            match self {
                Db::Sqlite(pool) => {
                    let (sql, arguments) = statement.sqlite()?;
                    sqlx::query_as_with(&sql, arguments).fetch_all(pool).await
                }
                Db::Postgres(pool) => {
                    let (sql, arguments) = statement.postgres()?;
                    sqlx::query_as_with(sql, arguments).fetch_all(pool).await
                }
            }
        }
        .instrument(span)
        .await
    }

    /// The first row of `statement`, if any.
    pub(crate) async fn optional<T: Decoded>(
        &self,
        statement: Statement,
    ) -> Result<Option<T>, sqlx::Error> {
        let span = statement.span(self.system());
        async move {
            match self {
                Db::Sqlite(pool) => {
                    let (sql, arguments) = statement.sqlite()?;
                    sqlx::query_as_with(&sql, arguments).fetch_optional(pool).await
                }
                Db::Postgres(pool) => {
                    let (sql, arguments) = statement.postgres()?;
                    sqlx::query_as_with(sql, arguments).fetch_optional(pool).await
                }
            }
        }
        .instrument(span)
        .await
    }

    /// A transaction that only reads: what it reads is one moment's (SQLite's read
    /// transaction; on PostgreSQL, `REPEATABLE READ`, whose snapshot is taken at the first
    /// statement and kept to the end).
    pub(crate) async fn begin_read(&self) -> Result<Tx, sqlx::Error> {
        Ok(match self {
            Db::Sqlite(pool) => Tx::Sqlite(pool.begin().await?),
            Db::Postgres(pool) => Tx::Postgres(
                pool.begin_with("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY").await?,
            ),
        })
    }

    /// A transaction that will write. On SQLite it takes the write lock at once (`BEGIN
    /// IMMEDIATE`), so that writers queue for it rather than fail on taking it later; on
    /// PostgreSQL, rows are locked as the writes need ([`Tx::lock_tool`]).
    pub(crate) async fn begin_write(&self) -> Result<Tx, sqlx::Error> {
        Ok(match self {
            Db::Sqlite(pool) => Tx::Sqlite(pool.begin_with("BEGIN IMMEDIATE").await?),
            Db::Postgres(pool) => Tx::Postgres(pool.begin().await?),
        })
    }
}

impl Tx {
    fn system(&self) -> &'static str {
        match self {
            Tx::Sqlite(_) => "sqlite",
            Tx::Postgres(_) => "postgresql",
        }
    }

    /// Runs `statement` in the transaction; how many rows it changed.
    pub(crate) async fn execute(&mut self, statement: Statement) -> Result<u64, sqlx::Error> {
        let span = statement.span(self.system());
        async move {
            Ok(match self {
                Tx::Sqlite(tx) => {
                    let (sql, arguments) = statement.sqlite()?;
                    sqlx::query_with(&sql, arguments).execute(&mut **tx).await?.rows_affected()
                }
                Tx::Postgres(tx) => {
                    let (sql, arguments) = statement.postgres()?;
                    sqlx::query_with(sql, arguments).execute(&mut **tx).await?.rows_affected()
                }
            })
        }
        .instrument(span)
        .await
    }

    /// Every row of `statement` in the transaction.
    pub(crate) async fn all<T: Decoded>(
        &mut self,
        statement: Statement,
    ) -> Result<Vec<T>, sqlx::Error> {
        let span = statement.span(self.system());
        async move {
            match self {
                Tx::Sqlite(tx) => {
                    let (sql, arguments) = statement.sqlite()?;
                    sqlx::query_as_with(&sql, arguments).fetch_all(&mut **tx).await
                }
                Tx::Postgres(tx) => {
                    let (sql, arguments) = statement.postgres()?;
                    sqlx::query_as_with(sql, arguments).fetch_all(&mut **tx).await
                }
            }
        }
        .instrument(span)
        .await
    }

    /// The first row of `statement` in the transaction, if any.
    pub(crate) async fn optional<T: Decoded>(
        &mut self,
        statement: Statement,
    ) -> Result<Option<T>, sqlx::Error> {
        let span = statement.span(self.system());
        async move {
            match self {
                Tx::Sqlite(tx) => {
                    let (sql, arguments) = statement.sqlite()?;
                    sqlx::query_as_with(&sql, arguments).fetch_optional(&mut **tx).await
                }
                Tx::Postgres(tx) => {
                    let (sql, arguments) = statement.postgres()?;
                    sqlx::query_as_with(sql, arguments).fetch_optional(&mut **tx).await
                }
            }
        }
        .instrument(span)
        .await
    }

    /// Locks the tool `id` until the transaction ends, so that writes to it at once (tags
    /// added past the cap together, say) take turns: PostgreSQL locks its row; SQLite's write
    /// lock, taken at the start, covers it.
    pub(crate) async fn lock_tool(&mut self, id: i64) -> Result<(), sqlx::Error> {
        if let Tx::Postgres(_) = self {
            self.execute(statement("SELECT id FROM tools WHERE id = $1 FOR UPDATE").bind(id))
                .await?;
        }
        Ok(())
    }

    /// Makes changes to members, teams and tokens take turns until the transaction ends, so
    /// that two at once cannot, say, each demote one of the last two owners: PostgreSQL takes
    /// a lock of the transaction's; SQLite's write lock, taken at the start, covers it.
    pub(crate) async fn lock_people(&mut self) -> Result<(), sqlx::Error> {
        if let Tx::Postgres(_) = self {
            // Any number the library uses for nothing else.
            self.execute(statement("SELECT pg_advisory_xact_lock(7411850)")).await?;
        }
        Ok(())
    }

    /// Holds conversation `id`'s row until the transaction ends (an update that changes
    /// nothing, on both databases), so that what counts its collaborators or snapshots and
    /// then adds one takes turns with any other; whether there is such a conversation.
    pub(crate) async fn lock_conversation(&mut self, id: &str) -> Result<bool, sqlx::Error> {
        let hold = statement("UPDATE conversations SET id = id WHERE id = $1").bind(id);
        Ok(self.execute(hold).await? > 0)
    }

    /// Makes budget reservations take turns until the transaction ends, so that two runs cannot
    /// both take the last of a budget: PostgreSQL takes a lock of the transaction's; SQLite's
    /// write lock, taken at the start, covers it.
    pub(crate) async fn lock_budgets(&mut self) -> Result<(), sqlx::Error> {
        if let Tx::Postgres(_) = self {
            self.execute(statement("SELECT pg_advisory_xact_lock(7411851)")).await?;
        }
        Ok(())
    }

    /// Commits the transaction, a change to the tool `slug`. On PostgreSQL, every server
    /// listening hears of it when (and only if) it commits.
    pub(crate) async fn commit_change(self, slug: &str) -> Result<(), sqlx::Error> {
        self.commit_changes(&[slug]).await
    }

    /// [`Tx::commit_change`] for a change to each of the tools `slugs`.
    pub(crate) async fn commit_changes(
        mut self,
        slugs: &[impl AsRef<str>],
    ) -> Result<(), sqlx::Error> {
        if let Tx::Postgres(_) = self {
            for slug in slugs {
                let notify = statement("SELECT pg_notify($1, $2)").bind(crate::changes::CHANNEL);
                self.execute(notify.bind(slug.as_ref())).await?;
            }
        }
        self.commit().await
    }

    pub(crate) async fn commit(self) -> Result<(), sqlx::Error> {
        match self {
            Tx::Sqlite(tx) => tx.commit().await,
            Tx::Postgres(tx) => tx.commit().await,
        }
    }
}

pub(crate) use llmtool_log::sql::for_sqlite;

impl From<i64> for Arg {
    fn from(value: i64) -> Arg {
        Arg::Int(Some(value))
    }
}

impl From<Option<i64>> for Arg {
    fn from(value: Option<i64>) -> Arg {
        Arg::Int(value)
    }
}

impl From<f64> for Arg {
    fn from(value: f64) -> Arg {
        Arg::Real(Some(value))
    }
}

impl From<bool> for Arg {
    fn from(value: bool) -> Arg {
        Arg::Bool(Some(value))
    }
}

impl From<Option<bool>> for Arg {
    fn from(value: Option<bool>) -> Arg {
        Arg::Bool(value)
    }
}

impl From<Option<f64>> for Arg {
    fn from(value: Option<f64>) -> Arg {
        Arg::Real(value)
    }
}

impl From<&str> for Arg {
    fn from(value: &str) -> Arg {
        Arg::Text(Some(value.to_owned()))
    }
}

impl From<String> for Arg {
    fn from(value: String) -> Arg {
        Arg::Text(Some(value))
    }
}

impl From<&String> for Arg {
    fn from(value: &String) -> Arg {
        Arg::Text(Some(value.clone()))
    }
}

impl From<Option<&str>> for Arg {
    fn from(value: Option<&str>) -> Arg {
        Arg::Text(value.map(str::to_owned))
    }
}

impl From<Option<String>> for Arg {
    fn from(value: Option<String>) -> Arg {
        Arg::Text(value)
    }
}

impl From<&[u8]> for Arg {
    fn from(value: &[u8]) -> Arg {
        Arg::Bytes(value.to_vec())
    }
}

impl From<&Option<String>> for Arg {
    fn from(value: &Option<String>) -> Arg {
        Arg::Text(value.clone())
    }
}
