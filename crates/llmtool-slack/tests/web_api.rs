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

#[tokio::test]
async fn slack_failing_on_its_side_is_an_error_that_may_pass() {
    let mock = Mock::start(vec![
        Reply::json(503, json!({"ok": false, "error": "service_unavailable"}).to_string()),
        refused("internal_error"),
        refused("not_in_channel"),
    ])
    .await;
    let message = &answer_messages("x")[0];
    let down = api(&mock).post_message("C1", None, message).await.unwrap_err();
    assert!(matches!(down, WebApiError::Unreachable(_)) && down.is_transient(), "{down}");
    let failing = api(&mock).post_message("C1", None, message).await.unwrap_err();
    assert!(matches!(failing, WebApiError::Refused { .. }) && failing.is_transient());
    // The bot out of the channel: someone has to fix it first.
    let refusal = api(&mock).post_message("C1", None, message).await.unwrap_err();
    assert!(!refusal.is_transient(), "{refusal}");
}

#[tokio::test]
async fn an_oauth_code_is_traded_for_the_bot_token_with_the_apps_credentials() {
    let mock = Mock::start(vec![
        ok(json!({"access_token": "xoxb-new", "token_type": "bot", "bot_user_id": "UBOT",
            "team": {"id": "T1", "name": "Acme"}})),
        refused("invalid_code"),
    ])
    .await;
    let anonymous = WebApi::new(Some(&format!("{}/api", mock.url)), None).unwrap();
    let redirect = "https://tools.example.test/slack/oauth/callback";
    let installed = anonymous.oauth_access("123.456", "shh", "code-1", redirect).await.unwrap();
    assert_eq!(
        (installed.team_id.as_str(), installed.team_name.as_str(), installed.bot_user_id.as_str()),
        ("T1", "Acme", "UBOT")
    );
    assert_eq!(installed.bot_token, "xoxb-new");
    let sent = &mock.requests()[0];
    assert_eq!(sent.path, "/api/oauth.v2.access");
    let form: Vec<(String, String)> = serde_urlencoded::from_bytes(&sent.raw).unwrap();
    let field = |name: &str| form.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
    assert_eq!(field("client_id"), Some("123.456"));
    assert_eq!(field("client_secret"), Some("shh"));
    assert_eq!(field("code"), Some("code-1"));
    assert_eq!(field("redirect_uri"), Some(redirect));
    assert!(!sent.headers.contains_key("authorization"));
    let refused = anonymous.oauth_access("123.456", "shh", "used", redirect).await.unwrap_err();
    assert!(refused.to_string().contains("invalid_code"));
}

#[tokio::test]
async fn a_picture_is_uploaded_into_a_thread_through_the_external_upload_calls() {
    let picture = b"\x89PNG\r\n\x1a\n a picture".to_vec();
    // The upload address is the stand-in's own: its replies are scripted once it listens.
    let mock = Mock::start(vec![]).await;
    mock.push(ok(json!({"upload_url": format!("{}/upload/F123", mock.url), "file_id": "F123"})));
    mock.push(Reply::json(200, "OK - 12"));
    mock.push(ok(json!({"files": [{"id": "F123"}]})));
    let thread = Some("1700000000.000100");
    api(&mock).upload_file("C1", thread, "turn-1-0.png", picture.clone()).await.unwrap();
    let sent = mock.requests();
    let paths: Vec<&str> = sent.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(
        paths,
        ["/api/files.getUploadURLExternal", "/upload/F123", "/api/files.completeUploadExternal"]
    );
    let form: Vec<(String, String)> = serde_urlencoded::from_bytes(&sent[0].raw).unwrap();
    assert!(form.contains(&("length".into(), picture.len().to_string())), "{form:?}");
    assert_eq!(sent[1].raw.as_ref(), picture.as_slice());
    assert!(!sent[1].headers.contains_key("authorization"), "the upload address needs no token");
    assert_eq!(
        sent[2].body,
        json!({"files": [{"id": "F123", "title": "turn-1-0.png"}], "channel_id": "C1",
            "thread_ts": "1700000000.000100"})
    );
    // An upload address elsewhere, in plain http, gets nothing.
    mock.push(ok(json!({"upload_url": "http://elsewhere.example/upload", "file_id": "F9"})));
    let refused = api(&mock).upload_file("C1", None, "x.png", picture).await.unwrap_err();
    assert!(refused.to_string().contains("not https"), "{refused}");
    assert_eq!(mock.requests().len(), 4);
}
