//! Where llmtool keeps its data: `$LLMTOOL_DATA_DIR`, else `$XDG_DATA_HOME/llmtool`, else
//! `~/.local/share/llmtool`.

use std::path::PathBuf;

/// The run log's file in the data directory.
pub const DATABASE_FILE: &str = "runs.db";

/// The data directory, or `None` when neither variable nor a home directory says where.
pub fn data_dir() -> Option<PathBuf> {
    let set = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    set("LLMTOOL_DATA_DIR")
        .or_else(|| set("XDG_DATA_HOME").map(|dir| dir.join("llmtool")))
        .or_else(|| set("HOME").map(|home| home.join(".local/share/llmtool")))
}
