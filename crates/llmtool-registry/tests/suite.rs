//! The storage suite: every behaviour of the library, run against each backend (SQLite here;
//! PostgreSQL when the test command's cluster is running, see `postgres` below).

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::sync::Arc;

use llmtool_registry::{
    Change, MAX_LABELS, MAX_TAGS, Publication, Query, Role, Selector, SqlStore, Store, StoreError,
};

/// A valid tool file named `name`, its prompt saying `words`.
fn tool(name: &str, words: &str) -> Publication {
    let text = serde_json::json!({
        "model_prompt": format!("{words} about {{{{topic}}}} in a {{{{tone}}}} tone."),
        "metadata": {
            "prompt_name": name,
            "description": format!("Writes {words}."),
            "model_version": ["gpt-4o-mini"],
            "timestamp": "2026-11-23T10:00:00Z",
            "variables": [
                {"name": "topic", "type": "text", "description": "What about."},
                {"name": "tone", "type": "single-select", "description": "How.",
                 "allowed_values": ["dry", "warm"], "default": "dry"}
            ],
            "expected_output": {"type": "text"}
        }
    });
    Publication::from_text(&text.to_string(), "tool.json").unwrap()
}

async fn versions_tags_labels_and_deletion(store: &dyn Store) {
    let first = tool("Haiku Writer", "haiku");
    let published =
        store.publish("haiku-writer", &first, Some("first"), Some("ana")).await.unwrap();
    assert_eq!((published.version, published.created), (1, true));
    // The same content again: no new version.
    let again = store.publish("haiku-writer", &first, None, None).await.unwrap();
    assert_eq!((again.version, again.created), (1, false));
    let second = tool("Haiku Writer", "short haiku");
    assert_eq!(
        store.publish("haiku-writer", &second, Some("shorter"), None).await.unwrap().version,
        2
    );

    let latest = store.version("haiku-writer", &Selector::Latest).await.unwrap();
    assert_eq!((latest.version, latest.text.as_str()), (2, second.text.as_str()));
    assert_eq!(latest.content_hash, second.content_hash);
    let one = store.version("haiku-writer", &Selector::Version(1)).await.unwrap();
    assert_eq!((one.note.as_deref(), one.published_by.as_deref()), (Some("first"), Some("ana")));
    assert!(matches!(
        store.version("haiku-writer", &Selector::Version(3)).await,
        Err(StoreError::NoSuchVersion { .. })
    ));

    store.set_label("haiku-writer", "production", 1).await.unwrap();
    let production = Selector::Label("production".into());
    assert_eq!(store.version("haiku-writer", &production).await.unwrap().version, 1);
    store.set_label("haiku-writer", "production", 2).await.unwrap();
    let moved = store.version("haiku-writer", &production).await.unwrap();
    assert_eq!((moved.version, moved.labels.clone()), (2, vec!["production".to_owned()]));
    assert!(store.set_label("haiku-writer", "production", 9).await.is_err());
    assert!(matches!(
        store.set_label("haiku-writer", "Bad Label", 1).await,
        Err(StoreError::BadName(_))
    ));

    store.add_tag("haiku-writer", "poetry").await.unwrap();
    store.add_tag("haiku-writer", "poetry").await.unwrap();
    store.add_tag("haiku-writer", "built-in").await.unwrap();
    let versions = store.versions("haiku-writer").await.unwrap();
    assert_eq!(versions.iter().map(|v| v.version).collect::<Vec<_>>(), [2, 1]);
    assert_eq!(versions[0].tags, ["built-in", "poetry"]);
    store.remove_tag("haiku-writer", "built-in").await.unwrap();
    assert_eq!(store.version("haiku-writer", &Selector::Latest).await.unwrap().tags, ["poetry"]);

    // At most 64 tags and 64 labels a tool: past them a new one is refused, while a tag
    // already there is still fine and a label still moves.
    for i in 1..MAX_TAGS {
        store.add_tag("haiku-writer", &format!("t{i}")).await.unwrap();
    }
    assert!(matches!(
        store.add_tag("haiku-writer", "one-more").await,
        Err(StoreError::TooMany { what: "tags", max: 64, .. })
    ));
    store.add_tag("haiku-writer", "poetry").await.unwrap();
    assert_eq!(store.version("haiku-writer", &Selector::Latest).await.unwrap().tags.len(), 64);
    for i in 1..MAX_LABELS {
        store.set_label("haiku-writer", &format!("l{i}"), 1).await.unwrap();
    }
    assert!(matches!(
        store.set_label("haiku-writer", "one-more", 1).await,
        Err(StoreError::TooMany { what: "labels", max: 64, .. })
    ));
    store.set_label("haiku-writer", "production", 1).await.unwrap();
    assert!(matches!(
        store.set_label("haiku-writer", "production", 9).await,
        Err(StoreError::NoSuchVersion { .. })
    ));
    for i in 1..MAX_TAGS {
        store.remove_tag("haiku-writer", &format!("t{i}")).await.unwrap();
    }

    store.delete("haiku-writer").await.unwrap();
    assert!(matches!(
        store.version("haiku-writer", &Selector::Latest).await,
        Err(StoreError::NoSuchTool(_))
    ));
    let found = store.search(&Query { limit: 10, ..Query::default() }).await.unwrap();
    assert!(found.tools.iter().all(|t| t.slug != "haiku-writer"), "a deleted tool is not found");
    // Publishing brings it back, with its history.
    store.publish("haiku-writer", &tool("Haiku Writer", "long haiku"), None, None).await.unwrap();
    assert_eq!(store.versions("haiku-writer").await.unwrap().len(), 3);
    assert!(matches!(
        store.publish("Not A Slug", &first, None, None).await,
        Err(StoreError::BadSlug(_))
    ));
}

async fn search_filters_and_pages(store: &dyn Store) {
    for (slug, words) in [
        ("tide-teacher", "lessons on tides"),
        ("sea-poet", "poems of the sea"),
        ("tax-helper", "tax forms"),
    ] {
        store.publish(slug, &tool(slug, words), None, None).await.unwrap();
    }
    store.add_tag("sea-poet", "poetry").await.unwrap();
    let search = |query: Query| async move { store.search(&query).await.unwrap() };
    let slugs = |page: &llmtool_registry::Page| {
        page.tools.iter().map(|t| t.slug.clone()).collect::<Vec<_>>()
    };
    let words = search(Query { text: Some("TIDES".into()), limit: 10, ..Query::default() }).await;
    assert_eq!(slugs(&words), ["tide-teacher"]);
    // Words are prefixes, and every word must match.
    let prefix = search(Query { text: Some("po se".into()), limit: 10, ..Query::default() }).await;
    assert_eq!(slugs(&prefix), ["sea-poet"]);
    let syntax =
        search(Query { text: Some("\"tax AND) OR*".into()), limit: 10, ..Query::default() }).await;
    assert!(syntax.tools.is_empty(), "what a user types is words, not query syntax");
    let tagged = search(Query { tag: Some("poetry".into()), limit: 10, ..Query::default() }).await;
    assert_eq!(slugs(&tagged), ["haiku-writer", "sea-poet"]);
    let select = search(Query {
        variable_type: Some("single-select".into()),
        limit: 10,
        ..Query::default()
    })
    .await;
    assert_eq!(select.tools.len(), 4);
    let multi =
        search(Query { variable_type: Some("multi-select".into()), limit: 10, ..Query::default() })
            .await;
    assert!(multi.tools.is_empty());
    let model = search(Query {
        model: Some("gpt-4o-mini".into()),
        output_type: Some("text".into()),
        limit: 10,
        ..Query::default()
    })
    .await;
    assert_eq!(model.tools.len(), 4);
    assert_eq!(model.tools[0].models, ["gpt-4o-mini"]);
    // Pages of two, by slug, to the end.
    let mut seen = Vec::new();
    let mut cursor = None;
    loop {
        let page = search(Query { limit: 2, cursor: cursor.clone(), ..Query::default() }).await;
        seen.extend(slugs(&page));
        match page.next {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(seen, ["haiku-writer", "sea-poet", "tax-helper", "tide-teacher"]);
    assert!(matches!(
        store.search(&Query { cursor: Some("!".into()), limit: 2, ..Query::default() }).await,
        Err(StoreError::BadCursor)
    ));
}

async fn tokens(store: &dyn Store) {
    store.create_token("ci", Role::Editor, "hash-ci").await.unwrap();
    store.create_token("ana", Role::Admin, "hash-ana").await.unwrap();
    assert!(matches!(
        store.create_token("ci", Role::Viewer, "other").await,
        Err(StoreError::TokenExists(_))
    ));
    assert_eq!(store.token("hash-ci").await.unwrap(), Some(("ci".to_owned(), Role::Editor)));
    assert_eq!(store.token("nothing").await.unwrap(), None);
    store.revoke_token("ci").await.unwrap();
    assert_eq!(store.token("hash-ci").await.unwrap(), None);
    assert!(matches!(store.revoke_token("ci").await, Err(StoreError::NoSuchToken(_))));
    let listed = store.tokens().await.unwrap();
    let shown: Vec<_> = listed.iter().map(|t| (t.name.as_str(), t.role, t.revoked)).collect();
    assert_eq!(shown, [("ana", Role::Admin, false), ("ci", Role::Editor, true)]);
}

/// 50 publishes of different content to one slug, all at once: 50 consecutive versions.
async fn concurrent_publishes(store: Arc<dyn Store>) {
    let tasks: Vec<_> = (0..50)
        .map(|i| {
            let store = Arc::clone(&store);
            tokio::spawn(async move {
                let publication = tool("Busy", &format!("draft {i}"));
                store.publish("busy", &publication, None, None).await.unwrap().version
            })
        })
        .collect();
    let mut numbers = Vec::new();
    for task in tasks {
        numbers.push(task.await.unwrap());
    }
    numbers.sort_unstable();
    assert_eq!(numbers, (1..=50).collect::<Vec<u32>>());
    assert_eq!(store.versions("busy").await.unwrap().len(), 50);
}

/// Every write is announced with its slug, and `current` lists what each tool is now.
async fn changes_and_current(store: &dyn Store) {
    let mut changes = store.changes().await.unwrap();
    let next = async |changes: &mut llmtool_registry::Changes| {
        tokio::time::timeout(std::time::Duration::from_secs(10), changes.next())
            .await
            .expect("a change is announced")
            .unwrap()
    };
    let first = tool("Echo", "an echo");
    store.publish("echo", &first, None, None).await.unwrap();
    assert_eq!(next(&mut changes).await, Change::Tool("echo".into()));
    store.publish("echo", &tool("Echo", "two echoes"), None, None).await.unwrap();
    assert_eq!(next(&mut changes).await, Change::Tool("echo".into()));
    store.set_label("echo", "production", 1).await.unwrap();
    assert_eq!(next(&mut changes).await, Change::Tool("echo".into()));
    store.add_tag("echo", "sound").await.unwrap();
    assert_eq!(next(&mut changes).await, Change::Tool("echo".into()));

    let latest = store.current(None).await.unwrap();
    let slugs: Vec<&str> = latest.iter().map(|(slug, _, _)| slug.as_str()).collect();
    assert!(slugs.is_sorted() && slugs.contains(&"echo") && slugs.contains(&"busy"), "{slugs:?}");
    let echo = latest.iter().find(|(slug, _, _)| slug == "echo").unwrap();
    assert!(echo.1 == 2 && echo.2.contains("two echoes"));
    let production = store.current(Some("production")).await.unwrap();
    assert!(
        production.iter().any(|(slug, n, text)| slug == "echo" && *n == 1 && text == &first.text)
    );
    assert!(production.iter().all(|(slug, _, _)| slug != "busy"), "only labelled tools");

    store.delete("echo").await.unwrap();
    assert_eq!(next(&mut changes).await, Change::Tool("echo".into()));
    assert!(store.current(None).await.unwrap().iter().all(|(slug, _, _)| slug != "echo"));
}

/// A run of `slug` on `model` that cost `cost`, as the server logs one.
fn run(slug: &str, model: &str, cost: Option<f64>, day: u8) -> llmtool_log::Record {
    llmtool_log::Record {
        id: None,
        started_at: format!("2026-11-{day:02}T10:00:00.000Z"),
        origin: "server".into(),
        tool_path: Some(format!("registry:{slug}@1")),
        tool_name: Some(slug.into()),
        tool_hash: "0".repeat(64),
        variables: Some(serde_json::json!({"topic": "tides"})),
        prompt: None,
        variables_hash: "1".repeat(64),
        provider: "openai".into(),
        model: model.into(),
        input_tokens: Some(100),
        cached_input_tokens: None,
        cache_write_tokens: None,
        output_tokens: Some(20),
        reasoning_tokens: None,
        cost_usd: cost,
        price_entry: None,
        latency_ms: Some(5),
        first_token_ms: None,
        repairs: 0,
        outcome: llmtool_log::Outcome::Ok,
        error: None,
        answer: Some("a tide".into()),
        redactions: std::collections::BTreeMap::new(),
    }
}

/// Runs are kept with their cost and totalled by tool, model and day.
async fn runs_and_usage(store: &dyn Store) {
    use llmtool_log::Grouping;
    let expensive = run("echo", "gpt-4o", Some(0.5), 20);
    let first = store.log_run("echo", 1, Some("ana"), &expensive).await.unwrap();
    let second = store.log_run("echo", 2, None, &run("echo", "gpt-4o-mini", None, 21)).await;
    assert!(second.unwrap() > first);
    store.log_run("poet", 1, None, &run("poet", "gpt-4o", Some(0.25), 21)).await.unwrap();
    let by_tool = store.usage(Grouping::Tool, None).await.unwrap();
    let shown: Vec<_> =
        by_tool.iter().map(|t| (t.key.as_str(), t.runs, t.cost_usd, t.unpriced_runs)).collect();
    assert_eq!(shown, [("echo", 2, 0.5, 1), ("poet", 1, 0.25, 0)]);
    assert_eq!((by_tool[0].input_tokens, by_tool[0].output_tokens), (200, 40));
    let by_model = store.usage(Grouping::Model, Some("2026-11-21")).await.unwrap();
    let shown: Vec<_> = by_model.iter().map(|t| (t.key.as_str(), t.runs)).collect();
    assert_eq!(shown, [("openai/gpt-4o", 1), ("openai/gpt-4o-mini", 1)]);
    let by_day = store.usage(Grouping::Day, None).await.unwrap();
    let shown: Vec<_> = by_day.iter().map(|t| (t.key.as_str(), t.runs)).collect();
    assert_eq!(shown, [("2026-11-20", 1), ("2026-11-21", 2)]);
}

/// Studio sessions live until they expire or their token is revoked, a token keeps a bounded
/// number, tags are counted over live tools, and kept runs are listed newest first.
async fn sessions_tags_and_kept_runs(store: &dyn Store) {
    use std::time::Duration;
    let hour = Duration::from_secs(3600);
    store.create_token("sam", Role::Editor, &"5".repeat(64)).await.unwrap();
    store.create_session("first", "sam", "csrf-1", hour).await.unwrap();
    let session = store.session("first").await.unwrap().unwrap();
    assert_eq!(
        (session.name.as_str(), session.role, session.csrf.as_str()),
        ("sam", Role::Editor, "csrf-1")
    );
    assert!(store.session("unknown").await.unwrap().is_none());
    store.create_session("gone", "sam", "csrf-0", Duration::ZERO).await.unwrap();
    assert!(store.session("gone").await.unwrap().is_none(), "an expired session is refused");
    for n in 0..llmtool_registry::MAX_SESSIONS_PER_TOKEN {
        tokio::time::sleep(Duration::from_millis(2)).await;
        store.create_session(&format!("later-{n:02}"), "sam", "csrf", hour).await.unwrap();
    }
    assert!(store.session("first").await.unwrap().is_none(), "the oldest is dropped past the cap");
    assert!(store.session("later-15").await.unwrap().is_some());
    store.delete_session("later-15").await.unwrap();
    assert!(store.session("later-15").await.unwrap().is_none());
    store.revoke_token("sam").await.unwrap();
    assert!(
        store.session("later-14").await.unwrap().is_none(),
        "a revoked token ends its sessions"
    );

    let tags = store.tags().await.unwrap();
    assert!(!tags.is_empty() && tags.windows(2).all(|w| w[0].tools >= w[1].tools), "{tags:?}");
    assert!(tags.iter().all(|t| t.tag != "sound"), "the deleted tool's tag is not counted");

    let runs = store.runs("echo", 10).await.unwrap();
    let shown: Vec<_> =
        runs.iter().map(|r| (r.version, r.run_by.as_deref(), r.record.model.as_str())).collect();
    assert_eq!(shown, [(2, None, "gpt-4o-mini"), (1, Some("ana"), "gpt-4o")]);
    assert!(runs[0].record.id > runs[1].record.id);
    assert_eq!(store.runs("echo", 1).await.unwrap().len(), 1);
}

/// Tags and labels added at once by many writers never pass the caps together (the dialect's
/// lock on the tool), and every one that fits is kept.
async fn concurrent_tags_and_labels_stay_under_the_caps(store: Arc<dyn Store>) {
    store.publish("crowded", &tool("Crowded", "a crowd"), None, None).await.unwrap();
    for i in 0..MAX_TAGS - 5 {
        store.add_tag("crowded", &format!("tag-{i}")).await.unwrap();
    }
    let adds: Vec<_> = (0..20)
        .map(|i| {
            let store = Arc::clone(&store);
            tokio::spawn(async move { store.add_tag("crowded", &format!("new-{i}")).await })
        })
        .collect();
    let mut refused = 0;
    for add in adds {
        match add.await.unwrap() {
            Ok(()) => {}
            Err(StoreError::TooMany { what: "tags", .. }) => refused += 1,
            Err(other) => panic!("{other}"),
        }
    }
    assert_eq!(refused, 15, "5 of the 20 fit");
    let tags = store.version("crowded", &Selector::Latest).await.unwrap().tags;
    assert_eq!(tags.len(), MAX_TAGS as usize);
    let labels: Vec<_> = (0..MAX_LABELS + 6)
        .map(|i| {
            let store = Arc::clone(&store);
            tokio::spawn(async move { store.set_label("crowded", &format!("l{i}"), 1).await })
        })
        .collect();
    let mut set = 0;
    for label in labels {
        set += u32::from(label.await.unwrap().is_ok());
    }
    assert_eq!(set, MAX_LABELS);
    assert_eq!(store.version("crowded", &Selector::Latest).await.unwrap().labels.len(), 64);
}

async fn suite(store: Arc<dyn Store>) {
    versions_tags_labels_and_deletion(store.as_ref()).await;
    search_filters_and_pages(store.as_ref()).await;
    tokens(store.as_ref()).await;
    concurrent_publishes(Arc::clone(&store)).await;
    concurrent_tags_and_labels_stay_under_the_caps(Arc::clone(&store)).await;
    changes_and_current(store.as_ref()).await;
    runs_and_usage(store.as_ref()).await;
    sessions_tags_and_kept_runs(store.as_ref()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqlStore::open_sqlite(&dir.path().join("library.db")).await.unwrap();
    suite(Arc::new(store.clone())).await;
    // A backup is a library of its own, with everything in it; it never overwrites a file.
    let copy = dir.path().join("backup.db");
    store.backup(&copy).await.unwrap();
    let restored = SqlStore::open_sqlite(&copy).await.unwrap();
    assert_eq!(restored.versions("busy").await.unwrap().len(), 50);
    assert_eq!(restored.version("haiku-writer", &Selector::Latest).await.unwrap().version, 3);
    assert!(matches!(store.backup(&copy).await, Err(StoreError::Backup(_))));
}

/// The same suite on PostgreSQL: a fresh database on the test command's cluster.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres() {
    let Some(database) = llmtool_testkit::postgres::database().await else { return };
    let store = SqlStore::connect_postgres(&database.url).await.unwrap();
    suite(Arc::new(store)).await;
}

/// Two servers on one database: what one writes, the other hears (`LISTEN`/`NOTIFY`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_announces_to_every_server() {
    let Some(database) = llmtool_testkit::postgres::database().await else { return };
    let writer = SqlStore::connect_postgres(&database.url).await.unwrap();
    let reader = SqlStore::connect_postgres(&database.url).await.unwrap();
    let mut heard = reader.changes().await.unwrap();
    writer.publish("echo", &tool("Echo", "an echo"), None, None).await.unwrap();
    let change = tokio::time::timeout(std::time::Duration::from_secs(10), heard.next()).await;
    assert_eq!(change.unwrap(), Some(Change::Tool("echo".into())));
    writer.add_tag("echo", "sound").await.unwrap();
    let change = tokio::time::timeout(std::time::Duration::from_secs(10), heard.next()).await;
    assert_eq!(change.unwrap(), Some(Change::Tool("echo".into())));
}

#[test]
fn a_tool_with_errors_is_refused_with_checks_diagnostics() {
    let rejected =
        Publication::from_text(r#"{"metadata": {"prompt_name": "x"}}"#, "bad.json").unwrap_err();
    assert!(!rejected.diagnostics.is_empty());
    assert_eq!(rejected.diagnostics[0]["path"], "bad.json");
    assert!(
        rejected
            .diagnostics
            .iter()
            .any(|d| d["severity"] == "error" && d["code"].as_str().is_some())
    );
}
