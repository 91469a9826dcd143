//! Paths the integration tests share: the repository and its tool files.

#![allow(dead_code, reason = "each test binary uses some of these")]

use std::path::{Path, PathBuf};

/// The repository's root.
pub(crate) fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The `.json` files directly under `dir` (relative to the repository), sorted.
pub(crate) fn json_files_under(dir: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo().join(dir))
        .unwrap_or_else(|error| panic!("{dir}: {error}"))
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

/// The example tools (their test files, `*.tests.json`, beside them are not tools).
pub(crate) fn examples() -> Vec<PathBuf> {
    json_files_under("examples").into_iter().filter(|p| !is_test_file(p)).collect()
}

/// The examples' test files.
pub(crate) fn example_test_files() -> Vec<PathBuf> {
    json_files_under("examples").into_iter().filter(|p| is_test_file(p)).collect()
}

fn is_test_file(path: &Path) -> bool {
    path.file_name().is_some_and(|n| llmtool_format::suite::is_test_file_name(&n.to_string_lossy()))
}
