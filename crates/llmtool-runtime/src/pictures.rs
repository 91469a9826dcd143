//! Where an image tool's pictures go: saved into the runtime's picture folder as the run ends,
//! before its record is made, so that the record (and the run log) holds where each picture
//! is and its SHA-256, never its bytes.
//!
//! The folder is made when the first picture comes (only its owner may enter it), each file
//! is new (`image-1.png`, then the next free number: nothing is ever overwritten), and only its
//! owner may read it, since a picture can show what its prompt held.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use llmtool_providers::images::SavedImage;
use llmtool_providers::run::RunReport;
use sha2::Digest as _;

/// The most files one folder takes before numbering gives up (a folder full of pictures).
const MAX_NUMBER: u32 = 100_000;

/// Where a runtime's pictures go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PictureFolder {
    /// This folder (`--out`), made with its parents if missing.
    Given(PathBuf),
    /// A new folder made in this one for each run's pictures, when they come:
    /// `images-YYYYMMDD-HHMMSS` (or `-2`, `-3`, ...), made by this run alone, so that nobody
    /// can have planted it or a link in its place.
    FreshIn(PathBuf),
}

/// Saves `report`'s pictures into `folder`, replacing their bytes by where they are: the
/// report's `images`, and as its output one path a line (what `llmtool run` prints).
pub fn save(folder: &PictureFolder, report: &mut RunReport) -> std::io::Result<()> {
    if report.pictures.is_empty() {
        return Ok(());
    }
    let folder = match folder {
        PictureFolder::Given(folder) => {
            make_private_folder(folder)?;
            folder.clone()
        }
        PictureFolder::FreshIn(parent) => new_folder(parent)?,
    };
    let folder = folder.as_path();
    let mut number = 1;
    for picture in std::mem::take(&mut report.pictures) {
        let (path, mut file) = loop {
            let path = folder.join(format!("image-{number}.{}", picture.format.extension()));
            number += 1;
            match private_new_file(&path) {
                Ok(file) => break (path, file),
                Err(error)
                    if error.kind() == std::io::ErrorKind::AlreadyExists && number < MAX_NUMBER => {
                }
                Err(error) => return Err(error),
            }
        };
        file.write_all(&picture.bytes)?;
        file.sync_all()?;
        report.images.push(SavedImage {
            path: path.display().to_string(),
            format: picture.format.name().to_owned(),
            width: picture.size.width,
            height: picture.size.height,
            bytes: picture.bytes.len() as u64,
            sha256: hex::encode(sha2::Sha256::digest(&picture.bytes)),
        });
    }
    report.output =
        Some(report.images.iter().map(|image| image.path.as_str()).collect::<Vec<_>>().join("\n"));
    Ok(())
}

/// Makes a new folder in `parent` for this run's pictures, only its owner may enter:
/// `images-20261128-164500`, then `-2`, `-3`, ... if that name is taken. Made, not found: a
/// folder (or a link) already there is never used.
fn new_folder(parent: &Path) -> std::io::Result<PathBuf> {
    new_folder_at(parent, &jiff::Zoned::now().strftime("%Y%m%d-%H%M%S").to_string())
}

fn new_folder_at(parent: &Path, stamp: &str) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt as _;
    for n in 1..1000 {
        let name = if n == 1 { format!("images-{stamp}") } else { format!("images-{stamp}-{n}") };
        let folder = parent.join(name);
        match std::fs::DirBuilder::new().mode(0o700).create(&folder) {
            Ok(()) => return Ok(folder),
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(error) => return Err(error),
        }
    }
    Err(std::io::Error::new(std::io::ErrorKind::AlreadyExists, "no free folder name is left"))
}

/// Makes `folder` (and its parents) if missing, the new ones for their owner alone.
fn make_private_folder(folder: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt as _;
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(folder)
}

/// A new file at `path`, for its owner alone. `create_new` refuses any existing path, a
/// symbolic link planted there included, so nothing is overwritten or written through.
fn private_new_file(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt as _;
    std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_folder_is_never_one_that_exists() {
        let parent = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let stamp = "20261128-164500";
        let first = new_folder_at(parent.path(), stamp).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(first, parent.path().join("images-20261128-164500"));
        // A link planted under the next name is passed over, not followed.
        let elsewhere = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let planted = parent.path().join("images-20261128-164500-2");
        std::os::unix::fs::symlink(elsewhere.path(), &planted).unwrap_or_else(|e| panic!("{e}"));
        let third = new_folder_at(parent.path(), stamp).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(third, parent.path().join("images-20261128-164500-3"));
        assert!(!std::fs::symlink_metadata(&third).unwrap_or_else(|e| panic!("{e}")).is_symlink());
    }
}
