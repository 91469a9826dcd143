//! Every integration test of the local model: architectures, decoding and pulls, in one test
//! binary: each file in this folder is a module of it, so the dependencies' code compiles and links
//! once rather than once a file; nextest still runs each test in a process of its own.

mod architectures;
mod model;
mod pull;
