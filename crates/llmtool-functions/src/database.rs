//! `query_database`: one SQL statement run on a database the operator named, read-only by the
//! database's own rule (a PostgreSQL `READ ONLY` transaction, always rolled back; a SQLite
//! file opened read-only), with a statement timeout and a cap on the rows; and the schema of
//! its tables, for the model to ask for first (`database_schema`).

use std::fmt::Write as _;
use std::str::FromStr as _;
use std::time::Duration;

use futures_util::TryStreamExt as _;
use std::sync::Arc;

use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions, PgRow};
use sqlx::sqlite::{SqliteConnectOptions, SqlitePool, SqlitePoolOptions, SqliteRow};
use sqlx::{Column as _, Row as _, TypeInfo as _, ValueRef as _};
use tokio::sync::OnceCell;

/// How much one query may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueryLimits {
    /// Rows given to the model; more are counted, not shown.
    pub rows: u32,
    pub time: Duration,
    /// Characters of one value shown.
    pub value_chars: usize,
}

impl Default for QueryLimits {
    fn default() -> Self {
        QueryLimits { rows: 200, time: Duration::from_secs(10), value_chars: 500 }
    }
}

/// A database a run may query. Its connections are made on first use (from a runtime's
/// tasks), and shared by its clones.
#[derive(Debug, Clone)]
pub struct Database {
    name: String,
    options: Options,
    pool: Arc<OnceCell<Pool>>,
    pub limits: QueryLimits,
}

#[derive(Debug, Clone)]
enum Options {
    Postgres(PgConnectOptions),
    Sqlite(SqliteConnectOptions),
}

#[derive(Debug, Clone)]
enum Pool {
    Postgres(PgPool),
    Sqlite(SqlitePool),
}

/// The query that lists a PostgreSQL database's columns, table by table.
const POSTGRES_SCHEMA: &str = "SELECT table_schema || '.' || table_name, column_name, data_type \
    FROM information_schema.columns \
    WHERE table_schema NOT IN ('pg_catalog', 'information_schema') \
    ORDER BY table_schema, table_name, ordinal_position";

/// The query that lists a SQLite database's columns, table by table.
const SQLITE_SCHEMA: &str = "SELECT m.name, p.name, p.type \
    FROM sqlite_master AS m JOIN pragma_table_info(m.name) AS p \
    WHERE m.type IN ('table', 'view') AND m.name NOT LIKE 'sqlite_%' \
    ORDER BY m.name, p.cid";

impl Database {
    /// The database `name` at `url` (`postgres://...`, `sqlite:PATH`); connected on first use,
    /// so a database that is down fails the calls, not the run.
    pub fn open(name: &str, url: &str, limits: QueryLimits) -> Result<Database, String> {
        let options = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Options::Postgres(
                PgConnectOptions::from_str(url)
                    .map_err(|_| format!("the URL of database `{name}` cannot be read"))?
                    .application_name("llmtool query_database"),
            )
        } else if url.starts_with("sqlite:") {
            Options::Sqlite(
                SqliteConnectOptions::from_str(url)
                    .map_err(|_| format!("the URL of database `{name}` cannot be read"))?
                    .read_only(true)
                    .create_if_missing(false),
            )
        } else {
            return Err(format!(
                "database `{name}`: only postgres:// and sqlite: URLs are read (MySQL is not served)"
            ));
        };
        Ok(Database { name: name.to_owned(), options, pool: Arc::default(), limits })
    }

    /// The pool, made on first use.
    async fn pool(&self) -> &Pool {
        let time = self.limits.time;
        self.pool
            .get_or_init(|| async {
                match &self.options {
                    Options::Postgres(options) => Pool::Postgres(
                        PgPoolOptions::new()
                            .max_connections(2)
                            .acquire_timeout(time)
                            .connect_lazy_with(options.clone()),
                    ),
                    Options::Sqlite(options) => Pool::Sqlite(
                        SqlitePoolOptions::new()
                            .max_connections(2)
                            .acquire_timeout(time)
                            .connect_lazy_with(options.clone()),
                    ),
                }
            })
            .await
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Which engine it is, for the model (`PostgreSQL`, `SQLite`).
    pub fn engine(&self) -> &'static str {
        match self.options {
            Options::Postgres(_) => "PostgreSQL",
            Options::Sqlite(_) => "SQLite",
        }
    }

    /// The rows `sql` gives, as a text table; or the database's own refusal.
    pub async fn query(&self, sql: &str) -> Result<String, String> {
        let limits = self.limits;
        let rows = tokio::time::timeout(limits.time, self.rows(sql));
        let (columns, rows, more) = rows.await.map_err(|_| {
            format!("the query ran longer than {} s and was stopped", limits.time.as_secs())
        })??;
        Ok(table(&columns, &rows, more, limits.rows))
    }

    /// The tables and their columns.
    pub async fn schema(&self) -> Result<String, String> {
        let sql = match self.options {
            Options::Postgres(_) => POSTGRES_SCHEMA,
            Options::Sqlite(_) => SQLITE_SCHEMA,
        };
        let (_, rows, _) = tokio::time::timeout(self.limits.time, self.rows_up_to(sql, 5_000))
            .await
            .map_err(|_| "reading the schema took too long".to_owned())??;
        let mut out = format!("{} database `{}`:\n", self.engine(), self.name);
        let mut table_name = None;
        for row in &rows {
            let [table, column, kind] = [0, 1, 2].map(|i| row.get(i).cloned().flatten());
            if table != table_name {
                let _ = write!(out, "\ntable {}:", table.as_deref().unwrap_or("?"));
                table_name = table;
            }
            let _ = write!(
                out,
                "\n  {} {}",
                column.as_deref().unwrap_or("?"),
                kind.as_deref().unwrap_or("")
            );
        }
        if rows.is_empty() {
            out.push_str("(no tables)");
        }
        Ok(out)
    }

    async fn rows(&self, sql: &str) -> Result<Rows, String> {
        self.rows_up_to(sql, self.limits.rows as usize).await
    }

    /// The columns, the first `cap` rows of `sql` (each value as text, `None` for NULL), and
    /// whether there were more.
    async fn rows_up_to(&self, sql: &str, cap: usize) -> Result<Rows, String> {
        let refused = |e: sqlx::Error| self.refusal(&e);
        let unreachable = |e: sqlx::Error| self.unreachable(&e);
        match self.pool().await {
            Pool::Postgres(pool) => {
                self.check_role(pool).await?;
                let mut transaction = pool.begin().await.map_err(unreachable)?;
                // The database refuses every write in this transaction, and nothing it did
                // outlives it: it is rolled back whatever the statement was.
                sqlx::query("SET TRANSACTION READ ONLY")
                    .execute(&mut *transaction)
                    .await
                    .map_err(refused)?;
                let timeout =
                    format!("SET LOCAL statement_timeout = {}", self.limits.time.as_millis());
                sqlx::query(&timeout).execute(&mut *transaction).await.map_err(refused)?;
                let stream = sqlx::query(sql).persistent(false).fetch(&mut *transaction);
                let most = self.limits.value_chars;
                let read = first_rows(stream, cap, |row| postgres_values(row, most)).await;
                let (columns, rows, more) = read.map_err(refused)?;
                transaction.rollback().await.map_err(refused)?;
                // Session-level advisory locks outlive the rollback: none is kept for the next
                // query on this connection.
                sqlx::query("SELECT pg_advisory_unlock_all()")
                    .execute(pool)
                    .await
                    .map_err(refused)?;
                Ok((columns, rows, more))
            }
            Pool::Sqlite(pool) => {
                let mut connection = pool.acquire().await.map_err(unreachable)?;
                // SQLite has no statement timeout: the statement is interrupted once the time is
                // up (checked every few thousand steps of its program), computing or not.
                let deadline = std::time::Instant::now() + self.limits.time;
                let mut handle = connection.lock_handle().await.map_err(unreachable)?;
                handle.set_progress_handler(4096, move || std::time::Instant::now() < deadline);
                no_attached_databases(&mut handle);
                drop(handle);
                let stream = sqlx::query(sql).persistent(false).fetch(&mut *connection);
                let most = self.limits.value_chars;
                first_rows(stream, cap, |row| sqlite_values(row, most)).await.map_err(refused)
            }
        }
    }

    /// Refuses a role that could reach past the database: a superuser, or a member of the
    /// roles that run programs or read and write the server's files (a read-only transaction
    /// does not stop `COPY ... TO PROGRAM` or `pg_read_file`).
    async fn check_role(&self, pool: &PgPool) -> Result<(), String> {
        const PRIVILEGED: &str = "SELECT rolsuper
                OR pg_has_role(current_user, 'pg_execute_server_program', 'member')
                OR pg_has_role(current_user, 'pg_read_server_files', 'member')
                OR pg_has_role(current_user, 'pg_write_server_files', 'member')
            FROM pg_roles WHERE rolname = current_user";
        let privileged: bool = sqlx::query_scalar(PRIVILEGED)
            .fetch_one(pool)
            .await
            .map_err(|e| self.unreachable(&e))?;
        if privileged {
            return Err(format!(
                "database `{}` is reached as a superuser, or a role that may run programs or read the server's files: give query_database a role of its own that may only read",
                self.name
            ));
        }
        Ok(())
    }

    /// What the model reads when the database cannot be reached or opened.
    fn unreachable(&self, error: &sqlx::Error) -> String {
        let reason = match error {
            sqlx::Error::Database(error) => error.message().to_owned(),
            sqlx::Error::PoolTimedOut => "no connection in time".to_owned(),
            other => other.to_string(),
        };
        format!("database `{}` cannot be reached: {reason}", self.name)
    }

    /// What the model reads when the database refused: the database's own words (never the
    /// URL, which may hold a password).
    fn refusal(&self, error: &sqlx::Error) -> String {
        match error {
            sqlx::Error::Database(error) => {
                format!("{} refused the statement: {}", self.engine(), error.message())
            }
            other => self.unreachable(other),
        }
    }
}

/// Lets the connection attach no other database: the file opened read-only is the only one a
/// statement reads (`ATTACH` of another file, and `VACUUM INTO`, which attaches its target,
/// are refused by SQLite).
#[allow(unsafe_code, reason = "one call of SQLite's C API, which sqlx does not wrap")]
fn no_attached_databases(handle: &mut sqlx::sqlite::LockedSqliteHandle<'_>) {
    let database = handle.as_raw_handle().as_ptr();
    // SAFETY: `database` is the open connection the locked handle holds for this scope, and
    // `sqlite3_limit` only sets a limit of it.
    unsafe {
        libsqlite3_sys::sqlite3_limit(database, libsqlite3_sys::SQLITE_LIMIT_ATTACHED, 0);
    }
}

/// Column names, rows of values as text (`None` for NULL), and whether rows were left out.
type Rows = (Vec<String>, Vec<Vec<Option<String>>>, bool);

/// The columns and the first `cap` rows of `stream` (each as `values` writes it), and
/// whether there were more: the one reading of a query's answer, whatever the engine.
async fn first_rows<R: sqlx::Row>(
    mut stream: futures_util::stream::BoxStream<'_, Result<R, sqlx::Error>>,
    cap: usize,
    values: impl Fn(&R) -> Vec<Option<String>>,
) -> Result<Rows, sqlx::Error> {
    let (mut columns, mut rows) = (Vec::new(), Vec::new());
    while let Some(row) = stream.try_next().await? {
        if columns.is_empty() {
            columns = row.columns().iter().map(|c| c.name().to_owned()).collect();
        }
        if rows.len() == cap {
            return Ok((columns, rows, true));
        }
        rows.push(values(&row));
    }
    Ok((columns, rows, false))
}

/// A PostgreSQL row's values as text, whatever their types (the statement's, which llmtool
/// does not know beforehand).
fn postgres_values(row: &PgRow, most: usize) -> Vec<Option<String>> {
    (0..row.len())
        .map(|index| {
            let value = row.try_get_raw(index).ok()?;
            if value.is_null() {
                return None;
            }
            let kind = value.type_info().name().to_owned();
            let bytes = value.as_bytes().unwrap_or_default();
            Some(cut(crate::postgres_text::text(&kind, bytes), most))
        })
        .collect()
}

/// A SQLite row's values as text.
fn sqlite_values(row: &SqliteRow, most: usize) -> Vec<Option<String>> {
    (0..row.len())
        .map(|index| {
            let value = row.try_get_raw(index).ok()?;
            if value.is_null() {
                return None;
            }
            let kind = value.type_info().name().to_owned();
            let text = match kind.as_str() {
                "INTEGER" => row.try_get_unchecked::<i64, _>(index).ok()?.to_string(),
                "REAL" => row.try_get_unchecked::<f64, _>(index).ok()?.to_string(),
                "BLOB" => {
                    let bytes = row.try_get_unchecked::<Vec<u8>, _>(index).ok()?;
                    crate::postgres_text::hex(&bytes)
                }
                _ => row.try_get_unchecked::<String, _>(index).ok()?,
            };
            Some(cut(text, most))
        })
        .collect()
}

fn cut(mut text: String, most: usize) -> String {
    if let Some((edge, _)) = text.char_indices().nth(most) {
        text.truncate(edge);
        text.push('…');
    }
    text
}

/// Rows as the model reads them: the columns, then a row a line, values apart by ` | `.
fn table(columns: &[String], rows: &[Vec<Option<String>>], more: bool, cap: u32) -> String {
    if columns.is_empty() {
        return "(0 rows)".to_owned();
    }
    let mut out = columns.join(" | ");
    for row in rows {
        out.push('\n');
        let values: Vec<&str> = row.iter().map(|v| v.as_deref().unwrap_or("NULL")).collect();
        out.push_str(&values.join(" | "));
    }
    let count = rows.len();
    let _ = write!(out, "\n({count} row{})", if count == 1 { "" } else { "s" });
    if more {
        let _ = write!(out, " (more rows were left out: at most {cap} are shown)");
    }
    out
}
