//! Every integration test of the core: fixtures, conformance, conversions, prompt files and
//! properties, in one test binary: each file in this folder is a module of it, so the dependencies'
//! code compiles and links once rather than once a file; nextest still runs each test in a process
//! of its own.

mod support;

mod conformance;
mod convert;
mod convert_properties;
mod elisp;
mod emacs;
mod fixtures;
mod generated;
mod prompt_files;
mod promptfoo;
mod properties;
mod real_world;
mod registry;
mod scale;
mod suite;
