//! `POST /api/v1/documents/text` on a real server: a document's text for a text variable (the
//! studio's upload button), its limits, and the documents that give no text.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::path::Path;
use std::sync::Arc;

use llmtool_registry::{Role, SqlStore, Store};
use llmtool_server::{Access, RateLimiter, ServerState, new_token, token_hash};
use serde_json::Value;

/// A library server on a fresh SQLite file (kept in `dir`), and a viewer's token.
async fn start(dir: &Path) -> (String, String) {
    let store: Arc<dyn Store> =
        Arc::new(SqlStore::open_sqlite(&dir.join("library.db")).await.unwrap());
    let token = new_token();
    store.create_token("vic", Role::Viewer, &token_hash(&token), None).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let state =
        ServerState::new(store, Access { public_read: true }, Arc::new(RateLimiter::new(0)));
    tokio::spawn(llmtool_server::serve(state, listener, std::future::pending()));
    (base, token)
}

/// A `multipart/form-data` body with one part, `name`, holding `bytes` as file `file_name`.
fn form(name: &str, file_name: &str, bytes: &[u8]) -> (String, Vec<u8>) {
    let boundary = "llmtool-test-boundary-7f3a";
    let mut body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"; filename=\"{file_name}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
    )
    .into_bytes();
    body.extend_from_slice(bytes);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

async fn upload(
    base: &str,
    token: Option<&str>,
    part: &str,
    file: &str,
    bytes: &[u8],
) -> (u16, Value) {
    let (kind, body) = form(part, file, bytes);
    let mut request = reqwest::Client::new()
        .post(format!("{base}/api/v1/documents/text"))
        .header("content-type", kind)
        .body(body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let answer = request.send().await.unwrap();
    let status = answer.status().as_u16();
    (status, answer.json().await.unwrap_or(Value::Null))
}

fn fixture(path: &str) -> Vec<u8> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../llmtool-documents/tests/fixtures/real-world");
    std::fs::read(root.join(path)).unwrap()
}

#[tokio::test]
async fn a_documents_text_comes_back_and_what_has_none_is_422() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir().unwrap();
    let (base, token) = start(dir.path()).await;
    let (status, read) =
        upload(&base, Some(&token), "file", "tables.docx", &fixture("docx/tables.docx")).await;
    assert_eq!(status, 200, "{read}");
    assert_eq!(read["kind"], "DOCX document");
    assert!(read["text"].as_str().unwrap().starts_with("Above\n\nTop left"), "{read}");
    assert_eq!(read["characters"], read["text"].as_str().unwrap().chars().count());

    let (status, read) =
        upload(&base, Some(&token), "file", "p.pdf", &fixture("pdf/scotus-transcript-p1.pdf"))
            .await;
    assert_eq!((status, read["pages"].as_u64()), (200, Some(1)), "{read}");

    let (status, problem) =
        upload(&base, Some(&token), "file", "scan.pdf", &fixture("pdf/c02-22-scanned.pdf")).await;
    assert_eq!(status, 422, "{problem}");
    assert!(problem["detail"].as_str().unwrap().contains("no text layer"), "{problem}");

    let (status, problem) = upload(&base, Some(&token), "picture", "x.txt", b"text").await;
    assert_eq!(status, 400, "{problem}");
    assert!(problem["detail"].as_str().unwrap().contains("no `file`"), "{problem}");

    let (status, _) = upload(&base, None, "file", "x.txt", b"text").await;
    assert_eq!(status, 401, "reading a document needs a token");
}

#[tokio::test]
async fn documents_past_the_apis_usual_limit_are_taken_up_to_their_own() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir().unwrap();
    let (base, token) = start(dir.path()).await;
    // 3 MiB: over the 1 MiB every other route takes, under the 16 MiB of this one.
    let long = "The tide comes in twice a day.\n".repeat(100_000);
    let (status, read) = upload(&base, Some(&token), "file", "notes.txt", long.as_bytes()).await;
    assert_eq!(status, 200, "{read}");
    assert_eq!(read["characters"], long.trim_end().chars().count());
    let huge = vec![b'x'; 17 << 20];
    let (status, problem) = upload(&base, Some(&token), "file", "huge.txt", &huge).await;
    assert_eq!(status, 413);
    assert_eq!(problem["title"], "Payload Too Large", "{problem}");
}
