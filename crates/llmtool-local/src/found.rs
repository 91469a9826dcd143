//! GGUF models already on this machine, kept by the programs people run them with: Ollama's
//! blob store (each model named as `ollama run` names it, from its manifest), LM Studio's
//! models folder, and llmtool's own. Finding them reads folder listings, Ollama's small JSON
//! manifests and the first four bytes of each file; a model is only opened whole when a run
//! asks for it, and nothing in a file ever runs.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::store;

/// Where a model was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// llmtool's models folder (`llmtool model pull`, `LLMTOOL_MODELS_DIR`).
    Llmtool,
    /// Ollama's blob store (`OLLAMA_MODELS`, else `~/.ollama/models`).
    Ollama,
    /// LM Studio's models folder (`~/.lmstudio/models`, or the older `~/.cache/lm-studio/models`).
    LmStudio,
}

/// A model file found, and the name `--model local:NAME` takes for it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Found {
    pub name: String,
    pub path: PathBuf,
    pub bytes: u64,
    pub source: Source,
}

/// The largest manifest read: Ollama's are a few hundred bytes.
const MAX_MANIFEST: u64 = 64 << 10;
/// How deep LM Studio's folder is searched (`publisher/repository/file.gguf`).
const LM_STUDIO_DEPTH: usize = 3;
/// The most files looked at in one folder tree, so that a huge tree cannot stall a listing.
const MAX_ENTRIES: usize = 10_000;

/// Every model found: llmtool's first, then Ollama's, then LM Studio's, each sorted by name.
pub fn found() -> Vec<Found> {
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
    let mut all = llmtool_models();
    all.extend(ollama_dir(home.as_deref()).map(|dir| ollama(&dir)).unwrap_or_default());
    for dir in lm_studio_dirs(home.as_deref()) {
        all.extend(lm_studio(&dir));
    }
    all
}

/// The model `--model local:NAME` names, if one was found by that name (an Ollama name without
/// a tag means its `latest`).
pub fn find(name: &str) -> Option<Found> {
    let all = found();
    let exact = all.iter().find(|f| f.name == name);
    let latest = || {
        let tagged = format!("{name}:latest");
        all.iter().find(|f| f.source == Source::Ollama && f.name == tagged)
    };
    exact.or_else(latest).cloned()
}

fn llmtool_models() -> Vec<Found> {
    store::installed()
        .unwrap_or_default()
        .into_iter()
        .map(|m| Found { name: m.name, path: m.path, bytes: m.bytes, source: Source::Llmtool })
        .collect()
}

fn ollama_dir(home: Option<&Path>) -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("OLLAMA_MODELS").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    home.map(|home| home.join(".ollama").join("models"))
}

fn lm_studio_dirs(home: Option<&Path>) -> Vec<PathBuf> {
    let Some(home) = home else { return Vec::new() };
    vec![
        home.join(".lmstudio").join("models"),
        home.join(".cache").join("lm-studio").join("models"),
    ]
}

/// What an Ollama manifest says of its layers.
#[derive(Debug, Deserialize)]
struct Manifest {
    #[serde(default)]
    layers: Vec<Layer>,
}

#[derive(Debug, Deserialize)]
struct Layer {
    #[serde(rename = "mediaType")]
    media_type: String,
    digest: String,
}

/// The layer that holds the model's weights.
const OLLAMA_MODEL_LAYER: &str = "application/vnd.ollama.image.model";

/// Ollama's models: each manifest (`manifests/HOST/NAMESPACE/MODEL/TAG`) names its weights'
/// blob (`blobs/sha256-HEX`). Named `MODEL:TAG` in the `library` namespace, else
/// `NAMESPACE/MODEL:TAG`; the host is left out.
fn ollama(dir: &Path) -> Vec<Found> {
    let mut found = Vec::new();
    let manifests = dir.join("manifests");
    for (parts, path) in files_under(&manifests, 4) {
        let [_host, namespace, model, tag] = parts.as_slice() else { continue };
        let Some(blob) = read_small(&path).and_then(|text| model_blob(&text)) else { continue };
        let blob = dir.join("blobs").join(blob);
        let Some(bytes) = gguf_file(&blob) else { continue };
        let name = if namespace == "library" {
            format!("{model}:{tag}")
        } else {
            format!("{namespace}/{model}:{tag}")
        };
        found.push(Found { name, path: blob, bytes, source: Source::Ollama });
    }
    found.sort_by(|a, b| a.name.cmp(&b.name));
    found
}

/// The blob file name of a manifest's weights: `sha256-HEX`, checked to be nothing else.
fn model_blob(manifest: &str) -> Option<String> {
    let manifest: Manifest = serde_json::from_str(manifest).ok()?;
    let layer = manifest.layers.iter().find(|l| l.media_type == OLLAMA_MODEL_LAYER)?;
    let hex = layer.digest.strip_prefix("sha256:")?;
    (hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit())).then(|| format!("sha256-{hex}"))
}

/// LM Studio's models: `PUBLISHER/REPOSITORY/FILE.gguf`, named by that path without `.gguf`
/// (vision projectors, `mmproj-*`, left out: they are not models to run).
fn lm_studio(dir: &Path) -> Vec<Found> {
    let mut found: Vec<Found> = files_under(dir, LM_STUDIO_DEPTH)
        .into_iter()
        .filter_map(|(parts, path)| {
            let file = parts.last()?;
            let stem = file.strip_suffix(".gguf")?;
            if stem.starts_with("mmproj") {
                return None;
            }
            let bytes = gguf_file(&path)?;
            let mut name = parts[..parts.len() - 1].join("/");
            name.push('/');
            name.push_str(stem);
            Some(Found { name, path, bytes, source: Source::LmStudio })
        })
        .collect();
    found.sort_by(|a, b| a.name.cmp(&b.name));
    found
}

/// The regular files exactly `depth` folders below `root` (symbolic links not followed, hidden
/// entries left out), with the names on their way; at most [`MAX_ENTRIES`] entries looked at.
fn files_under(root: &Path, depth: usize) -> Vec<(Vec<String>, PathBuf)> {
    let mut files = Vec::new();
    let mut pending = vec![(Vec::new(), root.to_path_buf())];
    let mut seen = 0;
    while let Some((parts, folder)) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else { continue };
        for entry in entries.filter_map(Result::ok) {
            seen += 1;
            if seen > MAX_ENTRIES {
                return files;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let Ok(kind) = entry.file_type() else { continue };
            let mut here = parts.clone();
            here.push(name);
            if kind.is_dir() && here.len() < depth {
                pending.push((here, entry.path()));
            } else if kind.is_file() && here.len() == depth {
                files.push((here, entry.path()));
            }
        }
    }
    files
}

/// A small file's text (a manifest), or `None` when it is not one.
fn read_small(path: &Path) -> Option<String> {
    let mut text = String::new();
    std::fs::File::open(path).ok()?.take(MAX_MANIFEST + 1).read_to_string(&mut text).ok()?;
    (text.len() as u64 <= MAX_MANIFEST).then_some(text)
}

/// The size of `path` when it is a regular file (not a link) that starts with GGUF's magic.
fn gguf_file(path: &Path) -> Option<u64> {
    let metadata = std::fs::symlink_metadata(path).ok()?;
    if !metadata.is_file() {
        return None;
    }
    let mut magic = [0u8; 4];
    std::fs::File::open(path).ok()?.read_exact(&mut magic).ok()?;
    (&magic == b"GGUF").then_some(metadata.len())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

    use super::*;

    fn write(path: &Path, bytes: &[u8]) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }

    #[test]
    fn an_ollama_store_is_found_by_the_names_ollama_gives() {
        let dir = tempfile::tempdir().unwrap();
        let hex = "ab".repeat(32);
        let manifest = |digest: &str| {
            format!(
                r#"{{"schemaVersion":2,"layers":[{{"mediaType":"application/vnd.ollama.image.template","digest":"sha256:{}"}},{{"mediaType":"application/vnd.ollama.image.model","digest":"{digest}","size":8}}]}}"#,
                "cd".repeat(32)
            )
        };
        let store = dir.path();
        write(
            &store.join("manifests/host.example/library/qwen2.5/0.5b"),
            manifest(&format!("sha256:{hex}")).as_bytes(),
        );
        write(
            &store.join("manifests/host.example/someone/tiny/latest"),
            manifest(&format!("sha256:{hex}")).as_bytes(),
        );
        // A digest that is not a hash cannot name a file elsewhere.
        write(
            &store.join("manifests/host.example/library/evil/latest"),
            manifest("sha256:../../etc/passwd").as_bytes(),
        );
        write(&store.join(format!("blobs/sha256-{hex}")), b"GGUF\x03\0\0\0");
        let found = ollama(store);
        let names: Vec<&str> = found.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["qwen2.5:0.5b", "someone/tiny:latest"]);
        assert_eq!(found[0].path, store.join(format!("blobs/sha256-{hex}")));
        assert_eq!(found[0].bytes, 8);
    }

    #[test]
    fn lm_studio_models_are_named_by_their_path_and_projectors_left_out() {
        let dir = tempfile::tempdir().unwrap();
        write(
            &dir.path().join("lmstudio-community/Qwen3-0.6B-GGUF/Qwen3-0.6B-Q4_K_M.gguf"),
            b"GGUFxxxx",
        );
        write(
            &dir.path().join("lmstudio-community/Qwen3-0.6B-GGUF/mmproj-model-f16.gguf"),
            b"GGUFxxxx",
        );
        write(&dir.path().join("someone/broken/not-a-model.gguf"), b"PK\x03\x04");
        let names: Vec<String> = lm_studio(dir.path()).into_iter().map(|f| f.name).collect();
        assert_eq!(names, ["lmstudio-community/Qwen3-0.6B-GGUF/Qwen3-0.6B-Q4_K_M"]);
    }
}
