//! Documents as values, end to end: `--var NAME=@FILE` and `"@FILE"` in a `--vars` file put a
//! document's text into a variable, through `render` and through `run` to the mock provider;
//! a document without text is exit 1, a missing file exit 2.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::support::{llmtool, text};
use llmtool_testkit::{Mock, Reply};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A real-world document of the documents crate's fixtures (see its SOURCES.tsv).
fn document(path: &str) -> String {
    let path = repo().join("crates/llmtool-documents/tests/fixtures/real-world").join(path);
    path.to_str().unwrap().to_owned()
}

fn teach() -> String {
    repo().join("examples/teach-me-anything.json").to_str().unwrap().to_owned()
}

/// Runs the binary with a data folder of its own.
fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    let data = tempfile::tempdir().unwrap();
    llmtool(data.path(), args, env)
}

#[test]
fn a_document_becomes_the_value() {
    let value = format!("topic=@{}", document("docx/tables.docx"));
    let out = run(&["render", &teach(), "--var", &value], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let rendered = text(&out.stdout);
    assert!(rendered.starts_with("Teach me about Above\n\nTop left"), "{rendered}");
    assert!(text(&out.stderr).contains("is the text of"), "{}", text(&out.stderr));

    let literal = run(&["render", &teach(), "--var", "topic=@@handles"], &[]);
    assert!(text(&literal.stdout).starts_with("Teach me about @handles."));
}

#[test]
fn a_scanned_pdf_is_exit_1_and_a_missing_file_exit_2() {
    let scanned = format!("topic=@{}", document("pdf/c02-22-scanned.pdf"));
    let out = run(&["render", &teach(), "--var", &scanned], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("no text layer"), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty(), "no prompt is rendered");
    let missing = run(&["render", &teach(), "--var", "topic=@no-such-file.pdf"], &[]);
    assert_eq!(missing.status.code(), Some(2));
}

#[test]
fn a_vars_file_names_documents_relative_to_itself() {
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(
        folder.path().join("page.html"),
        "<html><body><p>The tide <b>turns</b>.</p><script>alert(1)</script></body></html>",
    )
    .unwrap();
    let vars = folder.path().join("values.json");
    std::fs::write(&vars, r#"{"topic": "@page.html"}"#).unwrap();
    let out = run(&["render", &teach(), "--vars", vars.to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).starts_with("Teach me about The tide turns.."),
        "{}",
        text(&out.stdout)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn run_sends_the_documents_text() {
    let answer = Reply::sse(&[
        r#"{"choices":[{"delta":{"content":"Noted."},"finish_reason":null}]}"#,
        r#"{"choices":[{"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":2}}"#,
        "[DONE]",
    ]);
    let mock = Mock::start(vec![answer]).await;
    let base = format!("{}/v1", mock.url);
    let value = format!("topic=@{}", document("pdf/scotus-transcript-p1.pdf"));
    let env = [("OPENAI_API_KEY", "sk-documents-test"), ("OPENAI_BASE_URL", base.as_str())];
    let out = tokio::task::block_in_place(|| run(&["run", &teach(), "--var", &value], &env));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let sent = mock.requests()[0].body["messages"][0]["content"].as_str().unwrap().to_owned();
    assert!(sent.starts_with("Teach me about "), "{sent}");
    assert!(sent.contains("SUPREME COURT") || sent.contains("Supreme Court"), "{sent}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_document_over_the_context_window_is_not_sent_and_named() {
    let mock = Mock::start(vec![]).await;
    let mut config = tempfile::NamedTempFile::new().unwrap();
    let settings = format!(
        "default_model = \"mock/m\"\n[providers.mock]\napi = \"openai\"\nbase_url = \"{}/v1\"\napi_key_env = \"MOCK_KEY\"\n[prices.\"mock/m\"]\ninput = 1.0\noutput = 2.0\nmax_input = 2000\n",
        mock.url
    );
    std::io::Write::write_all(&mut config, settings.as_bytes()).unwrap();
    let value = format!("topic=@{}", document("pdf/federal-register-2020-17221.pdf"));
    let args = ["run", &teach(), "--var", &value, "--config", config.path().to_str().unwrap()];
    let out = tokio::task::block_in_place(|| run(&args, &[("MOCK_KEY", "sk-documents-test")]));
    let said = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("more than the 2000 of `mock/m`'s context window"), "{said}");
    assert!(said.contains("hint: `topic` holds the text of"), "{said}");
    assert!(mock.requests().is_empty(), "nothing was sent");
}

#[test]
fn a_vars_file_names_only_documents_inside_its_folder() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "not for the model").unwrap();
    let folder = tempfile::tempdir().unwrap();
    let vars = folder.path().join("values.json");
    let escapes = [
        outside.path().join("secret.txt").to_str().unwrap().to_owned(),
        "../secret.txt".to_owned(),
    ];
    for path in escapes {
        std::fs::write(&vars, serde_json::json!({"topic": format!("@{path}")}).to_string())
            .unwrap();
        let out = run(&["render", &teach(), "--vars", vars.to_str().unwrap()], &[]);
        assert_eq!(out.status.code(), Some(2), "{path}");
        assert!(
            text(&out.stderr).contains("must be below that file's folder"),
            "{}",
            text(&out.stderr)
        );
        assert!(!text(&out.stdout).contains("not for the model"));
    }
    // A link inside the folder that leads out of it is refused too.
    std::os::unix::fs::symlink(outside.path().join("secret.txt"), folder.path().join("link.txt"))
        .unwrap();
    std::fs::write(&vars, r#"{"topic": "@link.txt"}"#).unwrap();
    let out = run(&["render", &teach(), "--vars", vars.to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("leads out of"), "{}", text(&out.stderr));
}
