//! The library over MCP at `/mcp`: every tool not deleted (its latest version, or the version
//! one label points at) served as a prompt and as a tool. The lists are read again when the
//! library changes, here or on another server of the same database, and connected clients
//! are told (`notifications/prompts/list_changed`, `tools/list_changed`). A change made
//! through this server is seen by the next request: it waits for the lists to be read again.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse as _, Response};
use llmtool_mcp::transport::HttpOptions;
use llmtool_mcp::{Audience, Library, LibraryOptions, Only, RunLimits, Runner, Server};
use llmtool_registry::{Reference, Role, Store, StoreError, Visibility};
use tokio::sync::{Notify, watch};

use crate::ServerState;
use crate::auth::Caller;

/// How long changes are gathered before the lists are read again (a burst of publishes is one
/// reload).
const SETTLE: Duration = Duration::from_millis(50);

/// The longest a request waits for the lists to catch up with a change: past it, it is served
/// from the lists as they are (a store that cannot be read must not stall `/mcp`).
const CATCH_UP: Duration = Duration::from_secs(5);

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
    /// The Streamable HTTP endpoint (before the library's access check).
    pub(crate) endpoint: axum::Router,
    pub(crate) sessions: llmtool_mcp::transport::OpenSessions,
    label: Option<String>,
    changed: Notify,
    /// How many changes were announced, and how many of them the lists served now include.
    announced: AtomicU64,
    included: watch::Sender<u64>,
    /// The tags of each tool served, by slug: what decides who sees it.
    tags: RwLock<Arc<TagsBySlug>>,
    /// Who opened each session, by its id: only they may use it.
    openers: quick_cache::sync::Cache<String, String>,
}

type TagsBySlug = HashMap<String, Vec<String>>;

impl Mcp {
    /// Serves the library of `store` now, running tools with `runner`.
    pub(crate) async fn start(
        store: &dyn Store,
        runner: Arc<dyn Runner>,
        options: McpOptions,
    ) -> Result<Arc<Mcp>, StoreError> {
        let (library, tags) = load(store, options.label.as_deref()).await?;
        let server = Server::with_limits(library, runner, Only::Both, options.limits);
        // The library's tokens admit a client (see `access`), and bodies are bounded as the
        // API's are.
        let http = HttpOptions { token: None, max_body_bytes: crate::MAX_BODY, ..options.http };
        let (endpoint, sessions) = llmtool_mcp::transport::endpoint(&server, &http);
        let tags = RwLock::new(Arc::new(tags));
        let changed = Notify::new();
        // Room for the sessions open and as many closed: a session's opener is forgotten only
        // long after the endpoint closed it (and a forgotten one is refused, not opened).
        let openers = quick_cache::sync::Cache::new(http.max_sessions.max(64) * 2);
        let label = options.label;
        let (announced, included) = (AtomicU64::new(0), watch::Sender::new(0));
        Ok(Arc::new(Mcp {
            server,
            endpoint,
            sessions,
            label,
            changed,
            announced,
            included,
            tags,
            openers,
        }))
    }

    /// What `visibility` sees of the tools served: a tool is known by its `registry:` path,
    /// and seen by the rule, on its tags.
    fn audience(&self, visibility: Visibility) -> Audience {
        let tags = self.tags.read().map_or_else(|p| p.into_inner().clone(), |t| t.clone());
        Audience::new(move |entry| {
            let path = entry.path.to_string_lossy();
            let slug = Reference::from_path(&path).flatten().map(|reference| reference.slug);
            let theirs = slug.as_deref().and_then(|slug| tags.get(slug));
            visibility.sees(theirs.map_or(&[][..], Vec::as_slice))
        })
    }

    /// The library changed: read the lists again soon.
    pub(crate) fn changed(&self) {
        self.announced.fetch_add(1, Ordering::SeqCst);
        self.changed.notify_one();
    }

    /// Waits (at most [`CATCH_UP`]) until the lists include every change announced so far.
    async fn caught_up(&self) {
        let announced = self.announced.load(Ordering::SeqCst);
        let mut included = self.included.subscribe();
        let _ = tokio::time::timeout(CATCH_UP, included.wait_for(|&n| n >= announced)).await;
    }

    /// Reads the lists again after each change, for as long as the server runs.
    pub(crate) async fn follow(self: Arc<Self>, store: Arc<dyn Store>) {
        loop {
            self.changed.notified().await;
            tokio::time::sleep(SETTLE).await;
            let announced = self.announced.load(Ordering::SeqCst);
            match load(store.as_ref(), self.label.as_deref()).await {
                Ok((library, tags)) => {
                    // The tags first: a tool listed before its tags are known is seen by
                    // nobody but owners and admins, never by the wrong member.
                    match self.tags.write() {
                        Ok(mut current) => *current = Arc::new(tags),
                        Err(poisoned) => *poisoned.into_inner() = Arc::new(tags),
                    }
                    self.server.replace(library);
                }
                Err(error) => tracing::warn!("the MCP lists are not updated: {error}"),
            }
            // Also after a failure: the requests waiting are served from the lists as they are.
            self.included.send_replace(announced);
        }
    }
}

/// The library's tools as MCP serves them, each known by `registry:SLUG@VERSION`, and their
/// tags.
async fn load(store: &dyn Store, label: Option<&str>) -> Result<(Library, TagsBySlug), StoreError> {
    let mut tags = TagsBySlug::new();
    for (slug, tag) in store.tags_of_tools().await? {
        tags.entry(slug).or_default().push(tag);
    }
    let mut tools = Vec::new();
    for (slug, version, text) in store.current(label).await? {
        // Every stored version passed `check` when it was published.
        if let Some(tool) = llmtool_format::Document::from_text(text).tool {
            tools.push((PathBuf::from(Reference::pinned(&slug, version).path()), tool));
        }
    }
    let mut problems = Vec::new();
    let library = Library::from_tools(tools, &LibraryOptions::default(), &mut problems);
    for problem in problems {
        tracing::warn!("{} is not served over MCP: {}", problem.path.display(), problem.report);
    }
    Ok((library, tags))
}

/// Who may use `/mcp`: anyone with a token of the library's. Public reading does not open it,
/// since its tools run on the server's models and keys. Each request sees the tools its caller
/// sees (the [`Audience`] it carries), as on every other path.
pub(crate) async fn access(
    State(state): State<ServerState>,
    caller: Caller,
    mut request: Request,
    next: Next,
) -> Response {
    if let Err(problem) = caller.require_token(Role::Viewer) {
        return problem.into_response();
    }
    let Some(mcp) = state.mcp() else { return next.run(request).await };
    // A session is its opener's: another token holding its id is told there is none, as
    // for an id never given (it could otherwise read the answers streamed to it, or act in it).
    let opener = format!("{}\n{}", caller.name.as_deref().unwrap_or_default(), caller.member);
    let session = request.headers().get(SESSION_HEADER).and_then(|v| v.to_str().ok());
    if let Some(session) = session
        && mcp.openers.get(session).as_deref() != Some(opener.as_str())
    {
        return crate::Problem::new(
            axum::http::StatusCode::NOT_FOUND,
            "Not Found",
            "no such MCP session: initialize a new one",
        )
        .into_response();
    }
    let opening = session.is_none();
    mcp.caught_up().await;
    request.extensions_mut().insert(mcp.audience(caller.visibility).known_as(caller.name));
    let response = next.run(request).await;
    if opening
        && let Some(id) = response.headers().get(SESSION_HEADER)
        && let Ok(id) = id.to_str()
    {
        mcp.openers.insert(id.to_owned(), opener);
    }
    response
}

/// The header a Streamable HTTP session's id travels in.
const SESSION_HEADER: &str = "mcp-session-id";
