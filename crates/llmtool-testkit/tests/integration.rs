//! Every integration test of the test kit: the mock provider and batch engines, in one test binary:
//! each file in this folder is a module of it, so the dependencies' code compiles and links once
//! rather than once a file; nextest still runs each test in a process of its own.

mod batches;
mod mock_llm;
