//! A small HTTP server on 127.0.0.1 for the tests: each path answers as the test says, and
//! every request is counted; it serves a bounded number of requests.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// What a path answers: a status, headers and a body.
#[derive(Clone)]
pub(crate) struct Page {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(&'static str, String)>,
    pub(crate) body: Vec<u8>,
}

impl Page {
    pub(crate) fn html(body: &str) -> Page {
        Page {
            status: 200,
            headers: vec![("content-type", "text/html; charset=utf-8".into())],
            body: body.as_bytes().to_vec(),
        }
    }

    pub(crate) fn json(body: &serde_json::Value) -> Page {
        Page {
            status: 200,
            headers: vec![("content-type", "application/json".into())],
            body: body.to_string().into_bytes(),
        }
    }

    pub(crate) fn redirect(to: &str) -> Page {
        Page { status: 302, headers: vec![("location", to.into())], body: Vec::new() }
    }
}

pub(crate) struct Site {
    pub(crate) address: std::net::SocketAddr,
    pub(crate) hits: Arc<AtomicUsize>,
    pub(crate) requests: Arc<std::sync::Mutex<Vec<String>>>,
}

impl Site {
    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.address)
    }

    pub(crate) fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

/// Serves `pages` by path (the query left out) on a free port of 127.0.0.1, for at most 50
/// requests; others get 404.
pub(crate) async fn serve(pages: Vec<(&'static str, Page)>) -> Site {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let pages: Arc<HashMap<&str, Page>> = Arc::new(pages.into_iter().collect());
    let hits = Arc::new(AtomicUsize::new(0));
    let requests = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (counted, seen) = (Arc::clone(&hits), Arc::clone(&requests));
    tokio::spawn(async move {
        for _ in 0..50 {
            let Ok((mut stream, _)) = listener.accept().await else { return };
            counted.fetch_add(1, Ordering::SeqCst);
            let mut buffer = vec![0; 16 * 1024];
            let read = stream.read(&mut buffer).await.unwrap_or(0);
            let head = String::from_utf8_lossy(&buffer[..read]).into_owned();
            let target = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
            seen.lock().unwrap().push(head);
            let path = target.split('?').next().unwrap_or("/");
            let page = pages.get(path).cloned().unwrap_or(Page {
                status: 404,
                headers: Vec::new(),
                body: b"not here".to_vec(),
            });
            let mut response = format!(
                "HTTP/1.1 {} X\r\ncontent-length: {}\r\nconnection: close\r\n",
                page.status,
                page.body.len()
            );
            for (name, value) in &page.headers {
                response.push_str(&format!("{name}: {value}\r\n"));
            }
            response.push_str("\r\n");
            let _ = stream.write_all(response.as_bytes()).await;
            let _ = stream.write_all(&page.body).await;
            let _ = stream.shutdown().await;
        }
    });
    Site { address, hits, requests }
}
