//! The library's health as an operator sees it: whether its database answers, whether the
//! schema there is the one this program was built for, and how the connections are used.

use serde::Serialize;

/// What the database said when asked for its migrations.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Health {
    /// The migrations the database has applied, by version.
    pub applied: Vec<i64>,
    /// The migrations this program carries, by version.
    pub known: Vec<i64>,
}

impl Health {
    /// Whether the database's schema is exactly this program's: a migration missing there (a
    /// restored old copy) or one this program does not know (a newer server migrated it)
    /// both mean this server should not take requests.
    pub fn current(&self) -> bool {
        self.applied == self.known
    }
}

/// How the pool of database connections is used at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PoolUse {
    /// Connections open, idle or lent out.
    pub open: u32,
    /// Open connections nobody is using.
    pub idle: u32,
    /// The most the pool opens.
    pub max: u32,
}
