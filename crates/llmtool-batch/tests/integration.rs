//! The batch crate's tests, one binary: the journal's bookkeeping and whole runs on the mock.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

mod journal;
mod run;
