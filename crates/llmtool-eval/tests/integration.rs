//! The eval crate's tests, one binary: test files run on the mock, and the reports.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

mod report;
mod run;
