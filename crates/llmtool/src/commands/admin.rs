//! `llmtool admin`: what an operator does to a library as a whole — back it up while it
//! serves, restore a backup, and move it from SQLite to PostgreSQL (or back).

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::Subcommand;
use llmtool_registry::backup::{self, Location};
use llmtool_registry::{SqlStore, transfer};

use crate::commands::serve::{LibraryArgs, database, table};
use crate::outcome::Outcome;

/// Back up, restore and move the tool library (see docs/deploy.md).
#[derive(Debug, Subcommand)]
pub(crate) enum AdminCommand {
    /// Write a consistent copy of the library to a new file while servers use it: SQLite's
    /// online copy (`VACUUM INTO`), or `pg_dump`'s custom format for PostgreSQL. The file is
    /// readable by its owner only.
    Backup {
        /// The new file.
        dest: PathBuf,
        #[command(flatten)]
        library: LibraryArgs,
    },
    /// Replace the library with a backup (`admin backup`'s file). The library as it was is
    /// backed up first, beside SRC, unless it is empty. Stop the servers of a SQLite library
    /// first; those of a PostgreSQL one are told every tool may have changed.
    Restore {
        /// The backup to restore.
        src: PathBuf,
        #[command(flatten)]
        library: LibraryArgs,
    },
    /// Copy the library (`--db`, default the SQLite file in the data directory) into an empty
    /// library on the other backend (`--to postgres://...`, or a new SQLite file), every
    /// version, tag, label, token, member, team, run and setting; then compare the two, table
    /// by table. Stop writing to the library while it runs.
    Migrate {
        /// The empty library to copy into.
        #[arg(long, value_name = "URL")]
        to: String,
        #[command(flatten)]
        library: LibraryArgs,
    },
    /// Compare two libraries table by table (SQLite files or PostgreSQL URLs, on one backend
    /// or the two): each table's row count and a hash of its rows. Exits 1 when they differ.
    Compare {
        /// One library.
        a: String,
        /// The other.
        b: String,
    },
}

pub(crate) fn run(command: &AdminCommand) -> anyhow::Result<Outcome> {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async {
        match command {
            AdminCommand::Backup { dest, library } => backup(dest, library).await,
            AdminCommand::Restore { src, library } => {
                let (database, shown) = database(library)?;
                let restored = backup::restore(&Location::of(&database), src)
                    .await
                    .with_context(|| format!("cannot restore {}", src.display()))?;
                if let Some(before) = restored.before {
                    eprintln!("the library as it was is kept in {}", before.display());
                }
                eprintln!("{shown} is restored from {}", src.display());
                Ok(Outcome::Ok)
            }
            AdminCommand::Migrate { to, library } => migrate(library, to).await,
            AdminCommand::Compare { a, b } => compare(a, b).await,
        }
    })
}

/// `admin backup` (and `serve backup`, its older name).
pub(crate) async fn backup(dest: &Path, library: &LibraryArgs) -> anyhow::Result<Outcome> {
    let (database, shown) = database(library)?;
    backup::backup(&Location::of(&database), dest)
        .await
        .with_context(|| format!("cannot back up {shown}"))?;
    eprintln!("{shown} is backed up to {}", dest.display());
    Ok(Outcome::Ok)
}

async fn migrate(library: &LibraryArgs, to: &str) -> anyhow::Result<Outcome> {
    let (database, shown) = database(library)?;
    let to_shown = crate::secrets::redact(to).into_owned();
    let postgres = |location: Location| matches!(location, Location::Postgres(_));
    anyhow::ensure!(
        postgres(Location::of(&database)) != postgres(Location::of(to)),
        "a library moves between SQLite and PostgreSQL; on one backend, back it up and restore it (`llmtool admin backup`, `llmtool admin restore`)"
    );
    let from = open(&database).await.with_context(|| format!("cannot open {shown}"))?;
    let target = open(to).await.with_context(|| format!("cannot open {to_shown}"))?;
    let migrated = transfer::migrate(&from, &target)
        .await
        .with_context(|| format!("cannot migrate {shown} to {to_shown}"))?;
    let mut rows = table(["table", "rows", "sha-256 (both)"]);
    for (name, print) in &migrated.tables {
        rows.add_row([name.clone(), print.rows.to_string(), print.sha256[..16].to_owned()]);
    }
    crate::io::write_stdout(format!("{rows}\n").as_bytes())?;
    eprintln!("{shown} is copied to {to_shown}: every table holds the same rows in both");
    Ok(Outcome::Ok)
}

async fn compare(a: &str, b: &str) -> anyhow::Result<Outcome> {
    let (a_shown, b_shown) = (crate::secrets::redact(a), crate::secrets::redact(b));
    let first = open(a).await.with_context(|| format!("cannot open {a_shown}"))?;
    let second = open(b).await.with_context(|| format!("cannot open {b_shown}"))?;
    let (left, right) = transfer::compare(&first, &second).await?;
    let mut rows = table(["table", "rows", "rows (other)", "same"]);
    let mut differ = 0;
    for (name, print) in &left {
        let other = right.get(name);
        let same = other == Some(print);
        differ += usize::from(!same);
        let counted = other.map_or_else(|| "-".to_owned(), |o| o.rows.to_string());
        rows.add_row([
            name.clone(),
            print.rows.to_string(),
            counted,
            (if same { "yes" } else { "NO" }).to_owned(),
        ]);
    }
    crate::io::write_stdout(format!("{rows}\n").as_bytes())?;
    if differ > 0 {
        eprintln!("{a_shown} and {b_shown} differ in {differ} table(s)");
        return Ok(Outcome::Problems);
    }
    eprintln!("{a_shown} and {b_shown} hold the same rows");
    Ok(Outcome::Ok)
}

async fn open(database: &str) -> Result<SqlStore, llmtool_registry::StoreError> {
    match Location::of(database) {
        Location::Sqlite(path) => SqlStore::open_sqlite(&path).await,
        Location::Postgres(url) => SqlStore::connect_postgres(&url).await,
    }
}
