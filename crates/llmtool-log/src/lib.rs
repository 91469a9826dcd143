//! The run log: every run of a tool appends a [`Record`] to a SQLite database in the data
//! directory, which `llmtool logs` lists and `llmtool usage` totals. The database is opened in
//! WAL mode, so a run killed at any moment leaves every earlier record whole.

#[cfg(any(test, feature = "contract"))]
pub mod contract;
pub mod conversation;
mod dir;
pub mod migrations;
pub mod private;
mod record;
mod since;
pub mod sql;
mod store;

pub use conversation::{After, Conversation, ConversationSummary, Summary};
pub use dir::{DATABASE_FILE, data_dir};
pub use record::{Call, Outcome, Record, Thread};
pub use since::{SinceError, since};
pub use store::{Filter, Grouping, LogError, RunLog, Total};

/// A time as the log writes it: RFC 3339 in UTC with milliseconds
/// (`2026-11-23T14:46:18.365Z`), one width for every time, so that text order is time order.
pub fn time_text(time: jiff::Timestamp) -> String {
    time.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}
