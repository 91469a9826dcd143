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
    let (base, owner) = (library.base.clone(), library.viewer.clone());
    let other = library.token("other", Role::Viewer).await;
    let admin = library.token("boss", Role::Admin).await;
    let client = reqwest::Client::new();
    let call = |method: Method, path: String, token: &str, body: Option<Value>| {
        let request = client.request(method, format!("{base}{path}")).bearer_auth(token);
        let request = match body {
            Some(body) => request.json(&body),
            None => request,
        };
        async move { request.send().await.unwrap() }
    };
    let list = |path: &'static str, token: &'static str| {
        let call = &call;
        let token = if token == "owner" { owner.clone() } else { other.clone() };
        async move {
            let response = call(Method::GET, path.to_owned(), &token, None).await;
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
        let run = call(Method::POST, "/tools/poet/run".into(), &owner, Some(run)).await;
        let run = events(&run.text().await.unwrap());
        ids.push(run[0].1["conversation"].as_str().unwrap().to_owned());
    }
    let follow_up = json!({"text": "Shorter, please"});
    let path = format!("/conversations/{}/messages", ids[0]);
    call(Method::POST, path, &owner, Some(follow_up)).await.text().await.unwrap();

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
    let response = call(Method::GET, path, &owner, None).await;
    let rest: Vec<Value> = response.json().await.unwrap();
    let rest: Vec<&str> = rest.iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(rest, [&ids[2], &ids[1]]);
    for bad in ["?cursor=yesterday", "?limit=0", "?limit=201", &format!("?q={}", "x".repeat(201))] {
        let response = call(Method::GET, format!("/conversations{bad}"), &owner, None).await;
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
    let renamed = call(Method::PATCH, path.clone(), &owner, Some(rename.clone())).await;
    assert_eq!(renamed.status(), StatusCode::OK);
    let renamed: Value = renamed.json().await.unwrap();
    assert_eq!(
        (renamed["title"].as_str(), renamed["archived"].as_bool()),
        (Some("Moon notes"), Some(false))
    );
    let refused = call(Method::PATCH, path.clone(), &admin, Some(rename.clone())).await;
    assert_eq!(
        refused.status(),
        StatusCode::FORBIDDEN,
        "an admin reads it, and does not change it"
    );
    let foreign = call(Method::PATCH, path.clone(), &other, Some(rename.clone())).await;
    assert_eq!(foreign.status(), StatusCode::NOT_FOUND);
    let two_lines = json!({"title": "one\ntwo"});
    let bad = call(Method::PATCH, path.clone(), &owner, Some(two_lines)).await;
    assert_eq!(bad.status(), StatusCode::BAD_REQUEST);
    let archive = json!({"archived": true});
    let archived = call(Method::PATCH, path.clone(), &owner, Some(archive)).await;
    let archived: Value = archived.json().await.unwrap();
    assert_eq!(
        (archived["title"].as_str(), archived["archived"].as_bool()),
        (Some("Moon notes"), Some(true))
    );
    let (listed, _) = list("/conversations", "owner").await;
    assert_eq!(listed.len(), 2, "an archived one leaves the list");
    let (listed, _) = list("/conversations?archived=true", "owner").await;
    assert_eq!(listed[0]["id"], ids[0].as_str());
    let back = call(Method::PATCH, path.clone(), &owner, Some(json!({"title": null}))).await;
    let back: Value = back.json().await.unwrap();
    assert_eq!(back["title"], "Poet: tides", "the default title again");

    // Deleted by its owner: its transcript is gone, its cost stays in the usage.
    let usage = |token: String| {
        let call = &call;
        async move {
            let response = call(Method::GET, "/usage".into(), &token, None).await;
            response.json::<Value>().await.unwrap()
        }
    };
    let before = usage(admin.clone()).await;
    assert_eq!(
        call(Method::DELETE, path.clone(), &other, None).await.status(),
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        call(Method::DELETE, path.clone(), &admin, None).await.status(),
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        call(Method::DELETE, path.clone(), &owner, None).await.status(),
        StatusCode::NO_CONTENT
    );
    assert_eq!(call(Method::GET, path.clone(), &owner, None).await.status(), StatusCode::NOT_FOUND);
    assert_eq!(
        call(Method::DELETE, path.clone(), &owner, None).await.status(),
        StatusCode::NOT_FOUND
    );
    assert_eq!(usage(admin.clone()).await, before, "the runs' cost and tokens stay");
    let runs = call(Method::GET, "/tools/poet/runs".into(), &admin, None).await;
    let runs = runs.text().await.unwrap();
    assert!(!runs.contains("Tides follow the moon") && !runs.contains("Shorter, please"), "{runs}");
    let (found, _) = list("/conversations?q=moon", "owner").await;
    assert!(found.is_empty(), "its words are gone from the search");
}
