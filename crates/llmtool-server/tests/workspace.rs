//! A member's conversations as the workspace's sidebar reads them, against the scripted mock
//! provider: listed newest first in pages (`X-Next-Cursor`), searched by title and by their
//! turns' words, renamed, archived and deleted by their owner only (a deleted one's runs keep
//! their cost in the usage and lose their text); anyone else is told there is no such
//! conversation, an admin who may read it that only its owner changes it.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use crate::support::{Library, answer, events, poet};
use llmtool_registry::Role;
use llmtool_testkit::Mock;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sidebar_lists_searches_renames_archives_pages_and_deletes() {
    let answers = ["Tides follow the moon.", "Waves break.", "Storms pass.", "Sure."];
    let mock = Mock::start(answers.iter().map(|text| answer(text)).collect()).await;
    let library = Library::start(&mock, &[("poet", poet())]).await;
    let owner = library.viewer.clone();
    let other = library.token("other", Role::Viewer).await;
    let admin = library.token("boss", Role::Admin).await;
    let library = &library;
    let list = |path: &'static str, token: &'static str| {
        let token = if token == "owner" { owner.clone() } else { other.clone() };
        async move {
            let response = library.call(Method::GET, path.to_owned(), &token, None).await;
            assert_eq!(response.status(), StatusCode::OK);
            let next =
                response.headers().get("x-next-cursor").map(|v| v.to_str().unwrap().to_owned());
            let listed: Vec<Value> = response.json().await.unwrap();
            (listed, next)
        }
    };

    let mut ids = Vec::new();
    for topic in ["tides", "waves", "storms"] {
        let run = json!({"values": {"topic": topic}});
        let run = library.call(Method::POST, "/tools/poet/run".into(), &owner, Some(run)).await;
        let run = events(&run.text().await.unwrap());
        ids.push(run[0].1["conversation"].as_str().unwrap().to_owned());
    }
    let follow_up = json!({"text": "Shorter, please"});
    let path = format!("/conversations/{}/messages", ids[0]);
    library.call(Method::POST, path, &owner, Some(follow_up)).await.text().await.unwrap();

    // Newest last turn first: the first conversation, followed up last, heads the list.
    let (listed, next) = list("/conversations", "owner").await;
    let order: Vec<&str> = listed.iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(order, [&ids[0], &ids[2], &ids[1]]);
    assert_eq!(next, None, "one page holds them all");
    let first = &listed[0];
    assert_eq!((first["title"].as_str(), first["turns"].as_u64()), (Some("Poet: tides"), Some(2)));
    assert_eq!(first["archived"], false);
    assert!(first["cost_usd"].as_f64().unwrap() > 0.0);
    assert!(list("/conversations", "other").await.0.is_empty(), "another's list has none");

    // Pages of one, each once.
    let (page, next) = list("/conversations?limit=1", "owner").await;
    assert_eq!(page[0]["id"], ids[0].as_str());
    let next = next.expect("a full page says where the next starts");
    let path = format!("/conversations?limit=2&cursor={next}");
    let response = library.call(Method::GET, path, &owner, None).await;
    let rest: Vec<Value> = response.json().await.unwrap();
    let rest: Vec<&str> = rest.iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(rest, [&ids[2], &ids[1]]);
    let many_words = format!("?q={}", ["w"; 17].join("%20"));
    for bad in [
        "?cursor=yesterday",
        "?limit=0",
        "?limit=201",
        &format!("?q={}", "x".repeat(201)),
        &many_words,
    ] {
        let response =
            library.call(Method::GET, format!("/conversations{bad}"), &owner, None).await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{bad}");
    }

    // Found by a turn's words (a prefix) or by its title.
    let (found, _) = list("/conversations?q=moo", "owner").await;
    assert_eq!(found.len(), 1);
    assert_eq!(found[0]["id"], ids[0].as_str());
    let (found, _) = list("/conversations?q=poet%3A%20STORMS", "owner").await;
    assert_eq!(found[0]["id"], ids[2].as_str());

    // Renamed and archived by its owner; no one else changes it.
    let rename = json!({"title": "Moon notes"});
    let path = format!("/conversations/{}", ids[0]);
    let renamed = library.call(Method::PATCH, path.clone(), &owner, Some(rename.clone())).await;
    assert_eq!(renamed.status(), StatusCode::OK);
    let renamed: Value = renamed.json().await.unwrap();
    assert_eq!(
        (renamed["title"].as_str(), renamed["archived"].as_bool()),
        (Some("Moon notes"), Some(false))
    );
    let refused = library.call(Method::PATCH, path.clone(), &admin, Some(rename.clone())).await;
    assert_eq!(
        refused.status(),
        StatusCode::FORBIDDEN,
        "an admin reads it, and does not change it"
    );
    let foreign = library.call(Method::PATCH, path.clone(), &other, Some(rename.clone())).await;
    assert_eq!(foreign.status(), StatusCode::NOT_FOUND);
    let two_lines = json!({"title": "one\ntwo"});
    let bad = library.call(Method::PATCH, path.clone(), &owner, Some(two_lines)).await;
    assert_eq!(bad.status(), StatusCode::BAD_REQUEST);
    let archive = json!({"archived": true});
    let archived = library.call(Method::PATCH, path.clone(), &owner, Some(archive)).await;
    let archived: Value = archived.json().await.unwrap();
    assert_eq!(
        (archived["title"].as_str(), archived["archived"].as_bool()),
        (Some("Moon notes"), Some(true))
    );
    let (listed, _) = list("/conversations", "owner").await;
    assert_eq!(listed.len(), 2, "an archived one leaves the list");
    let (listed, _) = list("/conversations?archived=true", "owner").await;
    assert_eq!(listed[0]["id"], ids[0].as_str());
    let back =
        library.call(Method::PATCH, path.clone(), &owner, Some(json!({"title": null}))).await;
    let back: Value = back.json().await.unwrap();
    assert_eq!(back["title"], "Poet: tides", "the default title again");

    // Deleted by its owner: its transcript is gone, its cost stays in the usage.
    let usage = |token: String| async move {
        let response = library.call(Method::GET, "/usage".into(), &token, None).await;
        response.json::<Value>().await.unwrap()
    };
    let before = usage(admin.clone()).await;
    assert_eq!(
        library.call(Method::DELETE, path.clone(), &other, None).await.status(),
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        library.call(Method::DELETE, path.clone(), &admin, None).await.status(),
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        library.call(Method::DELETE, path.clone(), &owner, None).await.status(),
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        library.call(Method::GET, path.clone(), &owner, None).await.status(),
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        library.call(Method::DELETE, path.clone(), &owner, None).await.status(),
        StatusCode::NOT_FOUND
    );
    assert_eq!(usage(admin.clone()).await, before, "the runs' cost and tokens stay");
    let runs = library.call(Method::GET, "/tools/poet/runs".into(), &admin, None).await;
    assert!(runs.headers().get("x-next-cursor").is_none(), "one page holds them all");
    let runs = runs.text().await.unwrap();
    assert!(!runs.contains("Tides follow the moon") && !runs.contains("Shorter, please"), "{runs}");
    // A page at a time, each starting where the one before said, gives the same runs.
    let ids = |text: &str| -> Vec<i64> {
        let runs: Vec<Value> = serde_json::from_str(text).unwrap();
        runs.iter().map(|run| run["id"].as_i64().unwrap()).collect()
    };
    let (mut paged, mut path) = (Vec::new(), "/tools/poet/runs?limit=1".to_owned());
    loop {
        let page = library.call(Method::GET, path.clone(), &admin, None).await;
        let next = page.headers().get("x-next-cursor").map(|v| v.to_str().unwrap().to_owned());
        paged.extend(ids(&page.text().await.unwrap()));
        match next {
            Some(before) => path = format!("/tools/poet/runs?limit=1&before={before}"),
            None => break,
        }
    }
    assert!(ids(&runs).len() >= 2);
    assert_eq!(paged, ids(&runs));
    let (found, _) = list("/conversations?q=moon", "owner").await;
    assert!(found.is_empty(), "its words are gone from the search");
}

/// Collaboration: its owner opens a conversation, a member joins by the link, reads it with the
/// hidden values as placeholders and adds a turn (whose answer shows none of the owner's values)
/// that the owner sees with who asked; leaving, removal and turning it off take it away (a new
/// link differs, the old one joins nobody), a tool the collaborator may no longer see hides it,
/// and the audit log has each change.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn collaboration_join_add_a_turn_leave_remove_and_turn_off() {
    let replies = vec![answer("Write to [EMAIL_1] first."), answer("Ask [EMAIL_1] again.")];
    let mock = Mock::start(replies).await;
    let library = Library::start(&mock, &[("planner", planner())]).await;
    let ana = library.member("ana@example.org", Role::Viewer, &[]).await;
    let bo = library.member("bo@example.org", Role::Viewer, &[]).await;
    let library = &library;
    let admin = library.token("boss", Role::Admin).await;
    let run = json!({"values": {"who": "ann@example.com"}});
    let run = library.call(Method::POST, "/tools/planner/run".into(), &ana, Some(run)).await;
    let run = events(&run.text().await.unwrap());
    let id = run[0].1["conversation"].as_str().unwrap().to_owned();
    let conversation = format!("/conversations/{id}");
    let collaboration = format!("{conversation}/collaboration");

    // Only its owner opens it.
    for (token, status) in [(&bo, 404), (&admin, 403)] {
        let refused = library.call(Method::POST, collaboration.clone(), token, None).await;
        assert_eq!(refused.status().as_u16(), status);
    }
    let link: Value =
        library.call(Method::POST, collaboration.clone(), &ana, None).await.json().await.unwrap();
    let token = link["token"].as_str().unwrap().to_owned();
    assert_eq!(link["url"], format!("/c/join#{token}"), "the token rides in the fragment");
    let join = |who: String, token: String| async move {
        library.call(Method::POST, format!("/collaborate/{token}"), &who, None).await
    };
    assert_eq!(
        join(ana.clone(), token.clone()).await.status(),
        StatusCode::OK,
        "its owner joining changes nothing"
    );
    assert_eq!(join(bo.clone(), "0".repeat(64)).await.status(), StatusCode::NOT_FOUND);
    let joined: Value = join(bo.clone(), token.clone()).await.json().await.unwrap();
    assert_eq!(
        (joined["conversation"].as_str(), joined["url"].as_str()),
        (Some(id.as_str()), Some(format!("/c/{id}").as_str()))
    );

    // Bo reads it (placeholders), lists it, and adds a turn the owner sees.
    let read: Value =
        library.call(Method::GET, conversation.clone(), &bo, None).await.json().await.unwrap();
    assert_eq!(
        (read["role"].as_str(), read["values_shown"].as_bool()),
        (Some("collaborator"), Some(false))
    );
    assert!(!read.to_string().contains("ann@example.com"), "{read}");
    let listed: Vec<Value> =
        library.call(Method::GET, "/conversations".into(), &bo, None).await.json().await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["joined"], true, "listed as one they joined");
    let theirs: Vec<Value> =
        library.call(Method::GET, "/conversations".into(), &ana, None).await.json().await.unwrap();
    assert_eq!(theirs[0]["joined"], false, "the owner's own");
    let edit = library
        .call(Method::PATCH, conversation.clone(), &bo, Some(json!({"title": "Mine"})))
        .await;
    assert_eq!(edit.status(), StatusCode::FORBIDDEN, "a collaborator does not rename it");
    let asked = json!({"text": "Who first?"});
    let turn =
        library.call(Method::POST, format!("{conversation}/messages"), &bo, Some(asked)).await;
    assert_eq!(turn.status(), StatusCode::OK);
    let turn = turn.text().await.unwrap();
    assert!(turn.contains("[EMAIL_1]") && !turn.contains("ann@example.com"), "{turn}");
    let seen: Value =
        library.call(Method::GET, conversation.clone(), &ana, None).await.json().await.unwrap();
    let messages = seen["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[1]["asked_by"], "bo@example.org", "each turn says who asked");
    assert_eq!(messages[1]["answer"], "Ask ann@example.com again.", "the owner sees the values");
    assert_eq!(seen["collaboration"], true);
    let bo_id = seen["collaborators"][0]["id"].as_str().unwrap().to_owned();

    // Leaving, then removal by the owner.
    let me = format!("{conversation}/collaborators/me");
    assert_eq!(
        library.call(Method::DELETE, me.clone(), &bo, None).await.status(),
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        library.call(Method::DELETE, me.clone(), &bo, None).await.status(),
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        library.call(Method::GET, conversation.clone(), &bo, None).await.status(),
        StatusCode::NOT_FOUND
    );
    join(bo.clone(), token.clone()).await;
    let them = format!("{conversation}/collaborators/{bo_id}");
    assert_eq!(
        library.call(Method::DELETE, them.clone(), &bo, None).await.status(),
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        library.call(Method::DELETE, them.clone(), &ana, None).await.status(),
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        library.call(Method::GET, conversation.clone(), &bo, None).await.status(),
        StatusCode::NOT_FOUND
    );

    // Off: the link joins nobody, those who joined lose it; a new link differs.
    join(bo.clone(), token.clone()).await;
    assert_eq!(
        library.call(Method::GET, conversation.clone(), &bo, None).await.status(),
        StatusCode::OK
    );
    assert_eq!(
        library.call(Method::DELETE, collaboration.clone(), &ana, None).await.status(),
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        library.call(Method::GET, conversation.clone(), &bo, None).await.status(),
        StatusCode::NOT_FOUND
    );
    let more = json!({"text": "And now?"});
    let refused =
        library.call(Method::POST, format!("{conversation}/messages"), &bo, Some(more)).await;
    assert_eq!(refused.status(), StatusCode::NOT_FOUND);
    assert_eq!(
        join(bo.clone(), token.clone()).await.status(),
        StatusCode::NOT_FOUND,
        "the old link is dead"
    );
    let again: Value =
        library.call(Method::POST, collaboration.clone(), &ana, None).await.json().await.unwrap();
    assert_ne!(again["token"].as_str(), Some(token.as_str()));

    // The visibility rule holds: a tool Bo may no longer see hides its conversation.
    join(bo.clone(), again["token"].as_str().unwrap().to_owned()).await;
    let store = &library.state.store;
    store.create_team("sales", false).await.unwrap();
    store.remove_tag("planner", "all").await.unwrap();
    store.add_tag("planner", "sales").await.unwrap();
    assert_eq!(
        library.call(Method::GET, conversation.clone(), &bo, None).await.status(),
        StatusCode::NOT_FOUND
    );
    let listed: Vec<Value> =
        library.call(Method::GET, "/conversations".into(), &bo, None).await.json().await.unwrap();
    assert!(listed.is_empty(), "nor is it listed");

    let audit: Value = library
        .call(Method::GET, "/audit?limit=50".into(), &admin, None)
        .await
        .json()
        .await
        .unwrap();
    let actions: Vec<&str> =
        audit["records"].as_array().unwrap().iter().filter_map(|r| r["action"].as_str()).collect();
    for action in [
        "conversation.collaboration_on",
        "conversation.join",
        "conversation.leave",
        "conversation.remove_collaborator",
        "conversation.collaboration_off",
    ] {
        assert!(actions.contains(&action), "{action} in {actions:?}");
    }
    assert!(!audit.to_string().contains(&token), "the token is never in the audit log");
}

/// Public snapshots: refused while the workspace has them off (an admin's change of that one
/// setting keeps the other); published by the owner only, frozen (a later turn is not in it),
/// read with no sign-in, naming no member and keeping the placeholders, never indexed; revoked
/// by address or by id (404 afterwards), hidden while the setting is off; in the audit log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn public_snapshots_are_off_by_default_frozen_unlisted_and_revocable() {
    let replies = vec![answer("Write to [EMAIL_1] first."), answer("Ask [EMAIL_1] again.")];
    let mock = Mock::start(replies).await;
    let library = Library::start(&mock, &[("planner", planner())]).await;
    let ana = library.member("ana@example.org", Role::Viewer, &[]).await;
    let bo = library.member("bo@example.org", Role::Viewer, &[]).await;
    let admin = library.token("boss", Role::Admin).await;
    let library = &library;
    let run = json!({"values": {"who": "ann@example.com"}});
    let run = library.call(Method::POST, "/tools/planner/run".into(), &ana, Some(run)).await;
    let run = events(&run.text().await.unwrap());
    let id = run[0].1["conversation"].as_str().unwrap().to_owned();
    let snapshots = format!("/conversations/{id}/snapshots");
    let signed_out = |path: String| async move {
        reqwest::Client::new().get(format!("{}{path}", library.base)).send().await.unwrap()
    };
    let session = |token: String| async move {
        let who = library.call(Method::GET, "/session".into(), &token, None).await;
        who.json::<Value>().await.unwrap()["public_snapshots"].as_bool()
    };

    // Off until an admin turns them on; turning them on keeps the built-ins setting.
    assert_eq!(session(ana.clone()).await, Some(false));
    let refused = library.call(Method::POST, snapshots.clone(), &ana, None).await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    let said = refused.json::<Value>().await.unwrap()["detail"].as_str().unwrap().to_owned();
    assert!(said.contains("public snapshots are off"), "{said}");
    let hide = json!({"built_ins": false});
    library.call(Method::PUT, "/workspace".into(), &admin, Some(hide)).await;
    let on = json!({"public_snapshots": true});
    let set = library.call(Method::PUT, "/workspace".into(), &admin, Some(on.clone())).await;
    assert_eq!(
        set.json::<Value>().await.unwrap(),
        json!({"built_ins": false, "public_snapshots": true})
    );
    let typo = json!({"public_snapshot": true});
    let typo = library.call(Method::PUT, "/workspace".into(), &admin, Some(typo)).await;
    assert!(typo.status().is_client_error(), "an unknown setting is refused, not ignored");
    assert_eq!(session(ana.clone()).await, Some(true));

    // Published by its owner only.
    for (token, status) in [(&bo, 404), (&admin, 403)] {
        let refused = library.call(Method::POST, snapshots.clone(), token, None).await;
        assert_eq!(refused.status().as_u16(), status);
    }
    let published = library.call(Method::POST, snapshots.clone(), &ana, None).await;
    assert_eq!(published.status(), StatusCode::CREATED);
    let published: Value = published.json().await.unwrap();
    let token = published["token"].as_str().unwrap().to_owned();
    assert_eq!(published["url"], format!("/s/{token}"));
    assert_eq!(published["turns"], 1);

    // Frozen: a turn added later is not in it.
    let more = json!({"text": "Who first?"});
    let follow_up =
        library.call(Method::POST, format!("/conversations/{id}/messages"), &ana, Some(more)).await;
    follow_up.text().await.unwrap();

    // Read with no sign-in: no member named, the placeholders kept, never indexed.
    let read = signed_out(format!("/snapshots/{token}")).await;
    assert_eq!(read.status(), StatusCode::OK);
    let headers = read.headers().clone();
    assert_eq!(headers["x-robots-tag"], "noindex, nofollow");
    assert_eq!(headers["referrer-policy"], "no-referrer");
    assert_eq!(headers["cache-control"], "no-store");
    let body: Value = read.json().await.unwrap();
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 1, "frozen when published: {body}");
    assert_eq!(messages[0]["answer"], "Write to [EMAIL_1] first.");
    for fact in ["cost_usd", "input_tokens", "output_tokens", "latency_ms", "error", "asked_by"] {
        assert!(messages[0][fact].is_null(), "{fact} is the workspace's own: {body}");
    }
    assert_eq!((body["tool"].as_str(), body["slug"].as_str()), (Some("Planner"), Some("planner")));
    assert!(!body["published_at"].as_str().unwrap().is_empty());
    let text = body.to_string();
    for secret in ["ann@example.com", "ana@example.org", "member:", &id] {
        assert!(!text.contains(secret), "{secret} in {text}");
    }
    let root = library.base.trim_end_matches("/api/v1");
    let page = reqwest::get(format!("{root}/s/{token}")).await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    assert_eq!(page.headers()["x-robots-tag"], "noindex, nofollow");
    assert_eq!(page.headers()["referrer-policy"], "no-referrer");
    assert!(page.text().await.unwrap().contains(r#"<meta name="robots" content="noindex">"#));
    let unknown = reqwest::get(format!("{root}/s/{}", "0".repeat(64))).await.unwrap();
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);

    // Listed for its owner (never with its token), and revoked by id or by address.
    let second: Value =
        library.call(Method::POST, snapshots.clone(), &ana, None).await.json().await.unwrap();
    assert_eq!(second["turns"], 2);
    let listed = library.call(Method::GET, snapshots.clone(), &ana, None).await;
    let listed: Vec<Value> = listed.json().await.unwrap();
    assert_eq!(listed.len(), 2);
    assert!(!serde_json::to_string(&listed).unwrap().contains(&token));
    let by_id = format!("{snapshots}/{}", second["id"].as_str().unwrap());
    assert_eq!(
        library.call(Method::DELETE, by_id.clone(), &bo, None).await.status(),
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        library.call(Method::DELETE, by_id.clone(), &ana, None).await.status(),
        StatusCode::NO_CONTENT
    );
    let second_token = second["token"].as_str().unwrap();
    assert_eq!(
        signed_out(format!("/snapshots/{second_token}")).await.status(),
        StatusCode::NOT_FOUND
    );
    let third: Value =
        library.call(Method::POST, snapshots.clone(), &ana, None).await.json().await.unwrap();
    let third = format!("/snapshots/{}", third["token"].as_str().unwrap());
    let revoked = library.call(Method::DELETE, third.clone(), &admin, None).await;
    assert_eq!(revoked.status(), StatusCode::NO_CONTENT, "an admin revokes any");
    assert_eq!(signed_out(third).await.status(), StatusCode::NOT_FOUND);
    let by_address = format!("/snapshots/{token}");
    assert_eq!(
        library.call(Method::DELETE, by_address.clone(), &bo, None).await.status(),
        StatusCode::NOT_FOUND,
        "a stranger who has the address does not revoke it"
    );

    // While the setting is off, no snapshot is served; turned on again, it is back.
    let off = json!({"public_snapshots": false});
    library.call(Method::PUT, "/workspace".into(), &admin, Some(off)).await;
    assert_eq!(signed_out(by_address.clone()).await.status(), StatusCode::NOT_FOUND);
    assert_eq!(
        reqwest::get(format!("{root}/s/{token}")).await.unwrap().status(),
        StatusCode::NOT_FOUND
    );
    library.call(Method::PUT, "/workspace".into(), &admin, Some(on)).await;
    assert_eq!(signed_out(by_address.clone()).await.status(), StatusCode::OK);
    assert_eq!(
        library.call(Method::DELETE, by_address.clone(), &ana, None).await.status(),
        StatusCode::NO_CONTENT
    );
    assert_eq!(signed_out(by_address.clone()).await.status(), StatusCode::NOT_FOUND);
    assert_eq!(
        library.call(Method::DELETE, by_address, &ana, None).await.status(),
        StatusCode::NOT_FOUND
    );

    let audit: Value = library
        .call(Method::GET, "/audit?limit=50".into(), &admin, None)
        .await
        .json()
        .await
        .unwrap();
    let actions: Vec<&str> =
        audit["records"].as_array().unwrap().iter().filter_map(|r| r["action"].as_str()).collect();
    assert_eq!(actions.iter().filter(|a| **a == "conversation.snapshot").count(), 3);
    assert_eq!(actions.iter().filter(|a| **a == "conversation.snapshot_revoke").count(), 3);
    assert!(actions.contains(&"workspace.edit"));
    assert!(!audit.to_string().contains(&token), "the token is never in the audit log");
}

/// A tool whose value (an e-mail address) data-loss prevention hides from the model.
fn planner() -> Value {
    json!({
        "model_prompt": "Plan the mail to {{who}}.",
        "x-dlp": "redact",
        "metadata": {"prompt_name": "Planner", "description": "Plans.", "model_version": ["mock/m"],
            "timestamp": "2026-11-23T10:00:00Z",
            "variables": [{"name": "who", "type": "text", "description": "Whom."}]}
    })
}

/// On a server that sends no mail, an admin's invite is the sign-in link itself, for a member
/// who has never been here (it signs them in once); one who has been here is refused it, since
/// the link would sign the admin in as them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_mail_an_invite_is_a_link_for_a_newcomer_only() {
    let mock = Mock::start(Vec::new()).await;
    let library = Library::start(&mock, &[("poet", poet())]).await;
    let admin = library.token("boss", Role::Admin).await;
    let newcomer = llmtool_registry::NewMember {
        email: "lee@example.org".into(),
        name: "Lee".into(),
        role: Role::Viewer,
        teams: Vec::new(),
    };
    library.state.store.add_members(&[newcomer]).await.unwrap();
    let invite =
        |email: &str| library.call(Method::POST, format!("/members/{email}/invite"), &admin, None);
    let made = invite("lee@example.org").await;
    assert_eq!(made.status(), StatusCode::CREATED);
    let made: Value = made.json().await.unwrap();
    let path = made["path"].as_str().unwrap();
    let secret = path.strip_prefix("/signin/invite#").expect(path);
    let signed = reqwest::Client::new()
        .post(format!("{}/session/invite", library.base))
        .json(&json!({"secret": secret}))
        .send()
        .await
        .unwrap();
    assert_eq!(signed.status(), StatusCode::OK, "the link signs them in");
    let again = invite("lee@example.org").await;
    assert_eq!(again.status(), StatusCode::CONFLICT, "they have been here since");
    let said = again.json::<Value>().await.unwrap()["detail"].as_str().unwrap().to_owned();
    assert!(!said.contains('`') && !said.contains("[server."), "web wording: {said}");
    let old_hand = library.member("ana@example.org", Role::Viewer, &[]).await;
    assert!(!old_hand.is_empty());
    assert_eq!(invite("ana@example.org").await.status(), StatusCode::CONFLICT);
}

/// A conversation is missing, on every route of it, to a member who is nothing to it: a
/// stranger in the workspace, and a member of another team than the one its tool is curated
/// for. Each answer is the very one an id that never was gets (the id aside), so nothing tells
/// them it exists (and it is a route's answer, not the API's "no such address").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_strangers_or_another_teams_conversation_is_missing_on_every_route() {
    let mock = Mock::start(vec![answer("Tides follow the moon.")]).await;
    let options = llmtool_runtime::RuntimeOptions::default();
    let library =
        Library::start_with(&mock, &[("poet", poet())], options, &[("poet", "sales")]).await;
    library.state.store.create_team("sales", true).await.unwrap();
    library.state.store.create_team("support", false).await.unwrap();
    let owner = library.member("sal@example.org", Role::Viewer, &["sales"]).await;
    let stranger = library.member("sam@example.org", Role::Viewer, &["sales"]).await;
    let other_team = library.member("sue@example.org", Role::Viewer, &["support"]).await;
    let library = &library;
    let run = json!({"values": {"topic": "tides"}});
    let run = library.call(Method::POST, "/tools/poet/run".into(), &owner, Some(run)).await;
    let run = events(&run.text().await.unwrap());
    let id = run[0].1["conversation"].as_str().unwrap().to_owned();
    let never = "01jqneverwas00000000000000";

    let routes: &[(Method, &str, Option<Value>)] = &[
        (Method::GET, "", None),
        (Method::PATCH, "", Some(json!({"title": "Mine now"}))),
        (Method::DELETE, "", None),
        (Method::POST, "/messages", Some(json!({"text": "And then?"}))),
        (Method::POST, "/share", None),
        (Method::DELETE, "/share", None),
        (Method::GET, "/pictures/1/1", None),
        (Method::POST, "/collaboration", None),
        (Method::DELETE, "/collaboration", None),
        (Method::DELETE, "/collaborators/me", None),
        (Method::DELETE, "/collaborators/someone", None),
        (Method::POST, "/snapshots", None),
        (Method::GET, "/snapshots", None),
        (Method::DELETE, "/snapshots/some-snapshot", None),
    ];
    let call = |token: String, conversation: String, route: &(Method, &str, Option<Value>)| {
        let (method, tail, body) = route.clone();
        let path = format!("/conversations/{conversation}{tail}");
        async move { library.call(method, path, &token, body).await }
    };
    for route in routes {
        let missing = call(owner.clone(), never.to_owned(), route).await;
        assert_eq!(missing.status(), StatusCode::NOT_FOUND, "{route:?}");
        let missing = missing.text().await.unwrap().replace(never, "ID");
        assert!(!missing.contains("no such address in the API"), "{route:?} is a route");
        for (who, token) in [("a stranger", &stranger), ("another team's member", &other_team)] {
            let answered = call(token.clone(), id.clone(), route).await;
            assert_eq!(answered.status(), StatusCode::NOT_FOUND, "{who}: {route:?}");
            let answered = answered.text().await.unwrap().replace(&id, "ID");
            assert_eq!(answered, missing, "{who}: {route:?}");
        }
    }
    // The page too.
    let root = library.base.trim_end_matches("/api/v1");
    for token in [&stranger, &other_team] {
        let page = reqwest::Client::new()
            .get(format!("{root}/c/{id}"))
            .bearer_auth(token)
            .send()
            .await
            .unwrap();
        assert_eq!(page.status(), StatusCode::NOT_FOUND);
    }
    // Still there, and whole, for its owner.
    let own = library.call(Method::GET, format!("/conversations/{id}"), &owner, None).await;
    assert_eq!(own.status(), StatusCode::OK);
    let own: Value = own.json().await.unwrap();
    assert_eq!(own["messages"].as_array().unwrap().len(), 1, "no stranger's call changed it");
}
