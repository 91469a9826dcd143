//! The folder a source file was read from, as the importers reach it: the files a source
//! names beside itself (Prompty's `inputs: ${file:schema.json}`) are read from there, and from
//! nowhere else, bounded in size like every file llmtool reads.

use std::path::{Path, PathBuf};

use llmtool_convert::{SiblingFiles, outside_folder};

use llmtool_runtime::files;

/// The folder of a source file, for [`SiblingFiles`].
#[derive(Debug, Clone)]
pub(crate) struct SourceFolder {
    folder: PathBuf,
    limit: u64,
}

impl SourceFolder {
    /// The folder of the source file `path`, whose named files are read up to `limit` bytes.
    pub(crate) fn of(path: &Path, limit: u64) -> Self {
        let folder = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        Self { folder: folder.to_owned(), limit }
    }
}

impl SiblingFiles for SourceFolder {
    fn read(&self, name: &str) -> Result<String, String> {
        if let Some(why) = outside_folder(name) {
            return Err(why);
        }
        let folder = std::fs::canonicalize(&self.folder)
            .map_err(|e| format!("cannot open the source's folder: {e}"))?;
        let path = std::fs::canonicalize(folder.join(name))
            .map_err(|e| format!("cannot open `{name}`: {e}"))?;
        // A symbolic link inside the folder may not lead out of it.
        if !path.starts_with(&folder) {
            return Err(format!("`{name}` is a link that leads out of the source's folder"));
        }
        if !path.is_file() {
            return Err(format!("`{name}` is not a file"));
        }
        let bytes = files::read(&path, self.limit).map_err(|e| e.to_string())?;
        String::from_utf8(bytes).map_err(|_| format!("`{name}` is not UTF-8 text"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_reaches_the_files_of_its_folder_and_no_others() {
        let root = tempfile::tempdir().unwrap();
        let folder = root.path().join("prompts");
        std::fs::create_dir_all(folder.join("shared")).unwrap();
        std::fs::write(folder.join("schema.json"), "[]").unwrap();
        std::fs::write(folder.join("shared/more.yaml"), "- a").unwrap();
        std::fs::write(root.path().join("secret.json"), "{}").unwrap();
        std::fs::write(folder.join("big.json"), "x".repeat(100)).unwrap();
        std::os::unix::fs::symlink(root.path().join("secret.json"), folder.join("link.json"))
            .unwrap();
        let source = SourceFolder::of(&folder.join("chat.prompty"), 50);
        assert_eq!(source.read("schema.json").unwrap(), "[]");
        assert_eq!(source.read("shared/more.yaml").unwrap(), "- a");
        let refused = |name: &str| source.read(name).unwrap_err();
        assert!(refused("../secret.json").contains("leads out"));
        assert!(refused(&root.path().join("secret.json").to_string_lossy()).contains("relative"));
        assert!(refused("link.json").contains("link that leads out"));
        assert!(refused("shared").contains("not a file"));
        assert!(refused("missing.json").contains("cannot open `missing.json`"));
        assert!(refused("big.json").contains("larger than"));
    }
}
