//! `llmtool model`: fetch and list the embedded local model, and find it for `run`.

use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use futures_util::StreamExt as _;
use llmtool_local::LocalError;
use llmtool_local::store::{self, ModelSpec};
use llmtool_providers::resolve::{ModelOrigin, Target};

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

/// Whether a missing local model may be fetched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fetch {
    /// Fetch it (`--yes`).
    Yes,
    /// Ask on a terminal, where "no" is the default; never fetch without one.
    Ask,
    /// Never: a server does not download because a client asked.
    Never,
}

/// The file of the local model of `target` (a known name, or a `.gguf` path that the user, not
/// a tool file, named, unless `allow_paths`), fetching a known model that is missing as `fetch`
/// says. An installed model is checked against its verified marker before it is used.
pub(crate) fn local_model_path(
    target: &Target,
    fetch: Fetch,
    allow_paths: bool,
) -> anyhow::Result<PathBuf> {
    let model = target.model.as_str();
    let Some(spec) = store::known(model) else {
        if target.origin == ModelOrigin::Tool && !allow_paths {
            bail!(
                "the tool file names the model file `{model}`; llmtool opens a model file named by a tool only with `--allow-local-paths` (or `allow_local_paths = true` in the config file)"
            );
        }
        let path = PathBuf::from(model);
        if !path.exists() {
            bail!(
                "no local model `{model}`: give a .gguf file (`--model local:PATH.gguf`) or a known name (smollm2)"
            );
        }
        return Ok(path);
    };
    if let Some(path) = store::installed_path(spec)? {
        store::verify_installed(spec, &path)?;
        return Ok(path);
    }
    let missing = format!("the local model {} is not installed", spec.file);
    match fetch {
        Fetch::Yes => {}
        Fetch::Never => {
            bail!("{missing}: run `llmtool model pull` (or start the server with `--yes`)")
        }
        Fetch::Ask => {
            if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
                bail!("{missing}: run `llmtool model pull`, or pass `--yes` to fetch it now");
            }
            eprint!(
                "The local model {} ({:.0} MB, {}) is not installed. Download it now? [y/N] ",
                spec.file,
                spec.bytes as f64 / 1e6,
                spec.license
            );
            std::io::stderr().flush()?;
            let mut answer = String::new();
            std::io::stdin().lock().read_line(&mut answer)?;
            if !matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
                bail!("not downloaded; `llmtool model pull` fetches it later");
            }
        }
    }
    pull(spec, None)
}

/// Downloads `url` into `file`, at most `limit` bytes, with a progress line on standard error.
fn download(url: &str, file: &mut std::fs::File, limit: u64) -> Result<(), LocalError> {
    let fail = |e: &dyn std::fmt::Display| LocalError::Io(format!("{url}: {e}"));
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| fail(&e))?;
    runtime.block_on(async {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let response = reqwest::get(url).await.map_err(|e| fail(&e.without_url()))?;
        if !response.status().is_success() {
            return Err(fail(&response.status()));
        }
        let total = response.content_length().unwrap_or(limit);
        if total > limit {
            return Err(fail(&format!(
                "the server offers {total} bytes, more than the {limit} expected"
            )));
        }
        let mut received = 0u64;
        let mut stream = response.bytes_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| fail(&e.without_url()))?;
            received += chunk.len() as u64;
            if received > limit {
                return Err(fail(&format!(
                    "the download passed the {limit} bytes expected; stopped"
                )));
            }
            file.write_all(&chunk).map_err(|e| fail(&e))?;
            eprint!(
                "\r{:5.1}% of {:.0} MB",
                received as f64 * 100.0 / total as f64,
                total as f64 / 1e6
            );
        }
        eprintln!();
        file.flush().map_err(|e| fail(&e))
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

    use std::io::{Read as _, Write as _};

    /// Serves one HTTP answer of `body_bytes` bytes (with or without its length) on loopback.
    fn serve_once(body_bytes: usize, with_length: bool) -> String {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/model.gguf", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut request = [0u8; 4096];
            let _ = stream.read(&mut request);
            let length = if with_length {
                format!("content-length: {body_bytes}\r\n")
            } else {
                String::new()
            };
            let head = format!("HTTP/1.1 200 OK\r\n{length}connection: close\r\n\r\n");
            let _ = stream.write_all(head.as_bytes());
            let chunk = vec![b'x'; 64 * 1024];
            let mut sent = 0;
            while sent < body_bytes {
                let n = chunk.len().min(body_bytes - sent);
                if stream.write_all(&chunk[..n]).is_err() {
                    break;
                }
                sent += n;
            }
        });
        url
    }

    #[test]
    fn a_download_stops_at_the_expected_size() {
        for with_length in [true, false] {
            let url = serve_once(4 << 20, with_length);
            let mut file = tempfile::tempfile().unwrap();
            let error = super::download(&url, &mut file, 100_000).unwrap_err().to_string();
            assert!(error.contains("100000"), "{error}");
            assert!(file.metadata().unwrap().len() <= 100_000);
        }
        let url = serve_once(1000, true);
        let mut file = tempfile::tempfile().unwrap();
        super::download(&url, &mut file, 1000).unwrap();
        assert_eq!(file.metadata().unwrap().len(), 1000);
    }
}
