//! Every integration test of the conversions: function tools, Emacs Lisp, prompt files,
//! promptfoo, the real-world files, the generated diagnostics docs and the rules' registries,
//! in one test binary (each file in this folder is a module of it); nextest still runs each
//! test in a process of its own.

mod support;

mod convert;
mod convert_properties;
mod elisp;
mod emacs;
mod generated;
mod prompt_files;
mod promptfoo;
mod real_world;
mod registry;
