//! Puts the commit the binary is built from into `llmtool --version`, as rustc and cargo do:
//! `llmtool 0.1.0 (e413bf7c1a2b 2026-12-01)`. Outside a git checkout (a source archive) the
//! version stands alone.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let output = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    (output.status.success() && !text.trim().is_empty()).then(|| text.trim().to_owned())
}

fn main() {
    let version = env!("CARGO_PKG_VERSION");
    let described =
        match (git(&["rev-parse", "--short=12", "HEAD"]), git(&["log", "-1", "--format=%cs"])) {
            (Some(commit), Some(date)) => format!("{version} ({commit} {date})"),
            _ => version.to_owned(),
        };
    println!("cargo:rustc-env=LLMTOOL_VERSION={described}");
    // Built again when HEAD moves: to another branch, or to a new commit on this one. Only
    // files that exist are named: cargo reruns a script whose named file is missing every time.
    let mut watched = vec!["HEAD".to_owned(), "packed-refs".to_owned()];
    watched.extend(git(&["symbolic-ref", "-q", "HEAD"]));
    for name in watched {
        if let Some(path) = git(&["rev-parse", "--git-path", &name])
            && std::path::Path::new(&path).exists()
        {
            println!("cargo:rerun-if-changed={path}");
        }
    }
}
