//! `llmtool test`: the test files of tools run on models. Every case runs on every model
//! given, `repeat` times, and passes when at least `min_pass` runs pass; each run's answer is
//! cached (by model, prompt, parameters and repeat), so a rerun of unchanged cases costs
//! nothing. Reading and checking test files, and judging an answer, are in
//! `llmtool_format::suite`; this crate runs them.

pub mod cache;
pub mod init;
pub mod judge;
pub mod report;
pub mod results;
pub mod run;

pub use cache::Cache;
pub use results::{AssertionResult, CaseResult, FileResult, RunResult};
pub use run::{Options, run_file};
