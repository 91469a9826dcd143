//! The library over MCP at `/mcp`: every tool not deleted (its latest version, or the version
//! one label points at) served as a prompt and as a tool. The lists are read again when the
//! library changes, here or on another server of the same database, and connected clients
//! are told (`notifications/prompts/list_changed`, `tools/list_changed`).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse as _, Response};
use llmtool_mcp::transport::HttpOptions;
use llmtool_mcp::{Library, LibraryOptions, Only, RunLimits, Runner, Server};
use llmtool_registry::{Reference, Role, Store, StoreError};
use tokio::sync::Notify;

use crate::auth::Caller;

/// How long changes are gathered before the lists are read again (a burst of publishes is one
/// reload).
const SETTLE: Duration = Duration::from_millis(50);

/// How the library is served over MCP.
#[derive(Debug, Clone, Default)]
pub struct McpOptions {
    /// Serve the version this label points at (tools without it are left out), not the latest.
    pub label: Option<String>,
    /// Tool runs at once, and waiting, over MCP.
    pub limits: RunLimits,
    /// `Host` and `Origin` rules and session bounds of the endpoint (its token is the
    /// library's: see `access`).
    pub http: HttpOptions,
}

/// The MCP server of the library, and what keeps its lists current.
pub(crate) struct Mcp {
    pub(crate) server: Server,
    pub(crate) http: HttpOptions,
    label: Option<String>,
    changed: Notify,
}

impl Mcp {
    /// Serves the library of `store` now, running tools with `runner`.
    pub(crate) async fn start(
        store: &dyn Store,
        runner: Arc<dyn Runner>,
        options: McpOptions,
    ) -> Result<Arc<Mcp>, StoreError> {
        let library = load(store, options.label.as_deref()).await?;
        let server = Server::with_limits(library, runner, Only::Both, options.limits);
        // The library's tokens admit a client (see `access`), and bodies are bounded as the
        // API's are.
        let http = HttpOptions { token: None, max_body_bytes: crate::MAX_BODY, ..options.http };
        Ok(Arc::new(Mcp { server, http, label: options.label, changed: Notify::new() }))
    }

    /// The library changed: read the lists again soon.
    pub(crate) fn changed(&self) {
        self.changed.notify_one();
    }

    /// Reads the lists again after each change, for as long as the server runs.
    pub(crate) async fn follow(self: Arc<Self>, store: Arc<dyn Store>) {
        loop {
            self.changed.notified().await;
            tokio::time::sleep(SETTLE).await;
            match load(store.as_ref(), self.label.as_deref()).await {
                Ok(library) => self.server.replace(library),
                Err(error) => tracing::warn!("the MCP lists are not updated: {error}"),
            }
        }
    }
}

/// The library's tools as MCP serves them, each known by `registry:SLUG@VERSION`.
async fn load(store: &dyn Store, label: Option<&str>) -> Result<Library, StoreError> {
    let mut tools = Vec::new();
    for (slug, version, text) in store.current(label).await? {
        // Every stored version passed `check` when it was published.
        if let Some(tool) = llmtool_core::Document::from_text(text).tool {
            tools.push((PathBuf::from(Reference::pinned(&slug, version).path()), tool));
        }
    }
    let mut problems = Vec::new();
    let library = Library::from_tools(tools, &LibraryOptions::default(), &mut problems);
    for problem in problems {
        tracing::warn!("{} is not served over MCP: {}", problem.path.display(), problem.report);
    }
    Ok(library)
}

/// Who may use `/mcp`: anyone with a token of the library's. Public reading does not open it,
/// since its tools run on the server's models and keys.
pub(crate) async fn access(caller: Caller, request: Request, next: Next) -> Response {
    match caller.require_token(Role::Viewer) {
        Ok(()) => next.run(request).await,
        Err(problem) => problem.into_response(),
    }
}
