//! The tool library's storage: tools by slug, each with immutable versions (numbered, with
//! the content hash of their canonical form and a change note), tags that curate them, labels
//! that point at a version (`production`, `staging`), soft delete, full-text search, and the
//! API tokens. [`Store`] is the one interface; [`SqliteStore`] (the default) and
//! [`PostgresStore`] implement it, and one test suite runs against both.

mod model;
mod postgres;
mod publication;
mod rows;
mod sqlite;
mod store;

pub use model::{Page, Published, Query, Role, Selector, Summary, TokenInfo, ToolVersion};
pub use postgres::PostgresStore;
pub use publication::{Publication, Rejection, is_slug, slug_of};
pub use sqlite::SqliteStore;
pub use store::{Store, StoreError};
