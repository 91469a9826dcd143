//! A stand-in of Slack's Web API that records each call it answers, with faults a test turns
//! on and off (Slack down, the token revoked), and Slack's side of a request: signed bodies
//! posted to the server's Slack routes.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Path, State};
use llmtool_slack::Verifier;
use serde_json::{Value, json};

use super::Library;

/// The signing secret the tests' Slack app has.
pub(crate) const SECRET: &str = "slack-signing-secret-for-tests";

/// The Web API calls the stand-in answered: method and arguments (JSON, or a form as JSON).
pub(crate) type Calls = Arc<Mutex<Vec<(String, Value)>>>;

/// The stand-in's faults, switched as a test goes.
#[derive(Debug, Default)]
pub(crate) struct Faults {
    /// Every call answers 503, as Slack down does.
    pub(crate) down: AtomicBool,
    /// Every call answers `token_revoked`.
    pub(crate) revoked: AtomicBool,
    /// How many calls were refused for a fault.
    pub(crate) refused: AtomicUsize,
}

/// The stand-in: its address (`…/api`), the calls it answered and its faults.
pub(crate) struct StandIn {
    pub(crate) url: String,
    pub(crate) calls: Calls,
    pub(crate) faults: Arc<Faults>,
}

#[derive(Clone)]
struct Shared {
    calls: Calls,
    faults: Arc<Faults>,
    /// The stand-in's own address, once it listens (its upload address is there).
    url: Arc<Mutex<String>>,
}

/// A stand-in of Slack's Web API at `/api/METHOD`: `users.info` knows four users, the bot is
/// in `#sales` (`CSALES`), `oauth.v2.access` takes the code `good-code`, a file goes up to
/// `/api/upload.F1` (recorded as `upload.F1` with its size and first bytes), and the rest
/// answer `ok` (a posted message gets a time stamp of its own).
pub(crate) async fn stand_in() -> StandIn {
    async fn method(
        State(shared): State<Shared>,
        Path(method): Path<String>,
        body: axum::body::Bytes,
    ) -> axum::response::Response {
        use axum::response::IntoResponse as _;
        let faults = &shared.faults;
        if faults.down.load(Ordering::SeqCst) {
            faults.refused.fetch_add(1, Ordering::SeqCst);
            return (axum::http::StatusCode::SERVICE_UNAVAILABLE, "upstream down").into_response();
        }
        if faults.revoked.load(Ordering::SeqCst) && method != "oauth.v2.access" {
            faults.refused.fetch_add(1, Ordering::SeqCst);
            return axum::Json(json!({"ok": false, "error": "token_revoked"})).into_response();
        }
        if method.starts_with("upload.") {
            // The upload address `files.getUploadURLExternal` gave: the file's bytes.
            let mut calls = shared.calls.lock().unwrap();
            calls
                .push((method, json!({ "bytes": body.len(), "head": &body[..body.len().min(8)] })));
            return "OK".into_response();
        }
        let arguments: Value = serde_json::from_slice(&body).unwrap_or_else(|_| {
            let form: Vec<(String, String)> = serde_urlencoded::from_bytes(&body).unwrap();
            Value::Object(form.into_iter().map(|(k, v)| (k, Value::String(v))).collect())
        });
        let mut calls = shared.calls.lock().unwrap();
        calls.push((method.clone(), arguments.clone()));
        let answer = match method.as_str() {
            "users.info" => {
                // Sam and Sue of the workspace T1; someone of another workspace (a shared
                // channel) with Sam's address; a stranger.
                let (email, team) = match arguments["user"].as_str().unwrap_or_default() {
                    "USAM" => ("sam@example.test", "T1"),
                    "USUE" => ("sue@example.test", "T1"),
                    "UELSEWHERE" => ("sam@example.test", "T2"),
                    _ => ("stranger@example.test", "T1"),
                };
                json!({"ok": true, "user": {"id": arguments["user"], "team_id": team,
                    "is_email_confirmed": true, "profile": {"email": email}}})
            }
            "chat.postMessage" => {
                json!({"ok": true, "ts": format!("1700000000.{:06}", calls.len())})
            }
            "auth.test" => json!({"ok": true, "user_id": "UAPP", "team_id": "T1"}),
            "users.conversations" => json!({"ok": true, "channels": [
                {"id": "CSALES", "name": "sales"}, {"id": "CRANDOM", "name": "random"}]}),
            "oauth.v2.access" if arguments["code"] == "good-code" => json!({"ok": true,
                "access_token": "xoxb-installed-bot-token", "token_type": "bot",
                "bot_user_id": "UAPP", "team": {"id": "T1", "name": "Acme"}}),
            "oauth.v2.access" => json!({"ok": false, "error": "invalid_code"}),
            "files.getUploadURLExternal" => json!({"ok": true, "file_id": "F1",
                "upload_url": format!("{}/upload.F1", shared.url.lock().unwrap())}),
            _ => json!({"ok": true}),
        };
        axum::Json(answer).into_response()
    }
    let shared = Shared { calls: Calls::default(), faults: Arc::default(), url: Arc::default() };
    let app = axum::Router::new()
        .route("/api/{method}", axum::routing::post(method))
        .with_state(shared.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/api", listener.local_addr().unwrap());
    shared.url.lock().unwrap().clone_from(&url);
    tokio::spawn(async move { axum::serve(listener, app).await });
    StandIn { url, calls: shared.calls, faults: shared.faults }
}

/// Posts `body` to the server's `path` as Slack would, signed with [`SECRET`] at `at` (Unix
/// seconds).
pub(crate) async fn post(
    lib: &Library,
    path: &str,
    body: &str,
    at: Option<i64>,
) -> reqwest::Response {
    let root = lib.base.trim_end_matches("/api/v1");
    let mut request = reqwest::Client::new()
        .post(format!("{root}{path}"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body.to_owned());
    if let Some(at) = at {
        let timestamp = at.to_string();
        let signature = Verifier::new(SECRET).sign(&timestamp, body.as_bytes());
        request = request
            .header("x-slack-request-timestamp", timestamp)
            .header("x-slack-signature", signature);
    }
    request.send().await.unwrap()
}

/// Now, in Unix seconds.
pub(crate) fn now() -> i64 {
    jiff::Timestamp::now().as_second()
}

/// The calls of `method` the stand-in answered so far.
pub(crate) fn calls_now(calls: &Calls, method: &str) -> Vec<Value> {
    let calls = calls.lock().unwrap();
    calls
        .iter()
        .filter(|(name, _)| name == method)
        .map(|(_, arguments)| arguments.clone())
        .collect()
}

/// Waits (at most `seconds`) until the stand-in has answered `count` calls of `method`.
pub(crate) async fn calls_within(
    calls: &Calls,
    method: &str,
    count: usize,
    seconds: u64,
) -> Vec<Value> {
    for _ in 0..seconds * 20 {
        let found = calls_now(calls, method);
        if found.len() >= count {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the stand-in never got {count} calls of {method}: {:?}", calls.lock().unwrap());
}

/// Waits (at most ten seconds) until the stand-in has answered `count` calls of `method`.
pub(crate) async fn calls_of(calls: &Calls, method: &str, count: usize) -> Vec<Value> {
    calls_within(calls, method, count, 10).await
}

/// A mention of the app by `user` in `channel`'s thread `thread`, as an Events API body.
pub(crate) fn mention(
    user: &str,
    event_id: &str,
    channel: &str,
    thread: &str,
    text: &str,
) -> String {
    json!({"type": "event_callback", "event_id": event_id, "team_id": "T1",
        "event": {"type": "app_mention", "user": user, "text": format!("<@UAPP> {text}"),
            "channel": channel, "ts": format!("1700000{}.000001", event_id.len()),
            "thread_ts": thread}})
    .to_string()
}
