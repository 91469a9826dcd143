//! Every integration test of the binary (run as a user runs it) in one test binary: each file
//! in this folder is a module of it. One binary compiles and links the dependencies' code
//! once, where a binary for each file did it once a file; nextest still runs each test in a
//! process of its own.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

mod support;

mod batch;
mod call;
mod chat;
mod cli;
mod connections;
mod conversation;
mod dlp;
mod documents;
mod emacs_call;
mod functions;
mod images;
mod library;
mod local;
mod map;
mod operations;
mod provider_batch;
mod run;
mod security;
mod slack;
mod smart;
mod test_command;
