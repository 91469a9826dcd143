//! Files and folders that hold prompts, values and answers (the run log, the library's
//! database, the test cache, batch journals and outputs) are the user's alone: folders are
//! made 0700 and files 0600, whatever the umask (a mode given when a file is made is only ever
//! narrowed by it). Ones found open to other users are narrowed, and said so ([`Tightened`]),
//! for the caller to warn about. SQLite gives the `-wal`, `-shm` and `-journal` files it makes
//! the mode of their database (`findCreateFileMode` in its Unix layer), so a database made
//! 0600 here keeps its companions private too.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

/// A file or folder that other users could read, and that is now the owner's alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tightened {
    pub path: PathBuf,
    /// Its mode before (`0o644`, say).
    pub was: u32,
}

impl std::fmt::Display for Tightened {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} could be read by other users (mode {:o}); it is now readable by you only",
            self.path.display(),
            self.was
        )
    }
}

/// Makes `dir` (its missing parents as usual, so `~/.local/share` stays as it is) and makes it
/// 0700; an existing one open to others is narrowed.
pub fn private_dir(dir: &Path) -> io::Result<Option<Tightened>> {
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    match builder().create(dir) {
        Ok(()) => Ok(None),
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => tighten(dir, 0o700),
        Err(error) => Err(error),
    }
}

/// Makes every missing folder of `dir` 0700 (for folders inside a private one: the test
/// cache's fan-out, a pulled tool's host).
pub fn private_dir_all(dir: &Path) -> io::Result<()> {
    builder().recursive(true).create(dir)
}

/// Opens `path` with `options`; a file it makes is 0600, and an existing one open to others is
/// narrowed (on the open file, so nothing can swap the path meanwhile).
pub fn open_private(
    options: &mut OpenOptions,
    path: &Path,
) -> io::Result<(File, Option<Tightened>)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    let file = options.open(path)?;
    let tightened =
        narrow(&file.metadata()?, 0o600, path, |mode| file.set_permissions(permissions(mode)))?;
    Ok((file, tightened))
}

/// `std::fs::write` of a private file.
pub fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write as _;
    let (mut file, _) =
        open_private(OpenOptions::new().write(true).create(true).truncate(true), path)?;
    file.write_all(bytes)
}

/// Gets the SQLite database `path` ready to be opened: made empty and 0600 when missing (SQLite
/// takes an empty file as an empty database, and gives the files it adds the same mode), and
/// narrowed, with any `-wal`, `-shm` or `-journal` beside it, when open to others.
pub fn private_sqlite(path: &Path) -> io::Result<Vec<Tightened>> {
    // Appending never truncates an existing database.
    let (_, database) = open_private(OpenOptions::new().create(true).append(true), path)?;
    let mut tightened: Vec<Tightened> = database.into_iter().collect();
    for suffix in ["-wal", "-shm", "-journal"] {
        let mut companion = path.as_os_str().to_owned();
        companion.push(suffix);
        match tighten(Path::new(&companion), 0o600) {
            Ok(narrowed) => tightened.extend(narrowed),
            Err(error) if error.kind() == io::ErrorKind::NotFound => {}
            Err(error) => return Err(error),
        }
    }
    Ok(tightened)
}

/// Narrows `path` to `mode` if others may read or write it.
pub fn tighten(path: &Path, mode: u32) -> io::Result<Option<Tightened>> {
    narrow(&std::fs::metadata(path)?, mode, path, |mode| {
        std::fs::set_permissions(path, permissions(mode))
    })
}

fn narrow(
    metadata: &std::fs::Metadata,
    mode: u32,
    path: &Path,
    set: impl FnOnce(u32) -> io::Result<()>,
) -> io::Result<Option<Tightened>> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let was = metadata.permissions().mode() & 0o7777;
        if was & 0o077 != 0 {
            set(mode)?;
            return Ok(Some(Tightened { path: path.to_owned(), was }));
        }
    }
    #[cfg(not(unix))]
    let _ = (metadata, mode, path, set);
    Ok(None)
}

#[cfg(unix)]
fn permissions(mode: u32) -> std::fs::Permissions {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::Permissions::from_mode(mode)
}

#[cfg(not(unix))]
fn permissions(_: u32) -> std::fs::Permissions {
    unreachable!("modes are narrowed on Unix only")
}

fn builder() -> std::fs::DirBuilder {
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt as _;
        builder.mode(0o700);
    }
    builder
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).map(|m| m.permissions().mode() & 0o777).unwrap_or_default()
    }

    #[test]
    fn new_data_is_private_and_old_data_is_narrowed_and_said() {
        let root = tempfile::tempdir().expect("a folder");
        let dir = root.path().join("data");
        assert_eq!(private_dir(&dir).expect("made"), None);
        assert_eq!(mode(&dir), 0o700);
        let database = dir.join("runs.db");
        assert_eq!(private_sqlite(&database).expect("made"), []);
        assert_eq!(
            (mode(&database), std::fs::metadata(&database).map(|m| m.len()).ok()),
            (0o600, Some(0))
        );
        write_private(&dir.join("answer.json"), b"{}").expect("written");
        assert_eq!(mode(&dir.join("answer.json")), 0o600);

        std::fs::set_permissions(&dir, permissions(0o755)).expect("opened");
        std::fs::set_permissions(&database, permissions(0o644)).expect("opened");
        std::fs::write(dir.join("runs.db-wal"), b"").expect("written");
        std::fs::set_permissions(dir.join("runs.db-wal"), permissions(0o666)).expect("opened");
        let narrowed = private_dir(&dir).expect("narrowed");
        assert_eq!(narrowed.map(|t| t.was), Some(0o755));
        let narrowed = private_sqlite(&database).expect("narrowed");
        assert_eq!(narrowed.iter().map(|t| t.was).collect::<Vec<_>>(), [0o644, 0o666]);
        assert!(narrowed[0].to_string().contains("readable by you only"));
        assert_eq!(
            (mode(&dir), mode(&database), mode(&dir.join("runs.db-wal"))),
            (0o700, 0o600, 0o600)
        );
    }
}
