//! Slack's requests to the library, against a stand-in of Slack's Web API that records each
//! call: only signed, fresh requests are taken; `/llmtool` lists the tools the member behind
//! the Slack user sees and opens a tool's modal; a submitted modal runs the tool as that
//! member (charged to them) and posts the answer as a thread; a member of another team cannot
//! run a tool they do not see from Slack, and a Slack user who is no member is told so.

use llmtool_registry::Role;
use llmtool_testkit::{Mock, Reply};
use reqwest::Method;
use serde_json::{Value, json};

use crate::support::slack::{SECRET, calls_of, mention, now, post, stand_in};
use crate::support::{Library, SlackSetup, poet};

fn command(user: &str, text: &str) -> String {
    serde_urlencoded::to_string([
        ("command", "/llmtool"),
        ("text", text),
        ("user_id", user),
        ("channel_id", "CSALES"),
        ("team_id", "T1"),
        ("trigger_id", "1234.5678.abcd"),
    ])
    .unwrap()
}

fn submission(user: &str, metadata: &str, topic: &str) -> String {
    let payload = json!({"type": "view_submission", "user": {"id": user},
        "view": {"callback_id": "llmtool_run", "private_metadata": metadata,
            "state": {"values": {"variable_0": {"value": {"type": "plain_text_input", "value": topic}}}}}});
    serde_urlencoded::to_string([("payload", payload.to_string())]).unwrap()
}

fn whole(text: &str) -> Reply {
    let body = json!({
        "choices": [{ "index": 0, "message": { "content": text }, "finish_reason": "stop" }],
        "usage": { "prompt_tokens": 20, "completion_tokens": 5 }
    });
    Reply::json(200, body.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slack_runs_the_tools_a_member_sees_as_that_member_and_nothing_unsigned() {
    let mock = Mock::start(vec![
        whole("Tides **turn** twice a day; ask [EMAIL_1]."),
        whole("Twice, because of the moon."),
    ])
    .await;
    let slack = stand_in().await;
    let (api_url, calls) = (slack.url.clone(), &slack.calls);
    let options = llmtool_server::SlackOptions {
        signing_secret: SECRET.into(),
        bot_token: Some("xoxb-test-bot-token".into()),
        api_url: Some(api_url),
    };
    let mut secret_tool = poet();
    secret_tool["metadata"]["prompt_name"] = json!("Secret");
    let mut redacting = poet();
    redacting["x-dlp"] = json!("redact");
    let tools = [("poet", redacting), ("secret", secret_tool)];
    let curated = [("poet", "sales"), ("secret", "support")];
    let lib = Library::start_with_slack(&mock, &tools, &curated, SlackSetup::Files(options)).await;
    for team in ["sales", "support"] {
        lib.state.store.create_team(team, true).await.unwrap();
    }
    lib.member("sam@example.test", Role::Viewer, &["sales"]).await;
    lib.member("sue@example.test", Role::Viewer, &["support"]).await;
    let admin = lib.token("ops", Role::Admin).await;

    // Unsigned, stale, or signed with another secret: 401, and nothing reaches Slack.
    let check = json!({"type": "url_verification", "challenge": "c-123"}).to_string();
    assert_eq!(post(&lib, "/slack/events", &check, None).await.status(), 401);
    assert_eq!(post(&lib, "/slack/events", &check, Some(now() - 600)).await.status(), 401);
    assert_eq!(post(&lib, "/slack/commands", &command("USAM", ""), None).await.status(), 401);
    let checked = post(&lib, "/slack/events", &check, Some(now())).await;
    assert_eq!(checked.status(), 200);
    assert_eq!(checked.json::<Value>().await.unwrap(), json!({"challenge": "c-123"}));
    // An event Slack sends again is acknowledged each time.
    let event = json!({"type": "event_callback", "event_id": "Ev1", "team_id": "T1",
        "event": {"type": "reaction_added"}})
    .to_string();
    for _ in 0..3 {
        assert_eq!(post(&lib, "/slack/events", &event, Some(now())).await.status(), 200);
    }
    assert!(calls.lock().unwrap().is_empty());

    // `/llmtool`: the tools Sam sees, and not Sue's team's.
    let listed = post(&lib, "/slack/commands", &command("USAM", ""), Some(now())).await;
    let listed: Value = listed.json().await.unwrap();
    assert_eq!(listed["response_type"], "ephemeral");
    let text = listed["text"].as_str().unwrap();
    assert!(text.contains("`poet`") && !text.contains("`secret`"), "{text}");
    let hidden = post(&lib, "/slack/commands", &command("USAM", "secret"), Some(now())).await;
    let hidden: Value = hidden.json().await.unwrap();
    assert!(hidden["text"].as_str().unwrap().contains("no tool `secret` you can run"));
    assert!(calls.lock().unwrap().iter().all(|(method, _)| method != "views.open"));

    // `/llmtool poet` opens its modal; submitted, it runs as Sam and is posted as a thread.
    let opened = post(&lib, "/slack/commands", &command("USAM", "poet"), Some(now())).await;
    assert_eq!(opened.status(), 200);
    let view = calls_of(calls, "views.open", 1).await.remove(0);
    assert_eq!(view["trigger_id"], "1234.5678.abcd");
    let modal = &view["view"];
    assert_eq!(modal["title"]["text"], "Poet");
    assert_eq!(modal["blocks"][0]["label"]["text"], "topic");
    let metadata = modal["private_metadata"].as_str().unwrap();
    let topic = "tides near ana@example.org";
    let submitted =
        post(&lib, "/slack/interactivity", &submission("USAM", metadata, topic), Some(now())).await;
    assert_eq!(submitted.status(), 200);
    let posted = calls_of(calls, "chat.postMessage", 2).await;
    assert_eq!(posted[0]["channel"], "CSALES");
    assert!(posted[0]["blocks"][0]["text"]["text"].as_str().unwrap().contains("<@USAM>"));
    // The answer as the channel reads it: the value data-loss prevention hid stays hidden.
    assert_eq!(posted[1]["blocks"][0]["text"]["text"], "Tides *turn* twice a day; ask [EMAIL_1].");
    let thread = posted[1]["thread_ts"].as_str().unwrap();
    assert_eq!(
        mock.requests()[0].body["messages"][0]["content"],
        "Write about tides near [EMAIL_1]."
    );
    // Charged to Sam, and the thread is the run's conversation.
    let spend: Value = lib
        .call(Method::GET, "/spend?member=sam@example.test".into(), &admin, None)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(spend["totals"]["runs"], 1, "{spend}");
    let conversation = lib.state.store.slack_thread("CSALES", thread).await.unwrap();
    assert!(conversation.is_some(), "the thread {thread} is no conversation");

    // A mention in that thread is a turn of the conversation, as Sam's: once, however often
    // Slack sends the event again, and its answer posted once in the thread.
    let mention =
        |user: &str, event_id: &str| mention(user, event_id, "CSALES", thread, "why twice?");
    for _ in 0..3 {
        let sent = post(&lib, "/slack/events", &mention("USAM", "EvMention1"), Some(now())).await;
        assert_eq!(sent.status(), 200);
    }
    let posted = calls_of(calls, "chat.postMessage", 3).await;
    assert_eq!(posted[2]["thread_ts"], thread);
    assert_eq!(posted[2]["blocks"][0]["text"]["text"], "Twice, because of the moon.");
    let asked = &mock.requests()[1].body["messages"];
    let asked = asked.as_array().unwrap();
    assert_eq!(asked.last().unwrap()["content"], "why twice?");
    assert_eq!(asked[1]["content"], "Tides **turn** twice a day; ask [EMAIL_1].");

    // Sue (another team) cannot run Sam's team's tool from Slack, even with its modal's
    // metadata; a Slack user who is no member is told so. Nothing more is sent to the model.
    let refused =
        post(&lib, "/slack/interactivity", &submission("USUE", metadata, "x"), Some(now())).await;
    assert_eq!(refused.status(), 200);
    let told = calls_of(calls, "chat.postEphemeral", 1).await;
    assert_eq!(told[0]["user"], "USUE");
    assert!(told[0]["text"].as_str().unwrap().contains("no tool `poet` you can run"), "{told:?}");
    // Someone of another workspace with Sam's address is not Sam.
    let elsewhere = post(&lib, "/slack/commands", &command("UELSEWHERE", ""), Some(now())).await;
    let elsewhere: Value = elsewhere.json().await.unwrap();
    assert!(elsewhere["text"].as_str().unwrap().contains("no verified e-mail"), "{elsewhere}");
    let stranger = post(&lib, "/slack/commands", &command("UNOBODY", ""), Some(now())).await;
    let stranger: Value = stranger.json().await.unwrap();
    assert!(stranger["text"].as_str().unwrap().contains("stranger@example.test"), "{stranger}");
    // Sue mentioning the app in Sam's thread cannot go on with a conversation of a tool she
    // does not see.
    let sues = post(&lib, "/slack/events", &mention("USUE", "EvMention2"), Some(now())).await;
    assert_eq!(sues.status(), 200);
    let told = calls_of(calls, "chat.postEphemeral", 2).await;
    assert_eq!(told[1]["user"], "USUE");
    assert!(told[1]["text"].as_str().unwrap().contains("not one you can go on with"), "{told:?}");
    // Nor does her mention connect it anew: it stays as Sam's modal connected it.
    let conversation = conversation.unwrap();
    let sync = lib.state.store.slack_sync(&conversation).await.unwrap().unwrap();
    assert_eq!(sync.connected_by, "sam@example.test");
    assert_eq!(mock.requests().len(), 2);
    assert_eq!(calls_of(calls, "chat.postMessage", 3).await.len(), 3);
    let spend: Value = lib
        .call(Method::GET, "/spend?member=sam@example.test".into(), &admin, None)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(spend["totals"]["runs"], 2, "{spend}");
}
