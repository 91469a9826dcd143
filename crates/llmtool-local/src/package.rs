//! A Python package unpacked from a pinned wheel (wasmtime's compiler, for the sandbox): the
//! wheel fetched with pip, checked against the SHA-256s it may have (one per platform), and
//! only the package's own folder unpacked, into a private folder named after the version.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use crate::LocalError;
use crate::pip;
use crate::store::{io_error, sha256_of};

/// The file an installed package's folder holds once every member is unpacked: the wheel's
/// SHA-256.
const MARKER: &str = ".installed";

/// The most bytes a package may unpack to: a compiler's library is about 30 MB.
const MAX_UNPACKED: u64 = 256 << 20;

/// A pinned wheel and the package to take from it.
#[derive(Debug, Clone, Copy)]
pub struct PinnedPackage<'a> {
    /// `name==version`.
    pub requirement: &'a str,
    /// The top folder of the wheel to unpack (`wasmtime`).
    pub package: &'a str,
    /// Every SHA-256 the wheel may have.
    pub wheel_sha256: &'a [&'a str],
    /// The most bytes its wheel may be.
    pub max_wheel_bytes: u64,
}

impl PinnedPackage<'_> {
    /// The folder it is unpacked in, under `dir`: `dir/NAME-VERSION`, holding `PACKAGE/`.
    pub fn folder(&self, dir: &Path) -> PathBuf {
        dir.join(self.requirement.replace("==", "-"))
    }

    /// Its folder under `dir`, if a finished install is there.
    pub fn installed(&self, dir: &Path) -> Option<PathBuf> {
        let folder = self.folder(dir);
        folder.join(MARKER).is_file().then_some(folder)
    }
}

/// Installs `pinned` under `dir` (a folder only its owner can write to) unless it is there:
/// from `wheel` when given, else from pip. `on_bytes` hears how much pip has fetched.
pub fn install(
    pinned: &PinnedPackage<'_>,
    dir: &Path,
    wheel: Option<&Path>,
    on_bytes: &mut dyn FnMut(u64),
) -> Result<PathBuf, LocalError> {
    if let Some(folder) = pinned.installed(dir) {
        return Ok(folder);
    }
    let fetched;
    let wheel = match wheel {
        Some(wheel) => wheel.to_path_buf(),
        None => {
            fetched =
                pip::download_wheels(&[pinned.requirement], pinned.max_wheel_bytes, on_bytes)?;
            fetched.in_order(&[pinned.requirement])?.remove(0)
        }
    };
    let sha256 = sha256_of(&wheel)?;
    if !pinned.wheel_sha256.contains(&sha256.as_str()) {
        return Err(LocalError::Unusable {
            path: wheel,
            reason: format!(
                "its SHA-256 is {sha256}, none of those pinned for `{}`",
                pinned.requirement
            ),
        });
    }
    let unpacking = private_temporary(dir)?;
    unpack(&wheel, pinned.package, unpacking.path())?;
    let marker = unpacking.path().join(MARKER);
    std::fs::write(&marker, format!("{sha256}\n")).map_err(|e| io_error(&marker, e))?;
    let folder = pinned.folder(dir);
    let unpacked = unpacking.keep();
    std::fs::rename(&unpacked, &folder).map_err(|e| {
        let _ = std::fs::remove_dir_all(&unpacked);
        io_error(&folder, e)
    })?;
    Ok(folder)
}

/// A new folder in `dir` only its owner can use, removed when dropped.
fn private_temporary(dir: &Path) -> Result<tempfile::TempDir, LocalError> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir).map_err(|e| io_error(dir, e))?;
    tempfile::Builder::new().prefix(".unpacking-").tempdir_in(dir).map_err(|e| io_error(dir, e))
}

/// Unpacks the members of `wheel` under `package/` into `into`, `MAX_UNPACKED` bytes at most;
/// a member whose name climbs out of the folder is refused.
fn unpack(wheel: &Path, package: &str, into: &Path) -> Result<(), LocalError> {
    let fail = |reason: String| LocalError::Unusable { path: wheel.to_path_buf(), reason };
    let file = std::fs::File::open(wheel).map_err(|e| io_error(wheel, e))?;
    let mut archive = zip::ZipArchive::new(file).map_err(|e| fail(format!("not a wheel: {e}")))?;
    let prefix = format!("{package}/");
    let mut budget = MAX_UNPACKED;
    let mut found = false;
    for index in 0..archive.len() {
        let mut entry = archive.by_index(index).map_err(|e| fail(e.to_string()))?;
        let Some(name) = entry.enclosed_name() else {
            return Err(fail("a member's name leaves its folder".into()));
        };
        if !name.starts_with(&prefix) || entry.is_dir() {
            continue;
        }
        found = true;
        let target = into.join(&name);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io_error(parent, e))?;
        }
        let mut out = std::fs::File::create(&target).map_err(|e| io_error(&target, e))?;
        let copied = std::io::copy(&mut (&mut entry).take(budget + 1), &mut out)
            .map_err(|e| io_error(&target, e))?;
        budget = budget
            .checked_sub(copied)
            .ok_or_else(|| fail(format!("it unpacks to more than {MAX_UNPACKED} bytes")))?;
    }
    if found { Ok(()) } else { Err(fail(format!("it holds no `{package}` package"))) }
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    fn wheel(dir: &Path, members: &[(&str, &[u8])]) -> PathBuf {
        let path = dir.join("pkg-1.0-py3-none-any.whl");
        let mut zip =
            zip::ZipWriter::new(std::fs::File::create(&path).unwrap_or_else(|e| panic!("{e}")));
        for (name, bytes) in members {
            zip.start_file(*name, zip::write::SimpleFileOptions::default())
                .unwrap_or_else(|e| panic!("{e}"));
            zip.write_all(bytes).unwrap_or_else(|e| panic!("{e}"));
        }
        zip.finish().unwrap_or_else(|e| panic!("{e}"));
        path
    }

    #[test]
    fn only_the_package_of_a_wheel_with_a_pinned_hash_is_unpacked() {
        let work = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let wheel = wheel(
            work.path(),
            &[
                ("pkg/__init__.py", b"x = 1\n"),
                ("pkg/lib/native.so", b"\x7fELF"),
                ("pkg-1.0.dist-info/METADATA", b"Name: pkg\n"),
                ("other/__init__.py", b""),
            ],
        );
        let sha256 = sha256_of(&wheel).unwrap_or_else(|e| panic!("{e}"));
        let dir = work.path().join("compiler");
        let pinned = PinnedPackage {
            requirement: "pkg==1.0",
            package: "pkg",
            wheel_sha256: &["0000000000000000000000000000000000000000000000000000000000000000"],
            max_wheel_bytes: 1 << 20,
        };
        let refused = install(&pinned, &dir, Some(&wheel), &mut |_| {});
        assert!(
            matches!(&refused, Err(LocalError::Unusable { reason, .. }) if reason.contains("none of those pinned")),
            "{refused:?}"
        );
        assert!(pinned.installed(&dir).is_none(), "nothing is left of a refused wheel");

        let pinned = PinnedPackage { wheel_sha256: &[sha256.as_str()], ..pinned };
        let folder =
            install(&pinned, &dir, Some(&wheel), &mut |_| {}).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(folder, dir.join("pkg-1.0"));
        assert_eq!(
            std::fs::read(folder.join("pkg/lib/native.so")).ok().as_deref(),
            Some(&b"\x7fELF"[..])
        );
        assert!(!folder.join("other").exists() && !folder.join("pkg-1.0.dist-info").exists());
        assert_eq!(pinned.installed(&dir), Some(folder));
    }

    #[test]
    fn a_member_that_climbs_out_of_its_folder_is_refused() {
        let work = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let wheel = wheel(work.path(), &[("pkg/../../escaped.py", b"boom")]);
        let sha256 = sha256_of(&wheel).unwrap_or_else(|e| panic!("{e}"));
        let pinned = PinnedPackage {
            requirement: "pkg==1.0",
            package: "pkg",
            wheel_sha256: &[sha256.as_str()],
            max_wheel_bytes: 1 << 20,
        };
        let refused = install(&pinned, &work.path().join("compiler"), Some(&wheel), &mut |_| {});
        assert!(matches!(refused, Err(LocalError::Unusable { .. })), "{refused:?}");
        assert!(!work.path().join("escaped.py").exists());
    }
}
