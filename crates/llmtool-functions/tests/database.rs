//! `query_database` on the sample shop (examples/data/shop.sql), in PostgreSQL and in SQLite:
//! rows given as a table, a write refused by the database itself and changing nothing, a
//! statement stopped at its timeout, rows capped, and the schema on request.

use std::time::Duration;

use llmtool_functions::{Database, QueryLimits};
use sqlx::Connection as _;

const SHOP: &str = include_str!("../../../examples/data/shop.sql");

/// The sample shop in a database of the test's own, and the URL of a role that may only read
/// it (the test cluster's own role is a superuser, which `query_database` refuses).
async fn postgres_shop_url() -> Option<(llmtool_testkit::postgres::TestDatabase, String)> {
    let database = llmtool_testkit::postgres::database().await?;
    let mut connection = sqlx::PgConnection::connect(&database.url).await.unwrap();
    sqlx::raw_sql(SHOP).execute(&mut connection).await.unwrap();
    let role = database.url.rsplit('/').next().unwrap().replace("llmtool_test", "reader");
    let grant =
        format!("CREATE ROLE {role} LOGIN; GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}");
    sqlx::raw_sql(&grant).execute(&mut connection).await.unwrap();
    let url = database.url.replacen("llmtool@", &format!("{role}@"), 1);
    Some((database, url))
}

async fn postgres_shop() -> Option<(llmtool_testkit::postgres::TestDatabase, Database)> {
    let (database, url) = postgres_shop_url().await?;
    let shop = Database::open("shop", &url, QueryLimits::default()).unwrap();
    Some((database, shop))
}

async fn sqlite_shop(folder: &std::path::Path) -> Database {
    let path = folder.join("shop.db");
    let url = format!("sqlite:{}", path.display());
    let options = sqlx::sqlite::SqliteConnectOptions::new().filename(&path).create_if_missing(true);
    let mut connection = sqlx::SqliteConnection::connect_with(&options).await.unwrap();
    sqlx::raw_sql(SHOP).execute(&mut connection).await.unwrap();
    connection.close().await.unwrap();
    Database::open("shop", &url, QueryLimits::default()).unwrap()
}

const TOP_CUSTOMER: &str = "SELECT c.name, SUM(o.quantity * p.price) AS spent \
    FROM orders o JOIN customers c ON c.id = o.customer_id JOIN products p ON p.id = o.product_id \
    GROUP BY c.name ORDER BY spent DESC LIMIT 2";

#[tokio::test]
async fn postgres_rows_are_read_and_a_delete_is_refused_by_the_database() {
    let Some((_database, shop)) = postgres_shop().await else { return };
    let rows = shop.query(TOP_CUSTOMER).await.unwrap();
    assert_eq!(rows, "name | spent\nLinus Torvalds | 446.90\nAda Byron | 207.00\n(2 rows)");
    let refused = shop.query("DELETE FROM orders").await.unwrap_err();
    assert_eq!(
        refused,
        "PostgreSQL refused the statement: cannot execute DELETE in a read-only transaction"
    );
    let escape = shop.query("COMMIT; DELETE FROM orders").await.unwrap_err();
    assert!(escape.contains("cannot insert multiple commands"), "{escape}");
    let sequence = shop.query("SELECT setval('orders_id_seq', 1)").await.unwrap_err();
    assert!(sequence.starts_with("PostgreSQL refused the statement"), "{sequence}");
    let count = shop.query("SELECT count(*) FROM orders").await.unwrap();
    assert_eq!(count, "count\n6\n(1 row)", "nothing was deleted");
    let kinds = shop
        .query("SELECT joined, id, name = 'Ada Byron' AS ada FROM customers ORDER BY id LIMIT 1")
        .await
        .unwrap();
    assert_eq!(kinds, "joined | id | ada\n2024-02-11 | 1 | true\n(1 row)");
}

#[tokio::test]
async fn postgres_statements_stop_at_their_timeout_and_rows_are_capped() {
    let Some((database, url)) = postgres_shop_url().await else { return };
    let limits =
        QueryLimits { rows: 3, time: Duration::from_millis(300), ..QueryLimits::default() };
    let shop = Database::open("shop", &url, limits).unwrap();
    let owner = Database::open("shop", &database.url, QueryLimits::default()).unwrap();
    let refused = owner.query("SELECT 1").await.unwrap_err();
    assert!(refused.contains("reached as a superuser"), "{refused}");
    let slow = shop.query("SELECT pg_sleep(5)").await.unwrap_err();
    assert!(
        slow.contains("canceling statement due to statement timeout")
            || slow.contains("ran longer"),
        "{slow}"
    );
    let capped = shop.query("SELECT id FROM orders ORDER BY id").await.unwrap();
    assert_eq!(capped, "id\n1\n2\n3\n(3 rows) (more rows were left out: at most 3 are shown)");
    let schema = shop.schema().await.unwrap();
    assert!(schema.starts_with("PostgreSQL database `shop`:"), "{schema}");
    assert!(
        schema.contains("table public.orders:\n  id integer\n  customer_id integer"),
        "{schema}"
    );
}

#[tokio::test]
async fn sqlite_is_opened_read_only() {
    let folder = tempfile::tempdir().unwrap();
    let shop = sqlite_shop(folder.path()).await;
    let rows =
        shop.query("SELECT name, price FROM products WHERE price > 60 ORDER BY id").await.unwrap();
    assert_eq!(rows, "name | price\nMechanical keyboard | 129\nTrackball | 74.5\n(2 rows)");
    let refused = shop.query("DELETE FROM orders").await.unwrap_err();
    assert_eq!(refused, "SQLite refused the statement: attempt to write a readonly database");
    assert_eq!(shop.query("SELECT count(*) AS n FROM orders").await.unwrap(), "n\n6\n(1 row)");
    let schema = shop.schema().await.unwrap();
    assert!(schema.contains("table customers:\n  id INTEGER\n  name TEXT"), "{schema}");
    let missing =
        Database::open("gone", "sqlite:/nonexistent/x.db", QueryLimits::default()).unwrap();
    let other = folder.path().join("other.db");
    let attach = format!("ATTACH '{}' AS other", other.display());
    let refused = shop.query(&attach).await.unwrap_err();
    assert!(
        refused.starts_with("SQLite refused the statement: too many attached databases"),
        "{refused}"
    );
    let copied = folder.path().join("copy.db");
    let vacuum = format!("VACUUM INTO '{}'", copied.display());
    assert!(shop.query(&vacuum).await.is_err());
    assert!(!copied.exists() && !other.exists(), "no file was made");
    let limits = QueryLimits { time: Duration::from_millis(300), ..QueryLimits::default() };
    let endless = Database::open(
        "shop",
        &format!("sqlite:{}", folder.path().join("shop.db").display()),
        limits,
    )
    .unwrap();
    let counting =
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c";
    let stopped = endless.query(counting).await.unwrap_err();
    assert!(stopped.contains("interrupted") || stopped.contains("ran longer"), "{stopped}");
    let gone = missing.query("SELECT 1").await.unwrap_err();
    assert!(gone.starts_with("database `gone`"), "{gone}");
}
