//! Every integration test of the format: fixtures, conformance, properties, scale, test files
//! and the generated schemas, in one test binary: each file in this folder is a module of it,
//! so the dependencies' code compiles and links once rather than once a file; nextest still
//! runs each test in a process of its own. (The conversions' tests are `llmtool-convert`'s.)

mod support;

mod conformance;
mod fixtures;
mod generated;
mod properties;
mod scale;
mod suite;
