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

/// Saves `report`'s pictures into `folder`, replacing their bytes by where they are: the
/// report's `images`, and as its output one path a line (what `llmtool run` prints).
pub fn save(folder: &Path, report: &mut RunReport) -> std::io::Result<()> {
    if report.pictures.is_empty() {
        return Ok(());
    }
    make_private_folder(folder)?;
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

/// A folder name under `parent` for this run's pictures that does not exist yet:
/// `images-20261128-164500`, then `-2`, `-3`, ... if it does.
pub fn fresh_folder(parent: &Path) -> PathBuf {
    fresh_folder_at(parent, &jiff::Zoned::now().strftime("%Y%m%d-%H%M%S").to_string())
}

fn fresh_folder_at(parent: &Path, stamp: &str) -> PathBuf {
    let first = parent.join(format!("images-{stamp}"));
    if !first.exists() {
        return first;
    }
    (2..1000)
        .map(|n| parent.join(format!("images-{stamp}-{n}")))
        .find(|path| !path.exists())
        .unwrap_or(first)
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
    fn a_fresh_folder_is_never_one_that_exists() {
        let parent = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let first = fresh_folder_at(parent.path(), "20261128-164500");
        assert_eq!(first, parent.path().join("images-20261128-164500"));
        std::fs::create_dir(&first).unwrap_or_else(|e| panic!("{e}"));
        let second = fresh_folder_at(parent.path(), "20261128-164500");
        assert_eq!(second, parent.path().join("images-20261128-164500-2"));
    }
}
