//! Keeps the served tools in step with their files: a change under a watched path reloads the
//! library, reports the files that became invalid, and announces the new lists to clients.

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

use notify::{RecursiveMode, Watcher};

use crate::{FileProblem, Library, LibraryOptions, Server};

/// How long changes are gathered before one reload (an editor's save is several events).
const SETTLE: Duration = Duration::from_millis(150);

/// Watches `paths` until the returned watcher is dropped. After each burst of changes the
/// library is read again (an invalid file keeps its last good version) and `report` is given
/// the problems found.
pub fn spawn(
    server: Server,
    paths: Vec<PathBuf>,
    options: LibraryOptions,
    report: impl Fn(&[FileProblem], &Library) + Send + 'static,
) -> notify::Result<notify::RecommendedWatcher> {
    let (events, received) = mpsc::channel();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        if event.is_ok_and(|e| !e.kind.is_access()) {
            let _ = events.send(());
        }
    })?;
    for path in &paths {
        // A tool of the team library (`registry:SLUG`) is no file: nothing here to watch.
        if path.to_str().and_then(llmtool_runtime::files::Reference::from_path).is_some() {
            continue;
        }
        // A file is watched through its folder, so that editors that replace it are seen.
        let folder = if path.is_dir() {
            path.clone()
        } else {
            path.parent().map_or_else(|| PathBuf::from("."), std::path::Path::to_path_buf)
        };
        let folder = if folder.as_os_str().is_empty() { PathBuf::from(".") } else { folder };
        watcher.watch(&folder, RecursiveMode::Recursive)?;
    }
    std::thread::spawn(move || {
        while received.recv().is_ok() {
            // Gather the rest of the burst.
            while received.recv_timeout(SETTLE).is_ok() {}
            let previous = server.library();
            let (library, problems) = Library::load(&paths, &options, Some(&previous));
            report(&problems, &library);
            server.replace(library);
        }
    });
    Ok(watcher)
}
