//! The map stays true: the README's table of where things are names every crate, every source
//! file and folder of each, and only paths that exist. `docs/architecture.md`'s table of crates
//! (each with the crates it uses and its one-line purpose) is generated from `crates/*/Cargo.toml`
//! and each crate's `//!` opening, and fails here when stale (`LLMTOOL_BLESS=1` writes it); its
//! drawing of floors must name every crate, each above all it uses; its table of what each crate
//! owns must have every crate, once.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

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

/// One crate of the workspace: the crates of ours it uses, and its purpose.
struct Crate {
    uses: BTreeSet<String>,
    purpose: String,
}

/// Every crate under `crates/`, by name.
fn manifests() -> BTreeMap<String, Crate> {
    let mut found = BTreeMap::new();
    for entry in std::fs::read_dir(workspace().join("crates")).unwrap() {
        let folder = entry.unwrap().path();
        let Ok(manifest) = std::fs::read_to_string(folder.join("Cargo.toml")) else { continue };
        let manifest: toml_edit::DocumentMut = manifest.parse().unwrap();
        let name = manifest["package"]["name"].as_str().unwrap().to_owned();
        let uses = manifest
            .get("dependencies")
            .and_then(toml_edit::Item::as_table_like)
            .map(|table| {
                table
                    .iter()
                    .map(|(dependency, _)| dependency.to_owned())
                    .filter(|d| d.starts_with("llmtool"))
                    .collect()
            })
            .unwrap_or_default();
        let source = ["src/lib.rs", "src/main.rs"]
            .iter()
            .map(|file| folder.join(file))
            .find(|path| path.exists());
        let purpose = purpose(&std::fs::read_to_string(source.unwrap()).unwrap());
        found.insert(name, Crate { uses, purpose });
    }
    found
}

/// The first sentence of a source file's `//!` opening, on one line.
fn purpose(source: &str) -> String {
    let opening: Vec<&str> = source
        .lines()
        .map_while(|line| line.strip_prefix("//!"))
        .map(str::trim)
        .take_while(|line| !line.is_empty())
        .collect();
    let text = opening.join(" ");
    match text.find(". ") {
        Some(end) => text[..=end].to_owned(),
        None => text,
    }
}

/// A crate's name as the docs write it in a list of crates used: without `llmtool-`.
fn short(name: &str) -> &str {
    name.strip_prefix("llmtool-").unwrap_or(name)
}

/// The floor of each crate: 1 for one that uses none of ours, else one above the highest it uses.
fn floors(crates: &BTreeMap<String, Crate>) -> BTreeMap<String, usize> {
    fn floor(
        name: &str,
        crates: &BTreeMap<String, Crate>,
        known: &mut BTreeMap<String, usize>,
    ) -> usize {
        if let Some(&floor) = known.get(name) {
            return floor;
        }
        let below =
            crates[name].uses.iter().map(|used| floor(used, crates, known)).max().unwrap_or(0);
        known.insert(name.to_owned(), below + 1);
        below + 1
    }
    let mut known = BTreeMap::new();
    for name in crates.keys() {
        floor(name, crates, &mut known);
    }
    known
}

const BEGIN: &str = "<!-- crate map: begin";
const END: &str = "<!-- crate map: end -->";

/// The generated table: the crates from the top floor down, each with what it uses.
fn table(crates: &BTreeMap<String, Crate>) -> String {
    let floors = floors(crates);
    let mut names: Vec<&String> = crates.keys().collect();
    names.sort_by_key(|name| (std::cmp::Reverse(floors[*name]), (*name).clone()));
    let mut out = String::from("| floor | crate | uses | what it is |\n|---|---|---|---|\n");
    for name in names {
        let member = &crates[name];
        let uses: Vec<&str> = member.uses.iter().map(|used| short(used)).collect();
        let uses = if uses.is_empty() { "nothing of ours".to_owned() } else { uses.join(", ") };
        let purpose = member.purpose.replace('|', "\\|");
        out.push_str(&format!("| {} | `{name}` | {uses} | {purpose} |\n", floors[name]));
    }
    out
}

#[test]
fn the_architecture_pages_crate_table_is_generated_from_the_manifests() {
    let path = workspace().join("docs/architecture.md");
    let page = std::fs::read_to_string(&path).unwrap();
    let begin = page.find(BEGIN).expect("docs/architecture.md has the crate map's markers");
    let begin = begin + page[begin..].find('\n').unwrap() + 1;
    let end = page.find(END).unwrap();
    let wanted = table(&manifests());
    if std::env::var_os("LLMTOOL_BLESS").is_some() {
        std::fs::write(&path, format!("{}{wanted}{}", &page[..begin], &page[end..])).unwrap();
        return;
    }
    assert_eq!(
        &page[begin..end],
        wanted,
        "docs/architecture.md's crate table is stale; regenerate it with LLMTOOL_BLESS=1 cargo test -p llmtool --test integration map"
    );
}

/// The names of crates of ours in `text`, in order.
fn named(text: &str, crates: &BTreeMap<String, Crate>) -> Vec<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .filter(|word| crates.contains_key(*word))
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_drawing_names_every_crate_each_above_what_it_uses() {
    let crates = manifests();
    let page = std::fs::read_to_string(workspace().join("docs/architecture.md")).unwrap();
    let section = &page[page.find("## The crates").unwrap()..];
    let drawing = section.split("```text\n").nth(1).unwrap().split("```").next().unwrap();
    // Row 0 is the top line of the drawing.
    let mut row_of = BTreeMap::new();
    for (row, line) in drawing.lines().enumerate() {
        for name in named(line, &crates) {
            assert!(row_of.insert(name.clone(), row).is_none(), "`{name}` is drawn twice");
        }
    }
    for (name, member) in &crates {
        let Some(row) = row_of.get(name) else { panic!("the drawing leaves out `{name}`") };
        for used in &member.uses {
            assert!(row_of[used] > *row, "`{name}` is drawn on or below `{used}`, which it uses");
        }
    }
}

#[test]
fn the_table_of_what_each_crate_owns_has_every_crate_once() {
    let crates = manifests();
    let page = std::fs::read_to_string(workspace().join("docs/architecture.md")).unwrap();
    let owns = page.split("| crate | owns |").nth(1).expect("the table of what each crate owns");
    let rows: Vec<String> = owns
        .lines()
        .skip(2)
        .take_while(|line| line.starts_with('|'))
        .map(|line| line.split('|').nth(1).unwrap().trim().trim_matches('`').to_owned())
        .collect();
    let listed: BTreeSet<&String> = rows.iter().collect();
    assert_eq!(listed.len(), rows.len(), "a crate is listed twice: {rows:?}");
    assert_eq!(listed, crates.keys().collect(), "the table of what each crate owns");
}

#[test]
fn the_readmes_crate_map_names_every_crate_with_paths_that_exist() {
    let crates = manifests();
    let readme = std::fs::read_to_string(workspace().join("README.md")).unwrap();
    let map = readme.split("| path | what it holds |").nth(1).expect("the README's crate map");
    let mut folder = PathBuf::new();
    let mut listed = BTreeSet::new();
    for line in map.lines().skip(2).take_while(|line| line.starts_with('|')) {
        let first = line.split('|').nth(1).unwrap();
        let nested = first.trim_start().starts_with("`  ") || first.starts_with(" `  ");
        for path in first.split('`').skip(1).step_by(2).map(str::trim) {
            let path = if nested { folder.join(path) } else { PathBuf::from(path) };
            assert!(
                workspace().join(&path).exists(),
                "the README's crate map names {}, which is not there",
                path.display()
            );
            if !nested {
                folder.clone_from(&path);
                if let Some(name) = path.strip_prefix("crates").ok().and_then(|p| p.to_str()) {
                    listed.insert(name.to_owned());
                }
            }
        }
    }
    let every: BTreeSet<String> = crates.keys().cloned().collect();
    assert_eq!(listed, every, "the README's crate map");
}

/// The crates a change in `crate_name` rebuilds: every crate that uses it, directly or not.
fn rebuilt_by(crate_name: &str, crates: &BTreeMap<String, Crate>) -> BTreeSet<String> {
    let mut rebuilt = BTreeSet::new();
    let mut changed = vec![crate_name.to_owned()];
    while let Some(name) = changed.pop() {
        for (user, member) in crates {
            if member.uses.contains(&name) && rebuilt.insert(user.clone()) {
                changed.push(user.clone());
            }
        }
    }
    rebuilt
}

#[test]
fn a_change_in_a_converter_rebuilds_only_the_crates_that_convert() {
    // The converters are their own crate so that editing one rebuilds the front ends that
    // convert (the CLI, and the MCP server with the team server that embeds it), not the
    // runtime, the providers, batch, eval or the language server.
    let crates = manifests();
    let rebuilt: Vec<String> = rebuilt_by("llmtool-convert", &crates).into_iter().collect();
    assert_eq!(rebuilt, ["llmtool", "llmtool-mcp", "llmtool-server"]);
    assert!(
        rebuilt_by("llmtool-format", &crates).len() > rebuilt.len() + 5,
        "the format is the floor most crates stand on"
    );
}
