//! Which tools changed: every write announces its tool to this process's listeners and, on
//! PostgreSQL, to every server on the same database (`LISTEN`/`NOTIFY`), so that read caches
//! and MCP lists follow a publish wherever it happened.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::broadcast;

/// How many announcements a slow listener may fall behind before it is told [`Change::Unknown`].
const BACKLOG: usize = 256;

/// The PostgreSQL channel the writes notify on; the payload is the tool's slug.
pub(crate) const CHANNEL: &str = "llmtool_library";

/// The announcement (an empty slug) that any tool may have changed: [`Change::Unknown`].
pub(crate) const ANY_TOOL: &str = "";

/// What changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// The tool of this slug: a version published, a tag or label moved, deleted.
    Tool(String),
    /// Anything may have changed: announcements were missed (a listener fell behind, or the
    /// connection to the database was lost for a while).
    Unknown,
}

impl Change {
    /// The change announced for `slug` ([`ANY_TOOL`]: any).
    pub(crate) fn of(slug: &str) -> Change {
        if slug == ANY_TOOL { Change::Unknown } else { Change::Tool(slug.to_owned()) }
    }
}

/// The sending side, held by a store.
#[derive(Debug, Clone)]
pub(crate) struct Announcer {
    sender: broadcast::Sender<Change>,
    /// How many announcements were made, each counted once it is sent: a listener that has
    /// taken this many is up to date without waiting on its channel.
    made: Arc<AtomicU64>,
}

impl Announcer {
    pub(crate) fn new() -> Announcer {
        Announcer { sender: broadcast::channel(BACKLOG).0, made: Arc::default() }
    }

    /// Tells this process's listeners (having none is fine).
    pub(crate) fn announce(&self, change: Change) {
        let _ = self.sender.send(change);
        self.made.fetch_add(1, Ordering::Release);
    }

    /// How many announcements have been sent so far.
    pub(crate) fn made(&self) -> u64 {
        self.made.load(Ordering::Acquire)
    }

    pub(crate) fn subscribe(&self) -> Changes {
        Changes { receiver: self.sender.subscribe() }
    }
}

/// A listener's side: the changes from the moment it subscribed.
#[derive(Debug)]
pub struct Changes {
    receiver: broadcast::Receiver<Change>,
}

impl Changes {
    /// The next change; `None` once the store is gone. A listener that fell behind gets
    /// [`Change::Unknown`] for what it missed.
    pub async fn next(&mut self) -> Option<Change> {
        match self.receiver.recv().await {
            Ok(change) => Some(change),
            Err(broadcast::error::RecvError::Lagged(_)) => Some(Change::Unknown),
            Err(broadcast::error::RecvError::Closed) => None,
        }
    }

    /// The next change already announced, without waiting; `None` when there is none.
    pub(crate) fn try_next(&mut self) -> Option<Change> {
        match self.receiver.try_recv() {
            Ok(change) => Some(change),
            Err(broadcast::error::TryRecvError::Lagged(_)) => Some(Change::Unknown),
            Err(_) => None,
        }
    }
}
