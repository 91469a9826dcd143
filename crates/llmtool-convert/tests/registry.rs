//! The registries of rules miss none: every rule declared with `declare_rule!` in the format
//! (`llmtool-format`) is in its `rules::ALL`, every one declared in the conversions (this crate)
//! is in `codes::ALL`, each once (so `all_rules`, which `docs/diagnostics.md` documents, has
//! them all), and each file declares one rule.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use llmtool_format::rules::Rule;

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

/// The rules declared under `src` (a crate's sources), each with its file.
fn declared_in(src: &Path) -> BTreeMap<String, PathBuf> {
    let mut files = Vec::new();
    sources(src, &mut files);
    // `pub static NAME = ("LT001", "trailing-comma", Error);` inside `declare_rule! { ... }`.
    let declared = regex::Regex::new(r#"static\s+\w+\s*=\s*\("(LT\d+)",\s*"([\w-]+)""#).unwrap();
    let mut codes: BTreeMap<String, PathBuf> = BTreeMap::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        // The macro's own definition and its documentation's example are not rules.
        if file.ends_with("diagnostic/rule.rs") {
            continue;
        }
        let found: Vec<String> = text
            .split("declare_rule!")
            .skip(1)
            .filter_map(|block| declared.captures(block).map(|c| c[1].to_owned()))
            .collect();
        assert!(
            found.len() <= 1,
            "{} declares {} rules: one per file",
            file.display(),
            found.len()
        );
        for code in found {
            let earlier = codes.insert(code.clone(), file.clone());
            assert!(
                earlier.is_none(),
                "{code} is declared twice: {earlier:?} and {}",
                file.display()
            );
        }
    }
    codes
}

/// Checks that `registered` (the registry `registry` names) lists exactly the rules `declared`.
fn registers_exactly(registered: &[&Rule], declared: &BTreeMap<String, PathBuf>, registry: &str) {
    let registered: Vec<&str> = registered.iter().map(|rule| rule.code).collect();
    for (code, file) in declared {
        assert!(
            registered.contains(&code.as_str()),
            "{code} ({}) is declared but not in {registry}",
            file.display()
        );
    }
    let mut unique = registered.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), registered.len(), "a rule is registered twice in {registry}");
    assert_eq!(declared.len(), registered.len(), "{registry} holds a rule declared nowhere");
}

#[test]
fn every_declared_rule_is_registered_once_and_declared_alone_in_its_file() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let format = declared_in(&here.join("../llmtool-format/src"));
    let conversions = declared_in(&here.join("src"));
    registers_exactly(
        llmtool_format::rules::ALL,
        &format,
        "rules::ALL (crates/llmtool-format/src/rules/mod.rs)",
    );
    registers_exactly(
        llmtool_convert::codes::ALL,
        &conversions,
        "codes::ALL (crates/llmtool-convert/src/codes/mod.rs)",
    );
    assert!(
        format.keys().all(|code| !conversions.contains_key(code)),
        "a code is declared in both crates"
    );
}
