//! The map stays true: the README's table of where things are names every source file and
//! folder of every crate, and `docs/architecture.md` names every crate.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::path::Path;

fn workspace() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().parent().unwrap()
}

/// The crates, by folder name.
fn crates() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(workspace().join("crates"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The README's rows about `name`: its own row and the indented rows under it.
fn readme_rows(readme: &str, name: &str) -> String {
    let own = format!("| `crates/{name}`");
    let mut lines = readme.lines().skip_while(|line| !line.starts_with(&own));
    let first = lines.next().unwrap_or_else(|| panic!("the README has no row for {name}"));
    let under = lines.take_while(|line| line.starts_with("| `  "));
    std::iter::once(first).chain(under).collect::<Vec<_>>().join("\n")
}

#[test]
fn the_readme_names_every_source_file_of_every_crate() {
    let readme = std::fs::read_to_string(workspace().join("README.md")).unwrap();
    let mut missing = Vec::new();
    for name in crates() {
        let rows = readme_rows(&readme, &name);
        let source = workspace().join("crates").join(&name).join("src");
        for entry in std::fs::read_dir(&source).unwrap() {
            let entry = entry.unwrap();
            let file = entry.file_name().to_string_lossy().into_owned();
            let named = if entry.file_type().unwrap().is_dir() { format!("{file}/") } else { file };
            if ["lib.rs", "main.rs", "mod.rs"].contains(&named.as_str()) {
                continue;
            }
            if !rows.contains(&format!("`{named}"))
                && !rows.contains(&format!("/{named}`"))
                && !rows.contains(&format!("`src/{named}"))
            {
                missing.push(format!("crates/{name}/src/{named}"));
            }
        }
    }
    assert!(missing.is_empty(), "the README's map misses: {missing:#?}");
}

#[test]
fn the_architecture_names_every_crate() {
    let architecture = std::fs::read_to_string(workspace().join("docs/architecture.md")).unwrap();
    for name in crates() {
        assert!(architecture.contains(&format!("`{name}`")), "docs/architecture.md misses {name}");
    }
}
