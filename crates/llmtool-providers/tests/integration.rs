//! Every integration test of the providers: requests, transports, batches, images and prices, in
//! one test binary: each file in this folder is a module of it, so the dependencies' code compiles
//! and links once rather than once a file; nextest still runs each test in a process of its own.

mod batch_api;
mod functions;
mod images;
mod pricing;
mod run;
mod transport;
