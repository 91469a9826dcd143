//! A fresh PostgreSQL database for a test, on the cluster the test command starts
//! (`scripts/postgres.sh`, named by `LLMTOOL_TEST_POSTGRES`), dropped when the test is done.

use sqlx::Connection as _;

/// A database of this test's own; dropped (connections closed) when this is.
#[derive(Debug)]
pub struct TestDatabase {
    pub url: String,
    server: String,
    name: String,
}

/// A new database, or `None` when no cluster is named: then the caller skips, except in CI
/// (`CI` set), where a missing cluster fails the test.
pub async fn database() -> Option<TestDatabase> {
    let Ok(server) = std::env::var("LLMTOOL_TEST_POSTGRES") else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI runs these tests on PostgreSQL too: LLMTOOL_TEST_POSTGRES is not set"
        );
        eprintln!("skipped: LLMTOOL_TEST_POSTGRES is not set (scripts/postgres.sh start)");
        return None;
    };
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let name = format!("llmtool_test_{}_{}", std::process::id(), stamp % 1_000_000_000);
    let mut admin = sqlx::PgConnection::connect(&server).await.unwrap();
    sqlx::query(&format!("CREATE DATABASE {name}")).execute(&mut admin).await.unwrap();
    let (base, _) = server.rsplit_once('/').unwrap();
    Some(TestDatabase { url: format!("{base}/{name}"), server, name })
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        let (server, name) = (self.server.clone(), self.name.clone());
        // Dropped from async tests too: the drop runs on a thread of its own.
        let _ = std::thread::spawn(move || {
            let runtime =
                tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            runtime.block_on(async {
                if let Ok(mut admin) = sqlx::PgConnection::connect(&server).await {
                    let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                        .execute(&mut admin)
                        .await;
                }
            });
        })
        .join();
    }
}
