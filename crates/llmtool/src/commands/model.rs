//! `llmtool model`: fetch local models from the catalog and list them; how the CLI shows a pull and asks
//! before one.

mod args;

pub(crate) use args::ModelCommand;

use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::Context as _;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use llmtool_local::found::Source;
use llmtool_local::store::{self, ModelSpec};
use llmtool_runtime::{Consent, Progress, PullEvent};

use crate::outcome::Outcome;

pub(crate) fn run(command: &ModelCommand) -> anyhow::Result<Outcome> {
    match command {
        ModelCommand::Pull { name, from } => {
            let spec = store::known(name).with_context(|| {
                format!("no model is called `{name}`; the catalog has: {}", store::known_names())
            })?;
            let path = pull(spec, from.as_deref())?;
            println!("{}", path.display());
        }
        ModelCommand::Catalog => {
            for spec in store::KNOWN_MODELS {
                let installed = store::installed_path(spec).ok().flatten().is_some();
                println!(
                    "{:<20} {:>8.1} MB  {:<10}  {:<13}  {}",
                    spec.name,
                    spec.bytes as f64 / 1e6,
                    spec.license,
                    if installed { "installed" } else { "not installed" },
                    spec.origin
                );
            }
        }
        ModelCommand::List => {
            let models = llmtool_local::found::found();
            if models.is_empty() {
                eprintln!(
                    "no local model found; `llmtool model pull` fetches the default one (Ollama's and LM Studio's models are listed too)"
                );
            }
            let width = models.iter().map(|m| m.name.len()).max().unwrap_or(0).max(10);
            for model in models {
                let source = match model.source {
                    Source::Llmtool => "llmtool",
                    Source::Ollama => "ollama",
                    Source::LmStudio => "lm-studio",
                };
                println!(
                    "{:<width$} {:>8.1} MB  {source:<9}  {}",
                    model.name,
                    model.bytes as f64 / 1e6,
                    model.path.display()
                );
            }
        }
    }
    Ok(Outcome::Ok)
}

/// Fetches `spec`, reporting progress on standard error.
pub(crate) fn pull(spec: &ModelSpec, from: Option<&Path>) -> anyhow::Result<PathBuf> {
    Ok(llmtool_runtime::pull(spec, from, &*progress())?)
}

/// Pull progress on standard error: one line for each source tried (what is fetched, how big,
/// from where), a progress bar while bytes arrive (on a terminal only: in a log it would be
/// noise), and where the model was installed.
pub(crate) fn progress() -> Progress {
    let on_terminal = std::io::stderr().is_terminal();
    let bar: Mutex<Option<ProgressBar>> = Mutex::new(None);
    Arc::new(move |event| match event {
        PullEvent::Step(step) => eprintln!("{step}"),
        PullEvent::Bytes { received, total } if on_terminal => {
            let mut bar = bar.lock().unwrap_or_else(PoisonError::into_inner);
            let bar = bar.get_or_insert_with(|| {
                let style = ProgressStyle::with_template(
                    "  {bar:40} {binary_bytes:>10} of {binary_total_bytes} ({binary_bytes_per_sec}, {eta} left)",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar());
                ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr())
                    .with_style(style)
            });
            bar.set_position(received);
        }
        PullEvent::Bytes { .. } => {}
        PullEvent::DownloadEnded => {
            if let Some(bar) = bar.lock().unwrap_or_else(PoisonError::into_inner).take() {
                bar.finish_and_clear();
            }
        }
        PullEvent::Installed { spec, path } => {
            eprintln!(
                "installed {} ({} bytes, SHA-256 verified) at {}",
                spec.file,
                spec.bytes,
                path.display()
            );
        }
    })
}

/// Asks on the terminal whether to fetch a missing model ("no" is the default); with no
/// terminal there is nobody to ask.
pub(crate) fn ask(spec: &ModelSpec) -> Consent {
    let source = |bytes: u64, license: &str, from: &str| {
        format!("{:.0} MB, {license}, from {from}", bytes as f64 / 1e6)
    };
    let what = source(spec.bytes, spec.license, &spec.wheels_text());
    let question = if spec.name == llmtool_runtime::smart::PYTHON_RUNTIME.name {
        let compiler = llmtool_runtime::smart::COMPILER;
        format!(
            "The Python runtime for smart tools {} ({what}), and wasmtime's compiler that readies it for this machine ({}), are not both installed. Download them now?",
            spec.file,
            source(compiler.bytes, compiler.license, compiler.requirement)
        )
    } else {
        format!("The local model {} ({what}) is not installed. Download it now?", spec.file)
    };
    match confirm(&question) {
        None => Consent::CannotAsk,
        Some(true) => Consent::Granted,
        Some(false) => Consent::Declined,
    }
}

/// Asks `question` on the terminal, `[y/N]` ("no" is the default): the answer, or `None` when
/// there is no terminal to ask on.
pub(crate) fn confirm(question: &str) -> Option<bool> {
    if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
        return None;
    }
    eprint!("{question} [y/N] ");
    let mut answer = String::new();
    let read =
        std::io::stderr().flush().and_then(|()| std::io::stdin().lock().read_line(&mut answer));
    Some(read.is_ok() && matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes"))
}
