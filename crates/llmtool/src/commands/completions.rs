//! `llmtool completions`: shell completion scripts.

use clap::CommandFactory;

use crate::Outcome;
use crate::cli::{Cli, CompletionsArgs};

pub(crate) fn run(args: &CompletionsArgs) -> anyhow::Result<Outcome> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "llmtool", &mut script);
    crate::io::write_stdout(&script)?;
    Ok(Outcome::Ok)
}
