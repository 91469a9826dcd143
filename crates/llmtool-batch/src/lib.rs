//! `llmtool batch`: a tool run over every row of a dataset (CSV, JSON Lines or Parquet), many
//! rows at once, every result written to an output file (JSON Lines, CSV or Parquet) with its
//! usage, cost, latency and outcome.
//!
//! Exactly once: each row is keyed by the hash of the tool, its rendered prompt and its
//! parameters, and which occurrence of that work it is ([`keys`]); a journal beside the output ([`journal`]) records the rows
//! done and how many bytes of the output are committed. A rerun skips the rows done and cuts
//! off whatever a crash left half-written, so after `kill -9` at any moment and a rerun,
//! every row is in the output once.

mod bounded;
pub mod input;
pub mod journal;
pub mod keys;
pub mod output;
mod parquet;
mod prepare;
pub mod provider_batch;
pub mod run;
pub mod submitted;

pub use input::{InputError, Mapping, Row, RowReader};
pub use journal::{Journal, JournalError};
pub use output::{OutputFormat, OutputRecord};
pub use parquet::PARQUET_THREAD;
pub use run::{Batch, BatchError, Estimate, Progress, ProviderBatchOptions, Summary, Via};
