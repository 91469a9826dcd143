//! The Python runtime: one wasmtime engine per process (with the clock that bounds CPU time),
//! and the CPython module compiled once and kept in a cache folder, so that later runs load
//! it in milliseconds instead of compiling it again.

use std::hash::{Hash, Hasher};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use wasmtime::{Config, Engine, InstancePre, Linker, Module};

use crate::SandboxError;
use crate::run::Guest;

/// How often the engine's epoch advances: the grain of the CPU-time limit and of cancelling.
pub(crate) const TICK: Duration = Duration::from_millis(10);

/// The one engine of the process, and the thread that ticks its epoch.
fn engine() -> Result<&'static Engine, SandboxError> {
    static ENGINE: OnceLock<Result<Engine, String>> = OnceLock::new();
    let engine = ENGINE.get_or_init(|| {
        let mut config = Config::new();
        config.epoch_interruption(true);
        // CPython's own recursion limit should stop a deep recursion first; this stack is
        // the bound when it does not (a trap, reported as such).
        config.max_wasm_stack(4 << 20);
        config.async_stack_size(8 << 20);
        let engine = Engine::new(&config).map_err(|e| e.to_string())?;
        let ticking = engine.clone();
        std::thread::Builder::new()
            .name("llmtool-sandbox-clock".into())
            .spawn(move || {
                loop {
                    std::thread::sleep(TICK);
                    ticking.increment_epoch();
                }
            })
            .map_err(|e| e.to_string())?;
        Ok(engine)
    });
    engine.as_ref().map_err(|reason| SandboxError::Engine { reason: reason.clone() })
}

/// CPython compiled to WebAssembly, ready to start: what every run instantiates.
pub struct Python {
    pub(crate) engine: &'static Engine,
    pub(crate) pre: InstancePre<Guest>,
    /// Whether the module was compiled now (a cold start) or loaded from the cache.
    compiled_now: bool,
}

impl std::fmt::Debug for Python {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Python").field("compiled_now", &self.compiled_now).finish_non_exhaustive()
    }
}

impl Python {
    /// Loads the CPython WASI module at `module`, whose SHA-256 is `sha256` (checked by whoever
    /// installed it). With a `cache` folder, the compiled module is read from there when an
    /// earlier run left it, and written there otherwise.
    pub fn load(module: &Path, sha256: &str, cache: Option<&Path>) -> Result<Python, SandboxError> {
        let engine = engine()?;
        // A cache folder anyone else could write to is neither read nor written.
        let cached = cache
            .filter(|dir| private_or_absent(dir))
            .map(|dir| dir.join(cache_name(engine, sha256)));
        let mut compiled_now = false;
        let loaded = cached.as_deref().filter(|path| private_file(path)).and_then(|path| {
            #[allow(unsafe_code, reason = "loading a module this process compiled and cached")]
            // SAFETY: the file is one this function wrote (atomically, 0600, into a folder only
            // its owner can write to: both checked above, neither a symbolic link) from
            // `Module::serialize` of the same engine configuration: its name holds the
            // engine's compatibility hash, and wasmtime checks it again.
            unsafe { Module::deserialize_file(engine, path) }.ok()
        });
        let module = match loaded {
            Some(module) => module,
            None => {
                compiled_now = true;
                let compiled = Module::from_file(engine, module).map_err(|e| {
                    SandboxError::Module { path: module.to_path_buf(), reason: e.to_string() }
                })?;
                if let Some(path) = &cached {
                    // A cache that cannot be written only costs the next run a compile.
                    let _ = write_cache(&compiled, path);
                }
                compiled
            }
        };
        let mut linker: Linker<Guest> = Linker::new(engine);
        wasmtime_wasi::p1::add_to_linker_async(&mut linker, |guest: &mut Guest| &mut guest.wasi)
            .map_err(|e| SandboxError::Engine { reason: e.to_string() })?;
        let pre = linker.instantiate_pre(&module).map_err(|e| SandboxError::Module {
            path: PathBuf::from(module.name().unwrap_or("python.wasm")),
            reason: e.to_string(),
        })?;
        Ok(Python { engine, pre, compiled_now })
    }

    /// Whether [`Python::load`] compiled the module (no cached copy could be used).
    pub fn compiled_now(&self) -> bool {
        self.compiled_now
    }
}

/// The cache file's name: the module's hash and the engine's, so that another module, another
/// wasmtime or another configuration never reads a file compiled for something else.
fn cache_name(engine: &Engine, sha256: &str) -> String {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    let short = sha256.get(..16).unwrap_or(sha256);
    format!("python-{short}-{:016x}.cwasm", hasher.finish())
}

/// Whether `dir` is absent (it will be made private) or a folder, not a symbolic link, that
/// only its owner can write to.
fn private_or_absent(dir: &Path) -> bool {
    match std::fs::symlink_metadata(dir) {
        Err(error) => error.kind() == std::io::ErrorKind::NotFound,
        Ok(metadata) => metadata.is_dir() && owner_only(&metadata),
    }
}

/// Whether `path` is a regular file, not a symbolic link, that only its owner can write to.
fn private_file(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file() && owner_only(&m))
}

#[cfg(unix)]
fn owner_only(metadata: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    metadata.permissions().mode() & 0o022 == 0
}

#[cfg(not(unix))]
fn owner_only(_: &std::fs::Metadata) -> bool {
    true
}

/// Writes the compiled module beside `path` and renames it into place, private to its owner.
fn write_cache(module: &Module, path: &Path) -> std::io::Result<()> {
    let bytes = module.serialize().map_err(|e| std::io::Error::other(e.to_string()))?;
    let dir = path.parent().ok_or_else(|| std::io::Error::other("no folder"))?;
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)?;
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    file.write_all(&bytes)?;
    file.as_file().sync_all()?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}
