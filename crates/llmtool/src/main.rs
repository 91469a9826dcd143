//! The `llmtool` binary: parse the command line, run the command, map the outcome to an exit
//! status (0 ok, 1 the input has problems, 2 usage, I/O or network failure).

mod cli;
mod commands;
mod documents;
mod io;
mod logging;
mod outcome;
mod preview;
mod registry;
mod secrets;
mod settings;
mod telemetry;

use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command};
use crate::outcome::Outcome;

// Checking thousands of files allocates many small strings; mimalloc makes that markedly
// cheaper than the system allocator (measured in docs/benchmarks.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    documents::quiet_reader_panics();
    let cli = Cli::parse();
    // The keys of the environment are hidden from the start; the config file adds its own.
    secrets::learn(&llmtool_providers::resolve::Providers::new(
        llmtool_config::Config::default(),
        llmtool_config::Env::from_process(),
    ));
    match run(cli) {
        Ok(outcome) => outcome.exit_code(),
        Err(error) if io::is_broken_pipe(&error) => ExitCode::SUCCESS,
        Err(error) if documents::is_unreadable_document(&error) => {
            eprintln!("error: {}", secrets::redact(&format!("{error:#}")));
            ExitCode::from(1)
        }
        Err(error) => {
            eprintln!("error: {}", secrets::redact(&format!("{error:#}")));
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<Outcome> {
    if matches!(
        cli.command,
        Command::Run(_)
            | Command::Call(_)
            | Command::Reply(_)
            | Command::Chat(_)
            | Command::Mcp(_)
            | Command::Logs(_)
            | Command::Usage(_)
            | Command::Batch(_)
            | Command::Test(_)
            | Command::Serve(_)
            | Command::Pull(_)
            | Command::Token(_)
            | Command::Member(_)
            | Command::Team(_)
            | Command::Admin(_)
    ) {
        settings::narrow_data_dir();
    }
    // The commands that run tools export their traces when the environment asks
    // (`serve` and `mcp` set theirs up with their logs); sent at the command's end.
    let _telemetry = match cli.command {
        Command::Run(_)
        | Command::Call(_)
        | Command::Reply(_)
        | Command::Batch(_)
        | Command::Test(_) => {
            let telemetry = telemetry::start()?;
            if let Some(telemetry) = &telemetry {
                logging::init_traces(telemetry);
            }
            telemetry
        }
        _ => None,
    };
    match cli.command {
        Command::Check(args) => commands::check::run(&args),
        Command::Fmt(args) => commands::fmt::run(&args),
        Command::Render(args) => commands::render::run(&args),
        Command::Run(args) => commands::run::run(&args),
        Command::Call(args) => commands::call::run(&args),
        Command::Reply(args) => commands::reply::reply(&args),
        Command::Chat(args) => commands::chat::chat(&args),
        Command::Mcp(args) => commands::mcp::run(&args),
        Command::Providers(args) => commands::providers::run(&args),
        Command::Model(command) => commands::model::run(&command),
        Command::Sandbox(command) => commands::sandbox::run(&command),
        Command::Show(args) => commands::show::run(&args),
        Command::Export(args) => commands::convert::export(&args),
        Command::Import(args) => commands::convert::import(&args),
        Command::Convert(args) => commands::convert::convert(&args),
        Command::New(args) => commands::new::run(&args),
        Command::Completions(args) => commands::completions::run(&args),
        Command::Logs(args) => commands::logs::logs(&args),
        Command::Usage(args) => commands::logs::usage(&args),
        Command::Batch(args) => commands::batch::run(&args),
        Command::Test(args) => commands::test::run(&args),
        Command::Scan(args) => commands::scan::run(&args),
        Command::Lsp(args) => commands::lsp::run(&args),
        Command::Serve(args) => commands::serve::serve(&args),
        Command::Publish(args) => commands::library::publish(&args),
        Command::Tag(command) => commands::library::tag(&command),
        Command::Search(args) => commands::library::search(&args),
        Command::Pull(args) => commands::library::pull(&args),
        Command::Login(args) => commands::login::login(&args),
        Command::Logout(args) => commands::login::logout(&args),
        Command::Whoami(args) => commands::login::whoami(&args),
        Command::Conversations(args) => commands::conversations::run(&args),
        Command::Token(command) => commands::serve::token(&command),
        Command::Member(command) => commands::people::member(&command),
        Command::Team(command) => commands::people::team(&command),
        Command::Audit(args) => commands::control::audit(&args),
        Command::Integration(command) => commands::control::integration(&command),
        Command::Admin(command) => commands::admin::run(&command),
        Command::Slack(command) => commands::slack::run(&command),
    }
}
