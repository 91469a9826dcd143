//! A scripted mock LLM server on 127.0.0.1 for llmtool's tests and benchmarks: each request
//! takes the next scripted reply (a JSON status and body, or an SSE stream that may end
//! cleanly, break or stall) and is recorded (path, headers, body) so tests can assert exactly
//! what llmtool sent.

#![allow(clippy::unwrap_used, clippy::missing_panics_doc, reason = "test support fails loudly")]

pub mod batches;
pub mod pictures;
pub mod postgres;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use futures_util::StreamExt as _;

/// How an SSE reply ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// The stream closes normally.
    Close,
    /// The connection breaks (the body errors).
    Reset,
    /// The server stops sending but keeps the connection open.
    Stall,
}

#[derive(Debug, Clone)]
pub enum Reply {
    Json { status: u16, headers: Vec<(&'static str, String)>, body: String },
    Sse { events: Vec<(Option<String>, String)>, end: End },
}

impl Reply {
    pub fn json(status: u16, body: impl Into<String>) -> Self {
        Reply::Json { status, headers: Vec::new(), body: body.into() }
    }

    pub fn sse(data: &[&str]) -> Self {
        Reply::Sse {
            events: data.iter().map(|d| (None, (*d).to_owned())).collect(),
            end: End::Close,
        }
    }

    pub fn named_sse(events: &[(&str, &str)]) -> Self {
        Reply::Sse {
            events: events.iter().map(|(n, d)| (Some((*n).to_owned()), (*d).to_owned())).collect(),
            end: End::Close,
        }
    }

    #[must_use]
    pub fn ending(mut self, how: End) -> Self {
        if let Reply::Sse { end, .. } = &mut self {
            *end = how;
        }
        self
    }

    #[must_use]
    pub fn with_header(mut self, name: &'static str, value: &str) -> Self {
        if let Reply::Json { headers, .. } = &mut self {
            headers.push((name, value.to_owned()));
        }
        self
    }
}

/// A request as the mock received it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub path: String,
    pub headers: HeaderMap,
    /// The body read as JSON (`null` when it is not JSON).
    pub body: serde_json::Value,
    /// The body as sent (a form's, say).
    pub raw: Bytes,
}

/// A provider's limit, as a mock keeps it: past `capacity` requests at once, a request is
/// refused with 429 and `Retry-After: retry_after`; each one answered takes `latency`.
#[derive(Debug, Clone)]
pub struct Capacity {
    pub capacity: usize,
    pub latency: Duration,
    pub retry_after: String,
}

/// What a mock with a [`Capacity`] saw.
#[derive(Debug, Default)]
struct Load {
    in_flight: AtomicUsize,
    /// The most requests answered at once.
    peak: AtomicUsize,
    refused: AtomicUsize,
}

/// A request counted in flight until it is answered (or its client leaves).
struct Entered<'a>(&'a Load);

impl<'a> Entered<'a> {
    /// Counts one more in flight: the guard and how many are in flight now.
    fn new(load: &'a Load) -> (Self, usize) {
        let now = load.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        (Entered(load), now)
    }
}

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

#[derive(Clone, Debug)]
pub struct Mock {
    pub url: String,
    replies: Arc<Mutex<VecDeque<Reply>>>,
    /// Answers every request once the scripted replies are used up (for benchmarks).
    repeat: Option<Reply>,
    requests: Arc<Mutex<Vec<Recorded>>>,
    capacity: Option<Capacity>,
    load: Arc<Load>,
}

impl Mock {
    /// Starts a server that answers with `replies`, in order, then 500 for anything more.
    /// It runs on the calling tokio runtime and stops with it.
    pub async fn start(replies: Vec<Reply>) -> Mock {
        Self::serve("127.0.0.1:0", replies, None, None).await
    }

    /// Starts a server on `address` that answers every request with `reply`, keeping no record
    /// of requests (so it can serve a benchmark for as long as it runs).
    pub async fn repeating(address: &str, reply: Reply) -> Mock {
        Self::serve(address, Vec::new(), Some(reply), None).await
    }

    /// The same, as a provider with a limit on requests at once (fault injection for rate
    /// limits): see [`Capacity`].
    pub async fn limited(reply: Reply, capacity: Capacity) -> Mock {
        Self::serve("127.0.0.1:0", Vec::new(), Some(reply), Some(capacity)).await
    }

    /// The most requests it answered at once, and how many it refused with 429.
    pub fn load(&self) -> (usize, usize) {
        (self.load.peak.load(Ordering::SeqCst), self.load.refused.load(Ordering::SeqCst))
    }

    async fn serve(
        address: &str,
        replies: Vec<Reply>,
        repeat: Option<Reply>,
        capacity: Option<Capacity>,
    ) -> Mock {
        let listener = tokio::net::TcpListener::bind(address).await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let mock = Mock {
            url,
            replies: Arc::new(Mutex::new(replies.into())),
            repeat,
            requests: Arc::default(),
            capacity,
            load: Arc::default(),
        };
        let state = mock.clone();
        let app = axum::Router::new().fallback(
            move |uri: axum::http::Uri, headers: HeaderMap, body: Bytes| {
                let state = state.clone();
                async move {
                    let Some(limit) = &state.capacity else {
                        return state.answer(&uri, headers, &body);
                    };
                    let (_entered, now) = Entered::new(&state.load);
                    if now > limit.capacity {
                        state.load.refused.fetch_add(1, Ordering::SeqCst);
                        let message = r#"{"error":{"message":"Rate limit reached"}}"#;
                        let refusal = Reply::json(429, message)
                            .with_header("retry-after", &limit.retry_after);
                        return Self::reply(refusal);
                    }
                    state.load.peak.fetch_max(now, Ordering::SeqCst);
                    tokio::time::sleep(limit.latency).await;
                    state.answer(&uri, headers, &body)
                }
            },
        );
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        mock
    }

    /// Scripts one more reply, after those given (for a reply that names the mock's own
    /// address, known once it listens).
    pub fn push(&self, reply: Reply) {
        self.replies.lock().unwrap().push_back(reply);
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }

    fn answer(&self, uri: &axum::http::Uri, headers: HeaderMap, body: &Bytes) -> Response {
        if self.repeat.is_none() {
            let raw = body.clone();
            let body = serde_json::from_slice(body).unwrap_or(serde_json::Value::Null);
            let recorded = Recorded { path: uri.to_string(), headers, body, raw };
            self.requests.lock().unwrap().push(recorded);
        }
        let reply = self.replies.lock().unwrap().pop_front().or_else(|| self.repeat.clone());
        match reply {
            None => Response::builder().status(500).body(Body::from("no scripted reply")).unwrap(),
            Some(reply) => Self::reply(reply),
        }
    }

    fn reply(reply: Reply) -> Response {
        match reply {
            Reply::Json { status, headers, body } => {
                let mut response = Response::builder()
                    .status(StatusCode::from_u16(status).unwrap())
                    .header("content-type", "application/json");
                for (name, value) in headers {
                    response = response.header(name, value);
                }
                response.body(Body::from(body)).unwrap()
            }
            Reply::Sse { events, end } => {
                let chunks = events.into_iter().map(|(name, data)| {
                    let event_line =
                        name.map(|name| format!("event: {name}\n")).unwrap_or_default();
                    let text = format!("{event_line}data: {data}\n\n");
                    Ok::<Bytes, std::io::Error>(Bytes::from(text))
                });
                let head = futures_util::stream::iter(chunks).then(|chunk| async move {
                    tokio::time::sleep(Duration::from_millis(2)).await;
                    chunk
                });
                let body = match end {
                    End::Close => Body::from_stream(head),
                    End::Reset => {
                        Body::from_stream(head.chain(futures_util::stream::once(async {
                            // Let the chunks before it reach the client, then break the connection.
                            tokio::time::sleep(Duration::from_millis(50)).await;
                            Err(std::io::Error::new(
                                std::io::ErrorKind::ConnectionReset,
                                "reset by the mock",
                            ))
                        })))
                    }
                    End::Stall => Body::from_stream(head.chain(futures_util::stream::pending())),
                };
                Response::builder()
                    .status(200)
                    .header("content-type", "text/event-stream")
                    .body(body)
                    .unwrap()
            }
        }
    }
}
