//! The one rule for finding tool files under folders, and loading one with its diagnostics.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::path::{Path, PathBuf};

use llmtool_runtime::{FileError, ToolFile, files};

const TOOL: &str = r#"{"model_prompt": "Hello {{name}}", "metadata": {"prompt_name": "Hi"}}"#;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn relative(found: &[PathBuf], base: &Path) -> Vec<String> {
    found.iter().map(|p| p.strip_prefix(base).unwrap().display().to_string()).collect()
}

#[test]
fn folders_give_their_visible_json_files_in_order_links_followed() {
    let folder = tempfile::tempdir().unwrap();
    let base = folder.path();
    write(&base.join("b.json"), TOOL);
    write(&base.join("A.JSON"), TOOL);
    write(&base.join("notes.txt"), "not a tool");
    write(&base.join("nested/c.json"), TOOL);
    write(&base.join(".hidden.json"), TOOL);
    write(&base.join(".git/objects/d.json"), TOOL);
    let elsewhere = tempfile::tempdir().unwrap();
    write(&elsewhere.path().join("linked.json"), TOOL);
    std::os::unix::fs::symlink(elsewhere.path(), base.join("shared")).unwrap();

    let (found, problems) = files::find(&[base.to_owned()]);
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(relative(&found, base), ["A.JSON", "b.json", "nested/c.json", "shared/linked.json"]);

    // A file named explicitly is read whatever its name, once, and `-` is kept.
    let explicit = base.join("notes.txt");
    let (found, _) =
        files::find(&[explicit.clone(), "-".into(), base.join("b.json"), base.join("b.json")]);
    assert_eq!(found, [explicit, PathBuf::from("-"), base.join("b.json")]);
}

#[test]
fn a_folder_comes_in_its_place_among_the_names_beside_it() {
    // Each folder's entries in file-name order, a folder's files where its name sorts: not the
    // order of the whole paths' bytes, where `/` comes after ` `, `-` and `.`.
    let folder = tempfile::tempdir().unwrap();
    let base = folder.path();
    for name in ["a.json", "a-b.json", "a b.json", "a/x.json", "a/y/z.json", "a/y.json", "b.json"] {
        write(&base.join(name), TOOL);
    }
    let (found, problems) = files::find(&[base.to_owned()]);
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(
        relative(&found, base),
        ["a/x.json", "a/y/z.json", "a/y.json", "a b.json", "a-b.json", "a.json", "b.json"]
    );
}

#[test]
fn a_walk_read_in_any_order_is_put_in_the_order_of_find() {
    // `check` reads files while the walk goes on, on several threads: whatever order the finds
    // come back in, they are put in `find`'s order, repeats across the paths given dropped.
    let folder = tempfile::tempdir().unwrap();
    let base = folder.path();
    for name in ["a.json", "a b.json", "a/x.json", "a/y/z.json", "a/y.json", "b.json"] {
        write(&base.join(name), TOOL);
    }
    std::os::unix::fs::symlink(base.join("nowhere"), base.join("broken.json")).unwrap();
    let paths = [base.join("b.json"), base.to_owned(), base.join("a")];
    let wanted = files::is_tool_file;
    let mut walked: Vec<_> = files::walk_matching(&paths, &wanted)
        .map(|(root, item)| (root, item.map(|path| (path.clone(), path.display().to_string()))))
        .collect();
    walked.reverse();
    let (found, problems) = files::split_walk(walked);
    let (expected, expected_problems) = files::find(&paths);
    assert_eq!(found.iter().map(|(path, _)| path.clone()).collect::<Vec<_>>(), expected);
    assert!(found.iter().all(|(path, made)| path.display().to_string() == *made));
    assert_eq!(
        relative(&expected, base),
        ["b.json", "a/x.json", "a/y/z.json", "a/y.json", "a b.json", "a.json"]
    );
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].to_string(), expected_problems[0].to_string());
}

#[test]
fn link_loops_and_broken_links_are_skipped_with_a_warning() {
    let folder = tempfile::tempdir().unwrap();
    let base = folder.path();
    write(&base.join("inner/tool.json"), TOOL);
    std::os::unix::fs::symlink(base, base.join("inner/loop")).unwrap();
    let (found, problems) = files::find(&[base.to_owned()]);
    assert_eq!(relative(&found, base), ["inner/tool.json"]);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(matches!(&problems[0], FileError::Skipped { .. }) && problems[0].is_warning());
    assert!(problems[0].to_string().contains("a symbolic link loop"), "{}", problems[0]);

    // A broken link is skipped too; an unreadable folder is an error, not a warning.
    std::os::unix::fs::symlink(base.join("nowhere"), base.join("inner/broken.json")).unwrap();
    let (_, problems) = files::find(&[base.to_owned()]);
    assert!(problems.iter().any(|p| p.to_string().contains("a symbolic link to nothing")));
    assert!(problems.iter().all(FileError::is_warning), "{problems:?}");
}

#[test]
fn a_loaded_file_gives_its_tool_or_the_report_of_its_errors() {
    let folder = tempfile::tempdir().unwrap();
    let good = folder.path().join("good.json");
    write(&good, TOOL);
    let tool = ToolFile::load(&good, 1 << 20).unwrap().into_tool().unwrap();
    assert_eq!(tool.name(), Some("Hi"));

    let bad = folder.path().join("bad.json");
    write(&bad, r#"{"model_prompt": 5}"#);
    let file = ToolFile::load(&bad, 1 << 20).unwrap();
    assert!(!file.errors().is_empty());
    let errors = file.into_tool().unwrap_err();
    assert!(!errors.errors.is_empty());
    assert!(errors.report.contains("bad.json") && errors.report.contains("error"), "{errors}");

    let error = ToolFile::load(&good, 10).unwrap_err();
    assert!(error.to_string().contains("larger than"), "{error}");
    let error = ToolFile::load(&folder.path().join("missing.json"), 10).unwrap_err();
    assert_eq!(error.path(), folder.path().join("missing.json"));
}
