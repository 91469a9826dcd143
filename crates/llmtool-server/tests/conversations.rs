//! Conversations on the library server, against the scripted mock provider: a run starts one,
//! its owner asks follow-ups (streamed as runs are, sent with the whole conversation on the
//! version it started with), lists and reads it (with the values data-loss prevention hid put
//! back for the owner only), and shares a read-only snapshot that the one visibility rule
//! guards. Anyone else's request about it is answered as about a missing one.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use crate::support::{Library, answer, chunk, events, streamed_text};
use llmtool_registry::{Publication, Role, Store};
use llmtool_server::{new_token, token_hash};
use llmtool_testkit::{End, Mock, Reply};
use serde_json::{Value, json};

fn messages(mock: &Mock, request: usize) -> Vec<(String, String)> {
    mock.requests()[request].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (m["role"].as_str().unwrap().to_owned(), m["content"].as_str().unwrap().to_owned())
        })
        .collect()
}

/// Whether conversation `id` may take a follow-up now (held for a moment to find out).
async fn is_free(store: &std::sync::Arc<dyn Store>, id: &str) -> bool {
    let free = store.begin_follow_up(id, std::time::Duration::from_mins(1)).await.unwrap();
    if free {
        store.end_follow_up(id).await.unwrap();
    }
    free
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn follow_ups_share_links_and_who_may_read_a_conversation() {
    let mock = Mock::start(vec![
        answer("Write to [EMAIL_1] first."),
        answer("Because [EMAIL_2] asked and [EMAIL_1] decides."),
        Reply::sse(&[&chunk("Slowly")]).ending(End::Stall),
    ])
    .await;
    let tool = json!({
        "model_prompt": "Plan the mail to {{who}}.",
        "x-dlp": "redact",
        "metadata": {"prompt_name": "Planner", "description": "Plans.", "model_version": ["mock/m"],
            "timestamp": "2026-11-23T10:00:00Z", "parameters": {"temperature": 0.3},
            "variables": [{"name": "who", "type": "text", "description": "Whom."}]}
    });
    let library = Library::start(&mock, &[("planner", tool.clone())]).await;
    let (base, owner) = (library.base.clone(), library.viewer.clone());
    let store = &library.state.store;
    let other = library.token("other", Role::Viewer).await;
    let admin = library.token("boss", Role::Admin).await;
    let client = reqwest::Client::new();
    let post = |path: String, token: &str, body: Value| {
        client.post(format!("{base}{path}")).bearer_auth(token).json(&body).send()
    };
    let get =
        |path: String, token: &str| client.get(format!("{base}{path}")).bearer_auth(token).send();

    let run =
        post("/tools/planner/run".into(), &owner, json!({"values": {"who": "ann@example.com"}}));
    let run = events(&run.await.unwrap().text().await.unwrap());
    let start = &run[0].1;
    let id = start["conversation"].as_str().unwrap().to_owned();
    assert_eq!(start["turn"], 1);
    assert_eq!(streamed_text(&run), "Write to ann@example.com first.");

    // A new version meanwhile: the conversation keeps the one it started on.
    let mut changed = tool.clone();
    changed["model_prompt"] = "Something else for {{who}}.".into();
    changed["metadata"]["parameters"]["temperature"] = 0.9.into();
    let publication = Publication::from_text(&changed.to_string(), "tool.json").unwrap();
    store.publish("planner", &publication, None, None).await.unwrap();

    let follow = |token: &str, text: &str| {
        post(format!("/conversations/{id}/messages"), token, json!({ "text": text }))
    };
    // Someone else's follow-up is told there is no such conversation; nothing is sent.
    let foreign = follow(&other, "Why?").await.unwrap();
    assert_eq!(foreign.status(), 404);
    let unknown = post("/conversations/01jqnope/messages".into(), &owner, json!({"text": "Why?"}));
    let unknown = unknown.await.unwrap();
    assert_eq!(unknown.status(), 404);
    let (foreign, unknown) = (foreign.text().await.unwrap(), unknown.text().await.unwrap());
    assert_eq!(
        foreign.replace(&id, "ID"),
        unknown.replace("01jqnope", "ID"),
        "a foreign conversation reads exactly as a missing one"
    );
    assert_eq!(follow(&owner, "  ").await.unwrap().status(), 422);
    assert_eq!(mock.requests().len(), 1);
    // A refused follow-up never held the conversation (it once did, and let go late: the
    // next follow-up, sent at once, was refused as if one were under way).
    assert!(is_free(store, &id).await, "an empty follow-up holds nothing");

    let second = follow(&owner, "Why? Copy bo@example.com").await.unwrap();
    assert_eq!(second.status(), 200);
    let second = events(&second.text().await.unwrap());
    assert_eq!(second[0].1["turn"], 2);
    assert_eq!(streamed_text(&second), "Because bo@example.com asked and ann@example.com decides.");
    let done = &second.last().unwrap().1;
    assert_eq!(
        (done["conversation"].as_str(), done["turn"].as_u64()),
        (Some(id.as_str()), Some(2))
    );
    assert!(done["cost_usd"].as_f64().unwrap() > 0.0, "the follow-up is charged: {done}");
    assert!(is_free(store, &id).await, "a follow-up lets go before its answer ends");
    let sent = messages(&mock, 1);
    assert_eq!(sent[0].1, "Plan the mail to [EMAIL_1].", "the version it started on");
    assert_eq!(sent[1].1, "Write to [EMAIL_1] first.");
    assert_eq!(sent[2].1, "Why? Copy [EMAIL_2]");
    assert_eq!(mock.requests()[1].body["temperature"], 0.3);

    // The owner lists it and reads the values; an admin lists everyone's and reads placeholders;
    // anyone else neither lists nor reads it.
    let listed: Value = get("/conversations".into(), &owner).await.unwrap().json().await.unwrap();
    assert_eq!(listed[0]["id"], id.as_str());
    assert_eq!((listed[0]["turns"].as_u64(), listed[0]["version"].as_u64()), (Some(2), Some(1)));
    let others: Value = get("/conversations".into(), &other).await.unwrap().json().await.unwrap();
    assert_eq!(others, json!([]));
    let all: Value = get("/conversations".into(), &admin).await.unwrap().json().await.unwrap();
    assert_eq!(all.as_array().unwrap().len(), 1);
    let mine: Value =
        get("/conversations?mine=true".into(), &admin).await.unwrap().json().await.unwrap();
    assert_eq!(mine, json!([]));
    let own: Value =
        get(format!("/conversations/{id}"), &owner).await.unwrap().json().await.unwrap();
    assert_eq!(own["values_shown"], true);
    assert_eq!(own["messages"][1]["asked"], "Why? Copy bo@example.com");
    let seen: Value =
        get(format!("/conversations/{id}"), &admin).await.unwrap().json().await.unwrap();
    assert_eq!(seen["values_shown"], false);
    assert_eq!(seen["messages"][1]["asked"], "Why? Copy [EMAIL_2]");
    assert!(!seen.to_string().contains("@example.com"), "no value for an admin: {seen}");
    assert_eq!(get(format!("/conversations/{id}"), &other).await.unwrap().status(), 404);

    // A share link: for its owner only to make; a snapshot any member who sees the tool reads.
    assert_eq!(
        post(format!("/conversations/{id}/share"), &other, json!({})).await.unwrap().status(),
        404
    );
    let link: Value = post(format!("/conversations/{id}/share"), &owner, json!({}))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(link["turns"], 2);
    let api = link["api"].as_str().unwrap().trim_start_matches("/api/v1").to_owned();
    assert!(link["url"].as_str().unwrap().starts_with("/share/"));
    let snapshot: Value = get(api.clone(), &other).await.unwrap().json().await.unwrap();
    assert_eq!(snapshot["messages"].as_array().unwrap().len(), 2);
    assert!(!snapshot.to_string().contains("@example.com"), "a snapshot hides the values");
    assert_eq!(snapshot["first_answer"], "markdown", "a text tool's answer reads as Markdown");
    assert_eq!(client.get(format!("{base}{api}")).send().await.unwrap().status(), 401);
    // The tool no longer open to everyone: the snapshot is gone for those who cannot see it,
    // and so is the owner's follow-up (an admin still sees the tool).
    store.remove_tag("planner", "all").await.unwrap();
    assert_eq!(get(api.clone(), &other).await.unwrap().status(), 404);
    assert_eq!(follow(&owner, "More?").await.unwrap().status(), 404);
    assert_eq!(get(api.clone(), &admin).await.unwrap().status(), 200);
    store.add_tag("planner", "all").await.unwrap();
    let unshared = client
        .delete(format!("{base}/conversations/{id}/share"))
        .bearer_auth(&owner)
        .send()
        .await
        .unwrap();
    assert_eq!(unshared.status(), 204);
    assert_eq!(get(api, &other).await.unwrap().status(), 404);
    // One follow-up at a time: while one is under way, the next is refused, and sends nothing.
    let slow = follow(&owner, "Slowly?").await.unwrap();
    assert_eq!(slow.status(), 200);
    let mut slow = slow;
    assert!(slow.chunk().await.unwrap().is_some(), "the first follow-up is under way");
    for _ in 0..200 {
        if mock.requests().len() == 3 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let second = follow(&owner, "At once?").await.unwrap();
    assert_eq!(second.status(), 409);
    assert_eq!(mock.requests().len(), 3);
    drop(slow);

    let query = llmtool_registry::AuditQuery { limit: 10, ..Default::default() };
    let audit = store.audit(&query).await.unwrap();
    let actions: Vec<String> = audit.records.iter().map(|r| r.entry.action.clone()).collect();
    assert!(actions.contains(&"conversation.share".to_owned()), "{actions:?}");
    assert!(actions.contains(&"conversation.unshare".to_owned()), "{actions:?}");
}

/// A conversation is its owner's as the member they are, not as an address: removed and added
/// again (or made again at a single sign-on), a member is someone new and reads none of what
/// the one removed owned (it once read every transcript, with its values); an admin still does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_removed_and_added_again_reads_none_of_the_old_conversations() {
    let mock = Mock::start(vec![answer("Write first.")]).await;
    let tool = json!({
        "model_prompt": "Plan the mail to {{who}}.",
        "metadata": {"prompt_name": "Planner", "description": "Plans.", "model_version": ["mock/m"],
            "timestamp": "2026-11-23T10:00:00Z",
            "variables": [{"name": "who", "type": "text", "description": "Whom."}]}
    });
    let library = Library::start(&mock, &[("planner", tool)]).await;
    let (base, store) = (library.base.clone(), &library.state.store);
    let ana = || llmtool_registry::NewMember {
        email: "ana@example.org".into(),
        name: "Ana".into(),
        role: Role::Viewer,
        teams: Vec::new(),
    };
    let token_of_ana = |name: &'static str| async move {
        let token = new_token();
        let hash = token_hash(&token);
        let made = store.create_token(name, Role::Viewer, &hash, Some("ana@example.org"));
        made.await.unwrap();
        token
    };
    store.add_members(&[ana()]).await.unwrap();
    let first = token_of_ana("ana-laptop").await;
    let admin = new_token();
    store.create_token("boss", Role::Admin, &token_hash(&admin), None).await.unwrap();
    let client = reqwest::Client::new();
    let ran = client.post(format!("{base}/tools/planner/run")).bearer_auth(&first);
    let ran = ran.json(&json!({"values": {"who": "bo"}})).send().await.unwrap();
    let ran = events(&ran.text().await.unwrap());
    let id = ran[0].1["conversation"].as_str().unwrap().to_owned();
    let read =
        |token: String| client.get(format!("{base}/conversations/{id}")).bearer_auth(token).send();
    assert_eq!(read(first.clone()).await.unwrap().status(), 200, "its owner reads it");

    store.remove_member("ana@example.org").await.unwrap();
    store.add_members(&[ana()]).await.unwrap();
    let again = token_of_ana("ana-again").await;
    assert_eq!(read(again.clone()).await.unwrap().status(), 404, "a new ana reads none of it");
    let listed = client.get(format!("{base}/conversations")).bearer_auth(&again).send().await;
    assert_eq!(listed.unwrap().json::<Value>().await.unwrap(), json!([]));
    assert_eq!(read(admin).await.unwrap().status(), 200, "an admin still reads it");
}
