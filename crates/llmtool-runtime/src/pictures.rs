//! What becomes of an image tool's pictures as the run ends, before its record is made, so
//! that the record (and the run log) holds each picture's SHA-256 and size, and where it was
//! saved, never its bytes.
//!
//! `llmtool run` saves them in a folder: made when the first picture comes (only its owner may
//! enter it), each file new (`image-1.png`, then the next free number: nothing is ever
//! overwritten), and only its owner may read it, since a picture can show what its prompt
//! held. Servers hand them back with the answer instead (MCP's image content), up to
//! [`MAX_RETURNED_BYTES`] together.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use llmtool_providers::images::{Picture, SavedImage};
use llmtool_providers::run::RunReport;
use sha2::Digest as _;

use crate::error::RunError;

/// The most files one folder takes before numbering gives up (a folder full of pictures).
const MAX_NUMBER: u32 = 100_000;

/// The most bytes of pictures one answer hands back: a server holds them in memory and sends
/// them as base64 in one message.
pub const MAX_RETURNED_BYTES: u64 = 64 * 1024 * 1024;

/// What a runtime does with image tools' pictures.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Pictures {
    /// Image tools are refused: nothing would keep what they make.
    #[default]
    Refused,
    /// Saved in a folder, as `llmtool run` does.
    Saved(PictureFolder),
    /// Handed back with the answer ([`crate::Answer`]), as servers do.
    Returned,
}

/// Where a runtime's pictures are saved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PictureFolder {
    /// This folder (`--out`), made with its parents if missing.
    Given(PathBuf),
    /// A new folder made in this one for each run's pictures, when they come:
    /// `images-YYYYMMDD-HHMMSS` (or `-2`, `-3`, ...), made by this run alone, so that nobody
    /// can have planted it or a link in its place.
    FreshIn(PathBuf),
}

/// Does with `report`'s pictures what `pictures` says. Its `images` then describe them, and
/// its output is one line for each: the path it was saved at (what `llmtool run` prints), or,
/// for pictures handed back, its size, format and SHA-256.
pub(crate) fn settle(pictures: &Pictures, report: &mut RunReport) -> Result<(), RunError> {
    if report.pictures.is_empty() {
        return Ok(());
    }
    match pictures {
        Pictures::Refused => return Err(RunError::NoPictureFolder),
        Pictures::Saved(folder) => save(folder, report).map_err(|error| {
            let (PictureFolder::Given(folder) | PictureFolder::FreshIn(folder)) = folder;
            report.pictures.clear();
            let report = Box::new(report.clone());
            RunError::SavePictures { folder: folder.clone(), error, report }
        })?,
        Pictures::Returned => {
            let bytes: u64 = report.pictures.iter().map(|p| p.bytes.len() as u64).sum();
            if bytes > MAX_RETURNED_BYTES {
                return Err(RunError::PicturesTooLarge { bytes, limit: MAX_RETURNED_BYTES });
            }
            report.images = report.pictures.iter().map(|p| described(p, None)).collect();
        }
    }
    report.output = Some(
        report
            .images
            .iter()
            .map(|image| match &image.path {
                Some(path) => path.clone(),
                None => format!(
                    "{}x{} {} sha256:{}",
                    image.width, image.height, image.format, image.sha256
                ),
            })
            .collect::<Vec<_>>()
            .join("\n"),
    );
    Ok(())
}

/// Saves `report`'s pictures into `folder`, replacing their bytes by where they are.
fn save(folder: &PictureFolder, report: &mut RunReport) -> std::io::Result<()> {
    let folder = match folder {
        PictureFolder::Given(folder) => folder.clone(),
        PictureFolder::FreshIn(parent) => new_folder(parent)?,
    };
    let pictures = std::mem::take(&mut report.pictures);
    report.images = save_into(&folder, "image", &pictures)?;
    Ok(())
}

/// Saves `pictures` into `folder` (made, with its parents, if missing: the new ones for their
/// owner alone) as `STEM-1.png`, `STEM-2.png`, ... each taking the next number no file has,
/// and says what each saved picture is. `llmtool run` names them `image-N`, a batch
/// `row-ROW-N`.
pub fn save_into(
    folder: &Path,
    stem: &str,
    pictures: &[Picture],
) -> std::io::Result<Vec<SavedImage>> {
    make_private_folder(folder)?;
    let mut saved = Vec::with_capacity(pictures.len());
    let mut number = 1;
    for picture in pictures {
        let (path, mut file) = loop {
            let path = folder.join(format!("{stem}-{number}.{}", picture.format.extension()));
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
        saved.push(described(picture, Some(path.display().to_string())));
    }
    Ok(saved)
}

/// What a run's report and record say of a picture: never its bytes.
fn described(picture: &Picture, path: Option<String>) -> SavedImage {
    SavedImage {
        path,
        format: picture.format.name().to_owned(),
        width: picture.size.width,
        height: picture.size.height,
        bytes: picture.bytes.len() as u64,
        sha256: hex::encode(sha2::Sha256::digest(&picture.bytes)),
    }
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
    use llmtool_format::output::{ImageFormat, ImageSize};

    fn report_of(pictures: Vec<Picture>) -> RunReport {
        RunReport {
            output: None,
            raw: String::new(),
            model: "gpt-image-1".into(),
            provider: "openai".into(),
            usage: llmtool_providers::Usage::default(),
            cost: None,
            price: None,
            latency_ms: 0,
            time_to_first_token_ms: None,
            finish_reason: None,
            repairs: 0,
            error: None,
            warnings: Vec::new(),
            redactions: std::collections::BTreeMap::new(),
            local: None,
            revised_prompt: None,
            pictures,
            images: Vec::new(),
            calls: Vec::new(),
            placeholders: llmtool_providers::run::Placeholders::default(),
        }
    }

    fn picture(bytes: usize) -> Picture {
        let size = ImageSize { width: 3, height: 2 };
        Picture { bytes: vec![7; bytes].into(), format: ImageFormat::Webp, size }
    }

    #[test]
    fn pictures_handed_back_are_kept_and_described_without_a_path() {
        let mut report = report_of(vec![picture(10), picture(20)]);
        settle(&Pictures::Returned, &mut report).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(report.pictures, vec![picture(10), picture(20)]);
        let described: Vec<_> =
            report.images.iter().map(|i| (i.path.clone(), i.bytes, i.format.as_str())).collect();
        assert_eq!(described, vec![(None, 10, "webp"), (None, 20, "webp")]);
        let sha = hex::encode(sha2::Sha256::digest([7; 10]));
        let first_line = report.output.as_deref().and_then(|o| o.lines().next());
        assert_eq!(first_line, Some(format!("3x2 webp sha256:{sha}").as_str()));
    }

    #[test]
    fn pictures_past_what_a_server_hands_back_are_refused() {
        let half = usize::try_from(MAX_RETURNED_BYTES / 2).unwrap_or(usize::MAX);
        let mut report = report_of(vec![picture(half), picture(half + 1)]);
        let refused = settle(&Pictures::Returned, &mut report).map_err(|e| e.to_string());
        assert!(refused.is_err_and(|e| e.contains("llmtool run")));
        let mut report = report_of(vec![picture(half), picture(half)]);
        assert!(settle(&Pictures::Returned, &mut report).is_ok());
    }

    #[test]
    fn pictures_with_nowhere_to_go_are_an_error_and_no_pictures_are_nothing_to_do() {
        let mut report = report_of(vec![picture(1)]);
        let refused = settle(&Pictures::Refused, &mut report);
        assert!(matches!(refused, Err(RunError::NoPictureFolder)));
        let mut report = report_of(Vec::new());
        assert!(settle(&Pictures::Refused, &mut report).is_ok());
        assert_eq!(report.output, None);
    }

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
