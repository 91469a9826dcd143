//! `llmtool serve` under a flood of connections, on loopback: one client (127.0.0.2) opening
//! more connections than the server has file descriptors leaves `/healthz` answering another
//! (127.0.0.1) within a second, its connections past the per-address cap closed at once; a
//! client trickling a header, or stalling a request's body, is cut off at its deadline.
//! Before these limits, the flood ran the server out of descriptors and the trickles were held
//! for as long as the client liked.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpSocket, TcpStream};
use tokio::time::{Instant, timeout};

use crate::support::{serve_with_file_limit, text};

/// Connections open at once from one address, `llmtool serve`'s default.
const PER_ADDRESS: usize = 128;

/// A connection to `server` from `source` (a loopback address other than 127.0.0.1).
async fn connect_from(source: &str, server: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(format!("{source}:0").parse().unwrap()).unwrap();
    socket.connect(server).await.unwrap()
}

/// Whether the server has closed `stream` (end of file or a reset), waiting at most `wait`.
async fn closed_within(stream: &mut TcpStream, wait: Duration) -> bool {
    let mut byte = [0; 1];
    matches!(timeout(wait, stream.read(&mut byte)).await, Ok(Ok(0) | Err(_)))
}

/// The streams of `streams` the server has not closed after `wait`, each watched at once.
async fn still_open(streams: Vec<TcpStream>, wait: Duration) -> Vec<TcpStream> {
    let mut watched = tokio::task::JoinSet::new();
    for mut stream in streams {
        watched.spawn(async move { (!closed_within(&mut stream, wait).await).then_some(stream) });
    }
    watched.join_all().await.into_iter().flatten().collect()
}

/// The status line `/healthz` answers a connection from `source`, or `None` if the server
/// closed the connection first.
async fn healthz_from(source: &str, server: SocketAddr) -> Option<String> {
    let mut stream = connect_from(source, server).await;
    stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").await.ok()?;
    let mut answer = vec![0; 12];
    stream.read_exact(&mut answer).await.ok()?;
    Some(text(&answer))
}

/// `/healthz` from 127.0.0.1, answered within a second.
async fn healthz_answers(url: &str) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder().timeout(Duration::from_secs(1)).build().unwrap();
    let answer = client.get(format!("{url}/healthz")).send().await;
    let status = answer.map(|a| a.status().as_u16()).map_err(|e| e.to_string());
    assert_eq!(status, Ok(200), "/healthz answers within a second");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_flood_leaves_healthz_answering() {
    let dir = tempfile::tempdir().unwrap();
    // 256 descriptors: the flood alone would take them all.
    let (mut child, url, _log) = serve_with_file_limit(dir.path(), &[], Some(256));
    let server: SocketAddr = url.trim_start_matches("http://").parse().unwrap();
    let mut flood = Vec::new();
    for _ in 0..300 {
        flood.push(connect_from("127.0.0.2", server).await);
    }
    healthz_answers(&url).await;

    // Past the cap, each connection was closed at once; the others wait for a request (their
    // header deadline, 20 seconds, is far off).
    let open = still_open(flood, Duration::from_secs(1)).await;
    assert_eq!(open.len(), PER_ADDRESS, "one address holds at most its cap of connections");
    healthz_answers(&url).await;

    // Once the flood lets go, its address may connect again: as soon as the server has seen
    // the flood's connections end (it learns of each close when it next reads that socket, so
    // a connection made at once may still find the cap full and be closed).
    drop(open);
    let answered = async {
        loop {
            if healthz_from("127.0.0.2", server).await.is_some_and(|a| a == "HTTP/1.1 200") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    let again = timeout(Duration::from_secs(5), answered).await;
    assert!(again.is_ok(), "127.0.0.2 is answered again within 5 s of closing its flood");
    child.kill().unwrap();
    child.wait().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trickled_header_and_a_stalled_body_are_cut_off_at_their_deadlines() {
    let dir = tempfile::tempdir().unwrap();
    let limits = ["--header-timeout", "1", "--idle-timeout", "2"];
    let (mut child, url, _log) = serve_with_file_limit(dir.path(), &limits, None);
    let server: SocketAddr = url.trim_start_matches("http://").parse().unwrap();

    // Slowloris: a request line, then a header byte every 200 milliseconds, never ending.
    let mut trickles = Vec::new();
    for _ in 0..20 {
        let mut stream = connect_from("127.0.0.3", server).await;
        stream.write_all(b"GET /healthz HTTP/1.1\r\n").await.unwrap();
        trickles.push(stream);
    }
    let started = Instant::now();
    let mut cut_off = vec![false; trickles.len()];
    while cut_off.iter().any(|cut| !cut) && started.elapsed() < Duration::from_secs(10) {
        for (stream, cut) in trickles.iter_mut().zip(&mut cut_off) {
            if !*cut
                && (stream.write_all(b"X").await.is_err()
                    || closed_within(stream, Duration::from_millis(10)).await)
            {
                *cut = true;
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let held = cut_off.iter().filter(|cut| !**cut).count();
    assert_eq!(held, 0, "trickling connections still open after 10 s, with a 1 s header deadline");

    // A body announced and never sent: the connection is closed once no byte has moved for
    // the idle deadline (the answer it gets, if any, is not a success).
    let mut body_stalled = connect_from("127.0.0.4", server).await;
    let request = "POST /api/v1/session/invite HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"secret\"";
    body_stalled.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let read = timeout(Duration::from_secs(10), body_stalled.read_to_end(&mut answer)).await;
    assert!(read.is_ok(), "a body_stalled body's connection is still open after 10 s");
    assert!(!text(&answer).starts_with("HTTP/1.1 2"), "{}", text(&answer));

    // Requests that come in good time are answered as ever.
    healthz_answers(&url).await;
    child.kill().unwrap();
    child.wait().unwrap();
}
