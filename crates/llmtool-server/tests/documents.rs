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
    let (base, mut tokens) = start_for(dir, &["vic"]).await;
    (base, tokens.remove(0))
}

/// A library server on a fresh SQLite file (kept in `dir`), and a viewer's token for each of
/// `names`.
async fn start_for(dir: &Path, names: &[&str]) -> (String, Vec<String>) {
    let store: Arc<dyn Store> =
        Arc::new(SqlStore::open_sqlite(&dir.join("library.db")).await.unwrap());
    let mut tokens = Vec::new();
    for name in names {
        let token = new_token();
        store.create_token(name, Role::Viewer, &token_hash(&token), None).await.unwrap();
        tokens.push(token);
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let state =
        ServerState::new(store, Access { public_read: true }, Arc::new(RateLimiter::new(0)));
    tokio::spawn(llmtool_server::serve(state, listener, std::future::pending()));
    (base, tokens)
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

/// An upload that sends its headers and the start of its form, then nothing more: its
/// connection, held open.
async fn stalled_upload(base: &str, token: &str) -> tokio::net::TcpStream {
    use tokio::io::AsyncWriteExt as _;
    let (kind, body) = form("file", "slow.txt", &[b'x'; 4096]);
    let address = base.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let head = format!(
        "POST /api/v1/documents/text HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {token}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(&body[..200]).await.unwrap();
    stream
}

/// Uploads that arrive slowly hold no document reader, and one caller cannot have more than
/// two arriving: another member's upload is read at once (two stalled uploads once held both
/// readers, and every other upload waited behind them).
#[tokio::test]
async fn slow_uploads_do_not_hold_up_anyone_elses() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir().unwrap();
    let (base, tokens) = start_for(dir.path(), &["vic", "mal"]).await;
    let (vic, mal) = (&tokens[0], &tokens[1]);
    let _held = [stalled_upload(&base, mal).await, stalled_upload(&base, mal).await];
    // A third of theirs is refused once the two are taken in (asked again until they are).
    let mut third = (0, serde_json::Value::Null);
    for _ in 0..100 {
        third = upload(&base, Some(mal), "file", "third.txt", b"text").await;
        if third.0 == 429 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(third.0, 429, "a third upload of one caller at once: {}", third.1);
    let theirs = upload(&base, Some(vic), "file", "notes.txt", b"The tide comes in.");
    let (status, read) =
        tokio::time::timeout(std::time::Duration::from_secs(10), theirs).await.unwrap();
    assert_eq!((status, read["text"].as_str()), (200, Some("The tide comes in.")), "{read}");
}
