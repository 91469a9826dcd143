//! `llmtool lsp`: the language server, on standard input and output until the editor exits.

use crate::Outcome;

pub(crate) fn run() -> anyhow::Result<Outcome> {
    let threads = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    threads.block_on(llmtool_lsp::serve_stdio());
    Ok(Outcome::Ok)
}
