//! Reading tool files and standard input, finding tool files under folders, and writing output.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use llmtool_format::limits;
use llmtool_runtime::files;

/// The name diagnostics use for standard input.
pub(crate) const STDIN_NAME: &str = "<stdin>";

pub(crate) fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// The largest file read: `LLMTOOL_MAX_FILE_BYTES`, else the default (64 MB).
pub(crate) fn max_file_bytes() -> u64 {
    static LIMIT: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *LIMIT.get_or_init(|| {
        let Ok(value) = std::env::var(limits::MAX_FILE_BYTES_VARIABLE) else {
            return limits::DEFAULT_MAX_FILE_BYTES;
        };
        limits::parse_size(&value).unwrap_or_else(|| {
            eprintln!(
                "warning: {}=`{value}` is not a size (such as 1000, 64M or 1G); using 64M",
                limits::MAX_FILE_BYTES_VARIABLE
            );
            limits::DEFAULT_MAX_FILE_BYTES
        })
    })
}

/// Reads a file, or standard input for `-`, up to [`max_file_bytes`].
pub(crate) fn read_input(path: &Path) -> anyhow::Result<Vec<u8>> {
    let limit = max_file_bytes();
    if is_stdin(path) {
        return limits::read_bounded(std::io::stdin().lock(), limit)
            .context("cannot read standard input");
    }
    read_file(path)
}

/// Reads a file up to [`max_file_bytes`] (its size is checked before anything is read).
pub(crate) fn read_file(path: &Path) -> anyhow::Result<Vec<u8>> {
    Ok(files::read(path, max_file_bytes())?)
}

/// How a path is shown in diagnostics.
pub(crate) fn display_name(path: &Path) -> String {
    if is_stdin(path) { STDIN_NAME.to_owned() } else { path.display().to_string() }
}

/// The tool files named by `paths` (see `llmtool_runtime::files` for the rule), `-` kept as
/// is; a link that leads nowhere is skipped with a warning, a folder that cannot be listed is
/// an error.
pub(crate) fn collect_files(paths: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    collect_matching(paths, files::is_tool_file)
}

/// The files named by `paths` that `wanted` takes, by the same rule.
pub(crate) fn collect_matching(
    paths: &[PathBuf],
    wanted: impl Fn(&Path) -> bool + Sync,
) -> anyhow::Result<Vec<PathBuf>> {
    let (found, problems) = files::find_matching(paths, wanted);
    reported(problems)?;
    Ok(found)
}

/// [`collect_matching`]'s files, each handed to `each` on rayon's threads as soon as the walk
/// finds it (so that reading and checking go on while the walk does), with what `each` made
/// of them in [`collect_matching`]'s order. Each thread reads with its own [`files::Reader`].
pub(crate) fn each_matching<T: Send>(
    paths: &[PathBuf],
    wanted: impl Fn(&Path) -> bool + Sync,
    each: impl Fn(&mut files::Reader, &Path) -> T + Sync + Send,
) -> anyhow::Result<Vec<(PathBuf, T)>> {
    use rayon::iter::{ParallelBridge as _, ParallelIterator as _};
    let walked: Vec<files::Walked<(PathBuf, T)>> = files::walk_matching(paths, &wanted)
        .par_bridge()
        .map_init(
            || files::Reader::new(max_file_bytes()),
            |reader, (root, item)| {
                (
                    root,
                    item.map(|path| {
                        let made = each(reader, &path);
                        (path, made)
                    }),
                )
            },
        )
        .collect();
    let (found, problems) = files::split_walk(walked);
    reported(problems)?;
    Ok(found)
}

/// Prints the walk's warnings (a link that leads nowhere is skipped); a folder that cannot be
/// listed is an error.
fn reported(problems: Vec<files::FileError>) -> anyhow::Result<()> {
    let (warnings, errors): (Vec<_>, Vec<_>) =
        problems.into_iter().partition(files::FileError::is_warning);
    for warning in warnings {
        eprintln!("warning: {warning}");
    }
    match errors.into_iter().next() {
        Some(error) => Err(error.into()),
        None => Ok(()),
    }
}

/// Writes to standard output in one go.
pub(crate) fn write_stdout(bytes: &[u8]) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(bytes)?;
    stdout.flush()?;
    Ok(())
}

pub(crate) fn stdout_is_terminal() -> bool {
    std::io::stdout().is_terminal()
}

pub(crate) fn stderr_is_terminal() -> bool {
    std::io::stderr().is_terminal()
}

/// Whether to colour output on a stream: a terminal, and `NO_COLOR` unset.
pub(crate) fn color_for(is_terminal: bool) -> bool {
    is_terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Replaces `path` with `contents` atomically (a sibling temporary file, then a rename), so an
/// interrupted write never leaves half a file.
pub(crate) fn write_atomically(path: &Path, contents: &[u8]) -> anyhow::Result<()> {
    replace(path, contents, false)
}

/// [`write_atomically`] for a file only its owner may read (it holds a token): the temporary
/// file is made 0600, under a name nobody can have prepared (no link is followed into it).
pub(crate) fn write_privately(path: &Path, contents: &[u8]) -> anyhow::Result<()> {
    replace(path, contents, true)
}

fn replace(path: &Path, contents: &[u8], private: bool) -> anyhow::Result<()> {
    // A symbolic link is written through: the file it points to changes, the link stays.
    let resolved = match std::fs::symlink_metadata(path) {
        Ok(metadata) if metadata.file_type().is_symlink() => std::fs::canonicalize(path)
            .with_context(|| format!("cannot follow the link `{}`", path.display()))?,
        _ => path.to_path_buf(),
    };
    let path = resolved.as_path();
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let temp = dir.join(format!(".{name}.llmtool-{}.tmp", std::process::id()));
    let written = if private {
        llmtool_log::private::open_private(
            std::fs::OpenOptions::new().write(true).create_new(true),
            &temp,
        )
        .and_then(|(mut file, _)| file.write_all(contents).and_then(|()| file.sync_all()))
    } else {
        std::fs::write(&temp, contents)
    };
    if let Err(error) = written {
        if private {
            let _ = std::fs::remove_file(&temp);
        }
        return Err(error).with_context(|| format!("cannot write `{}`", temp.display()));
    }
    if !private && let Ok(metadata) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(&temp, metadata.permissions());
    }
    std::fs::rename(&temp, path)
        .with_context(|| format!("cannot replace `{}`", path.display()))
        .inspect_err(|_| {
            let _ = std::fs::remove_file(&temp);
        })
}

/// Whether an error is a closed pipe (`llmtool ... | head`), which is not a failure.
pub(crate) fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
