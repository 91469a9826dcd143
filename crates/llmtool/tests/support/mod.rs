//! What the tests that drive the binary against a tool library share.

use std::path::Path;
use std::process::{Command, Output, Stdio};

/// Runs `llmtool args` with the data folder `data`, no config, no run log and no library
/// from the environment, and `env` over that.
pub(crate) fn llmtool(data: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_llmtool"))
        .args(args)
        .env("LLMTOOL_DATA_DIR", data)
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .env("LLMTOOL_NO_LOG", "1")
        .env_remove("LLMTOOL_REGISTRY")
        .env_remove("LLMTOOL_TOKEN")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
