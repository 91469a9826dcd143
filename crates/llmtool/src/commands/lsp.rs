//! `llmtool lsp`: the language server, on standard input and output until the editor exits.

mod args;

pub(crate) use args::LspArgs;

use llmtool_providers::pricing::PriceTable;

use crate::outcome::Outcome;

use crate::settings::load_providers;

pub(crate) fn run(args: &LspArgs) -> anyhow::Result<Outcome> {
    // A config file that cannot be read must not keep the editor from checking files: the
    // server says why on standard error (the editor's log) and shows built-in prices.
    let prices = load_providers(args.config.as_deref()).map_or_else(
        |error| {
            eprintln!("llmtool lsp: {error:#}; hover and completion show built-in prices");
            PriceTable::new(std::collections::HashMap::new())
        },
        |providers| providers.price_table(),
    );
    let threads = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    threads.block_on(llmtool_lsp::serve_stdio(prices));
    Ok(Outcome::Ok)
}
