//! `web_search` against stand-ins of `SearXNG`'s JSON API, Brave's and Tavily's on 127.0.0.1:
//! the query and the key sent as each engine takes them, the results read from each shape.

use llmtool_functions::{Engine, Search};
use serde_json::json;

use crate::support::{Page, serve};

#[tokio::test]
async fn each_engine_is_asked_in_its_own_way_and_its_results_read() {
    let searxng = json!({ "results": [
        { "title": "Rust", "url": "https://www.rust-lang.org/", "content": "A language." },
        { "title": "Cargo", "url": "https://doc.rust-lang.org/cargo/", "content": "Its builder." }
    ]});
    let brave = json!({ "web": { "results": [
        { "title": "Rust", "url": "https://www.rust-lang.org/", "description": "Fast." }
    ]}});
    let tavily = json!({ "results": [
        { "title": "Rust", "url": "https://www.rust-lang.org/", "content": "Safe." }
    ]});
    let site = serve(vec![
        ("/search", Page::json(&searxng)),
        ("/brave", Page::json(&brave)),
        ("/tavily", Page::json(&tavily)),
    ])
    .await;
    let searx = Search::new(Engine::Searxng, Some(&site.url("")), None).unwrap();
    let text = searx.search("rust lang").await.unwrap();
    assert_eq!(
        text,
        "1. Rust\n   https://www.rust-lang.org/\n   A language.\n2. Cargo\n   https://doc.rust-lang.org/cargo/\n   Its builder."
    );
    let brave = Search::new(Engine::Brave, Some(&site.url("/brave")), Some("bk-1".into())).unwrap();
    assert_eq!(brave.hits("rust").await.unwrap()[0].snippet, "Fast.");
    let tavily =
        Search::new(Engine::Tavily, Some(&site.url("/tavily")), Some("tv-2".into())).unwrap();
    assert_eq!(tavily.hits("rust").await.unwrap()[0].snippet, "Safe.");
    let requests = site.requests.lock().unwrap().clone();
    assert!(requests[0].starts_with("GET /search?q=rust+lang&format=json "), "{}", requests[0]);
    assert!(requests[1].to_lowercase().contains("x-subscription-token: bk-1"), "{}", requests[1]);
    assert!(requests[2].starts_with("POST /tavily"), "{}", requests[2]);
    assert!(requests[2].contains("authorization: Bearer tv-2"), "{}", requests[2]);
    assert!(Search::new(Engine::Brave, None, None).is_err(), "Brave needs a key");
}
