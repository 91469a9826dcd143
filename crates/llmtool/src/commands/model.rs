//! `llmtool model`: fetch and list the embedded local model, and find it for `run`.

use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use futures_util::StreamExt as _;
use llmtool_local::LocalError;
use llmtool_local::store::{self, ModelSpec};

use crate::Outcome;
use crate::cli::ModelCommand;

pub(crate) fn run(command: &ModelCommand) -> anyhow::Result<Outcome> {
    match command {
        ModelCommand::Pull { name, from } => {
            let spec = store::known(name)
                .with_context(|| format!("no model is called `{name}`; known: smollm2"))?;
            let path = pull(spec, from.as_deref())?;
            println!("{}", path.display());
        }
        ModelCommand::List => {
            let models = store::installed()?;
            if models.is_empty() {
                eprintln!("no local model installed; `llmtool model pull` fetches the default one");
            }
            for model in models {
                println!(
                    "{:<10} {:>6.1} MB  {}",
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
    let mut log = |message: &str| eprintln!("{message}");
    let path = store::pull(spec, from, &mut download, &mut log)?;
    eprintln!(
        "installed {} ({} bytes, SHA-256 verified) at {}",
        spec.file,
        spec.bytes,
        path.display()
    );
    Ok(path)
}

/// The file of the local model `model` (a known name or a `.gguf` path), pulling a known model
/// when it is missing: automatically with `--yes`, after asking on a terminal, else never.
pub(crate) fn local_model_path(model: &str, yes: bool) -> anyhow::Result<PathBuf> {
    let Some(spec) = store::known(model) else {
        let path = PathBuf::from(model);
        if !path.exists() {
            bail!(
                "no local model `{model}`: give a .gguf file (`--model local:PATH.gguf`) or a known name (smollm2)"
            );
        }
        return Ok(path);
    };
    if let Some(path) = store::installed_path(spec)? {
        return Ok(path);
    }
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    if !yes {
        if !interactive {
            bail!(
                "the local model {} is not installed: run `llmtool model pull`, or pass `--yes` to fetch it now",
                spec.file
            );
        }
        eprint!(
            "The local model {} ({:.0} MB, {}) is not installed. Download it now? [Y/n] ",
            spec.file,
            spec.bytes as f64 / 1e6,
            spec.license
        );
        std::io::stderr().flush()?;
        let mut answer = String::new();
        std::io::stdin().lock().read_line(&mut answer)?;
        if answer.trim().eq_ignore_ascii_case("n") || answer.trim().eq_ignore_ascii_case("no") {
            bail!("not downloaded; `llmtool model pull` fetches it later");
        }
    }
    pull(spec, None)
}

/// Downloads `url` to `destination` with a progress line on standard error.
fn download(url: &str, destination: &Path) -> Result<(), LocalError> {
    let fail = |e: &dyn std::fmt::Display| LocalError::Io(format!("{url}: {e}"));
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| fail(&e))?;
    runtime.block_on(async {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let response = reqwest::get(url).await.map_err(|e| fail(&e))?;
        if !response.status().is_success() {
            return Err(fail(&response.status()));
        }
        let total = response.content_length();
        let mut file = std::fs::File::create(destination).map_err(|e| fail(&e))?;
        let mut received = 0u64;
        let mut stream = response.bytes_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| fail(&e))?;
            file.write_all(&chunk).map_err(|e| fail(&e))?;
            received += chunk.len() as u64;
            if let Some(total) = total {
                eprint!(
                    "\r{:5.1}% of {:.0} MB",
                    received as f64 * 100.0 / total as f64,
                    total as f64 / 1e6
                );
            }
        }
        eprintln!();
        Ok(())
    })
}
