//! A studio conversation connected to a Slack channel, against the Web API stand-in: its
//! turns so far are posted once, in order, in a thread of their own; each new turn follows;
//! while Slack is down nothing is lost (the turn waits and is posted when Slack is back); a
//! mention in the thread is a turn of the conversation, whose answer alone is posted; only
//! the owner connects it, only to a channel the app is in; disconnected, it stops.

use std::sync::atomic::Ordering;

use llmtool_registry::Role;
use llmtool_testkit::{Mock, Reply};
use reqwest::Method;
use serde_json::{Value, json};

use crate::support::slack::{
    SECRET, calls_now, calls_of, calls_within, mention, now, post, stand_in,
};
use crate::support::{Library, SlackSetup, answer, events, poet};

/// A whole (not streamed) answer of `text`.
fn whole(text: &str) -> Reply {
    let body = json!({
        "choices": [{ "index": 0, "message": { "content": text }, "finish_reason": "stop" }],
        "usage": { "prompt_tokens": 20, "completion_tokens": 5 }
    });
    Reply::json(200, body.to_string())
}

/// The text of a posted message's first section.
fn said(message: &Value) -> &str {
    message["blocks"][0]["text"]["text"].as_str().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connected_conversation_is_posted_once_in_order_and_waits_out_slack_being_down() {
    let mock = Mock::start(vec![
        answer("Tides turn twice a day."),
        answer("Because of the moon."),
        answer("Spring tides are the highest."),
        // A turn asked from Slack is not streamed.
        whole("Neap tides are the lowest."),
    ])
    .await;
    let slack = stand_in().await;
    let options = llmtool_server::SlackOptions {
        signing_secret: SECRET.into(),
        bot_token: Some("xoxb-test-bot-token".into()),
        api_url: Some(slack.url.clone()),
    };
    let lib =
        Library::start_with_slack(&mock, &[("poet", poet())], &[], SlackSetup::Files(options))
            .await;
    let sam = lib.member("sam@example.test", Role::Viewer, &[]).await;
    let sue = lib.member("sue@example.test", Role::Viewer, &[]).await;

    // Two turns in the studio, before anything is connected.
    let run = lib
        .call(
            Method::POST,
            "/tools/poet/run".into(),
            &sam,
            Some(json!({"values": {"topic": "tides"}})),
        )
        .await;
    let run = events(&run.text().await.unwrap());
    let id = run[0].1["conversation"].as_str().unwrap().to_owned();
    // A follow-up, its answer streamed to the end (a client that leaves stops the run).
    let ask = |text: &'static str| {
        let body = json!({ "text": text });
        let sent =
            lib.call(Method::POST, format!("/conversations/{id}/messages"), &sam, Some(body));
        async move {
            let answer = sent.await;
            let status = answer.status();
            let events = events(&answer.text().await.unwrap());
            assert!(events.iter().any(|(kind, _)| kind == "done"), "{events:?}");
            status
        }
    };
    assert_eq!(ask("Why twice?").await, 200);
    assert!(calls_now(&slack.calls, "chat.postMessage").is_empty());

    // The channels the app is in; only the owner connects, and only to one of them.
    let channels: Value =
        lib.call(Method::GET, "/slack/channels".into(), &sam, None).await.json().await.unwrap();
    assert_eq!(
        channels,
        json!([{"id": "CRANDOM", "name": "random"}, {"id": "CSALES", "name": "sales"}])
    );
    // Only public channels: a member need not be in a private one the app is in.
    let listed = calls_now(&slack.calls, "users.conversations");
    assert_eq!(listed[0]["types"], "public_channel");
    let path = format!("/conversations/{id}/slack");
    let connect = |token: &str, channel: &str| {
        let (token, body, path) = (token.to_owned(), json!({ "channel": channel }), path.clone());
        let lib = &lib;
        async move { lib.call(Method::PUT, path, &token, Some(body)).await }
    };
    assert_eq!(connect(&sue, "CSALES").await.status(), 404);
    assert_eq!(connect(&sam, "#sales").await.status(), 400);
    assert_eq!(connect(&sam, "CELSEWHERE").await.status(), 409);
    assert_eq!(lib.call(Method::GET, path.clone(), &sam, None).await.status(), 404);
    let connected = connect(&sam, "CSALES").await;
    assert_eq!(connected.status(), 200);

    // Posted once: the thread's first message, then each turn's question and answer.
    let posted = calls_of(&slack.calls, "chat.postMessage", 5).await;
    assert_eq!(posted.len(), 5, "{posted:?}");
    assert!(posted.iter().all(|message| message["channel"] == "CSALES"));
    assert!(said(&posted[0]).contains("connected by sam@example.test"), "{}", said(&posted[0]));
    assert!(posted[0].get("thread_ts").is_none());
    let thread = posted[1]["thread_ts"].as_str().unwrap().to_owned();
    let thread = thread.as_str();
    assert!(posted[1..].iter().all(|message| message["thread_ts"] == thread), "{posted:?}");
    assert_eq!(said(&posted[1]), "*sam@example.test* ran the tool in the studio:\n> topic: tides");
    assert_eq!(said(&posted[2]), "Tides turn twice a day.");
    assert_eq!(said(&posted[3]), "*sam@example.test* asked in the studio:\n> Why twice?");
    assert_eq!(said(&posted[4]), "Because of the moon.");

    // Slack down: a new turn waits, and the attempt is told on the conversation.
    slack.faults.down.store(true, Ordering::SeqCst);
    assert_eq!(ask("And spring tides?").await, 200);
    for _ in 0..200 {
        let status: Value =
            lib.call(Method::GET, path.clone(), &sam, None).await.json().await.unwrap();
        if status["failures"] == 1 {
            assert_eq!(status["posted"], 2, "{status}");
            assert!(status["last_error"].as_str().unwrap().contains("503"), "{status}");
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(slack.faults.refused.load(Ordering::SeqCst) >= 1);
    // Back: the turn is posted, once, after the ones before.
    slack.faults.down.store(false, Ordering::SeqCst);
    let posted = calls_within(&slack.calls, "chat.postMessage", 7, 30).await;
    assert_eq!(said(&posted[5]), "*sam@example.test* asked in the studio:\n> And spring tides?");
    assert_eq!(said(&posted[6]), "Spring tides are the highest.");
    let status: Value = lib.call(Method::GET, path.clone(), &sam, None).await.json().await.unwrap();
    assert_eq!((status["posted"].clone(), status["failures"].clone()), (json!(3), json!(0)));

    // A mention in the thread is the conversation's fourth turn: the question is there
    // already, so only the answer is posted; the studio shows who asked it.
    let event = mention("USAM", "EvSync1", "CSALES", thread, "and neap tides?");
    assert_eq!(post(&lib, "/slack/events", &event, Some(now())).await.status(), 200);
    let posted = calls_of(&slack.calls, "chat.postMessage", 8).await;
    assert_eq!(said(&posted[7]), "Neap tides are the lowest.");
    assert_eq!(posted[7]["thread_ts"], thread);
    let shown: Value = lib
        .call(Method::GET, format!("/conversations/{id}"), &sam, None)
        .await
        .json()
        .await
        .unwrap();
    let turn = &shown["messages"][3];
    assert_eq!(
        (turn["asked"].clone(), turn["asked_by"].clone()),
        (json!("and neap tides?"), json!("sam@example.test"))
    );
    let asked = mock.requests()[3].body["messages"].as_array().unwrap().len();
    assert_eq!(asked, 7, "the fourth turn is asked with the three before it");

    // Disconnected: a mention in the thread is no turn of it any more.
    assert_eq!(lib.call(Method::DELETE, path.clone(), &sam, None).await.status(), 204);
    assert_eq!(lib.call(Method::GET, path.clone(), &sam, None).await.status(), 404);
    let event = mention("USAM", "EvSync2", "CSALES", thread, "one more?");
    assert_eq!(post(&lib, "/slack/events", &event, Some(now())).await.status(), 200);
    let told = calls_of(&slack.calls, "chat.postEphemeral", 1).await;
    assert!(told[0]["text"].as_str().unwrap().contains("`/llmtool` lists them"), "{told:?}");
    assert_eq!(mock.requests().len(), 4);
    assert_eq!(calls_now(&slack.calls, "chat.postMessage").len(), 8);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_tools_pictures_are_uploaded_into_the_conversations_thread() {
    use base64::Engine as _;
    let picture = llmtool_testkit::pictures::png(64, 48);
    let answer = json!({"data": [{"b64_json": base64::engine::general_purpose::STANDARD.encode(&picture)}],
        "usage": {"input_tokens": 10, "output_tokens": 100}});
    let mock = Mock::start(vec![Reply::json(200, answer.to_string())]).await;
    let tool = json!({
        "model_prompt": "A picture of {{subject}}.",
        "metadata": {"prompt_name": "Picture", "model_version": ["mock/gpt-image-1"],
            "variables": [{"name": "subject", "type": "text"}],
            "expected_output": {"type": "image", "format": "png", "size": "64x48"}}
    });
    let slack = stand_in().await;
    let options = llmtool_server::SlackOptions {
        signing_secret: SECRET.into(),
        bot_token: Some("xoxb-test-bot-token".into()),
        api_url: Some(slack.url.clone()),
    };
    let runtime = llmtool_runtime::RuntimeOptions {
        pictures: llmtool_runtime::pictures::Pictures::Returned,
        ..llmtool_runtime::RuntimeOptions::default()
    };
    let slack_app = Some(SlackSetup::Files(options));
    let lib = Library::serve(&mock, &[("picture", tool)], runtime, &[], slack_app).await;
    let sam = lib.member("sam@example.test", Role::Viewer, &[]).await;
    let body = json!({"values": {"subject": "a lighthouse"}});
    let run = lib.call(Method::POST, "/tools/picture/run".into(), &sam, Some(body)).await;
    let run = events(&run.text().await.unwrap());
    assert_eq!(run.last().unwrap().1["outcome"], "ok", "{run:?}");
    let id = run[0].1["conversation"].as_str().unwrap().to_owned();
    let body = json!({ "channel": "CSALES" });
    let connected = lib.call(Method::PUT, format!("/conversations/{id}/slack"), &sam, Some(body));
    assert_eq!(connected.await.status(), 200);

    // The thread's first message, the question, then the picture, sent up whole and shared
    // in the thread.
    let shared = calls_within(&slack.calls, "files.completeUploadExternal", 1, 20).await;
    let posted = calls_now(&slack.calls, "chat.postMessage");
    let thread = posted[1]["thread_ts"].clone();
    assert_eq!(shared[0]["channel_id"], "CSALES");
    assert_eq!(shared[0]["thread_ts"], thread);
    assert_eq!(shared[0]["files"][0]["id"], "F1");
    let asked = calls_now(&slack.calls, "files.getUploadURLExternal");
    assert_eq!(asked[0]["length"], picture.len().to_string());
    assert_eq!(asked[0]["filename"], "turn-1-1.png", "{asked:?}");
    let sent = calls_now(&slack.calls, "upload.F1");
    assert_eq!(sent[0]["bytes"], picture.len());
    assert_eq!(sent[0]["head"], json!(picture[..8]));
    assert_eq!(
        said(&posted[1]),
        "*sam@example.test* ran the tool in the studio:\n> subject: a lighthouse"
    );
    assert_eq!(posted.len(), 2, "{posted:?}");
}
