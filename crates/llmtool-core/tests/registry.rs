//! The registry of rules misses none: every rule declared with `declare_rule!` anywhere in
//! core is in `rules::ALL` (so it is documented in `docs/diagnostics.md`), once, and each
//! file declares one rule.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

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

#[test]
fn every_declared_rule_is_registered_once_and_declared_alone_in_its_file() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
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
    let registered: Vec<&str> = llmtool_core::rules::ALL.iter().map(|rule| rule.code).collect();
    for (code, file) in &codes {
        assert!(
            registered.contains(&code.as_str()),
            "{code} ({}) is declared but not in rules::ALL (crates/llmtool-core/src/rules/mod.rs)",
            file.display()
        );
    }
    let mut unique = registered.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), registered.len(), "a rule is registered twice");
    assert_eq!(codes.len(), registered.len(), "rules::ALL holds a rule declared nowhere");
}
