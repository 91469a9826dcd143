//! [`LibraryClient`]'s runs on the library's server: a tool run by its slug, or a
//! conversation gone on with, their Server-Sent Events read as they arrive (`start`, `text`,
//! `done`, ...), each handed over as its event name and JSON data.

use std::time::Duration;

use reqwest::Method;

use crate::client::{ClientError, LibraryClient};
use crate::model::Selector;

/// The longest a run on the server may take, from the request to its last event.
const RUN_TIMEOUT: Duration = Duration::from_mins(15);
/// The most bytes one event may hold before the stream is refused as not the library's.
const MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// One event of a run: its name and its data.
#[derive(Debug, Clone, PartialEq)]
pub struct RunEvent {
    pub event: String,
    pub data: serde_json::Value,
}

impl LibraryClient {
    /// Runs the version of `slug` that `selector` names on the library's server, with
    /// `values` (by variable name) and `model` if given; `on_event` sees each event as it
    /// comes. The library's refusal (a budget, a model it may not use, a tool the caller does
    /// not see) is [`ClientError::Refused`], in its words.
    pub async fn run_on_server(
        &self,
        slug: &str,
        selector: &Selector,
        values: &serde_json::Value,
        model: Option<&str>,
        on_event: &mut (dyn FnMut(RunEvent) + Send),
    ) -> Result<(), ClientError> {
        let mut request = self.request(Method::POST, &format!("/tools/{slug}/run"));
        request = match selector {
            Selector::Latest => request,
            Selector::Version(number) => request.query(&[("version", number.to_string())]),
            Selector::Label(label) => request.query(&[("label", label.as_str())]),
        };
        let body = serde_json::json!({ "values": values, "model": model });
        self.stream(request.json(&body), on_event).await
    }

    /// Asks the next turn of the server's conversation `id` with `text` (on `model`, if
    /// given); the events as [`LibraryClient::run_on_server`] hands them over.
    pub async fn message(
        &self,
        id: &str,
        text: &str,
        model: Option<&str>,
        on_event: &mut (dyn FnMut(RunEvent) + Send),
    ) -> Result<(), ClientError> {
        let request = self.request(Method::POST, &format!("/conversations/{id}/messages"));
        let body = serde_json::json!({ "text": text, "model": model });
        self.stream(request.json(&body), on_event).await
    }

    /// The caller's conversations on the server, a page of them (the studio's sidebar).
    pub async fn conversations(
        &self,
        query: Option<&str>,
    ) -> Result<serde_json::Value, ClientError> {
        let mut request = self.request(Method::GET, "/conversations");
        if let Some(query) = query {
            request = request.query(&[("q", query)]);
        }
        self.send(request).await
    }

    /// One of the caller's conversations on the server, with its turns.
    pub async fn conversation(&self, id: &str) -> Result<serde_json::Value, ClientError> {
        self.send(self.request(Method::GET, &format!("/conversations/{id}"))).await
    }

    /// Sends `request` and reads its answer as events.
    async fn stream(
        &self,
        request: reqwest::RequestBuilder,
        on_event: &mut (dyn FnMut(RunEvent) + Send),
    ) -> Result<(), ClientError> {
        let request = request.timeout(RUN_TIMEOUT);
        let answer = request.send().await.map_err(|error| self.unreachable(error))?;
        if !answer.status().is_success() {
            return Err(self.refusal(answer).await);
        }
        let mut answer = answer;
        let mut pending: Vec<u8> = Vec::new();
        while let Some(chunk) = answer.chunk().await.map_err(|error| self.unreachable(error))? {
            pending.extend_from_slice(&chunk);
            while let Some(end) = event_end(&pending) {
                let block: Vec<u8> = pending.drain(..end).collect();
                if let Some(event) = parse_event(&block) {
                    on_event(event);
                }
            }
            if pending.len() > MAX_EVENT_BYTES {
                return Err(ClientError::Unexpected("an event of over 16 MiB".into()));
            }
        }
        Ok(())
    }
}

/// Where the first whole event in `bytes` ends (after its blank line), if one is whole.
pub(crate) fn event_end(bytes: &[u8]) -> Option<usize> {
    let lf = bytes.windows(2).position(|pair| pair == b"\n\n").map(|at| at + 2);
    let crlf = bytes.windows(4).position(|quad| quad == b"\r\n\r\n").map(|at| at + 4);
    match (lf, crlf) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// An event block's name (`message` unless named) and its data as JSON (`null` when it is
/// not JSON); `None` for a block with no data (a comment, a keep-alive).
pub(crate) fn parse_event(block: &[u8]) -> Option<RunEvent> {
    let text = String::from_utf8_lossy(block);
    let mut event = "message".to_owned();
    let mut data: Vec<&str> = Vec::new();
    for line in text.lines() {
        if let Some(name) = line.strip_prefix("event:") {
            name.trim().clone_into(&mut event);
        } else if let Some(line) = line.strip_prefix("data:") {
            data.push(line.strip_prefix(' ').unwrap_or(line));
        }
    }
    if data.is_empty() {
        return None;
    }
    let data = serde_json::from_str(&data.join("\n")).unwrap_or(serde_json::Value::Null);
    Some(RunEvent { event, data })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_read_whole_whatever_their_line_ends() {
        let stream = b": keep-alive\n\nevent: start\ndata: {\"turn\": 1}\n\nevent: text\r\ndata: {\"text\": \"a\"}\r\n\r\nevent: done\ndata: {\"run\":";
        let mut pending = stream.to_vec();
        let mut seen = Vec::new();
        while let Some(end) = event_end(&pending) {
            let block: Vec<u8> = pending.drain(..end).collect();
            seen.extend(parse_event(&block));
        }
        let names: Vec<&str> = seen.iter().map(|event| event.event.as_str()).collect();
        assert_eq!(names, ["start", "text"]);
        assert_eq!(seen[1].data["text"], "a");
        assert_eq!(pending, b"event: done\ndata: {\"run\":", "the unfinished event waits");
    }
}
