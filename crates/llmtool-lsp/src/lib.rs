//! The language server for tool files (`llmtool lsp`), on `tower-lsp-server`: `check`'s
//! diagnostics as you type, its fixes as code actions, `fmt` as formatting, and navigation
//! between placeholders and the variables they name. `tower-lsp-server` does the protocol's
//! bookkeeping and hands each request to a typed async method (see docs/editors.md for why it
//! rather than `lsp-server` or `async-lsp`).
//!
//! - [`files`] keeps the open files and checks each again after every change;
//! - [`positions`] turns byte offsets into the client's positions (UTF-8 or UTF-16) and back;
//! - [`diagnostics`], [`actions`], [`navigation`] and [`outline`] answer the requests, and
//!   [`server`] wires them to the protocol.

pub mod actions;
pub mod commands;
pub mod completion;
pub mod context;
pub mod diagnostics;
pub mod files;
pub mod hover;
pub mod lenses;
pub mod navigation;
pub mod outline;
pub mod positions;
pub mod schema;
pub mod server;

use llmtool_providers::pricing::PriceTable;
use tower_lsp_server::{LspService, Server};

/// Serves one client on standard input and output until it exits; `prices` are what hover and
/// completion show (the built-in table with the config file's prices over it).
pub async fn serve_stdio(prices: PriceTable) {
    let (service, socket) = LspService::new(|client| server::Server::new(client, prices));
    Server::new(tokio::io::stdin(), tokio::io::stdout(), socket).serve(service).await;
}
