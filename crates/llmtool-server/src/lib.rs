//! The tool library over HTTP (`llmtool serve`): the registry's tools under `/api/v1`, read
//! publicly or with a token, written by editors, administered by admins, every error an RFC
//! 9457 problem document; the same library over MCP at `/mcp`; and the web studio at `/`.

mod api;
mod audit_api;
mod auth;
mod cache;
mod collaboration_api;
mod control_api;
mod conversation_api;
mod documents_api;
mod functions;
mod hop_page;
mod host;
mod integrations;
mod invites;
mod keyring;
mod limit;
mod mail;
mod mcp;
mod members;
mod metrics;
mod observe;
mod operations;
mod pictures_api;
mod problem;
mod run_api;
mod run_events;
mod runs;
mod seed;
mod session;
mod sidebar_api;
mod sign_in;
mod slack;
mod smart_runs;
mod snapshot_api;
mod spend_api;
mod sso;
mod studio;
mod studio_api;
mod token_api;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use llmtool_mcp::RunLimits;
use llmtool_registry::{Change, Store, StoreError};

use crate::cache::ReadCache;
use crate::mcp::Mcp;
use crate::runs::Runs;

pub use auth::{Access, new_token, token_hash};
pub use invites::{INVITE_LIFETIME, Invite, InviteError, make_invite, send_invite};
pub use keyring::{KEYRING_VARIABLE, Keyring, KeyringError};
pub use limit::RateLimiter;
pub use llmtool_mcp::transport::ConnectionLimits;
pub use mail::{Mail, MailError, Mailer};
pub use mcp::McpOptions;
pub use observe::REQUEST_ID;
pub use pictures_api::DEFAULT_PICTURE_STORAGE;
pub use problem::{OVER_BUDGET, Problem};
pub use seed::{BUILT_IN, seed_built_ins};
pub use sign_in::{SetupError, SignInSetup};
pub use slack::SlackOptions;
pub use sso::Sso;

/// The largest request body: a tool file is at most 1 MiB (`llmtool check`'s limit).
pub const MAX_BODY: usize = 1 << 20;

/// How long runs in flight may take to end once the server is stopping, unless given.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(30);

/// What the server is set up with.
#[derive(Clone)]
pub struct ServerState {
    pub store: Arc<dyn Store>,
    pub access: Access,
    /// Requests per minute for each token (or client address, without one).
    pub limiter: Arc<RateLimiter>,
    cache: Arc<ReadCache>,
    mcp: Option<Arc<Mcp>>,
    runs: Option<Arc<Runs>>,
    /// `Host` names answered besides loopback names and the address itself.
    allowed_hosts: Arc<[String]>,
    /// Turns of the costly work a request may ask for (checking a file): one per core.
    checks: Arc<tokio::sync::Semaphore>,
    /// How people sign in besides pasting a token: invites by mail, single sign-on.
    sign_in: Arc<SignInSetup>,
    /// What seals the integrations' keys; without it, no key can be added or used.
    keyring: Option<Arc<Keyring>>,
    metrics: Arc<metrics::Metrics>,
    /// What makes each request's server span, when traces are exported.
    tracer: Option<Arc<opentelemetry::global::BoxedTracer>>,
    /// Cancelled when the server starts stopping: `/readyz` then fails.
    stopping: tokio_util::sync::CancellationToken,
    /// Cancelled once the runs in flight have ended: the MCP streams then close.
    streams: tokio_util::sync::CancellationToken,
    /// How long runs in flight may take to end once the server is stopping.
    grace: Duration,
    /// The most bytes of image tools' pictures the library keeps with their runs.
    picture_storage: u64,
    /// The limits of the connections [`serve`] accepts.
    connections: Arc<ConnectionLimits>,
    /// Whether `/metrics` names the tools not every member sees.
    private_tools_in_metrics: bool,
    /// The server's Slack app, when it has one.
    slack: Arc<slack::SlackHolder>,
    /// Wakes the Slack poster: a conversation's turn was kept, or one was connected.
    slack_wake: Arc<tokio::sync::Notify>,
}

impl ServerState {
    pub fn new(store: Arc<dyn Store>, access: Access, limiter: Arc<RateLimiter>) -> ServerState {
        ServerState {
            store,
            access,
            limiter,
            cache: Arc::new(ReadCache::new()),
            mcp: None,
            runs: None,
            allowed_hosts: Arc::new([]),
            checks: Arc::new(tokio::sync::Semaphore::new(
                std::thread::available_parallelism().map_or(2, std::num::NonZero::get),
            )),
            sign_in: Arc::default(),
            keyring: None,
            metrics: Arc::new(metrics::Metrics::new()),
            tracer: None,
            stopping: tokio_util::sync::CancellationToken::new(),
            streams: tokio_util::sync::CancellationToken::new(),
            picture_storage: DEFAULT_PICTURE_STORAGE,
            grace: DEFAULT_GRACE,
            connections: Arc::new(ConnectionLimits::default()),
            private_tools_in_metrics: false,
            slack: Arc::default(),
            slack_wake: Arc::default(),
        }
    }

    /// Answers Slack's requests (`/slack/events`, `/slack/commands`, `/slack/interactivity`)
    /// as the app `options` describes; an empty signing secret or an address that is not
    /// http(s) is refused.
    pub fn with_slack(mut self, options: SlackOptions) -> Result<Self, String> {
        let api_url = options.api_url.clone();
        self.slack = Arc::new(slack::SlackHolder::new(Some(options), api_url)?);
        Ok(self)
    }

    /// Answers Slack as the app an admin adds in the Control Center, whose Web API is at
    /// `api_url` (Slack's own when `None`), unless [`ServerState::with_slack`] gave one.
    pub fn with_slack_api(mut self, api_url: Option<String>) -> Result<Self, String> {
        if !self.slack.set_by_files() {
            self.slack = Arc::new(slack::SlackHolder::new(None, api_url)?);
        }
        Ok(self)
    }

    /// The server's Slack app now, when it has one.
    pub(crate) fn slack(&self) -> Option<Arc<slack::Slack>> {
        self.slack.current()
    }

    pub(crate) fn slack_holder(&self) -> &slack::SlackHolder {
        &self.slack
    }

    /// Wakes the Slack poster (a turn was kept, a conversation connected).
    pub(crate) fn wake_slack(&self) {
        self.slack_wake.notify_one();
    }

    /// Starts posting the conversations connected to Slack (and reading the library's Slack
    /// app, as admins change it), until the server stops.
    pub fn start_slack(&self) {
        tokio::spawn(slack::poster::run(self.clone()));
    }

    /// Names in `/metrics`' `tool` label the tools not every member sees (those without the
    /// `all` tag) too; without it their runs are counted under `private`, since whoever may
    /// scrape the metrics need not see those tools. Set before [`ServerState::with_runtime`].
    #[must_use]
    pub fn with_private_tools_in_metrics(mut self, named: bool) -> Self {
        self.private_tools_in_metrics = named;
        self
    }

    /// Whether `peer` is a reverse proxy the server trusts to name its clients
    /// ([`ConnectionLimits::proxies`], `--trusted-proxy`).
    pub(crate) fn trusts_proxy(&self, peer: std::net::IpAddr) -> bool {
        self.connections.proxies.contains(&peer)
    }

    /// Serves connections within `limits` (header and idle deadlines, caps by address and in
    /// all); [`ConnectionLimits::default`] unless given.
    #[must_use]
    pub fn with_connection_limits(mut self, limits: ConnectionLimits) -> Self {
        self.connections = Arc::new(limits);
        self
    }

    /// Lets runs in flight take `grace` to end once the server is stopping (30 seconds unless
    /// given).
    #[must_use]
    pub fn with_grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    /// Counts what `/metrics` shows, or (`on` false) nothing, `/metrics` then answering 404.
    /// Set before [`ServerState::with_runtime`], which counts the runs.
    #[must_use]
    pub fn with_metrics(mut self, on: bool) -> Self {
        let mut metrics = metrics::Metrics::new();
        metrics.on = on;
        self.metrics = Arc::new(metrics);
        self
    }

    /// Makes a server span of each request with OpenTelemetry's global tracer provider (which
    /// the caller sets up to export them), when `on`.
    #[must_use]
    pub fn with_traces(mut self, on: bool) -> Self {
        self.tracer = on.then(|| Arc::new(opentelemetry::global::tracer("llmtool")));
        self
    }

    pub(crate) fn tracer(&self) -> Option<&opentelemetry::global::BoxedTracer> {
        self.tracer.as_deref()
    }

    pub(crate) fn metrics(&self) -> &metrics::Metrics {
        &self.metrics
    }

    /// Whether the server is stopping (it still answers what it was asked before).
    pub(crate) fn stopping(&self) -> bool {
        self.stopping.is_cancelled()
    }

    /// What the metrics' gauges read now.
    fn now(&self) -> metrics::Now {
        let (api_running, api_waiting) = self.runs.as_ref().map_or((0, 0), |runs| runs.load());
        let (mcp_running, mcp_waiting) = self.mcp.as_ref().map_or((0, 0), |mcp| mcp.server.runs());
        metrics::Now {
            runs_active: api_running + mcp_running,
            runs_waiting: api_waiting + mcp_waiting,
            mcp_sessions: self.mcp.as_ref().map_or(0, |mcp| mcp.sessions.count()),
            studio_sessions: None,
            pool: Some(self.store.pool_use()),
        }
    }

    /// Seals and opens the integrations' keys with `keyring`.
    #[must_use]
    pub fn with_keyring(mut self, keyring: Keyring) -> Self {
        self.keyring = Some(Arc::new(keyring));
        self
    }

    pub(crate) fn keyring(&self) -> Option<&Keyring> {
        self.keyring.as_deref()
    }

    /// Signs people in by invite and single sign-on as `setup` says.
    #[must_use]
    pub fn with_sign_in(mut self, setup: SignInSetup) -> Self {
        self.sign_in = Arc::new(setup);
        self
    }

    pub(crate) fn sign_in(&self) -> &SignInSetup {
        &self.sign_in
    }

    /// Whether the client reached the studio over HTTPS: its public URL is an `https` one, or
    /// a proxy in front says so (`X-Forwarded-Proto`). Cookies are then `Secure` and named
    /// `__Host-`; on plain HTTP a browser would drop a secure cookie.
    pub(crate) fn https(&self, headers: &axum::http::HeaderMap) -> bool {
        self.sign_in.public_url.as_deref().is_some_and(|url| url.starts_with("https://"))
            || headers
                .get("x-forwarded-proto")
                .and_then(|value| value.to_str().ok())
                .is_some_and(|value| value.eq_ignore_ascii_case("https"))
    }

    /// Answers requests that name `hosts` too (`name` or `name:port`: what a reverse proxy
    /// passes on), besides loopback names and the server's own address.
    #[must_use]
    pub fn with_allowed_hosts(mut self, hosts: Vec<String>) -> Self {
        self.allowed_hosts = hosts.into();
        self
    }

    /// Keeps at most `bytes` bytes of image tools' pictures with their runs (the newest; 0
    /// keeps none). Set before [`ServerState::with_runtime`], whose runs keep them.
    #[must_use]
    pub fn with_picture_storage(mut self, bytes: u64) -> Self {
        self.picture_storage = bytes;
        self
    }

    /// Runs tools (`POST /tools/{slug}/run`) with `runtime`, `limits.concurrent` at once and
    /// `limits.queued` waiting, each run kept with its cost in the library's database (and an
    /// image tool's pictures with it, as [`ServerState::with_picture_storage`] allows).
    #[must_use]
    pub fn with_runtime(mut self, runtime: llmtool_runtime::Runtime, limits: RunLimits) -> Self {
        let metrics = Arc::clone(&self.metrics);
        let keeping = runs::Keeping {
            metrics,
            picture_storage: self.picture_storage,
            private_tools_named: self.private_tools_in_metrics,
            slack_wake: Arc::clone(&self.slack_wake),
        };
        self.runs = Some(Arc::new(Runs::new(runtime, Arc::clone(&self.store), keeping, limits)));
        self
    }

    /// What runs MCP's tool calls like the API's runs (admitted by the same gate and budgets,
    /// kept in the library's database), once [`ServerState::with_runtime`] gave a runtime
    /// (and after [`ServerState::with_keyring`], when there is a keyring).
    pub fn library_runner(&self) -> Option<Arc<dyn llmtool_mcp::Runner>> {
        let runs = Arc::clone(self.runs.as_ref()?);
        Some(Arc::new(runs::LibraryRunner { state: self.clone(), runs }) as _)
    }

    pub(crate) fn runs(&self) -> Option<&Arc<Runs>> {
        self.runs.as_ref()
    }

    /// Serves the library over MCP at `/mcp` too, its tools run by `runner`.
    pub async fn with_mcp(
        mut self,
        runner: Arc<dyn llmtool_mcp::Runner>,
        options: McpOptions,
    ) -> Result<ServerState, StoreError> {
        // Its streams close when the server stops, once the runs in flight have ended.
        let http =
            llmtool_mcp::transport::HttpOptions { shutdown: self.streams.clone(), ..options.http };
        let options = McpOptions { http, ..options };
        self.mcp = Some(Mcp::start(self.store.as_ref(), runner, options).await?);
        Ok(self)
    }

    /// The MCP server of the library, when it serves one.
    pub(crate) fn mcp(&self) -> Option<&Arc<Mcp>> {
        self.mcp.as_ref()
    }

    pub(crate) fn cache(&self) -> &ReadCache {
        &self.cache
    }

    /// A tool, its tags or its labels changed through this server: cached answers are stale,
    /// and the MCP lists are read again before the next `/mcp` request is served.
    pub(crate) fn tools_changed(&self) {
        self.cache.invalidate();
        if let Some(mcp) = &self.mcp {
            mcp.changed();
        }
    }

    /// Keeps this server in step with the library, whoever changes it (on PostgreSQL, other
    /// servers too): from now on, a change makes the cached answers stale and the MCP lists
    /// are read again. Fails when the store cannot listen.
    pub async fn follow_changes(&self) -> Result<(), StoreError> {
        let mut changes = self.store.changes().await?;
        if let Some(mcp) = &self.mcp {
            tokio::spawn(Arc::clone(mcp).follow(Arc::clone(&self.store)));
            // What changed between the first reading of the lists and listening is unknown.
            mcp.changed();
        }
        self.cache.invalidate();
        // The word search's index is built now, so that the first search does not wait for it.
        let store = Arc::clone(&self.store);
        tokio::spawn(async move {
            if let Err(error) = store.warm_search().await {
                tracing::warn!("the search index will be built at the first search: {error}");
            }
        });
        let (cache, mcp) = (Arc::clone(&self.cache), self.mcp.clone());
        tokio::spawn(async move {
            while let Some(change) = changes.next().await {
                match change {
                    Change::Tool(_) | Change::Unknown | Change::Settings => {
                        cache.invalidate();
                        if let Some(mcp) = &mcp {
                            mcp.changed();
                        }
                    }
                }
            }
        });
        Ok(())
    }
}

impl std::fmt::Debug for ServerState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerState").field("access", &self.access).finish_non_exhaustive()
    }
}

/// The API's OpenAPI document (served at `/api/v1/openapi.json`), as pretty JSON.
pub fn openapi_json() -> String {
    use utoipa::OpenApi as _;
    api::ApiDoc::openapi().to_pretty_json().unwrap_or_default() + "\n"
}

/// The HTTP routes.
pub fn router(state: ServerState) -> Router {
    let endpoint = state.mcp.as_ref().map(|mcp| {
        mcp.endpoint.clone().layer(axum::middleware::from_fn_with_state(state.clone(), mcp::access))
    });
    let api = Router::new()
        .nest("/api/v1", api::routes())
        .merge(sso::routes())
        .merge(studio::routes())
        .merge(slack::routes())
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY))
        .layer(axum::middleware::from_fn_with_state(state.clone(), host::check))
        .merge(operations::routes(&state))
        .with_state(state.clone());
    let app = match endpoint {
        Some(endpoint) => api.merge(endpoint),
        None => api,
    };
    app.layer(axum::middleware::from_fn_with_state(state, observe::request))
}

/// Only the operators' routes (`/metrics`, `/healthz`, `/readyz`), for a listener of their own
/// (`llmtool serve --metrics-listen`).
pub fn operations_router(state: ServerState) -> Router {
    operations::routes(&state).with_state(state)
}

/// Serves `state`'s routes on `listener`, within its connection limits
/// ([`ServerState::with_connection_limits`]), until `shutdown` completes (each request knows the
/// address it came from, for rate limits and the MCP endpoint's `Host` check), then stops
/// gracefully: `/readyz` fails and no connection is accepted any more, every request already
/// received is answered (each run streamed to its end), the MCP streams close once no run is in
/// flight, and the server returns. Past its grace ([`ServerState::with_grace`]), it returns
/// whatever is still running, saying how many runs that cut short.
pub async fn serve(
    state: ServerState,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), std::io::Error> {
    let grace = state.grace;
    let stopping = state.stopping.clone();
    let signalled = async move {
        shutdown.await;
        stopping.cancel();
    };
    let app = router(state.clone());
    let limits = Arc::clone(&state.connections);
    let served = llmtool_mcp::transport::serve_app(app, listener, &limits, signalled);
    let mut served = std::pin::pin!(served);
    tokio::select! {
        done = &mut served => return done,
        () = state.stopping.cancelled() => {}
    }
    let drained = tokio::time::timeout(grace, async {
        while state.in_flight() > 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        state.streams.cancel();
        (&mut served).await
    });
    match drained.await {
        Ok(done) => done,
        Err(_) => {
            let cut = state.in_flight();
            tracing::warn!("stopped after {grace:?} with {cut} run(s) still in flight");
            Ok(())
        }
    }
}

impl ServerState {
    /// Runs under way or waiting for a turn, the API's and MCP's.
    fn in_flight(&self) -> usize {
        let now = self.now();
        now.runs_active + now.runs_waiting
    }
}
