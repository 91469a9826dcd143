//! How the CPython module becomes machine code: this crate's wasmtime has no compiler (which
//! was a third of llmtool's build), so `llmtool sandbox pull` compiles the module once per
//! machine with wasmtime's own compiler, from the PyPI wheel of the same major version, and
//! every run loads the result ([`crate::Python::load`]).
//!
//! wasmtime checks, when it loads a compiled module, that it was made by the same major
//! version for this CPU and with the same settings; [`SCRIPT`] sets the wheel's engine up as
//! this crate's is, and the test command loads what it makes.

/// wasmtime's compiler, as its Python package ships it: the wheel pip fetches, and the
/// package in it the script imports.
#[derive(Debug, Clone, Copy)]
pub struct Compiler {
    /// What pip is asked for (`wasmtime==48.0.0`): the major version is this crate's
    /// wasmtime's, which is what a compiled module must match.
    pub requirement: &'static str,
    /// The package inside the wheel that the script imports.
    pub package: &'static str,
    /// The SHA-256 of each platform's wheel of that version: the one fetched must be one.
    pub wheel_sha256: &'static [&'static str],
    /// About how many bytes its wheel is (they differ by platform), for a prompt.
    pub bytes: u64,
    pub license: &'static str,
}

/// wasmtime 48.0.0's wheels, for Linux (glibc and musl) on x86-64 and Arm, macOS on both, and
/// Windows on x86-64.
pub const COMPILER: Compiler = Compiler {
    requirement: "wasmtime==48.0.0",
    package: "wasmtime",
    wheel_sha256: &[
        "58544d539053dff7bd4cf30c40d7a540862d683013c0dfa6ba46a063f5b682f7",
        "26fce3613fefbe29a28e9d659dca3326e800593858e5758cad086eb802b3b766",
        "62b241c8d5dfb59ff8af1ccaa5351f0ab7aba8cc872f7d80e0e3c95d54c13562",
        "77f6b75db20be065e205e7af814d4e4f06784c3a00eb346e8c76148ecb4afe5a",
        "50e1ea81a3bec537d00e076722dfdc48978a56ea24619d8153aa1f75b11796b9",
        "ea69889a3c51702e9da5f5f441027ca934f7758f8926a4ed167b0d6877f092e8",
        "21fa500e70f3819a8c0539c3f0be6b3b81ec3c630bb90c47dba4d8a2c1d4c698",
    ],
    bytes: 9_700_000,
    license: "Apache-2.0 WITH LLVM-exception",
};

/// The Python script that compiles: run as `python -I -c SCRIPT PACKAGE-FOLDER MODULE OUT`.
pub const SCRIPT: &str = include_str!("compile.py");

/// The compiled module's file name, for the module whose SHA-256 is `module_sha256`: another
/// module or another compiler never reads a file made for something else.
pub fn compiled_name(module_sha256: &str) -> String {
    let short = module_sha256.get(..16).unwrap_or(module_sha256);
    let version = COMPILER.requirement.rsplit("==").next().unwrap_or_default();
    format!("python-{short}-wasmtime-{version}.cwasm")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_compiler_is_the_major_version_of_the_wasmtime_that_loads_its_output() {
        // The version cargo locked for this crate's `wasmtime`.
        let lock = include_str!("../../../Cargo.lock");
        let locked = lock
            .split("[[package]]")
            .find(|entry| entry.contains("\nname = \"wasmtime\"\n"))
            .and_then(|entry| entry.split("version = \"").nth(1))
            .and_then(|rest| rest.split('"').next())
            .unwrap_or_default();
        let major = |version: &str| version.split('.').next().unwrap_or_default().to_owned();
        let wheel = COMPILER.requirement.rsplit("==").next().unwrap_or_default();
        assert_eq!(major(wheel), major(locked), "wasmtime {locked} loads what {wheel} compiles");
        assert_eq!(
            compiled_name("e5dc5a398b07b54ea8fdb503bf68fb583d533f10ec3f930963e02b9505f7a763"),
            "python-e5dc5a398b07b54e-wasmtime-48.0.0.cwasm"
        );
    }
}
