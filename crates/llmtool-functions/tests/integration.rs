//! Every integration test of the functions, in one test binary: each file in this folder is a
//! module of it.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

mod database;
mod fetch;
mod search;
mod support;
