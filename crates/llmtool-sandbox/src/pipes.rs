//! The guest's standard streams: an inbox the host writes the job and `llm()` answers into
//! (the guest's stdin; the host stops a guest that lets answers pile up unread), a message
//! channel the guest writes its requests and result to (its stdout), and a log of what the
//! tool prints (its stderr). What the guest writes is bounded, so a guest that writes without
//! end fills a bound, not the host's memory.

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;
use wasmtime_wasi::cli::{IsTerminal, StdinStream, StdoutStream};

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[derive(Default)]
struct InboxState {
    bytes: VecDeque<u8>,
    closed: bool,
    reader: Option<Waker>,
}

/// The guest's stdin: what the host puts in, read in order.
#[derive(Clone, Default)]
pub(crate) struct Inbox(Arc<Mutex<InboxState>>);

impl Inbox {
    /// Puts `line` and a newline where the guest reads next.
    pub(crate) fn send_line(&self, line: &str) {
        let mut state = lock(&self.0);
        state.bytes.extend(line.as_bytes());
        state.bytes.push_back(b'\n');
        if let Some(waker) = state.reader.take() {
            waker.wake();
        }
    }

    /// How many bytes wait unread.
    pub(crate) fn unread(&self) -> usize {
        lock(&self.0).bytes.len()
    }

    /// Ends the input: the guest's next read past what is left sees the end of the file.
    pub(crate) fn close(&self) {
        let mut state = lock(&self.0);
        state.closed = true;
        if let Some(waker) = state.reader.take() {
            waker.wake();
        }
    }
}

impl AsyncRead for Inbox {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let mut state = lock(&self.0);
        if state.bytes.is_empty() {
            if state.closed {
                return Poll::Ready(Ok(()));
            }
            state.reader = Some(cx.waker().clone());
            return Poll::Pending;
        }
        let count = buf.remaining().min(state.bytes.len());
        let (front, back) = state.bytes.as_slices();
        let from_front = count.min(front.len());
        buf.put_slice(&front[..from_front]);
        buf.put_slice(&back[..count - from_front]);
        state.bytes.drain(..count);
        Poll::Ready(Ok(()))
    }
}

impl IsTerminal for Inbox {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdinStream for Inbox {
    fn async_stream(&self) -> Box<dyn AsyncRead + Send + Sync> {
        Box::new(self.clone())
    }
}

struct OutboxState {
    bytes: Vec<u8>,
    /// The most `bytes` may hold at once.
    limit: usize,
    /// Set once the guest wrote past `limit`.
    overflowed: bool,
}

/// The guest's stdout: whole lines of messages for the host. Writing more than the limit
/// without a newline being taken out fails the write, and marks the outbox overflowed.
#[derive(Clone)]
pub(crate) struct Outbox {
    state: Arc<Mutex<OutboxState>>,
    written: Arc<Notify>,
}

impl Outbox {
    pub(crate) fn new(limit: usize) -> Self {
        let state = OutboxState { bytes: Vec::new(), limit, overflowed: false };
        Self { state: Arc::new(Mutex::new(state)), written: Arc::new(Notify::new()) }
    }

    /// Takes every whole line written so far, in order (in one pass: a guest that writes many
    /// short lines costs the host no more than one that writes them as one).
    pub(crate) fn take_lines(&self) -> Vec<String> {
        let mut state = lock(&self.state);
        let Some(end) = state.bytes.iter().rposition(|&b| b == b'\n') else { return Vec::new() };
        let taken: Vec<u8> = state.bytes.drain(..=end).collect();
        drop(state);
        taken[..end]
            .split(|&b| b == b'\n')
            .map(|line| String::from_utf8_lossy(line).into_owned())
            .collect()
    }

    /// Whether the guest wrote more than the outbox holds.
    pub(crate) fn overflowed(&self) -> bool {
        lock(&self.state).overflowed
    }

    /// Waits until the guest writes something.
    pub(crate) async fn written(&self) {
        self.written.notified().await;
    }
}

impl AsyncWrite for Outbox {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let mut state = lock(&self.state);
        if state.bytes.len() + buf.len() > state.limit {
            state.overflowed = true;
            drop(state);
            self.written.notify_one();
            return Poll::Ready(Err(io::Error::other("the tool's result is too large")));
        }
        state.bytes.extend_from_slice(buf);
        drop(state);
        self.written.notify_one();
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

impl IsTerminal for Outbox {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for Outbox {
    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

#[derive(Default)]
struct PrintedState {
    kept: Vec<u8>,
    dropped: u64,
}

/// The guest's stderr: what the tool printed, its first bytes kept up to a limit and the
/// rest counted. Writes never fail, so printing a lot costs the tool nothing but the text.
#[derive(Clone)]
pub(crate) struct Printed {
    state: Arc<Mutex<PrintedState>>,
    limit: usize,
}

impl Printed {
    pub(crate) fn new(limit: usize) -> Self {
        Self { state: Arc::default(), limit }
    }

    /// What was kept, and how many bytes past it were left out.
    pub(crate) fn take(&self) -> (String, u64) {
        let mut state = lock(&self.state);
        let kept = std::mem::take(&mut state.kept);
        (String::from_utf8_lossy(&kept).into_owned(), state.dropped)
    }
}

impl AsyncWrite for Printed {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let mut state = lock(&self.state);
        let room = self.limit.saturating_sub(state.kept.len());
        let kept = room.min(buf.len());
        state.kept.extend_from_slice(&buf[..kept]);
        state.dropped += (buf.len() - kept) as u64;
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

impl IsTerminal for Printed {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for Printed {
    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn the_inbox_gives_lines_in_order_then_the_end() {
        let inbox = Inbox::default();
        inbox.send_line("one");
        inbox.send_line("two");
        inbox.close();
        let mut text = String::new();
        inbox.clone().read_to_string(&mut text).await.unwrap();
        assert_eq!(text, "one\ntwo\n");
    }

    #[tokio::test]
    async fn the_outbox_refuses_what_it_cannot_hold() {
        let outbox = Outbox::new(8);
        let mut writer = outbox.clone();
        writer.write_all(b"ab\ncd").await.unwrap();
        assert_eq!(outbox.take_lines(), ["ab"]);
        assert!(outbox.take_lines().is_empty());
        writer.write_all(b"e\n\nf\n").await.unwrap();
        assert_eq!(outbox.take_lines(), ["cde", "", "f"]);
        assert!(writer.write_all(b"0123456789").await.is_err());
        assert!(outbox.overflowed());
    }

    #[tokio::test]
    async fn printing_keeps_the_first_bytes_and_counts_the_rest() {
        let printed = Printed::new(4);
        printed.clone().write_all(b"hello world").await.unwrap();
        assert_eq!(printed.take(), ("hell".to_owned(), 7));
    }
}
