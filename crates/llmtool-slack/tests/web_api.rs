//! The Web API client against a stand-in that records each call: a 429 is waited out as its
//! `Retry-After` says, a token Slack no longer takes is told apart, and Slack's own refusals
//! are said with the method's name.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use llmtool_slack::blocks::answer_messages;
use llmtool_slack::{WebApi, WebApiError};
use llmtool_testkit::{Mock, Reply};
use serde_json::json;

fn ok(body: serde_json::Value) -> Reply {
    let mut body = body;
    body["ok"] = json!(true);
    Reply::json(200, body.to_string())
}

fn refused(error: &str) -> Reply {
    Reply::json(200, json!({"ok": false, "error": error}).to_string())
}

fn limited() -> Reply {
    Reply::json(429, json!({"ok": false, "error": "ratelimited"}).to_string())
        .with_header("retry-after", "0")
}

fn api(mock: &Mock) -> WebApi {
    WebApi::new(Some(&format!("{}/api", mock.url)), Some("xoxb-test-token".into())).unwrap()
}

#[tokio::test]
async fn a_rate_limit_is_waited_out_and_the_message_posted_once() {
    let mock =
        Mock::start(vec![limited(), limited(), ok(json!({"ts": "1700000000.000100"}))]).await;
    let message = &answer_messages("The **answer**.")[0];
    let ts = api(&mock).post_message("C1", Some("1699999999.000001"), message).await.unwrap();
    assert_eq!(ts, "1700000000.000100");
    let requests = mock.requests();
    assert_eq!(requests.len(), 3);
    assert!(requests.iter().all(|r| r.path == "/api/chat.postMessage"));
    let sent = &requests[2].body;
    assert_eq!(sent["channel"], "C1");
    assert_eq!(sent["thread_ts"], "1699999999.000001");
    assert_eq!(sent["blocks"][0]["text"]["text"], "The *answer*.");
    assert_eq!(requests[2].headers["authorization"], "Bearer xoxb-test-token");
}

#[tokio::test]
async fn a_rate_limit_that_goes_on_is_an_error_that_may_pass() {
    let mock = Mock::start(vec![limited(), limited(), limited(), limited()]).await;
    let message = &answer_messages("x")[0];
    let error = api(&mock).post_message("C1", None, message).await.unwrap_err();
    assert_eq!(error, WebApiError::RateLimited("chat.postMessage".into()));
    assert!(error.is_transient());
    assert_eq!(mock.requests().len(), 4);
}

#[tokio::test]
async fn a_revoked_token_and_other_refusals_are_told_apart() {
    let mock = Mock::start(vec![refused("token_revoked"), refused("channel_not_found")]).await;
    let message = &answer_messages("x")[0];
    let revoked = api(&mock).post_message("C1", None, message).await.unwrap_err();
    assert_eq!(revoked, WebApiError::Revoked("token_revoked".into()));
    assert!(!revoked.is_transient());
    let other = api(&mock).post_ephemeral("C9", "U1", "hello").await.unwrap_err();
    assert_eq!(other.to_string(), "Slack's `chat.postEphemeral` answered channel_not_found");
}

#[tokio::test]
async fn slack_down_is_an_error_that_may_pass() {
    let api = WebApi::new(Some("http://127.0.0.1:9/api"), Some("xoxb-t".into())).unwrap();
    let error = api.open_view("trigger", &json!({"type": "modal"})).await.unwrap_err();
    assert!(matches!(error, WebApiError::Unreachable(_)) && error.is_transient(), "{error}");
    assert!(!error.to_string().contains("xoxb"));
}
