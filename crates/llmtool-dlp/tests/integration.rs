//! Every integration test of data-loss prevention: detection, redaction, numbering plans and linear
//! scans, in one test binary: each file in this folder is a module of it, so the dependencies' code
//! compiles and links once rather than once a file; nextest still runs each test in a process of
//! its own.

mod detect;
mod linear;
mod numbering_plans;
mod redact;
