//! Tool files on disk, for every command and server: which files under a folder are tools
//! (one rule, decided here), and reading one, bounded in size, into a checked document.
//!
//! The rule: a path named explicitly is read whatever its name; a folder is searched
//! recursively, in file-name order, for files ending `.json` (any case) other than test files
//! (`NAME.tests.json`, see [`crate::test_files`]); files and folders
//! whose name starts with `.` (`.git`, editors' backups) are skipped below it; symbolic links
//! are followed, and a link loop or a broken link is skipped with a warning; a folder that
//! cannot be listed is reported, and the search goes on. A path `registry:REFERENCE` names a
//! tool of the team's library instead ([`ToolFile::open`]).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use llmtool_format::limits::ReadError;
use llmtool_format::model::Tool;
use llmtool_format::report::{Source, human};
use llmtool_format::{Diagnostic, Document, Severity};
pub use llmtool_registry::Reference;
pub use llmtool_registry::client::{ClientError, LibraryClient};
pub use reader::Reader;

mod reader;

/// Why a tool file could not be found or read.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("cannot read `{}`: {error}", path.display())]
    Read { path: PathBuf, error: ReadError },
    #[error("cannot list `{}`: {error}", path.display())]
    List { path: PathBuf, error: walkdir::Error },
    /// A link that leads nowhere, or back to a folder above it: not a file to read, so it is
    /// skipped with a warning rather than failing the search.
    #[error("skipped `{}`: {reason}", path.display())]
    Skipped { path: PathBuf, reason: &'static str },
    /// A `registry:` name whose tool cannot be pulled from the library.
    #[error("cannot load `{}`: {reason}", path.display())]
    Library { path: PathBuf, reason: String },
}

impl FileError {
    /// The file or folder concerned.
    pub fn path(&self) -> &Path {
        match self {
            FileError::Read { path, .. }
            | FileError::List { path, .. }
            | FileError::Skipped { path, .. }
            | FileError::Library { path, .. } => path,
        }
    }

    /// Whether the problem only skips something that was never a file to read.
    pub fn is_warning(&self) -> bool {
        matches!(self, FileError::Skipped { .. })
    }

    fn of_walk(error: walkdir::Error, folder: &Path) -> Self {
        let path = error.path().unwrap_or(folder).to_owned();
        let broken = error.io_error().is_some_and(|e| e.kind() == std::io::ErrorKind::NotFound);
        if error.loop_ancestor().is_some() {
            FileError::Skipped { path, reason: "a symbolic link loop" }
        } else if broken {
            FileError::Skipped { path, reason: "a symbolic link to nothing" }
        } else {
            FileError::List { path, error }
        }
    }
}

/// The tool files under `paths`, without repeats, in a stable order; and what could not be
/// listed. Paths that are not folders are kept as given (`-`, standard input, included).
pub fn find(paths: &[PathBuf]) -> (Vec<PathBuf>, Vec<FileError>) {
    find_matching(paths, is_tool_file)
}

/// The files under `paths` that `wanted` takes (by the same rule as [`find`]).
pub fn find_matching(
    paths: &[PathBuf],
    wanted: impl Fn(&Path) -> bool + Sync,
) -> (Vec<PathBuf>, Vec<FileError>) {
    let (found, problems) = split_walk(
        walk_matching(paths, &wanted).map(|(root, item)| (root, item.map(|path| (path, ())))),
    );
    (found.into_iter().map(|(path, ())| path).collect(), problems)
}

/// A walk's finds, from [`walk_matching`]: the index of the path given that led to it, and a
/// file or a problem.
pub type Walked<T> = (usize, Result<T, FileError>);

/// The files under `paths` that `wanted` takes, in the order the walk meets them (each folder
/// as the system lists it), each with the index of the path given that led to it; and what
/// could not be listed, where the walk met it. [`split_walk`] puts both in [`find`]'s order,
/// so that the walk can go on while earlier finds are already being read.
pub fn walk_matching<'a>(
    paths: &'a [PathBuf],
    wanted: &'a (dyn Fn(&Path) -> bool + Sync),
) -> impl Iterator<Item = Walked<PathBuf>> + Send + 'a {
    // One folder's walk names each file once: repeats can only come from several paths.
    let several = paths.len() > 1;
    let mut seen = HashSet::new();
    paths
        .iter()
        .enumerate()
        .flat_map(move |(root, path)| -> Box<dyn Iterator<Item = Walked<PathBuf>> + Send + 'a> {
            if !path.is_dir() {
                return Box::new(std::iter::once((root, Ok(path.clone()))));
            }
            let walk = walkdir::WalkDir::new(path).follow_links(true);
            let visible = walk.into_iter().filter_entry(|e| e.depth() == 0 || !is_hidden(e.path()));
            Box::new(visible.filter_map(move |entry| match entry {
                Ok(entry) if entry.file_type().is_file() && wanted(entry.path()) => {
                    Some((root, Ok(entry.into_path())))
                }
                Ok(_) => None,
                Err(error) => Some((root, Err(FileError::of_walk(error, path)))),
            }))
        })
        .filter(move |(_, item)| match item {
            Ok(path) if several => seen.insert(path.clone()),
            _ => true,
        })
}

/// A walk's files (each with what was made of it) and its problems, both in [`find`]'s order:
/// by the path given, then as a depth-first walk that takes each folder's entries in
/// file-name order. Sorting once at the end gives the same order as sorting each folder's
/// entries by name, which takes both paths apart at every comparison (on 10,000 files, the
/// walk's serial part went from 166 to 152 ms of the whole check with this).
pub fn split_walk<T>(
    walked: impl IntoIterator<Item = Walked<(PathBuf, T)>>,
) -> (Vec<(PathBuf, T)>, Vec<FileError>) {
    let mut found = Vec::new();
    let mut problems = Vec::new();
    for (root, item) in walked {
        match item {
            // The paths become their keys where they are, without a copy each.
            Ok((path, made)) => found.push((root, walk_key(path), made)),
            Err(problem) => problems.push((root, problem)),
        }
    }
    found.sort_unstable_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    problems.sort_by_cached_key(|(root, problem)| (*root, walk_key(problem.path().into())));
    (
        found.into_iter().map(|(_, key, made)| (path_of_key(key), made)).collect(),
        problems.into_iter().map(|(_, problem)| problem).collect(),
    )
}

/// A path's bytes with each separator made a zero byte, which no path holds: sorted as bytes,
/// paths under one folder come in the order of a depth-first walk that takes each folder's
/// entries in file-name order (`a/x.json`, then `a.json`: the folder `a` before the file
/// `a.json`), since every separator is then below any other byte.
fn walk_key(path: PathBuf) -> Vec<u8> {
    use std::os::unix::ffi::OsStringExt as _;
    let mut key = path.into_os_string().into_vec();
    key.iter_mut().filter(|byte| **byte == b'/').for_each(|byte| *byte = 0);
    key
}

/// The path a [`walk_key`] was made of.
fn path_of_key(mut key: Vec<u8>) -> PathBuf {
    use std::os::unix::ffi::OsStringExt as _;
    key.iter_mut().filter(|byte| **byte == 0).for_each(|byte| *byte = b'/');
    PathBuf::from(std::ffi::OsString::from_vec(key))
}

/// Whether a file found in a folder is a tool file: its name ends `.json`, and it is not a
/// test file.
pub fn is_tool_file(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("json")) && !is_test_file(path)
}

/// Whether a file is a test file: its name ends `.tests.json`, `.tests.yaml` or `.tests.yml`.
pub fn is_test_file(path: &Path) -> bool {
    path.file_name().is_some_and(|n| llmtool_format::suite::is_test_file_name(&n.to_string_lossy()))
}

fn is_hidden(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.'))
}

/// Reads the file at `path`, refusing one larger than `limit` (after its first
/// [`reader::FIRST_READ`] bytes at most). [`Reader`] reads many files faster.
pub fn read(path: &Path, limit: u64) -> Result<Vec<u8>, FileError> {
    let fail = |error: ReadError| FileError::Read { path: path.to_owned(), error };
    let file = std::fs::File::open(path).map_err(|e| fail(e.into()))?;
    reader::read_open(file, limit).map_err(fail)
}

/// A tool file read and checked: its document, with every diagnostic, under the name that
/// reports show.
#[derive(Debug, Clone)]
pub struct ToolFile {
    pub name: String,
    pub document: Document,
    /// What to say before the tool is used: that a library's tool comes from the cache,
    /// because the library cannot be reached.
    pub note: Option<String>,
}

impl ToolFile {
    /// Reads and checks the file at `path` (at most `limit` bytes).
    pub fn load(path: &Path, limit: u64) -> Result<Self, FileError> {
        Ok(Self::from_bytes(path.display().to_string(), read(path, limit)?))
    }

    /// Reads and checks the tool `path` names: a file, or the library's tool a
    /// `registry:REFERENCE` names, pulled from `library` (or from its cache when the library
    /// cannot be reached) and then named `registry:SLUG@VERSION`.
    pub fn open(
        path: &Path,
        limit: u64,
        library: Option<&LibraryClient>,
    ) -> Result<Self, FileError> {
        let Some(reference) = path.to_str().and_then(Reference::from_path) else {
            return Self::load(path, limit);
        };
        let fail = |reason: String| FileError::Library { path: path.to_owned(), reason };
        let reference = reference
            .ok_or_else(|| fail("a library's tool is SLUG, SLUG@VERSION or SLUG:LABEL".into()))?;
        let library = library.ok_or_else(|| {
            fail("no tool library is named: give --registry URL, set LLMTOOL_REGISTRY, or `registry = \"URL\"` in the config file".into())
        })?;
        let pulled = library.pull_blocking(&reference).map_err(|error| fail(error.to_string()))?;
        if pulled.text.len() as u64 > limit {
            return Err(FileError::Read {
                path: path.to_owned(),
                error: ReadError::TooLarge { limit },
            });
        }
        let name = Reference::pinned(&pulled.slug, pulled.version).path();
        let mut file = Self::from_bytes(name, pulled.text.into_bytes());
        if pulled.from_cache {
            file.note = Some(format!(
                "the tool library cannot be reached; using the cached {}@{}",
                pulled.slug, pulled.version
            ));
        }
        Ok(file)
    }

    /// Checks `bytes`, read from the file shown as `name`.
    pub fn from_bytes(name: String, bytes: Vec<u8>) -> Self {
        Self { name, document: Document::from_vec(bytes), note: None }
    }

    /// The errors that keep the tool from being used.
    pub fn errors(&self) -> Vec<Diagnostic> {
        let diagnostics = self.document.diagnostics.iter();
        diagnostics.filter(|d| d.severity == Severity::Error).cloned().collect()
    }

    /// `diagnostics` of this file as `llmtool check` shows them.
    pub fn report(&self, diagnostics: &[Diagnostic], color: bool) -> String {
        human(&Source::new(&self.name, &self.document.text), diagnostics, color)
    }

    /// The tool, if the file has no error; else its errors, with their report.
    pub fn into_tool(self) -> Result<Tool, ToolErrors> {
        let errors = self.errors();
        if errors.is_empty()
            && let Some(tool) = self.document.tool
        {
            return Ok(tool);
        }
        Err(ToolErrors { report: self.report(&errors, false), errors })
    }
}

/// The errors that keep a tool file from being used.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{report}")]
pub struct ToolErrors {
    /// The errors as `llmtool check` shows them (without color).
    pub report: String,
    pub errors: Vec<Diagnostic>,
}

/// The library at `url`, as every command reaches it: calling with `token`, the versions it
/// pulls cached (privately) in the data directory.
pub fn library_client(url: &str, token: Option<String>) -> Result<LibraryClient, ClientError> {
    let cache = llmtool_log::data_dir().map(|dir| dir.join("registry-cache"));
    LibraryClient::new(url, token, cache)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_read_whole_and_one_over_the_limit_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tool.json");
        for text in ["", "{}", &"x".repeat(100_000)] {
            std::fs::write(&path, text).unwrap();
            assert_eq!(read(&path, 100_000).unwrap(), text.as_bytes());
        }
        std::fs::write(&path, "x".repeat(100_001)).unwrap();
        let refused = read(&path, 100_000).unwrap_err();
        assert!(matches!(refused, FileError::Read { error: ReadError::TooLarge { .. }, .. }));
        // What is not a regular file (a folder here) is read the other way, and fails plainly.
        assert!(read(dir.path(), 100).is_err());
    }
}
