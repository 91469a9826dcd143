//! Schema migrations compiled into the binary from `include_str!`s, without sqlx's `migrate!`
//! macro: that macro's crate compiles a second copy of sqlx (SQLite's C sources included) for
//! the compiler to run, which cost every cold build minutes. The migrator built here is the
//! one the macro builds from the same files: versions and descriptions from the file names,
//! checksums (SHA-384) of the same text, so databases migrated before read as up to date.

use std::borrow::Cow;

use sqlx::migrate::{Migration, MigrationType, Migrator};

/// A migration as compiled in: its file name (`0001_runs.sql`) and its SQL.
pub type Embedded = (&'static str, &'static str);

/// `[("0001_x.sql", include_str!("../migrations/0001_x.sql")), …]` for the files named.
#[macro_export]
macro_rules! embed_migrations {
    ($folder:literal: $($file:literal),+ $(,)?) => {
        &[$(($file, include_str!(concat!($folder, "/", $file)))),+]
    };
}

/// The migrator of `files`, in version order.
///
/// # Panics
/// When a file name does not start with a version and `_` (a mistake in the list, which the
/// crate's tests catch: see [`differences_from_folder`]).
pub fn migrator(files: &[Embedded]) -> Migrator {
    let mut migrations: Vec<Migration> = files
        .iter()
        .map(|&(name, sql)| {
            let (version, rest) = name
                .split_once('_')
                .and_then(|(version, rest)| Some((version.parse().ok()?, rest)))
                .unwrap_or_else(|| panic!("migration `{name}` is not named VERSION_NAME.sql"));
            let kind = MigrationType::from_filename(rest);
            let description = rest.trim_end_matches(kind.suffix()).replace('_', " ");
            let no_tx = sql.starts_with("-- no-transaction");
            Migration::new(version, Cow::Owned(description), kind, Cow::Borrowed(sql), no_tx)
        })
        .collect();
    migrations.sort_by_key(|m| m.version);
    // The form `migrate!` writes: the fields are public for that purpose.
    Migrator { migrations: Cow::Owned(migrations), ..Migrator::DEFAULT }
}

/// How the migrator of `files` differs from the one sqlx reads from `folder` at run time (the
/// files `migrate!` would have compiled in): an empty list when each migration has the same
/// version, description, type, checksum and transaction mode. The crates' tests call this, so
/// that a migration added to a folder and not to its list, or listed wrongly, fails them.
pub async fn differences_from_folder(files: &[Embedded], folder: &std::path::Path) -> Vec<String> {
    let read = match Migrator::new(folder).await {
        Ok(read) => read,
        Err(error) => return vec![format!("{}: {error}", folder.display())],
    };
    let ours = migrator(files);
    let shown = |m: &Migration| {
        format!(
            "{} `{}` ({:?}, no_tx {}, checksum {:02x?})",
            m.version,
            m.description,
            m.migration_type,
            m.no_tx,
            &m.checksum[..]
        )
    };
    let ours: Vec<String> = ours.iter().map(shown).collect();
    let read: Vec<String> = read.iter().map(shown).collect();
    let mut differences: Vec<String> =
        ours.iter().filter(|m| !read.contains(m)).map(|m| format!("only listed: {m}")).collect();
    differences.extend(
        read.iter().filter(|m| !ours.contains(m)).map(|m| format!("only in the folder: {m}")),
    );
    differences
}
