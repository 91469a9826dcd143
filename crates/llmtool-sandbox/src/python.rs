//! The Python runtime: one wasmtime engine per process (with the clock that bounds CPU time),
//! and the CPython module, compiled once per machine ([`crate::compile`]), loaded from its
//! file in milliseconds.

use std::path::Path;
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
        // The compiler's settings that must match are in `compile.py`.
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

/// CPython compiled to machine code, ready to start: what every run instantiates.
pub struct Python {
    pub(crate) engine: &'static Engine,
    pub(crate) pre: InstancePre<Guest>,
}

impl std::fmt::Debug for Python {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Python").finish_non_exhaustive()
    }
}

impl Python {
    /// Loads the compiled module at `compiled`: a file [`crate::compile`]'s script wrote, in
    /// a folder only its owner can write to (anything else is refused, since its machine
    /// code runs as it is).
    pub fn load(compiled: &Path) -> Result<Python, SandboxError> {
        let engine = engine()?;
        let refused =
            |reason: String| SandboxError::Module { path: compiled.to_path_buf(), reason };
        let folder = compiled.parent().unwrap_or_else(|| Path::new("."));
        if !private_file(compiled) || !private_folder(folder) {
            return Err(refused(
                "not a file of a folder only its owner can write to (`llmtool sandbox pull` writes one)"
                    .into(),
            ));
        }
        #[allow(unsafe_code, reason = "loading machine code compiled for this engine")]
        // SAFETY: the file is one `llmtool sandbox pull` wrote (0600, renamed into place in a
        // folder only its owner can write to: both checked above, neither a symbolic link)
        // from wasmtime's own compiler, whose wheel was checked against its SHA-256. wasmtime
        // checks its version, CPU and settings against this engine before using it.
        let module = unsafe { Module::deserialize_file(engine, compiled) }.map_err(|e| {
            refused(format!("{e:#} (`llmtool sandbox pull` compiles it again for this llmtool)"))
        })?;
        let mut linker: Linker<Guest> = Linker::new(engine);
        wasmtime_wasi::p1::add_to_linker_async(&mut linker, |guest: &mut Guest| &mut guest.wasi)
            .map_err(|e| SandboxError::Engine { reason: e.to_string() })?;
        let pre = linker.instantiate_pre(&module).map_err(|e| refused(e.to_string()))?;
        Ok(Python { engine, pre })
    }
}

/// Whether `dir` is a folder, not a symbolic link, that only its owner can write to.
fn private_folder(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir() && owner_only(&m))
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
