//! Reading tool files one after another, with as few system calls as each file needs.
//!
//! A folder of ten thousand tool files spends about a quarter of `check`'s time in the kernel,
//! opening, measuring, reading and closing each one. Two of those costs are avoidable:
//! - the path: a file is opened relative to its folder, which stays open while the files come
//!   from it, so the kernel looks up one name instead of every folder of the path;
//! - the size: a file that fits in the first read ([`FIRST_READ`]) is not measured at all. A
//!   larger one is, once the first read is full, so that a file over the limit is still
//!   refused without reading the rest of it.

use std::fs::File;
use std::io::Read as _;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};

use llmtool_format::limits::ReadError;

use super::FileError;

/// What the first read of a file asks for: tool files are a few kilobytes.
pub(super) const FIRST_READ: u64 = 16 * 1024;

/// Reads files of at most `limit` bytes each, keeping the folder of the last one open.
#[derive(Debug)]
pub struct Reader {
    limit: u64,
    /// The folder of the file read last, as written in its path, and a handle on it.
    folder: Option<(PathBuf, OwnedFd)>,
}

impl Reader {
    pub fn new(limit: u64) -> Self {
        Self { limit, folder: None }
    }

    /// Reads the file at `path`, refusing one larger than the limit.
    pub fn read(&mut self, path: &Path) -> Result<Vec<u8>, FileError> {
        let fail = |error: ReadError| FileError::Read { path: path.to_owned(), error };
        let file = self.open(path).map_err(|e| fail(e.into()))?;
        read_open(file, self.limit).map_err(fail)
    }

    /// Opens `path` for reading: relative to its folder when the path is `FOLDER/NAME`, which
    /// follows the same links and checks the same permissions as opening the whole path.
    fn open(&mut self, path: &Path) -> std::io::Result<File> {
        use rustix::fs::{Mode, OFlags};
        let Some((folder, name)) = split_last(path) else { return File::open(path) };
        if self.folder.as_ref().is_none_or(|(open, _)| open != folder) {
            let handle = rustix::fs::open(
                folder,
                OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )?;
            self.folder = Some((folder.to_owned(), handle));
        }
        let Some((_, handle)) = &self.folder else { return File::open(path) };
        let file =
            rustix::fs::openat(handle, name, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())?;
        Ok(File::from(file))
    }
}

/// `FOLDER/NAME` taken apart as written, when the last part is a plain name (not `.`, `..` or
/// empty, as after a trailing `/`); the folder of `/NAME` is `/`.
fn split_last(path: &Path) -> Option<(&Path, &Path)> {
    let bytes = path.as_os_str().as_bytes();
    let slash = bytes.iter().rposition(|&b| b == b'/')?;
    let name = &bytes[slash + 1..];
    if name.is_empty() || name == b"." || name == b".." {
        return None;
    }
    let folder = if slash == 0 { &bytes[..1] } else { &bytes[..slash] };
    Some((as_path(folder), as_path(name)))
}

fn as_path(bytes: &[u8]) -> &Path {
    Path::new(std::ffi::OsStr::from_bytes(bytes))
}

/// Reads an open file to its end, refusing more than `limit` bytes.
pub(super) fn read_open(mut file: File, limit: u64) -> Result<Vec<u8>, ReadError> {
    let first = FIRST_READ.min(limit.saturating_add(1));
    let mut bytes = Vec::with_capacity(usize::try_from(first).unwrap_or(0));
    (&mut file).take(first).read_to_end(&mut bytes)?;
    if (bytes.len() as u64) < first {
        // The whole file, and under the limit, since `first` is at most one byte over it.
        return Ok(bytes);
    }
    let size = file.metadata().ok().filter(std::fs::Metadata::is_file).map_or(0, |m| m.len());
    if size > limit || bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge { limit });
    }
    let read = bytes.len() as u64;
    bytes.reserve_exact(usize::try_from(size.saturating_sub(read)).unwrap_or(0).saturating_add(1));
    file.take(limit.saturating_add(1) - read).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge { limit });
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

    use super::*;

    #[test]
    fn a_path_is_taken_apart_only_where_its_last_part_is_a_name() {
        let parts = |p: &str| split_last(Path::new(p)).map(|(f, n)| (f.to_owned(), n.to_owned()));
        assert_eq!(parts("a/b.json"), Some(("a".into(), "b.json".into())));
        assert_eq!(parts("/b.json"), Some(("/".into(), "b.json".into())));
        assert_eq!(parts("a/./b"), Some(("a/.".into(), "b".into())));
        for whole in ["b.json", "a/b/", "a/.", "a/..", "/"] {
            assert_eq!(parts(whole), None, "{whole}");
        }
    }

    #[test]
    fn files_of_every_size_around_the_first_read_and_the_limit_are_read_whole_or_refused() {
        let dir = tempfile::tempdir().unwrap();
        let first = usize::try_from(FIRST_READ).unwrap();
        for limit in [0, 10, FIRST_READ - 1, FIRST_READ, FIRST_READ + 1, 3 * FIRST_READ] {
            let mut reader = Reader::new(limit);
            for size in [0, 1, 10, 11, first - 1, first, first + 1, 2 * first + 7, 3 * first + 1] {
                let path = dir.path().join(format!("{size}.json"));
                let contents: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
                std::fs::write(&path, &contents).unwrap();
                match reader.read(&path) {
                    Ok(bytes) => {
                        assert!(size as u64 <= limit, "{size} bytes read under a limit of {limit}");
                        assert_eq!(bytes, contents, "{size} bytes, limit {limit}");
                    }
                    Err(FileError::Read { error: ReadError::TooLarge { .. }, .. }) => {
                        assert!(
                            size as u64 > limit,
                            "{size} bytes refused under a limit of {limit}"
                        );
                    }
                    Err(other) => panic!("{size} bytes, limit {limit}: {other}"),
                }
            }
        }
    }

    #[test]
    fn files_of_several_folders_and_links_are_read_from_their_own_folder() {
        let dir = tempfile::tempdir().unwrap();
        for (folder, text) in [("a", "in a"), ("b", "in b")] {
            std::fs::create_dir(dir.path().join(folder)).unwrap();
            std::fs::write(dir.path().join(folder).join("tool.json"), text).unwrap();
        }
        std::os::unix::fs::symlink(dir.path().join("b/tool.json"), dir.path().join("a/link.json"))
            .unwrap();
        let mut reader = Reader::new(1000);
        for (path, text) in [
            ("a/tool.json", "in a"),
            ("b/tool.json", "in b"),
            ("b/tool.json", "in b"),
            ("a/link.json", "in b"),
            ("a/tool.json", "in a"),
        ] {
            assert_eq!(reader.read(&dir.path().join(path)).unwrap(), text.as_bytes(), "{path}");
        }
        let missing = reader.read(&dir.path().join("a/missing.json")).unwrap_err();
        assert!(missing.to_string().contains("missing.json"), "{missing}");
        let not_a_folder = reader.read(&dir.path().join("a/tool.json/x.json")).unwrap_err();
        assert!(matches!(not_a_folder, FileError::Read { .. }), "{not_a_folder}");
    }

    #[test]
    fn a_device_is_read_up_to_the_limit_and_refused() {
        let error = Reader::new(100_000).read(Path::new("/dev/zero")).unwrap_err();
        assert!(matches!(error, FileError::Read { error: ReadError::TooLarge { .. }, .. }));
    }
}
