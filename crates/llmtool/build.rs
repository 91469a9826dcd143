//! Puts the commit the binary is built from into `llmtool --version`, as rustc and cargo do:
//! `llmtool 0.1.0 (e413bf7c1a2b 2026-12-01)`. Outside a git checkout (a source archive) the
//! version stands alone.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let output = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    (output.status.success() && !text.trim().is_empty()).then(|| text.trim().to_owned())
}

fn main() {
    link_compactly();
    let version = env!("CARGO_PKG_VERSION");
    let described =
        match (git(&["rev-parse", "--short=12", "HEAD"]), git(&["log", "-1", "--format=%cs"])) {
            (Some(commit), Some(date)) => format!("{version} ({commit} {date})"),
            _ => version.to_owned(),
        };
    println!("cargo:rustc-env=LLMTOOL_VERSION={described}");
    // Built again when HEAD moves: to another branch, or to a new commit on this one. Only
    // files that exist are named: cargo reruns a script whose named file is missing every time.
    let mut watched = vec!["HEAD".to_owned(), "packed-refs".to_owned()];
    watched.extend(git(&["symbolic-ref", "-q", "HEAD"]));
    for name in watched {
        if let Some(path) = git(&["rev-parse", "--git-path", &name])
            && std::path::Path::new(&path).exists()
        {
            println!("cargo:rerun-if-changed={path}");
        }
    }
}

/// A release binary on x86-64 Linux, where rustc links with its own LLD, is linked smaller at no
/// cost at run time: relative relocations packed (`DT_RELR`, read by glibc 2.36 and later:
/// 3.6 MB of `.rela.dyn` become 40 KB) and identical functions folded into one (`--icf=all`:
/// the copies generic code leaves behind, 1.2 MB). `LLMTOOL_PLAIN_LINK=1` leaves both out, for
/// a toolchain set to link with GNU ld or for an older C library (docs/benchmarks.md,
/// "The release build").
fn link_compactly() {
    println!("cargo:rerun-if-env-changed=LLMTOOL_PLAIN_LINK");
    let release = std::env::var("PROFILE").is_ok_and(|profile| profile == "release");
    let lld_by_default =
        std::env::var("TARGET").is_ok_and(|target| target == "x86_64-unknown-linux-gnu");
    let plain = std::env::var_os("LLMTOOL_PLAIN_LINK").is_some_and(|value| value != "0");
    if release && lld_by_default && !plain {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
        println!("cargo:rustc-link-arg-bins=-Wl,--icf=all");
    }
}
