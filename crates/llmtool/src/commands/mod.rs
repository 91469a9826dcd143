//! One module per subcommand.

pub(crate) mod batch;
pub(crate) mod batch_status;
pub(crate) mod chat;
pub(crate) mod check;
pub(crate) mod completions;
pub(crate) mod control;
pub(crate) mod convert;
pub(crate) mod cost;
pub(crate) mod fmt;
pub(crate) mod library;
pub(crate) mod login;
pub(crate) mod logs;
pub(crate) mod lsp;
pub(crate) mod mcp;
pub(crate) mod model;
pub(crate) mod new;
pub(crate) mod people;
pub(crate) mod providers;
pub(crate) mod render;
pub(crate) mod reply;
pub(crate) mod run;
pub(crate) mod sandbox;
pub(crate) mod scan;
pub(crate) mod serve;
pub(crate) mod show;
pub(crate) mod test;
