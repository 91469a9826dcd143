//! Every integration test of the server, over HTTP and MCP, in one test binary: each file in
//! this folder is a module of it. One binary compiles and links the dependencies' code once,
//! where a binary for each file did it once a file; nextest still runs each test in a process
//! of its own.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

mod support;

mod control;
mod conversations;
mod documents;
mod functions;
mod http;
mod runs;
mod slack;
mod slack_install;
mod slack_sync;
mod smart;
mod studio;
mod team_private;
mod visibility;
mod workspace;
