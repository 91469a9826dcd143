//! The MCP server: each tool file as a prompt and as a tool, with completions and list-changed
//! notifications, for the `initialize` protocol revisions and the stateless 2026-07-28 one.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use llmtool_format::model::ToolKind;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult, CompletionInfo,
    ErrorCode, GetPromptRequestParams, GetPromptResponse, Implementation, ListPromptsResult,
    ListToolsResult, PaginatedRequestParams, Reference, ServerCapabilities, ServerConfig,
    SubscriptionFilter,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use tokio::sync::{Semaphore, SemaphorePermit, broadcast};

use crate::audience::Audience;
use crate::library::{Entry, Library};
use crate::prompts;
use crate::tools;
use llmtool_runtime::Runner;

/// What is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Only {
    /// Prompts and tools.
    #[default]
    Both,
    Prompts,
    Tools,
}

impl Only {
    fn prompts(self) -> bool {
        self != Only::Tools
    }
    fn tools(self) -> bool {
        self != Only::Prompts
    }
}

/// How many tool runs may go at once, and how many more may wait for their turn; past that,
/// a `tools/call` is refused with a JSON-RPC error at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunLimits {
    pub concurrent: usize,
    pub queued: usize,
}

impl Default for RunLimits {
    fn default() -> Self {
        Self { concurrent: 4, queued: 64 }
    }
}

/// The JSON-RPC error code of a `tools/call` refused because too many runs wait already (in
/// the range JSON-RPC leaves to servers).
pub const SERVER_BUSY: i32 = -32000;

/// The state every connection shares: the tools, the runner, the channel that announces a
/// changed library, and the turns of tool runs.
pub(crate) struct Shared {
    library: RwLock<Arc<Library>>,
    runner: Arc<dyn Runner>,
    only: Only,
    changes: broadcast::Sender<()>,
    limits: RunLimits,
    runs: Semaphore,
    waiting: AtomicUsize,
}

/// A handle on the served tools: the server for each connection is made from it, and a reload
/// goes through it.
#[derive(Clone)]
pub struct Server {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").field("tools", &self.library().entries().len()).finish()
    }
}

impl Server {
    pub fn new(library: Library, runner: Arc<dyn Runner>, only: Only) -> Server {
        Self::with_limits(library, runner, only, RunLimits::default())
    }

    pub fn with_limits(
        library: Library,
        runner: Arc<dyn Runner>,
        only: Only,
        limits: RunLimits,
    ) -> Server {
        let (changes, _) = broadcast::channel(16);
        let mut library = library;
        library.mark_open_world(|tool| runner.is_remote(tool));
        let shared = Shared {
            library: RwLock::new(Arc::new(library)),
            runner,
            only,
            changes,
            limits,
            runs: Semaphore::new(limits.concurrent.max(1)),
            waiting: AtomicUsize::new(0),
        };
        Server { shared: Arc::new(shared) }
    }

    /// A turn to run a tool: at once if fewer than `concurrent` run, after waiting if fewer
    /// than `queued` wait, else a "busy" error.
    async fn run_turn(&self) -> Result<SemaphorePermit<'_>, ErrorData> {
        let shared = &self.shared;
        if let Ok(permit) = shared.runs.try_acquire() {
            return Ok(permit);
        }
        let ahead = shared.waiting.fetch_add(1, Ordering::SeqCst);
        let _waiting = Waiting(&shared.waiting);
        if ahead >= shared.limits.queued {
            let message = format!(
                "the server is busy: {} tool runs are running and {} waiting; try again later",
                shared.limits.concurrent, shared.limits.queued
            );
            return Err(ErrorData::new(ErrorCode(SERVER_BUSY), message, None));
        }
        shared.runs.acquire().await.map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    /// Tool runs under way and waiting for a turn.
    pub fn runs(&self) -> (usize, usize) {
        let shared = &self.shared;
        let running = shared.limits.concurrent.max(1) - shared.runs.available_permits();
        (running, shared.waiting.load(Ordering::SeqCst))
    }

    /// The tools served now.
    pub fn library(&self) -> Arc<Library> {
        self.shared.library.read().map_or_else(|p| p.into_inner().clone(), |l| l.clone())
    }

    /// Serves `library` from now on. Connected clients are told when what they list changed
    /// (a change that only affects rendering or running, such as a parameter, is served
    /// without a notification).
    pub fn replace(&self, mut library: Library) {
        library.mark_open_world(|tool| self.shared.runner.is_remote(tool));
        let library = Arc::new(library);
        let previous = match self.shared.library.write() {
            Ok(mut current) => std::mem::replace(&mut *current, library.clone()),
            Err(poisoned) => std::mem::replace(&mut *poisoned.into_inner(), library.clone()),
        };
        if !previous.lists_equal(&library) {
            // No receiver means no client is connected: nothing to tell.
            let _ = self.shared.changes.send(());
        }
    }

    /// The entry named `name` that `audience` sees; any other is unknown, and the error lists
    /// only what the audience sees.
    fn entry(
        &self,
        name: &str,
        kind: &str,
        audience: &Audience,
    ) -> Result<(Arc<Library>, usize), ErrorData> {
        let library = self.library();
        let entries = library.entries();
        match entries.iter().position(|e| e.name == name && audience.sees(e)) {
            Some(index) => Ok((library, index)),
            None => {
                let seen = entries.iter().filter(|e| audience.sees(e));
                let names: Vec<&str> = seen.map(|e| e.name.as_str()).collect();
                let known = if names.is_empty() {
                    "none is served".to_owned()
                } else {
                    format!("the {kind}s are {}", names.join(", "))
                };
                Err(ErrorData::invalid_params(format!("unknown {kind} `{name}`: {known}"), None))
            }
        }
    }

    /// `prompts/list`: the prompts `audience` sees. A smart tool has no prompt to give: it
    /// is only a tool.
    pub(crate) fn prompts_seen(&self, audience: &Audience) -> ListPromptsResult {
        if !self.shared.only.prompts() {
            return ListPromptsResult::default();
        }
        let library = self.library();
        let seen = library
            .entries()
            .iter()
            .filter(|e| audience.sees(e) && e.tool.kind() == ToolKind::Prompt);
        ListPromptsResult::with_all_items(seen.map(|e| e.prompt.clone()).collect())
    }

    /// `prompts/get`: the prompt `request` names, rendered with its arguments, if `audience`
    /// sees it.
    pub(crate) fn prompt(
        &self,
        request: &GetPromptRequestParams,
        audience: &Audience,
    ) -> Result<GetPromptResponse, ErrorData> {
        if !self.shared.only.prompts() {
            return Err(ErrorData::invalid_params("this server serves no prompts", None));
        }
        let (library, index) = self.entry(&request.name, "prompt", audience)?;
        let entry = entry_of(&library, index);
        if entry.tool.kind() == ToolKind::Smart {
            let message =
                format!("`{}` is a smart tool: it has no prompt; call it as a tool", request.name);
            return Err(ErrorData::invalid_params(message, None));
        }
        prompts::get(entry, request.arguments.as_ref()).map(Into::into)
    }

    /// `tools/list`: the tools `audience` sees.
    pub(crate) fn tools_seen(&self, audience: &Audience) -> ListToolsResult {
        if !self.shared.only.tools() {
            return ListToolsResult::default();
        }
        let library = self.library();
        let seen = library.entries().iter().filter(|e| audience.sees(e));
        ListToolsResult::with_all_items(seen.map(|e| e.mcp_tool.clone()).collect())
    }

    /// Tells `peer` of each change until its session ends (checked every few seconds, so that
    /// a closed session's task does not live on until the next change).
    async fn announce_changes(&self, peer: rmcp::Peer<RoleServer>) {
        let mut changes = self.shared.changes.subscribe();
        let mut check = tokio::time::interval(Duration::from_secs(5));
        loop {
            tokio::select! {
                received = changes.recv() => match received {
                    Ok(()) | Err(broadcast::error::RecvError::Lagged(_)) => {
                        if self.notify(&peer).await.is_err() {
                            return;
                        }
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                },
                _ = check.tick() => {}
            }
            if peer.is_transport_closed() {
                return;
            }
        }
    }

    async fn notify(&self, peer: &rmcp::Peer<RoleServer>) -> Result<(), rmcp::ServiceError> {
        if self.shared.only.prompts() {
            peer.notify_prompt_list_changed().await?;
        }
        if self.shared.only.tools() {
            peer.notify_tool_list_changed().await?;
        }
        Ok(())
    }
}

/// Counts a waiter for as long as it waits, however the wait ends.
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

fn entry_of(library: &Library, index: usize) -> &Entry {
    &library.entries()[index]
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        let only = self.shared.only;
        let mut capabilities = ServerCapabilities::default();
        if only.prompts() {
            let built = ServerCapabilities::builder()
                .enable_prompts()
                .enable_prompts_list_changed()
                .enable_completions()
                .build();
            capabilities.prompts = built.prompts;
            capabilities.completions = built.completions;
        }
        if only.tools() {
            let built =
                ServerCapabilities::builder().enable_tools().enable_tool_list_changed().build();
            capabilities.tools = built.tools;
        }
        let implementation = Implementation::new("llmtool", env!("CARGO_PKG_VERSION"))
            .with_title("llmtool")
            .with_description("LLM tool files served as MCP prompts and tools");
        ServerConfig::new(capabilities).with_server_info(implementation).with_instructions(
            "Each prompt renders an LLM tool's prompt from its arguments; each tool runs it on a model and returns the answer.",
        )
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(self.prompts_seen(&Audience::of(&context)))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        self.prompt(&request, &Audience::of(&context))
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let Reference::Prompt(prompt) = &request.r#ref else {
            return Ok(CompleteResult::default());
        };
        let (library, index) = self.entry(&prompt.name, "prompt", &Audience::of(&context))?;
        let entry = entry_of(&library, index);
        let variable = entry.template.variables().iter().find(|v| v.name == request.argument.name);
        let mut values =
            variable.map(|v| prompts::complete(v, &request.argument.value)).unwrap_or_default();
        let total = values.len();
        values.truncate(CompletionInfo::MAX_VALUES);
        let has_more = total > values.len();
        let info = CompletionInfo::with_pagination(values, u32::try_from(total).ok(), has_more)
            .map_err(|e| ErrorData::internal_error(e, None))?;
        Ok(CompleteResult::new(info))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(self.tools_seen(&Audience::of(&context)))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if !self.shared.only.tools() {
            return Err(ErrorData::invalid_params("this server serves no tools", None));
        }
        let audience = Audience::of(&context);
        let (library, index) = self.entry(&request.name, "tool", &audience)?;
        let entry = entry_of(&library, index);
        let _turn = self.run_turn().await?;
        let runner = self.shared.runner.as_ref();
        // A client that asked for progress hears of each function the tool's model calls.
        let observer = context
            .meta
            .get_progress_token()
            .map(|token| tools::progress(context.peer.clone(), token));
        let arguments = request.arguments.as_ref();
        Ok(tools::call(entry, arguments, runner, audience.by(), observer).await.into())
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let server = self.clone();
        tokio::spawn(async move { server.announce_changes(context.peer).await });
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let mut accepted = SubscriptionFilter::default();
        if self.shared.only.prompts() {
            accepted.prompts_list_changed = requested.prompts_list_changed;
        }
        if self.shared.only.tools() {
            accepted.tools_list_changed = requested.tools_list_changed;
        }
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let mut changes = self.shared.changes.subscribe();
        loop {
            tokio::select! {
                () = context.cancelled() => return Ok(()),
                received = changes.recv() => {
                    if matches!(received, Err(broadcast::error::RecvError::Closed)) {
                        return Ok(());
                    }
                    let sink = context.sink();
                    if context.accepted().prompts_list_changed == Some(true) {
                        let _ = sink.notify_prompt_list_changed().await;
                    }
                    if context.accepted().tools_list_changed == Some(true) {
                        let _ = sink.notify_tool_list_changed().await;
                    }
                }
            }
        }
    }
}
