//! Which tools changed: every write announces its tool to this process's listeners and, on
//! PostgreSQL, to every server on the same database (`LISTEN`/`NOTIFY`), so that read caches
//! and MCP lists follow a publish wherever it happened.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::broadcast;

/// How many announcements a slow listener may fall behind before it is told [`Change::Unknown`].
const BACKLOG: usize = 256;

/// The PostgreSQL channel the writes notify on; the payload is the tool's slug.
pub(crate) const CHANNEL: &str = "llmtool_library";

/// The announcement (an empty slug) that any tool may have changed: [`Change::Unknown`].
pub(crate) const ANY_TOOL: &str = "";

/// The announcement that the workspace's settings changed: [`Change::Settings`] (no slug
/// starts with `*`).
pub(crate) const SETTINGS: &str = "*settings";

/// What changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// The tool of this slug: a version published, a tag or label moved, deleted.
    Tool(String),
    /// Anything may have changed: announcements were missed (a listener fell behind, or the
    /// connection to the database was lost for a while).
    Unknown,
    /// The workspace's settings changed (built-in tools shown or not, public snapshots): no
    /// tool changed, but any list may now show other tools to its reader.
    Settings,
}

impl Change {
    /// The change announced for `slug` ([`ANY_TOOL`]: any; [`SETTINGS`]: the settings).
    pub(crate) fn of(slug: &str) -> Change {
        match slug {
            ANY_TOOL => Change::Unknown,
            SETTINGS => Change::Settings,
            slug => Change::Tool(slug.to_owned()),
        }
    }
}

/// The sending side, held by a store.
#[derive(Debug, Clone)]
pub(crate) struct Announcer {
    sender: broadcast::Sender<(u64, Change)>,
    /// How many announcements were made. Each is numbered (from 1) before it is sent, so a
    /// listener that has taken the one numbered this knows it is up to date without waiting
    /// on its channel, and one that sees a higher number knows something is on its way.
    made: Arc<AtomicU64>,
    /// Held while one announcement is numbered and sent, so they are sent in their numbers'
    /// order.
    order: Arc<Mutex<()>>,
}

impl Announcer {
    pub(crate) fn new() -> Announcer {
        let sender = broadcast::channel(BACKLOG).0;
        Announcer { sender, made: Arc::default(), order: Arc::default() }
    }

    /// Tells this process's listeners (having none is fine).
    pub(crate) fn announce(&self, change: Change) {
        let _in_order = self.order.lock().unwrap_or_else(PoisonError::into_inner);
        let number = self.made.fetch_add(1, Ordering::AcqRel) + 1;
        let _ = self.sender.send((number, change));
    }

    /// How many announcements have been made so far (the last one may still be on its way).
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
    receiver: broadcast::Receiver<(u64, Change)>,
}

impl Changes {
    /// The next change; `None` once the store is gone. A listener that fell behind gets
    /// [`Change::Unknown`] for what it missed.
    pub async fn next(&mut self) -> Option<Change> {
        match self.receiver.recv().await {
            Ok((_, change)) => Some(change),
            Err(broadcast::error::RecvError::Lagged(_)) => Some(Change::Unknown),
            Err(broadcast::error::RecvError::Closed) => None,
        }
    }

    /// The next change already sent, with its number ([`Announcer::made`]), without waiting;
    /// `None` when there is none. Missed ones are [`Change::Unknown`], numbered 0.
    pub(crate) fn try_next(&mut self) -> Option<(u64, Change)> {
        match self.receiver.try_recv() {
            Ok(numbered) => Some(numbered),
            Err(broadcast::error::TryRecvError::Lagged(_)) => Some((0, Change::Unknown)),
            Err(_) => None,
        }
    }
}
