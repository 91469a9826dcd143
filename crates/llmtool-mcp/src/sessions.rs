//! A cap on the Streamable HTTP sessions alive at once: rmcp's in-memory session manager,
//! with the least recently used session closed when a new one would pass the cap. Without it,
//! every `initialize` leaves a session (and its task) behind until its idle timeout.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use futures_util::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, SessionConfig,
};
use rmcp::transport::streamable_http_server::session::{ServerSseMessage, SessionId};
use rmcp::transport::streamable_http_server::{RestoreOutcome, SessionManager};

/// rmcp's session manager with at most `max` sessions.
#[derive(Debug)]
pub(crate) struct BoundedSessions {
    inner: LocalSessionManager,
    max: usize,
    /// When each live session was last used.
    last_used: Mutex<HashMap<SessionId, Instant>>,
    /// Creations take turns, so that two cannot both pass the cap.
    creating: tokio::sync::Mutex<()>,
}

impl BoundedSessions {
    /// At most `max` sessions (at least one), each closed after `idle` without a request.
    pub(crate) fn new(max: usize, idle: Duration) -> Self {
        let mut inner = LocalSessionManager::default();
        inner.session_config = SessionConfig::default();
        inner.session_config.keep_alive = Some(idle);
        inner.session_config.init_timeout = Some(Duration::from_secs(10));
        Self {
            inner,
            max: max.max(1),
            last_used: Mutex::default(),
            creating: tokio::sync::Mutex::const_new(()),
        }
    }

    fn touch(&self, id: &SessionId) {
        if let Ok(mut last_used) = self.last_used.lock() {
            last_used.insert(id.clone(), Instant::now());
        }
    }

    fn forget(&self, id: &SessionId) {
        if let Ok(mut last_used) = self.last_used.lock() {
            last_used.remove(id);
        }
    }

    /// The session used least recently.
    fn least_recently_used(&self) -> Option<SessionId> {
        let last_used = self.last_used.lock().ok()?;
        last_used.iter().min_by_key(|(_, when)| **when).map(|(id, _)| id.clone())
    }

    /// How many sessions are open, without waiting: rmcp's count (which drops sessions that
    /// idled out), or, while a writer holds it, the sessions this cap knows of.
    pub(crate) fn open(&self) -> usize {
        match self.inner.sessions.try_read() {
            Ok(sessions) => sessions.len(),
            Err(_) => self.last_used.lock().map_or(0, |last_used| last_used.len()),
        }
    }

    /// How many sessions are alive.
    pub(crate) async fn len(&self) -> usize {
        self.inner.sessions.read().await.len()
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
        self.touch(&id);
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.touch(id);
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
        self.touch(id);
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.touch(id);
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
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
