//! A cap on the Streamable HTTP sessions alive at once: rmcp's in-memory session manager,
//! with the least recently used session closed when a new one would pass the cap, and a
//! session closed once it has had no request for its idle time. Without the cap, every
//! `initialize` leaves a session (and its task) behind until it idles out.
//!
//! The idle time is kept here, not by rmcp's session worker: the requests answered without
//! the worker ([`crate::quick`]) never reach its timer, and would otherwise not count as use.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use futures_util::{Stream, StreamExt as _};
use rmcp::model::{ClientJsonRpcMessage, ClientNotification, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, SessionConfig,
};
use rmcp::transport::streamable_http_server::session::{ServerSseMessage, SessionId};
use rmcp::transport::streamable_http_server::{RestoreOutcome, SessionManager};
use tokio_util::sync::CancellationToken;

/// rmcp's session manager with at most `max` sessions.
#[derive(Debug)]
pub(crate) struct BoundedSessions {
    inner: LocalSessionManager,
    max: usize,
    /// A session with no request for this long is closed (by [`close_idle`]).
    idle: Duration,
    /// What is known of each live session (shared with the streams of requests under way).
    live: Arc<Mutex<HashMap<SessionId, Use>>>,
    /// Creations take turns, so that two cannot both pass the cap.
    creating: tokio::sync::Mutex<()>,
}

/// One session's use.
#[derive(Debug, Clone, Copy)]
struct Use {
    last: Instant,
    /// The client has sent `notifications/initialized`: the session is open for requests.
    ready: bool,
    /// Requests whose answer is still being streamed (a tool call may run for minutes): a
    /// session is not idle while one is under way.
    under_way: usize,
}

impl BoundedSessions {
    /// At most `max` sessions (at least one), each closed after `idle` without a request once
    /// [`close_idle`] runs.
    pub(crate) fn new(max: usize, idle: Duration) -> Self {
        let mut inner = LocalSessionManager::default();
        inner.session_config = SessionConfig::default();
        inner.session_config.keep_alive = None;
        inner.session_config.init_timeout = Some(Duration::from_secs(10));
        Self {
            inner,
            max: max.max(1),
            idle,
            live: Arc::default(),
            creating: tokio::sync::Mutex::const_new(()),
        }
    }

    /// Notes a request in session `id`, and with `ready`, that the session is open.
    fn touch(&self, id: &SessionId, ready: bool) {
        if let Ok(mut live) = self.live.lock() {
            let now = Instant::now();
            let entry =
                live.entry(id.clone()).or_insert(Use { last: now, ready: false, under_way: 0 });
            entry.last = now;
            entry.ready |= ready;
        }
    }

    fn forget(&self, id: &SessionId) {
        if let Ok(mut live) = self.live.lock() {
            live.remove(id);
        }
    }

    /// The session used least recently.
    fn least_recently_used(&self) -> Option<SessionId> {
        let live = self.live.lock().ok()?;
        live.iter().min_by_key(|(_, use_)| use_.last).map(|(id, _)| id.clone())
    }

    /// Takes out the sessions with no request for longer than the idle time and none under
    /// way, deciding under one lock, so that a request that comes in meanwhile keeps its
    /// session.
    fn take_idle(&self) -> Vec<SessionId> {
        let Ok(mut live) = self.live.lock() else { return Vec::new() };
        let idle: Vec<SessionId> = live
            .iter()
            .filter(|(_, use_)| use_.under_way == 0 && use_.last.elapsed() > self.idle)
            .map(|(id, _)| id.clone())
            .collect();
        for id in &idle {
            live.remove(id);
        }
        idle
    }

    /// Whether session `id` is live and initialized, so that a request in it may be answered
    /// without its worker; if it is, the request counts as its use.
    pub(crate) async fn open_for_requests(&self, id: &SessionId) -> bool {
        let ready = self.live.lock().is_ok_and(|live| live.get(id).is_some_and(|use_| use_.ready));
        // rmcp drops a session whose worker ended on its own: ask it too.
        if !ready || !self.inner.has_session(id).await.unwrap_or(false) {
            return false;
        }
        self.touch(id, false);
        true
    }

    /// How many sessions are open, without waiting: rmcp's count, or, while a writer holds
    /// it, the sessions this cap knows of.
    pub(crate) fn open(&self) -> usize {
        match self.inner.sessions.try_read() {
            Ok(sessions) => sessions.len(),
            Err(_) => self.live.lock().map_or(0, |live| live.len()),
        }
    }

    /// How many sessions are alive.
    pub(crate) async fn len(&self) -> usize {
        self.inner.sessions.read().await.len()
    }
}

/// Closes the sessions of `sessions` idle for longer than their idle time, checking every
/// quarter of it (between one and thirty seconds), until `shutdown` or until the sessions are
/// dropped with their endpoint.
pub(crate) async fn close_idle(sessions: Weak<BoundedSessions>, shutdown: CancellationToken) {
    let Some(idle) = sessions.upgrade().map(|s| s.idle) else { return };
    let period = (idle / 4).clamp(Duration::from_secs(1), Duration::from_secs(30));
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = tokio::time::sleep(period) => {}
        }
        let Some(sessions) = sessions.upgrade() else { return };
        for id in sessions.take_idle() {
            tracing::debug!("closing MCP session {id}: no request for {idle:?}");
            if let Err(error) = sessions.inner.close_session(&id).await {
                tracing::debug!("closing MCP session {id} failed: {error}");
            }
        }
    }
}

impl SessionManager for BoundedSessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let _turn = self.creating.lock().await;
        while self.len().await >= self.max {
            let Some(oldest) = self.least_recently_used() else { break };
            tracing::debug!("closing MCP session {oldest}: {} sessions is the cap", self.max);
            self.forget(&oldest);
            self.inner.close_session(&oldest).await?;
        }
        let (id, transport) = self.inner.create_session().await?;
        self.touch(&id, false);
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.touch(id, false);
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.forget(id);
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id, false);
        let stream = self.inner.create_stream(id, message).await?;
        let under_way = UnderWay::new(Arc::clone(&self.live), id.clone());
        // The guard lives as long as the stream: until the answer is sent, or the client
        // leaves.
        Ok(stream.map(move |message| {
            let _ = &under_way;
            message
        }))
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        let initialized = matches!(
            &message,
            ClientJsonRpcMessage::Notification(n)
                if matches!(n.notification, ClientNotification::InitializedNotification(_))
        );
        self.inner.accept_message(id, message).await?;
        self.touch(id, initialized);
        Ok(())
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id, false);
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id, false);
        self.inner.resume(id, last_event_id).await
    }

    async fn restore_session(
        &self,
        _id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        // Sessions live in this process only; an unknown one is gone (the client starts anew).
        Ok(RestoreOutcome::NotSupported)
    }
}

/// Counts a request of a session as under way for as long as it lives, and its end as use.
struct UnderWay {
    live: Arc<Mutex<HashMap<SessionId, Use>>>,
    id: SessionId,
}

impl UnderWay {
    fn new(live: Arc<Mutex<HashMap<SessionId, Use>>>, id: SessionId) -> Self {
        if let Ok(mut sessions) = live.lock()
            && let Some(use_) = sessions.get_mut(&id)
        {
            use_.under_way += 1;
        }
        Self { live, id }
    }
}

impl Drop for UnderWay {
    fn drop(&mut self) {
        if let Ok(mut sessions) = self.live.lock()
            && let Some(use_) = sessions.get_mut(&self.id)
        {
            use_.under_way = use_.under_way.saturating_sub(1);
            use_.last = Instant::now();
        }
    }
}
