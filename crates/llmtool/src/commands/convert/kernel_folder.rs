//! A Semantic Kernel function on disk: a folder holding `config.json` and `skprompt.txt`,
//! read (each file bounded in size) for the conversion (`semantic_kernel::read`), which
//! never touches files itself.

use std::path::{Path, PathBuf};

use llmtool_convert::semantic_kernel::{CONFIG_FILE, PROMPT_FILE};
use llmtool_format::limits::ReadError;

use llmtool_runtime::files::{FileError, read};

/// A Semantic Kernel function's files, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct KernelFolder {
    pub folder: PathBuf,
    /// The folder's own name (the function's name), when it has one.
    pub name: Option<String>,
    /// `config.json`.
    pub config: String,
    /// `skprompt.txt`.
    pub prompt: String,
}

impl KernelFolder {
    /// Whether `path` is a Semantic Kernel function: a folder, or one of its two files.
    pub(super) fn is_one(path: &Path) -> bool {
        path.is_dir()
            || path.file_name().is_some_and(|file| file == CONFIG_FILE || file == PROMPT_FILE)
    }

    /// Reads the function at `path` (its folder, or either of its files), each file at most
    /// `limit` bytes and UTF-8.
    pub(super) fn load(path: &Path, limit: u64) -> Result<KernelFolder, FileError> {
        let folder = if path.is_dir() {
            path.to_owned()
        } else {
            path.parent().map_or_else(|| PathBuf::from("."), Path::to_owned)
        };
        let text = |file: &str| {
            let path = folder.join(file);
            let bytes = read(&path, limit)?;
            String::from_utf8(bytes).map_err(|_| {
                let not_text =
                    std::io::Error::new(std::io::ErrorKind::InvalidData, "it is not UTF-8 text");
                FileError::Read { path, error: ReadError::Io(not_text) }
            })
        };
        let (config, prompt) = (text(CONFIG_FILE)?, text(PROMPT_FILE)?);
        let name = folder
            .canonicalize()
            .ok()
            .and_then(|f| f.file_name().map(|n| n.to_string_lossy().into_owned()));
        Ok(KernelFolder { folder, name, config, prompt })
    }

    /// The path of `file` (`config.json` or `skprompt.txt`) in the folder, as reports show it.
    pub(super) fn shown(&self, file: &str) -> String {
        self.folder.join(file).to_string_lossy().into_owned()
    }

    /// The text of `file` (`config.json` or `skprompt.txt`).
    pub(super) fn text(&self, file: &str) -> &str {
        if file == CONFIG_FILE { &self.config } else { &self.prompt }
    }
}
