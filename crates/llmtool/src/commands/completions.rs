//! `llmtool completions`: shell completion scripts.

mod args;

pub(crate) use args::CompletionsArgs;

use clap::CommandFactory;

use crate::cli::Cli;
use crate::outcome::Outcome;

pub(crate) fn run(args: &CompletionsArgs) -> anyhow::Result<Outcome> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "llmtool", &mut script);
    crate::io::write_stdout(&script)?;
    Ok(Outcome::Ok)
}
