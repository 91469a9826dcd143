//! The answer cache: one small JSON file per run, named by the hash of what makes the answer
//! (provider, model, the prompt as sent, the parameters and the repeat's number), under the
//! data directory. Only answers are kept, never a key or a value that is not in the prompt.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

/// What a run answered, as cached.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CachedAnswer {
    /// The answer after the expected output is enforced; `None` when it missed it.
    pub output: Option<String>,
    pub raw: String,
    /// Why the answer missed the expected output.
    pub rejection: Option<String>,
    pub output_tokens: Option<u64>,
    pub cost: Option<f64>,
    pub latency_ms: u64,
    /// An image tool's pictures, each as `FORMAT WIDTHxHEIGHT` (never their bytes); empty for
    /// a text tool, and in answers cached before image tools.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<String>,
}

/// Answers kept in a folder.
#[derive(Debug, Clone)]
pub struct Cache {
    folder: PathBuf,
}

impl Cache {
    pub fn new(folder: PathBuf) -> Self {
        Self { folder }
    }

    /// The key of a run: its parts hashed together, each preceded by its length.
    pub fn key(parts: &[&str]) -> String {
        let mut hasher = Sha256::new();
        for part in parts {
            hasher.update((part.len() as u64).to_le_bytes());
            hasher.update(part.as_bytes());
        }
        hex::encode(hasher.finalize())
    }

    fn path(&self, key: &str) -> PathBuf {
        self.folder.join(&key[..2]).join(format!("{key}.json"))
    }

    /// The cached answer of `key`, if there is a readable one.
    pub fn get(&self, key: &str) -> Option<CachedAnswer> {
        let bytes = std::fs::read(self.path(key)).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// Keeps `answer` under `key` (written aside, then renamed, so a reader never sees half).
    pub fn put(&self, key: &str, answer: &CachedAnswer) -> std::io::Result<()> {
        let path = self.path(key);
        // Answers are the user's alone: 0700 folders, 0600 files.
        if let Some(folder) = path.parent() {
            llmtool_log::private::private_dir_all(folder)?;
        }
        let aside = path.with_extension(format!("json.{}", std::process::id()));
        let bytes = serde_json::to_vec(answer).map_err(std::io::Error::other)?;
        llmtool_log::private::write_private(&aside, &bytes)?;
        std::fs::rename(aside, path)
    }
}
