//! Opening the sign-in page in the user's browser, when there is one to open: on a terminal of
//! a desktop session, by the system's opener (`xdg-open`, or macOS's `open`) found on an
//! absolute `PATH` entry, never one in the current folder. Anything else leaves the address
//! printed for the user to open.

use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// Opens `page`; whether an opener was started.
pub(crate) fn open(page: &str) -> bool {
    if !std::io::stderr().is_terminal() || !desktop() {
        return false;
    }
    let Some(opener) = opener() else { return false };
    Command::new(opener)
        .arg(page)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .is_ok()
}

fn desktop() -> bool {
    cfg!(target_os = "macos")
        || ["DISPLAY", "WAYLAND_DISPLAY"].iter().any(|name| std::env::var_os(name).is_some())
}

fn opener() -> Option<PathBuf> {
    let name = if cfg!(target_os = "macos") { "open" } else { "xdg-open" };
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|folder| folder.is_absolute())
        .map(|folder| folder.join(name))
        .find(|candidate| candidate.is_file())
}
