//! A smart tool's `requirements` made importable: the pure-Python wheels of its pinned
//! packages (and their dependencies) fetched with pip, their hashes recorded in a lock beside
//! the tool (`words.json` → `words.lock.json`) and checked on every later fetch, unpacked once
//! into a site folder of the sandbox folder that runs then see read-only as `/site`.
//!
//! Only `name==version` is fetched, from PyPI, as wheels tagged `none-any`: no build runs, and
//! a package with native code, which the sandbox's Python cannot load, is refused by name.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use llmtool_format::model::Tool;
use llmtool_format::smart::{PYTHON_VERSION, Requirement};
use llmtool_local::pip;
use llmtool_local::store::sha256_of;
use serde::{Deserialize, Serialize};

use crate::RunError;
use crate::smart::sandbox_dir;

/// The most a tool's unpacked requirements may hold.
const MAX_SITE_BYTES: u64 = 256 << 20;
const MAX_SITE_FILES: usize = 20_000;
/// Marks a site folder whose every wheel was unpacked.
const COMPLETE: &str = ".complete";

/// What the lock beside a tool records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lock {
    /// The Python the wheels were chosen for (`3.12`).
    pub python: String,
    /// The tool's requirements the lock was made from, as written.
    pub requirements: Vec<String>,
    /// Every wheel fetched (the requirements' and their dependencies'), by file name.
    pub wheels: Vec<LockedWheel>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockedWheel {
    pub file: String,
    pub sha256: String,
}

/// The lock of the tool a run names by `tool_path` (as a run's subject does), when that is a
/// file: a tool from standard input or a library has none.
pub fn lock_of(tool_path: Option<&str>) -> Option<PathBuf> {
    tool_path.map(Path::new).filter(|path| path.is_file()).map(lock_path)
}

/// The lock file of the tool file at `tool`: `NAME.lock.json` beside `NAME.json`.
pub fn lock_path(tool: &Path) -> PathBuf {
    let stem = tool.file_stem().map_or_else(|| "tool".into(), |s| s.to_string_lossy().into_owned());
    tool.with_file_name(format!("{stem}.lock.json"))
}

fn python_version() -> String {
    let (major, minor) = PYTHON_VERSION;
    format!("{major}.{minor}")
}

/// The tool's requirements, each `name==version`; any other is refused.
fn pinned(tool: &Tool) -> Result<Vec<String>, RunError> {
    tool.requirements()
        .iter()
        .map(|entry| match Requirement::read(&entry.value) {
            Requirement::Pinned { name, version } => Ok(format!("{name}=={version}")),
            Requirement::Unpinned { name } => Err(RunError::Requirements(format!(
                "`{}` does not pin a version: write `{name}==VERSION`",
                entry.value.trim()
            ))),
            Requirement::Refused { reason } => {
                Err(RunError::Requirements(format!("`{}`: {reason}", entry.value.trim())))
            }
        })
        .collect()
}

/// Whether `tool`'s requirements are ready to use without fetching anything (none, or their
/// locked site folder is here); an error when they can never be used as written.
pub fn site_ready(tool: &Tool, lock: Option<&Path>) -> Result<bool, RunError> {
    if pinned(tool)?.is_empty() {
        return Ok(true);
    }
    match site_folder(tool, lock, false) {
        Ok(_) => Ok(true),
        Err(RunError::RequirementsMissing(_)) => Ok(false),
        Err(error) => Err(error),
    }
}

/// The site folder holding `tool`'s requirements, fetching them when `fetch` allows (and the
/// folder is not there yet); `None` for a tool without requirements. Blocking.
///
/// `lock` is where the tool's lock is (none for a tool read from standard input or a
/// library): read when it matches the requirements, written when there was none. The sandbox
/// folder keeps a lock of its own for each set of requirements it fetched (`site/sets/`),
/// written once from the wheels fetched and never replaced, so that a tool with no file (a
/// library's, on a team server that never fetches because a client asked) runs on what its
/// operator fetched, checked the same way; a tool's lock that disagrees with it is refused.
/// Without `fetch`, nothing is written.
pub fn site_folder(
    tool: &Tool,
    lock: Option<&Path>,
    fetch: bool,
) -> Result<Option<PathBuf>, RunError> {
    let requirements = pinned(tool)?;
    if requirements.is_empty() {
        return Ok(None);
    }
    let python = python_version();
    let matches = |lock: &Lock| lock.requirements == requirements && lock.python == python;
    let sites = sandbox_dir()?.join("site");
    let set = sites.join("sets").join(format!("{}.json", set_key(&python, &requirements)));
    let tools_lock = match lock {
        Some(path) => read_lock(path)?.filter(matches),
        None => None,
    };
    let sets_lock = read_lock(&set)?.filter(matches);
    if let (Some(theirs), Some(ours)) = (&tools_lock, &sets_lock)
        && theirs.wheels != ours.wheels
    {
        return Err(RunError::Requirements(format!(
            "{} and this machine's record of the same requirements ({}) name different wheels; delete the one you do not trust",
            lock.map(Path::display).map(|d| d.to_string()).unwrap_or_default(),
            set.display()
        )));
    }
    let locked = tools_lock.clone().or_else(|| sets_lock.clone());
    if let Some(locked) = &locked {
        let folder = sites.join(key(&locked.wheels));
        if folder.join(COMPLETE).is_file() {
            if let Some(path) = lock.filter(|_| fetch && tools_lock.is_none()) {
                write_lock(path, locked)?;
            }
            return Ok(Some(folder));
        }
    }
    if !fetch {
        return Err(RunError::RequirementsMissing(format!(
            "the tool's requirements ({}) are not fetched yet: run it with `--yes`, or fetch them with `llmtool sandbox pull --requirements TOOL`",
            requirements.join(", ")
        )));
    }
    let wheels = pip::download_pure_wheels(&requirements, &python).map_err(|e| native_code(&e))?;
    let files = wheels.files().map_err(|e| RunError::Requirements(e.to_string()))?;
    let mut fetched = Vec::with_capacity(files.len());
    for file in &files {
        let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if !name.ends_with("-none-any.whl") {
            return Err(RunError::Requirements(format!(
                "{name} is not a pure-Python wheel: the sandbox's Python cannot load native code"
            )));
        }
        fetched.push(LockedWheel { file: name, sha256: sha256_of(file)? });
    }
    if let Some(locked) = &locked
        && locked.wheels != fetched
    {
        let recorded = match (lock, &tools_lock) {
            (Some(path), Some(_)) => path.display().to_string(),
            _ => set.display().to_string(),
        };
        return Err(RunError::Requirements(format!(
            "the wheels fetched are not the ones {recorded} records (a package was replaced upstream, or the lock edited); delete the lock to accept them"
        )));
    }
    let folder = sites.join(key(&fetched));
    if !folder.join(COMPLETE).is_file() {
        unpack(&files, &sites, &folder)?;
    }
    let made = Lock { python, requirements, wheels: fetched };
    if sets_lock.is_none() {
        write_set(&set, &made)?;
    }
    if let Some(path) = lock.filter(|_| tools_lock.is_none()) {
        write_lock(path, &made)?;
    }
    Ok(Some(folder))
}

/// Writes the sandbox's own lock for a set of requirements.
fn write_set(path: &Path, lock: &Lock) -> Result<(), RunError> {
    if let Some(sets) = path.parent() {
        std::fs::create_dir_all(sets)
            .map_err(|e| RunError::Requirements(format!("{}: {e}", sets.display())))?;
    }
    write_lock(path, lock)
}

/// The name of the sandbox's own lock for `requirements` on `python`.
fn set_key(python: &str, requirements: &[String]) -> String {
    crate::log::hash(&format!("{python}\n{}", requirements.join("\n")))[..32].to_owned()
}

/// The lock at `path`: `None` when there is none; an error when one is there but cannot be
/// read as a lock (a merge conflict, say), as replacing it would accept whatever is fetched.
fn read_lock(path: &Path) -> Result<Option<Lock>, RunError> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => {
            return Err(RunError::Requirements(format!("{}: {error}", path.display())));
        }
    };
    serde_json::from_slice(&bytes).map(Some).map_err(|error| {
        RunError::Requirements(format!(
            "{} is not a lock ({error}); fix it, or delete it to make a new one",
            path.display()
        ))
    })
}

/// Writes `lock` at `path` through a new file renamed into place: never through a symbolic
/// link a repository may have put there.
fn write_lock(path: &Path, lock: &Lock) -> Result<(), RunError> {
    let fail = |error: &dyn std::fmt::Display| {
        RunError::Requirements(format!("cannot write the lock {}: {error}", path.display()))
    };
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(fail(&"it is a symbolic link"));
    }
    let folder = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut file = tempfile::NamedTempFile::new_in(folder).map_err(|e| fail(&e))?;
    let text = serde_json::to_string_pretty(lock).unwrap_or_default() + "\n";
    std::io::Write::write_all(&mut file, text.as_bytes()).map_err(|e| fail(&e))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let _ = file.as_file().set_permissions(std::fs::Permissions::from_mode(0o644));
    }
    file.persist(path).map_err(|e| fail(&e.error))?;
    Ok(())
}

/// A site folder's name: the hash of its wheels' hashes.
fn key(wheels: &[LockedWheel]) -> String {
    let joined: Vec<&str> = wheels.iter().map(|w| w.sha256.as_str()).collect();
    crate::log::hash(&joined.join("\n"))[..32].to_owned()
}

/// pip's "no matching distribution" said as what it means here.
fn native_code(error: &llmtool_local::LocalError) -> RunError {
    let text = error.to_string();
    match text.split("No matching distribution found for ").nth(1) {
        Some(rest) => {
            let package = rest.lines().next().unwrap_or(rest).trim();
            RunError::Requirements(format!(
                "`{package}` has no pure-Python wheel on PyPI: it needs native code, which the sandbox's Python cannot load (or the version does not exist)"
            ))
        }
        None => RunError::Requirements(format!("the requirements could not be fetched: {text}")),
    }
}

/// Unpacks `wheels` into `folder` (through a temporary folder beside it, renamed once whole),
/// every entry a path inside it, within the size and file bounds.
fn unpack(wheels: &[PathBuf], sites: &Path, folder: &Path) -> Result<(), RunError> {
    let fail = |what: String| RunError::Requirements(what);
    std::fs::create_dir_all(sites).map_err(|e| fail(format!("{}: {e}", sites.display())))?;
    // Folders half-unpacked by runs that were killed.
    llmtool_local::store::remove_stale(sites, &|name| name.starts_with(".site-"));
    let partial = tempfile::Builder::new()
        .prefix(".site-")
        .tempdir_in(sites)
        .map_err(|e| fail(format!("{}: {e}", sites.display())))?;
    let (mut bytes, mut count) = (0u64, 0usize);
    for wheel in wheels {
        let file =
            std::fs::File::open(wheel).map_err(|e| fail(format!("{}: {e}", wheel.display())))?;
        let mut archive = zip::ZipArchive::new(file)
            .map_err(|e| fail(format!("{}: not a wheel: {e}", wheel.display())))?;
        for index in 0..archive.len() {
            let mut entry = archive.by_index(index).map_err(|e| fail(e.to_string()))?;
            let Some(relative) = entry.enclosed_name() else {
                return Err(fail(format!("{} names a path outside its folder", wheel.display())));
            };
            let target = partial.path().join(relative);
            count += 1;
            if entry.is_dir() {
                std::fs::create_dir_all(&target).map_err(|e| fail(e.to_string()))?;
                continue;
            }
            if count > MAX_SITE_FILES {
                return Err(fail(format!(
                    "the requirements hold more than {MAX_SITE_FILES} files"
                )));
            }
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent).map_err(|e| fail(e.to_string()))?;
            }
            let mut contents = Vec::new();
            let room = MAX_SITE_BYTES.saturating_sub(bytes);
            (&mut entry)
                .take(room + 1)
                .read_to_end(&mut contents)
                .map_err(|e| fail(e.to_string()))?;
            bytes += contents.len() as u64;
            if bytes > MAX_SITE_BYTES {
                return Err(fail(format!(
                    "the requirements unpack to more than {} MiB",
                    MAX_SITE_BYTES >> 20
                )));
            }
            std::fs::write(&target, contents).map_err(|e| fail(e.to_string()))?;
        }
    }
    std::fs::write(partial.path().join(COMPLETE), b"").map_err(|e| fail(e.to_string()))?;
    let kept = partial.keep();
    if let Err(error) = std::fs::rename(&kept, folder) {
        let _ = std::fs::remove_dir_all(&kept);
        // Another run may have put the same folder in place first.
        if !folder.join(COMPLETE).is_file() {
            return Err(fail(format!("{}: {error}", folder.display())));
        }
    }
    Ok(())
}
