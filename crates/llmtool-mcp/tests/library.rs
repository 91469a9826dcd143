//! Reading a folder of tool files: names (prefixed, collision-free, stable), invalid files
//! skipped with their diagnostics or kept at their last good version, hidden files ignored,
//! avatars as icons.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::path::{Path, PathBuf};

use llmtool_mcp::{Library, LibraryOptions};
use serde_json::json;

fn write(folder: &Path, name: &str, prompt_name: &str, prompt: &str) -> PathBuf {
    let path = folder.join(name);
    let tool = json!({
        "model_prompt": prompt,
        "metadata": { "prompt_name": prompt_name, "description": "A test tool." },
    });
    std::fs::write(&path, tool.to_string()).unwrap();
    path
}

fn names(library: &Library) -> Vec<&str> {
    library.names().collect()
}

#[test]
fn names_are_prefixed_distinct_and_in_path_order() {
    let folder = tempfile::tempdir().unwrap();
    write(folder.path(), "b.json", "Summarize", "Summarize {{text}}");
    write(folder.path(), "a.json", "Summarize", "Sum up {{text}}");
    std::fs::create_dir(folder.path().join("nested")).unwrap();
    write(&folder.path().join("nested"), "c.json", "Translate it!", "Translate {{text}}");
    std::fs::create_dir(folder.path().join(".hidden")).unwrap();
    write(&folder.path().join(".hidden"), "d.json", "Hidden", "x");
    std::fs::write(folder.path().join("notes.txt"), "not a tool").unwrap();
    let options = LibraryOptions { name_prefix: "team_".into(), ..LibraryOptions::default() };
    let (library, problems) = Library::load(&[folder.path().to_owned()], &options, None);
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(names(&library), ["team_summarize", "team_summarize_2", "team_translate_it"]);
    assert!(library.get("team_summarize").unwrap().path.ends_with("a.json"));
}

#[test]
fn an_invalid_file_is_skipped_or_keeps_its_last_good_version() {
    let folder = tempfile::tempdir().unwrap();
    let good = write(folder.path(), "good.json", "Good", "Say {{thing}}");
    let options = LibraryOptions::default();
    let (first, _) = Library::load(&[folder.path().to_owned()], &options, None);
    std::fs::write(&good, "{ \"model_prompt\": ").unwrap();
    std::fs::write(folder.path().join("broken.json"), "[1, 2").unwrap();
    let (second, problems) = Library::load(&[folder.path().to_owned()], &options, Some(&first));
    assert_eq!(names(&second), ["good"]);
    assert_eq!(second.get("good").unwrap().tool.prompt(), "Say {{thing}}");
    assert_eq!(problems.len(), 2, "{problems:?}");
    let broken = problems.iter().find(|p| p.path.ends_with("broken.json")).unwrap();
    assert!(!broken.kept_previous);
    assert!(broken.report.contains("error[LT"), "{}", broken.report);
    let kept = problems.iter().find(|p| p.path.ends_with("good.json")).unwrap();
    assert!(kept.kept_previous);
    // Without a previous version, the invalid file is simply not served.
    let (fresh, _) = Library::load(&[folder.path().to_owned()], &options, None);
    assert!(names(&fresh).is_empty());
}

#[test]
fn avatars_become_icons() {
    let folder = tempfile::tempdir().unwrap();
    // The smallest PNG: the signature and an IHDR chunk for a 1x1 image.
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    let tool = json!({
        "model_prompt": "Hi",
        "metadata": { "prompt_name": "Pictured", "description": "d", "avatar_type": "base64", "avatar": png },
    });
    std::fs::write(folder.path().join("p.json"), tool.to_string()).unwrap();
    let (library, problems) =
        Library::load(&[folder.path().to_owned()], &LibraryOptions::default(), None);
    assert!(problems.is_empty(), "{problems:?}");
    let entry = library.get("pictured").unwrap();
    let icon = serde_json::to_value(&entry.mcp_tool.icons.as_ref().unwrap()[0]).unwrap();
    assert_eq!(icon["src"], format!("data:image/png;base64,{png}"));
    assert_eq!(icon["mimeType"], "image/png");
    let prompt = serde_json::to_value(&entry.prompt).unwrap();
    assert_eq!(prompt["icons"][0], icon);
}

#[test]
fn the_watcher_serves_every_change_even_one_that_leaves_the_lists_alone() {
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    struct Unused;
    impl llmtool_mcp::Runner for Unused {
        fn is_remote(&self, _: &llmtool_format::model::Tool) -> bool {
            false
        }
        fn answer(
            &self,
            _: llmtool_format::model::Tool,
            _: String,
            _: llmtool_runtime::Subject,
        ) -> llmtool_mcp::AnswerFuture {
            Box::pin(async { Err(llmtool_runtime::RunError::Stopped("not run here".to_owned())) })
        }
    }

    let folder = tempfile::tempdir().unwrap();
    let tool = |temperature: f64| {
        json!({
            "model_prompt": "Hello {{name}}",
            "metadata": { "prompt_name": "Greeter", "description": "d", "parameters": { "temperature": temperature } },
        })
        .to_string()
    };
    std::fs::write(folder.path().join("t.json"), tool(0.2)).unwrap();
    let paths = vec![folder.path().to_owned()];
    let options = LibraryOptions::default();
    let (library, _) = Library::load(&paths, &options, None);
    let server = llmtool_mcp::Server::new(library, Arc::new(Unused), llmtool_mcp::Only::Both);
    let watcher = llmtool_mcp::watch::spawn(server.clone(), paths, options, |_, _| {}).unwrap();
    // A parameter is in no list: only a run shows the change.
    std::thread::sleep(Duration::from_millis(200));
    std::fs::write(folder.path().join("t.json"), tool(0.9)).unwrap();
    let temperature = |server: &llmtool_mcp::Server| {
        let library = server.library();
        let parameters = library.get("greeter").unwrap().tool.metadata.clone().unwrap().parameters;
        parameters.unwrap().temperature.unwrap().value
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while (temperature(&server) - 0.9).abs() > f64::EPSILON {
        assert!(Instant::now() < deadline, "the changed parameter was never served");
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(watcher);
}
