//! The storage suite: every behaviour of the library, each scenario a test of its own on each
//! backend, on a library of its own (`on_sqlite::*`, and `on_postgres::*` on the test command's
//! PostgreSQL cluster, which CI always has).

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::sync::Arc;

use llmtool_registry::{
    Actor, AuditQuery, Change, Charge, ConversationEdit, ConversationQuery, DEFAULT_TOKEN_DAYS,
    InviteProblem, MAX_LABELS, MAX_SNAPSHOT_BYTES, MAX_SNAPSHOTS, MAX_TAGS, MAX_TOKEN_DAYS,
    MemberEdit, NewMember, NewSnapshot, NewToken, People, Publication, Query, Redeemed, Role,
    RunsOf, Selector, SessionFor, SignIn, SnapshotOf, SqlStore, Store, StoreError, TitleChange,
    TokensOf, Visibility, Workspace, WorkspaceChange,
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

/// The name and role of the token whose hash is `hash`, if it is live.
async fn holder(store: &dyn Store, hash: &str) -> Option<(String, Role)> {
    store.token(hash).await.unwrap().map(|holder| (holder.name, holder.role))
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
    // A new tool reaches everyone (`all`) until it is curated.
    assert_eq!(versions[0].tags, ["all", "built-in", "poetry"]);
    store.remove_tag("haiku-writer", "built-in").await.unwrap();
    store.remove_tag("haiku-writer", "all").await.unwrap();
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

/// The word search: best first, paged by its own cursors to the end, and current with every
/// write of the store at once: a new version's words, a deleted tool, a tag that changes who
/// sees a tool.
async fn word_search_ranks_pages_and_follows_changes(store: &dyn Store) {
    for (slug, name, words) in [
        ("a-helper", "Helper", "a poem on tides"),
        ("b-named", "Poem", "verses"),
        ("c-plural", "Poems", "verses"),
    ] {
        store.publish(slug, &tool(name, words), None, None).await.unwrap();
    }
    let asked = |text: &str, visible: Visibility, limit, cursor| Query {
        text: Some(text.into()),
        limit,
        cursor,
        visible,
        ..Query::default()
    };
    let slugs =
        |page: llmtool_registry::Page| page.tools.into_iter().map(|t| t.slug).collect::<Vec<_>>();
    let found = |text: &str, visible: Visibility| {
        let query = asked(text, visible, 10, None);
        async move { slugs(store.search(&query).await.unwrap()) }
    };
    // The word in the name first; then in the description and the prompt, before a longer word
    // it starts ("Poems") in the name.
    assert_eq!(found("poem", Visibility::Everything).await, ["b-named", "a-helper", "c-plural"]);
    let mut paged = Vec::new();
    let mut cursor = None;
    loop {
        let page = store.search(&asked("po", Visibility::Everything, 1, cursor)).await.unwrap();
        let next = page.next.clone();
        paged.extend(slugs(page));
        match next {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(paged, found("po", Visibility::Everything).await);
    assert_eq!(paged.len(), 3);
    // A list's cursor (a slug) is not a ranked search's, and the other way round.
    let slug_cursor = asked("po", Visibility::Everything, 1, Some("b-named".into()));
    assert!(matches!(store.search(&slug_cursor).await, Err(StoreError::BadCursor)));
    let first = store.search(&asked("po", Visibility::Everything, 1, None)).await.unwrap();
    let listed = Query { limit: 1, cursor: first.next, ..Query::default() };
    assert!(matches!(store.search(&listed).await, Err(StoreError::BadCursor)));

    // Each write is in the very next search.
    store.publish("a-helper", &tool("Helper", "a limerick on moons"), None, None).await.unwrap();
    assert_eq!(found("poem", Visibility::Everything).await, ["b-named", "c-plural"]);
    assert_eq!(found("limer moon", Visibility::Everything).await, ["a-helper"]);
    store.delete("b-named").await.unwrap();
    assert_eq!(found("poem", Visibility::Everything).await, ["c-plural"]);
    let sales = Visibility::of(Role::Viewer, &["sales".to_owned()], &Workspace::default());
    let nobody = Visibility::of(Role::Viewer, &[], &Workspace::default());
    store.add_tag("c-plural", "sales").await.unwrap();
    store.remove_tag("c-plural", "all").await.unwrap();
    assert_eq!(found("verses", sales).await, ["c-plural"]);
    assert!(found("verses", nobody).await.is_empty(), "a team's tool is its team's alone");
    store.publish("b-named", &tool("Poem", "verses"), None, None).await.unwrap();
    assert_eq!(found("poem", Visibility::Everything).await, ["b-named", "c-plural"]);
}

/// Two servers on one PostgreSQL database: a tool published through one is found by the
/// other's word search once its `NOTIFY` arrives, and a deleted one is no longer.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn another_servers_write_reaches_the_word_search_on_postgres() {
    let Some(database) = llmtool_testkit::postgres::database().await else { return };
    let writer = SqlStore::connect_postgres(&database.url).await.unwrap();
    let reader = SqlStore::connect_postgres(&database.url).await.unwrap();
    reader.warm_search().await.unwrap();
    let query = Query { text: Some("lighth".into()), limit: 10, ..Query::default() };
    let found = || async { reader.search(&query).await.unwrap().tools.len() };
    assert_eq!(found().await, 0);
    writer.publish("keeper", &tool("Keeper", "lighthouse logs"), None, None).await.unwrap();
    let until = |wanted: usize| async move {
        for _ in 0..100 {
            if found().await == wanted {
                return true;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        false
    };
    assert!(until(1).await, "the other server's tool was never found");
    writer.delete("keeper").await.unwrap();
    assert!(until(0).await, "the other server's deleted tool is still found");
}

async fn search_filters_and_pages(store: &dyn Store) {
    // Searched among the versioned, tagged tools that scenario leaves.
    versions_tags_labels_and_deletion(store).await;
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
    assert!(
        seen_kinds(&search(Query { limit: 10, ..Query::default() }).await).all(|k| k == "prompt")
    );
    // A smart tool (its Python code in `metadata.tool_code`) is found as one.
    let smart = serde_json::json!({"version": "0.1", "metadata": {"tool_name": "Word counter",
        "tool_code": "def execute(variables):\n    return str(len(variables['text'].split()))\n",
        "description": "Counts words.", "timestamp": "2026-11-27T00:00:00Z",
        "variables": [{"name": "text", "description": "What to count."}]}});
    let smart = Publication::from_text(&smart.to_string(), "smart.json").unwrap();
    store.publish("word-counter", &smart, None, None).await.unwrap();
    let found = search(Query { text: Some("counts".into()), limit: 10, ..Query::default() }).await;
    assert_eq!(seen_kinds(&found).collect::<Vec<_>>(), ["smart"]);
    store.delete("word-counter").await.unwrap();
    // A result shows its creator and whether it has a picture.
    let pictured = include_str!("../../../examples/pair-programmer.json");
    let pictured = Publication::from_text(pictured, "pair-programmer.json").unwrap();
    store.publish("pair-programmer", &pictured, None, None).await.unwrap();
    let found = search(Query { text: Some("pair".into()), limit: 10, ..Query::default() }).await;
    let shown: Vec<_> =
        found.tools.iter().map(|t| (t.slug.as_str(), t.creator.as_deref(), t.has_avatar)).collect();
    assert_eq!(shown, [("pair-programmer", Some("llmtool maintainers"), true)]);
    assert!(!words.tools[0].has_avatar && words.tools[0].creator.is_none());
    store.delete("pair-programmer").await.unwrap();
}

fn seen_kinds(page: &llmtool_registry::Page) -> impl Iterator<Item = &str> {
    page.tools.iter().map(|t| t.kind.as_str())
}

async fn tokens(store: &dyn Store) {
    store.create_token("ci", Role::Editor, "hash-ci", None).await.unwrap();
    store.create_token("ana", Role::Admin, "hash-ana", None).await.unwrap();
    assert!(matches!(
        store.create_token("ci", Role::Viewer, "other", None).await,
        Err(StoreError::TokenExists(_))
    ));
    // `CI` would share `ci`'s own member (its conversations, its spend): kept apart.
    let clash = store.create_token("CI", Role::Admin, "hash-upper", None).await;
    assert!(
        matches!(&clash, Err(StoreError::TokenNameClash { other, .. }) if other == "ci"),
        "{clash:?}"
    );
    assert_eq!(holder(store, "hash-ci").await, Some(("ci".to_owned(), Role::Editor)));
    assert_eq!(store.token("nothing").await.unwrap(), None);
    store.revoke_token("ci", TokensOf::Everyone).await.unwrap();
    assert_eq!(store.token("hash-ci").await.unwrap(), None);
    assert!(matches!(
        store.revoke_token("ci", TokensOf::Everyone).await,
        Err(StoreError::NoSuchToken(_))
    ));
    let listed = store.tokens(TokensOf::Everyone).await.unwrap();
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
    // A tool with no label, which `current` lists but not under a label.
    store.publish("busy", &tool("Busy", "busy work"), None, None).await.unwrap();
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
        conversation: None,
        turn: None,
        calls: Vec::new(),
        thread: None,
    }
}

/// Runs are kept with their cost and totalled by tool, model and day.
async fn runs_and_usage(store: &dyn Store) {
    use llmtool_log::Grouping;
    let expensive = run("echo", "gpt-4o", Some(0.5), 20);
    let first =
        store.log_run("echo", 1, Some("ana"), &expensive, &Charge::default(), None).await.unwrap();
    let second = store
        .log_run("echo", 2, None, &run("echo", "gpt-4o-mini", None, 21), &Charge::default(), None)
        .await;
    assert!(second.unwrap() > first);
    store
        .log_run("poet", 1, None, &run("poet", "gpt-4o", Some(0.25), 21), &Charge::default(), None)
        .await
        .unwrap();
    let by_tool = store.usage(Grouping::Tool, None, &Visibility::Everything).await.unwrap();
    let shown: Vec<_> =
        by_tool.iter().map(|t| (t.key.as_str(), t.runs, t.cost_usd, t.unpriced_runs)).collect();
    assert_eq!(shown, [("echo", 2, 0.5, 1), ("poet", 1, 0.25, 0)]);
    assert_eq!((by_tool[0].input_tokens, by_tool[0].output_tokens), (200, 40));
    let by_model =
        store.usage(Grouping::Model, Some("2026-11-21"), &Visibility::Everything).await.unwrap();
    let shown: Vec<_> = by_model.iter().map(|t| (t.key.as_str(), t.runs)).collect();
    assert_eq!(shown, [("openai/gpt-4o", 1), ("openai/gpt-4o-mini", 1)]);
    let by_day = store.usage(Grouping::Day, None, &Visibility::Everything).await.unwrap();
    let shown: Vec<_> = by_day.iter().map(|t| (t.key.as_str(), t.runs)).collect();
    assert_eq!(shown, [("2026-11-20", 1), ("2026-11-21", 2)]);
}

/// Studio sessions live until they expire or their token is revoked, a token keeps a bounded
/// number, tags are counted over live tools, and kept runs are listed newest first.
async fn sessions_tags_and_kept_runs(store: &dyn Store) {
    use std::time::Duration;
    // Tags and kept runs as those scenarios leave them (a deleted tool's tag among them).
    changes_and_current(store).await;
    runs_and_usage(store).await;
    let hour = Duration::from_hours(1);
    store.create_token("sam", Role::Editor, &"5".repeat(64), None).await.unwrap();
    store.create_session("first", SessionFor::Token("sam"), "csrf-1", hour).await.unwrap();
    let session = store.session("first").await.unwrap().unwrap();
    assert_eq!(
        (session.holder.name.as_str(), session.holder.role, session.csrf.as_str()),
        ("sam", Role::Editor, "csrf-1")
    );
    assert!(store.session("unknown").await.unwrap().is_none());
    store.create_session("gone", SessionFor::Token("sam"), "csrf-0", Duration::ZERO).await.unwrap();
    assert!(store.session("gone").await.unwrap().is_none(), "an expired session is refused");
    for n in 0..llmtool_registry::MAX_SESSIONS {
        tokio::time::sleep(Duration::from_millis(2)).await;
        let later = format!("later-{n:02}");
        store.create_session(&later, SessionFor::Token("sam"), "csrf", hour).await.unwrap();
    }
    assert!(store.session("first").await.unwrap().is_none(), "the oldest is dropped past the cap");
    assert!(store.session("later-15").await.unwrap().is_some());
    store.delete_session("later-15").await.unwrap();
    assert!(store.session("later-15").await.unwrap().is_none());
    store.revoke_token("sam", TokensOf::Everyone).await.unwrap();
    assert!(
        store.session("later-14").await.unwrap().is_none(),
        "a revoked token ends its sessions"
    );

    let tags = store.tags(&Visibility::Everything).await.unwrap();
    assert!(!tags.is_empty() && tags.windows(2).all(|w| w[0].tools >= w[1].tools), "{tags:?}");
    assert!(tags.iter().all(|t| t.tag != "sound"), "the deleted tool's tag is not counted");

    let runs = store.runs("echo", 10, None, None).await.unwrap().runs;
    let shown: Vec<_> =
        runs.iter().map(|r| (r.version, r.run_by.as_deref(), r.record.model.as_str())).collect();
    assert_eq!(shown, [(2, None, "gpt-4o-mini"), (1, Some("ana"), "gpt-4o")]);
    assert!(runs[0].record.id > runs[1].record.id);
    assert_eq!(store.runs("echo", 1, None, None).await.unwrap().runs.len(), 1);
    // The next page starts after the last run of the one before.
    let older = store.runs("echo", 1, runs[0].record.id, None).await.unwrap().runs;
    assert_eq!(older.iter().map(|r| r.record.id).collect::<Vec<_>>(), [runs[1].record.id]);
    assert!(store.runs("echo", 1, runs[1].record.id, None).await.unwrap().runs.is_empty());
    // One caller's runs: those made by their token, and none of anyone else's.
    let anas = store
        .runs("echo", 10, None, Some(RunsOf { run_by: "ana", member: "" }))
        .await
        .unwrap()
        .runs;
    assert_eq!(anas.iter().map(|r| r.version).collect::<Vec<_>>(), [1]);
    let nobodys = RunsOf { run_by: "bo", member: "bo@example.org" };
    assert!(store.runs("echo", 10, None, Some(nobodys)).await.unwrap().runs.is_empty());
}

/// Tags and labels added at once by many writers never pass the caps together (the dialect's
/// lock on the tool), and every one that fits is kept.
async fn concurrent_tags_and_labels_stay_under_the_caps(store: Arc<dyn Store>) {
    store.publish("crowded", &tool("Crowded", "a crowd"), None, None).await.unwrap();
    // With `all`, which a new tool has, 5 places are left.
    for i in 0..MAX_TAGS - 6 {
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

fn newcomer(email: &str, role: Role, teams: &[&str]) -> NewMember {
    let name = email.split('@').next().unwrap().to_owned();
    NewMember {
        email: email.into(),
        name,
        role,
        teams: teams.iter().map(|t| (*t).into()).collect(),
    }
}

/// Members and teams: e-mails one a member whatever their case, all or nothing, teams that
/// must exist, renamed with their tag, the last owner kept, and a removed member's tokens and
/// sessions gone.
async fn members_and_teams(store: &dyn Store) {
    store.create_team("sales", false).await.unwrap();
    store.create_team("support", false).await.unwrap();
    assert!(matches!(store.create_team("sales", false).await, Err(StoreError::TeamExists(_))));
    assert!(matches!(store.create_team("all", false).await, Err(StoreError::ReservedTeam(_))));
    // A tag put on before its team existed joins the team only on an admin's word: made
    // without it, the team's members would see the tool at once (and its editor could no
    // longer take the tag off).
    store.publish("ledger", &tool("Ledger", "Sums"), None, None).await.unwrap();
    store.add_tag("ledger", "finance").await.unwrap();
    let refused = store.create_team("finance", false).await;
    assert!(
        matches!(&refused, Err(StoreError::TaggedAhead { team, tools: 1 }) if team == "finance"),
        "{refused:?}"
    );
    let renamed = store.rename_team("support", "finance").await;
    assert!(matches!(renamed, Err(StoreError::TaggedAhead { .. })), "{renamed:?}");
    store.create_team("finance", true).await.unwrap();
    store.remove_team("finance").await.unwrap();
    store.delete("ledger").await.unwrap();
    store
        .add_members(&[
            newcomer("Olga@Example.org", Role::Owner, &[]),
            newcomer("sam@example.org", Role::Viewer, &["sales", "sales"]),
        ])
        .await
        .unwrap();
    let sam = store.member("SAM@example.ORG").await.unwrap();
    assert_eq!((sam.email.as_str(), sam.teams.clone()), ("sam@example.org", vec!["sales".into()]));
    // All or nothing: one bad member, and the good one before it is not added either.
    let batch =
        [newcomer("tia@example.org", Role::Editor, &[]), newcomer("x@y", Role::Viewer, &["ops"])];
    assert!(matches!(store.add_members(&batch).await, Err(StoreError::NoSuchTeam(_))));
    assert!(matches!(store.member("tia@example.org").await, Err(StoreError::NoSuchMember(_))));
    let again = [newcomer("OLGA@example.org", Role::Viewer, &[])];
    assert!(matches!(store.add_members(&again).await, Err(StoreError::MemberExists(_))));
    let bad = [newcomer("not an address", Role::Viewer, &[])];
    assert!(matches!(store.add_members(&bad).await, Err(StoreError::BadEmail(_))));
    // A Cyrillic `а` among Latin letters would pass for sam's address to the eye.
    let look_alike = [newcomer("s\u{430}m@example.org", Role::Admin, &[])];
    let refused = store.add_members(&look_alike).await;
    assert!(matches!(refused, Err(StoreError::MixedScriptEmail(_))), "{refused:?}");

    // The last owner stays one, and stays.
    let demote = MemberEdit { role: Some(Role::Admin), ..MemberEdit::default() };
    assert!(matches!(
        store.edit_member("olga@example.org", &demote).await,
        Err(StoreError::LastOwner(_))
    ));
    assert!(matches!(store.remove_member("olga@example.org").await, Err(StoreError::LastOwner(_))));
    let promote = MemberEdit { role: Some(Role::Owner), ..MemberEdit::default() };
    store.edit_member("sam@example.org", &promote).await.unwrap();
    assert_eq!(store.edit_member("olga@example.org", &demote).await.unwrap().role, Role::Admin);
    let back = MemberEdit {
        role: Some(Role::Viewer),
        teams: Some(vec!["support".into(), "sales".into()]),
        name: Some(" Sam Reis ".into()),
    };
    assert!(matches!(
        store.edit_member("sam@example.org", &back).await,
        Err(StoreError::LastOwner(_))
    ));
    store.edit_member("olga@example.org", &promote).await.unwrap();
    let sam = store.edit_member("sam@example.org", &back).await.unwrap();
    assert_eq!((sam.name.as_str(), sam.role, sam.teams.len()), ("Sam Reis", Role::Viewer, 2));

    // A token never has more rights than its member; a member's demotion caps their tokens.
    assert!(matches!(
        store.create_token("sam-ci", Role::Editor, "hash-sam", Some("sam@example.org")).await,
        Err(StoreError::TokenAboveMember { .. })
    ));
    assert!(matches!(
        store.create_token("ghost", Role::Viewer, "hash-ghost", Some("ghost@example.org")).await,
        Err(StoreError::NoSuchMember(_))
    ));
    store
        .create_token("olga-ci", Role::Admin, "hash-olga", Some("Olga@example.org"))
        .await
        .unwrap();
    store.create_token("sam-ci", Role::Viewer, "hash-sam", Some("sam@example.org")).await.unwrap();
    let admin = MemberEdit { role: Some(Role::Admin), ..MemberEdit::default() };
    store.edit_member("sam@example.org", &admin).await.unwrap();
    store
        .edit_member("olga@example.org", &MemberEdit { role: Some(Role::Editor), ..admin.clone() })
        .await
        .unwrap_err();
    store.edit_member("sam@example.org", &promote).await.unwrap();
    let editor = MemberEdit { role: Some(Role::Editor), ..MemberEdit::default() };
    store.edit_member("olga@example.org", &editor).await.unwrap();
    assert_eq!(holder(store, "hash-olga").await, Some(("olga-ci".to_owned(), Role::Editor)));
    let listed = store.tokens(TokensOf::Everyone).await.unwrap();
    let olga = listed.iter().find(|t| t.name == "olga-ci").unwrap();
    assert_eq!(olga.member.as_deref(), Some("olga@example.org"));

    // Removing a member revokes their tokens and ends their sessions.
    store
        .create_session(
            &"6".repeat(64),
            SessionFor::Token("olga-ci"),
            "csrf",
            std::time::Duration::from_mins(1),
        )
        .await
        .unwrap();
    store.remove_member("olga@example.org").await.unwrap();
    assert_eq!(store.token("hash-olga").await.unwrap(), None);
    assert_eq!(store.session(&"6".repeat(64)).await.unwrap(), None);
    assert!(matches!(store.member("olga@example.org").await, Err(StoreError::NoSuchMember(_))));

    // A team renamed takes its members and its tag along.
    store.publish("sales-pitch", &tool("Pitch", "pitches"), None, None).await.unwrap();
    store.add_tag("sales-pitch", "sales").await.unwrap();
    store.remove_tag("sales-pitch", "all").await.unwrap();
    store.rename_team("sales", "revenue").await.unwrap();
    assert!(matches!(store.rename_team("sales", "x").await, Err(StoreError::NoSuchTeam(_))));
    assert!(matches!(
        store.rename_team("revenue", "support").await,
        Err(StoreError::TeamExists(_))
    ));
    let tags = store.version("sales-pitch", &Selector::Latest).await.unwrap().tags;
    assert_eq!(tags, ["revenue"]);
    let sam = store.member("sam@example.org").await.unwrap();
    assert_eq!(sam.teams, ["revenue", "support"]);
    let teams = store.teams().await.unwrap();
    let shown: Vec<_> = teams.iter().map(|t| (t.name.as_str(), t.members, t.tools)).collect();
    assert_eq!(shown, [("revenue", 1, 1), ("support", 1, 0)]);
    store.remove_team("support").await.unwrap();
    assert_eq!(store.member("sam@example.org").await.unwrap().teams, ["revenue"]);
    assert!(matches!(store.remove_team("support").await, Err(StoreError::NoSuchTeam(_))));
    let everyone: Vec<_> = store.members().await.unwrap().into_iter().map(|m| m.email).collect();
    assert!(everyone.contains(&"sam@example.org".to_owned()), "{everyone:?}");

    // Search, tag counts and usage hold only the tools the caller sees.
    store
        .log_run(
            "sales-pitch",
            1,
            None,
            &run("sales-pitch", "gpt-4o", Some(0.5), 25),
            &Charge::default(),
            None,
        )
        .await
        .unwrap();
    let on = Workspace::default();
    let revenue = Visibility::of(Role::Viewer, &["revenue".to_owned()], &on);
    let nobody = Visibility::of(Role::Viewer, &[], &on);
    let usage = |visible| async move {
        let totals = store.usage(llmtool_log::Grouping::Tool, None, &visible).await.unwrap();
        totals.into_iter().map(|total| total.key).collect::<Vec<_>>()
    };
    assert!(usage(revenue.clone()).await.contains(&"sales-pitch".to_owned()));
    assert!(!usage(nobody.clone()).await.contains(&"sales-pitch".to_owned()));
    let found = |visible: Visibility| async move {
        let query = Query { text: Some("pitches".into()), limit: 50, visible, ..Query::default() };
        store.search(&query).await.unwrap().tools.into_iter().map(|t| t.slug).collect::<Vec<_>>()
    };
    assert_eq!(found(revenue.clone()).await, ["sales-pitch"]);
    assert!(found(nobody.clone()).await.is_empty());
    let tags = store.tags(&nobody).await.unwrap();
    assert!(tags.iter().all(|t| t.tag != "revenue"), "{tags:?}");
    assert!(store.tags(&revenue).await.unwrap().iter().any(|t| t.tag == "revenue"));
}

/// An invite signs its member in once, before it expires; a single sign-on under way is taken
/// once; a session opened without a token stands for its member, and ends with them; the
/// built-in tools switched off leave every member's view, on every query, but no admin's.
async fn invites_single_sign_ons_and_the_workspace(store: &dyn Store) {
    use std::time::Duration;
    let hour = Duration::from_hours(1);
    store.add_members(&[newcomer("ivy@example.org", Role::Viewer, &[])]).await.unwrap();
    let ivy = store.create_invite("IVY@example.org", "invite-1", hour).await.unwrap();
    assert_eq!(ivy.email, "ivy@example.org");
    assert!(matches!(
        store.create_invite("nobody@example.org", "invite-0", hour).await,
        Err(StoreError::NoSuchMember(_))
    ));
    assert_eq!(store.use_invite("invite-1").await.unwrap(), "ivy@example.org");
    let again = store.use_invite("invite-1").await;
    assert!(matches!(again, Err(StoreError::BadInvite(InviteProblem::Used))), "{again:?}");
    store.create_invite("ivy@example.org", "invite-2", Duration::ZERO).await.unwrap();
    let late = store.use_invite("invite-2").await;
    assert!(matches!(late, Err(StoreError::BadInvite(InviteProblem::Expired))), "{late:?}");
    let unknown = store.use_invite("invite-9").await;
    assert!(matches!(unknown, Err(StoreError::BadInvite(InviteProblem::Unknown))), "{unknown:?}");

    store.create_session("ivy-1", SessionFor::Member("ivy@example.org"), "c", hour).await.unwrap();
    let session = store.session("ivy-1").await.unwrap().unwrap();
    assert_eq!(
        (session.holder.name.as_str(), session.holder.member.as_str(), session.holder.role),
        ("ivy@example.org", "ivy@example.org", Role::Viewer)
    );

    let sign_in = SignIn { nonce: "n".into(), verifier: "v".into(), next: "/t/x".into() };
    store.begin_sign_in("state-1", &sign_in, hour).await.unwrap();
    assert_eq!(store.finish_sign_in("state-1").await.unwrap(), Some(sign_in.clone()));
    assert_eq!(store.finish_sign_in("state-1").await.unwrap(), None, "taken once");
    store.begin_sign_in("state-2", &sign_in, Duration::ZERO).await.unwrap();
    assert_eq!(store.finish_sign_in("state-2").await.unwrap(), None, "expired");

    // The built-in tools, switched off: gone for members, there for admins.
    store.publish("builtin-echo", &tool("Builtin", "builtin"), None, None).await.unwrap();
    store.add_tag("builtin-echo", "built-in").await.unwrap();
    assert_eq!(store.workspace().await.unwrap(), Workspace::default());
    assert!(Workspace::default().built_ins && !Workspace::default().public_snapshots);
    let found = |visible: Visibility| async move {
        let query = Query { text: Some("builtin".into()), limit: 50, visible, ..Query::default() };
        store.search(&query).await.unwrap().tools.len()
    };
    let viewer = session.holder.visibility();
    assert_eq!(found(viewer).await, 1);
    let off = store.change_workspace(&built_ins(false)).await.unwrap();
    assert_eq!(off, Workspace { built_ins: false, public_snapshots: false });
    let session = store.session("ivy-1").await.unwrap().unwrap();
    assert_eq!(session.holder.workspace, off);
    let viewer = session.holder.visibility();
    assert_eq!(found(viewer.clone()).await, 0);
    assert!(store.tags(&viewer).await.unwrap().iter().all(|t| t.tag != "built-in"));
    let admin = Visibility::of(Role::Admin, &[], &off);
    assert_eq!(found(admin).await, 1);
    // A change names what it changes: the other setting stays.
    let snapshots = WorkspaceChange { public_snapshots: Some(true), ..WorkspaceChange::default() };
    let both = store.change_workspace(&snapshots).await.unwrap();
    assert_eq!(both, Workspace { built_ins: false, public_snapshots: true });
    assert_eq!(store.workspace().await.unwrap(), both);
    assert_eq!(store.session("ivy-1").await.unwrap().unwrap().holder.workspace, both);
    let on = store.change_workspace(&built_ins(true)).await.unwrap();
    assert_eq!(on, Workspace { built_ins: true, public_snapshots: true });
    assert_eq!(found(store.session("ivy-1").await.unwrap().unwrap().holder.visibility()).await, 1);

    // A new invite voids the earlier links not used yet; a used one still says so.
    store.create_invite("ivy@example.org", "invite-4", hour).await.unwrap();
    store.create_invite("ivy@example.org", "invite-5", hour).await.unwrap();
    let voided = store.use_invite("invite-4").await;
    assert!(matches!(voided, Err(StoreError::BadInvite(InviteProblem::Unknown))), "{voided:?}");
    let used = store.use_invite("invite-1").await;
    assert!(matches!(used, Err(StoreError::BadInvite(InviteProblem::Used))), "{used:?}");

    // A member removed: their sessions and invites go with them.
    store.create_invite("ivy@example.org", "invite-3", hour).await.unwrap();
    store.remove_member("ivy@example.org").await.unwrap();
    assert_eq!(store.session("ivy-1").await.unwrap(), None);
    let gone = store.use_invite("invite-3").await;
    assert!(matches!(gone, Err(StoreError::BadInvite(InviteProblem::Unknown))), "{gone:?}");
}

/// Every change made through a store acting for someone is in the audit log, with its before
/// and after; what changed nothing, or failed, is not; the log reads newest first, by page and
/// filter.
async fn the_audit_log(store: &dyn Store) {
    let actor = Actor { name: "ana@example.org".into(), address: Some("192.0.2.7".into()) };
    let ana = store.acting_as(actor.clone());
    ana.create_team("audit-ops", false).await.unwrap();
    ana.add_members(&[newcomer("bo@example.org", Role::Viewer, &["audit-ops"])]).await.unwrap();
    let promote = MemberEdit { role: Some(Role::Editor), ..MemberEdit::default() };
    ana.edit_member("bo@example.org", &promote).await.unwrap();
    ana.edit_member("bo@example.org", &promote).await.unwrap(); // no change: no record
    ana.create_invite("bo@example.org", "audit-invite", std::time::Duration::from_mins(1))
        .await
        .unwrap();
    ana.publish("audited", &tool("Audited", "audits"), Some("first"), None).await.unwrap();
    ana.publish("audited", &tool("Audited", "audits"), None, None).await.unwrap(); // the same
    ana.add_tag("audited", "audit-ops").await.unwrap();
    ana.add_tag("audited", "audit-ops").await.unwrap(); // there already
    assert!(ana.add_tag("audited", "Not A Tag").await.is_err()); // refused: no record
    ana.set_label("audited", "stable", 1).await.unwrap();
    ana.set_label("audited", "stable", 1).await.unwrap(); // where it was
    ana.remove_tag("audited", "all").await.unwrap();
    ana.create_token("audit-ci", Role::Viewer, "audit-secret-hash", Some("bo@example.org"))
        .await
        .unwrap();
    ana.revoke_token("audit-ci", TokensOf::Everyone).await.unwrap();
    ana.rename_team("audit-ops", "audit-ops2").await.unwrap();
    ana.change_workspace(&built_ins(false)).await.unwrap();
    ana.change_workspace(&built_ins(true)).await.unwrap();
    ana.delete("audited").await.unwrap();
    ana.publish("audited", &tool("Audited", "audits"), None, None).await.unwrap(); // back
    ana.remove_team("audit-ops2").await.unwrap();
    ana.remove_member("bo@example.org").await.unwrap();

    let page = |query: AuditQuery| async move { store.audit(&query).await.unwrap() };
    let mine = |limit, before_id| AuditQuery {
        actor: Some(actor.name.clone()),
        before_id,
        limit,
        ..AuditQuery::default()
    };
    let everything = page(mine(500, None)).await;
    let mut actions: Vec<(String, String)> = everything
        .records
        .iter()
        .map(|record| (record.entry.action.clone(), record.entry.target.clone()))
        .collect();
    actions.reverse();
    let expected = [
        ("team.create", "audit-ops"),
        ("member.add", "bo@example.org"),
        ("member.edit", "bo@example.org"),
        ("member.invite", "bo@example.org"),
        ("tool.publish", "audited"),
        ("tag.add", "audited"),
        ("label.set", "audited"),
        ("tag.remove", "audited"),
        ("token.create", "audit-ci"),
        ("token.revoke", "audit-ci"),
        ("team.rename", "audit-ops"),
        ("workspace.edit", "workspace"),
        ("workspace.edit", "workspace"),
        ("tool.delete", "audited"),
        ("tool.publish", "audited"),
        ("team.remove", "audit-ops2"),
        ("member.remove", "bo@example.org"),
    ];
    let expected: Vec<(String, String)> =
        expected.iter().map(|(a, t)| ((*a).to_owned(), (*t).to_owned())).collect();
    assert_eq!(actions, expected);
    assert!(everything.records.iter().all(|r| r.entry.address.as_deref() == Some("192.0.2.7")));

    // Each record says what it was before and after.
    let find = |action: &str| {
        everything.records.iter().rev().find(|r| r.entry.action == action).unwrap().entry.clone()
    };
    let edit = find("member.edit");
    assert_eq!(edit.before.unwrap()["role"], "viewer");
    assert_eq!(edit.after.unwrap()["role"], "editor");
    let publish = find("tool.publish");
    assert_eq!(publish.before, None);
    assert_eq!(
        (
            publish.after.as_ref().unwrap()["version"].as_i64(),
            publish.after.unwrap()["note"].as_str()
        ),
        (Some(1), Some("first"))
    );
    let back = everything.records[2].entry.clone();
    assert_eq!(back.before.unwrap()["deleted"], true);
    assert_eq!(find("token.create").after.unwrap()["member"], "bo@example.org");
    let removed = everything.records[0].entry.clone();
    assert_eq!(removed.before.unwrap()["teams"], serde_json::json!([]));
    // No secret is ever kept: not the token's hash, not the invite's.
    let text = serde_json::to_string(&everything).unwrap();
    assert!(!text.contains("audit-secret-hash") && !text.contains("audit-invite"), "{text}");

    // Pages of three give the same records, in the same order.
    let mut paged = Vec::new();
    let mut cursor = None;
    loop {
        let next = page(mine(3, cursor)).await;
        paged.extend(next.records.iter().map(|r| r.id));
        match next.next {
            Some(next) => cursor = Some(next.parse().unwrap()),
            None => break,
        }
    }
    assert_eq!(paged, everything.records.iter().map(|r| r.id).collect::<Vec<_>>());
    let by_target =
        page(AuditQuery { target: Some("audit-ci".into()), limit: 50, ..AuditQuery::default() })
            .await;
    assert_eq!(by_target.records.len(), 2);
    let by_action = page(AuditQuery {
        action: Some("workspace.edit".into()),
        actor: Some(actor.name.clone()),
        limit: 50,
        ..AuditQuery::default()
    })
    .await;
    assert_eq!(by_action.records.len(), 2);
    // Changes made through the store as it was opened are the server's own.
    store.create_team("by-itself", false).await.unwrap();
    let own =
        page(AuditQuery { target: Some("by-itself".into()), limit: 5, ..AuditQuery::default() })
            .await;
    assert_eq!(own.records[0].entry.actor, "system");
}

/// A conversation's turns are kept with their runs: read back in order with what the
/// conversation keeps, listed by owner, and shared as a snapshot of the turns it had then.
async fn conversations(store: &dyn Store) {
    let turn = |number: u32, day: u8, placeholders: &[(&str, &str)]| {
        let thread = llmtool_log::Thread {
            tool: None,
            dlp: Some("redact".into()),
            placeholders: placeholders.iter().map(|(p, v)| ((*p).into(), (*v).into())).collect(),
        };
        llmtool_log::Record {
            conversation: Some("01jqconversation0000000000".into()),
            turn: Some(number),
            prompt: Some(format!("question {number}")),
            calls: Vec::new(),
            thread: Some(thread),
            ..run("chatty", "gpt-4o", Some(0.25), day)
        }
    };
    let charge = Charge::default();
    assert_eq!(llmtool_registry::owner_of("ana@example.org", Some("ci")), "member:ana@example.org");
    let first = turn(1, 22, &[("[EMAIL_1]", "ann@example.com")]);
    store.log_run("chatty", 3, Some("ana"), &first, &charge, None).await.unwrap();
    let second = turn(2, 23, &[("[EMAIL_1]", "ann@example.com"), ("[EMAIL_2]", "bo@example.com")]);
    store.log_run("chatty", 3, Some("ana"), &second, &charge, None).await.unwrap();
    let other = llmtool_log::Record {
        conversation: Some("01jqotherconversation00000".into()),
        turn: Some(1),
        ..run("chatty", "gpt-4o", None, 24)
    };
    store.log_run("chatty", 4, Some("bo"), &other, &charge, None).await.unwrap();

    let kept = store.conversation("01jqconversation0000000000").await.unwrap().unwrap();
    let head = (kept.info.owner.as_str(), kept.info.slug.as_str(), kept.info.version);
    assert_eq!(head, ("token:ana", "chatty", 3), "a token of no member owns it by its name");
    assert_eq!((kept.info.summary.turns, kept.info.summary.cost_usd), (2, 0.5));
    assert_eq!(kept.info.summary.last_at, "2026-11-23T10:00:00.000Z");
    let prompts: Vec<_> =
        kept.conversation.turns.iter().map(|t| (t.turn, t.prompt.clone())).collect();
    assert_eq!(
        prompts,
        [(Some(1), Some("question 1".into())), (Some(2), Some("question 2".into()))]
    );
    assert_eq!(kept.conversation.thread.dlp.as_deref(), Some("redact"));
    assert_eq!(kept.conversation.thread.placeholders.len(), 2, "every turn's placeholders");
    assert!(store.conversation("nope").await.unwrap().is_none());
    // Its one row, turns unread, is what its whole reading says of it.
    let info = store.conversation_info("01jqconversation0000000000").await.unwrap();
    assert_eq!(info.as_ref(), Some(&kept.info));
    assert!(store.conversation_info("nope").await.unwrap().is_none());

    let anas = ConversationQuery { owner: Some("token:ana"), limit: 10, ..Default::default() };
    let anas = store.conversations(&anas).await.unwrap();
    assert_eq!(anas.len(), 1);
    let everyone = ConversationQuery { limit: 10, ..Default::default() };
    let everyone = store.conversations(&everyone).await.unwrap();
    let ids: Vec<_> = everyone.iter().map(|c| c.summary.id.as_str()).collect();
    assert_eq!(ids, ["01jqotherconversation00000", "01jqconversation0000000000"], "newest first");

    let shared = store.share_conversation("01jqconversation0000000000", "share-hash").await;
    assert_eq!(shared.unwrap(), 2);
    // A turn kept after the link was made stays private, even one numbered like an earlier
    // turn (two follow-ups at once); its placeholder does not take over an earlier value.
    let late = turn(2, 25, &[("[EMAIL_2]", "cy@example.com"), ("[EMAIL_3]", "di@example.com")]);
    store.log_run("chatty", 3, Some("ana"), &late, &charge, None).await.unwrap();
    let snapshot = store.shared_conversation("share-hash").await.unwrap().unwrap();
    assert_eq!(
        (snapshot.info.summary.turns, snapshot.conversation.turns.len()),
        (2, 2),
        "the turns it had when shared"
    );
    let merged = store.conversation("01jqconversation0000000000").await.unwrap().unwrap();
    let values: Vec<&str> =
        merged.conversation.thread.placeholders.values().map(String::as_str).collect();
    assert_eq!(values, ["ann@example.com", "bo@example.com", "di@example.com"]);
    assert!(snapshot.info.shared);
    assert!(store.shared_conversation("other-hash").await.unwrap().is_none());
    store.unshare_conversation("01jqconversation0000000000").await.unwrap();
    assert!(store.shared_conversation("share-hash").await.unwrap().is_none());
    assert!(matches!(
        store.share_conversation("nope", "h").await,
        Err(StoreError::NoSuchConversation(_))
    ));
}

/// A run's pictures are kept with it, read back by its conversation, and the oldest runs'
/// pictures go, whole, once the library keeps more bytes of them than it may.
async fn pictures_kept_with_their_runs(store: &dyn Store) {
    use llmtool_registry::{NewPicture, PicturesOf};
    let charge = Charge::default();
    let mut ids = Vec::new();
    for (n, conversation) in
        ["01jqpictures0000000000000a", "01jqpictures0000000000000b"].iter().enumerate()
    {
        let record = llmtool_log::Record {
            conversation: Some((*conversation).into()),
            turn: Some(1),
            ..run("painter", "gpt-image-1", Some(0.04), 20 + u8::try_from(n).unwrap())
        };
        ids.push(store.log_run("painter", 1, Some("ana"), &record, &charge, None).await.unwrap());
    }
    let (a, b) = (ids[0], ids[1]);
    let bytes: Vec<u8> = (0..=255).collect();
    let png = NewPicture { format: "png", width: 16, height: 8, data: &bytes };
    let webp = NewPicture { format: "webp", width: 4, height: 4, data: &bytes[..100] };
    let kept = store.keep_pictures(a, &[png, webp], 1000).await.unwrap();
    assert_eq!((kept.kept, kept.runs_dropped), (2, 0));

    let first = store.picture("01jqpictures0000000000000a", a, 1).await.unwrap().unwrap();
    assert_eq!(first.data, bytes, "the bytes as they were");
    let info = (first.info.format.as_str(), first.info.width, first.info.height, first.info.bytes);
    assert_eq!(info, ("png", 16, 8, 256));
    assert_eq!(first.info.sha256.len(), 64);
    // Only through the run's own conversation, and only the positions it has.
    assert!(store.picture("01jqpictures0000000000000b", a, 1).await.unwrap().is_none());
    assert!(store.picture("01jqpictures0000000000000a", a, 3).await.unwrap().is_none());
    let listed = store.pictures_of(PicturesOf::Conversation("01jqpictures0000000000000a")).await;
    let listed: Vec<_> =
        listed.unwrap().into_iter().map(|p| (p.run, p.position, p.format)).collect();
    assert_eq!(listed, [(a, 1, "png".to_owned()), (a, 2, "webp".to_owned())]);

    // 356 bytes kept; 256 more pass the limit of 500: the older run's pictures go, whole.
    let kept = store.keep_pictures(b, &[png], 500).await.unwrap();
    assert_eq!((kept.kept, kept.runs_dropped), (1, 1));
    assert!(store.picture("01jqpictures0000000000000a", a, 1).await.unwrap().is_none());
    let painted: Vec<i64> = store
        .runs("painter", 20, None, None)
        .await
        .unwrap()
        .runs
        .iter()
        .filter_map(|r| r.record.id)
        .collect();
    let by_tool = store.pictures_of(PicturesOf::Runs(&painted)).await;
    let by_tool: Vec<_> = by_tool.unwrap().into_iter().map(|p| (p.run, p.position)).collect();
    assert_eq!(by_tool, [(b, 1)]);
    // Pictures larger than the limit on their own are not kept at all, and take nothing with
    // them; the run stays.
    let kept = store.keep_pictures(a, &[png], 100).await.unwrap();
    assert_eq!((kept.kept, kept.runs_dropped), (0, 0));
    let left = store.pictures_of(PicturesOf::Runs(&painted)).await.unwrap();
    assert_eq!(left.iter().map(|p| p.run).collect::<Vec<_>>(), [b]);
    assert_eq!(store.runs("painter", 10, None, None).await.unwrap().runs.len(), 2);
}

/// A library just opened is ready: its migrations are this program's, its pool open.
async fn healthy(store: &dyn Store) {
    let health = store.health().await.unwrap();
    assert!(health.current() && !health.applied.is_empty(), "{health:?}");
    let pool = store.pool_use();
    assert!(pool.max > 0 && pool.open >= pool.idle, "{pool:?}");
}

/// A migration the program does not know (a newer server's) makes the library not current.
async fn a_newer_schema_is_not_current(
    store: &dyn Store,
    insert: impl std::future::Future<Output = ()>,
) {
    insert.await;
    let health = store.health().await.unwrap();
    assert!(!health.current(), "{health:?}");
    assert_eq!(health.applied.last(), Some(&99_999));
}

/// The rate limits' buckets and the follow-ups' leases every server of the library shares.
async fn shared_buckets_and_leases(store: &dyn Store) {
    use llmtool_registry::{Bucket, Spend};
    use std::time::Duration;
    let bucket = Bucket { capacity: 3.0, per_second: 0.001 };
    for left in [3.0, 2.0, 1.0] {
        let taken = store.spend_rate("token:ci", bucket, Spend::One).await.unwrap();
        assert!(taken.granted && (taken.before - left).abs() < 0.01, "{taken:?}");
    }
    let refused = store.spend_rate("token:ci", bucket, Spend::One).await.unwrap();
    assert!(!refused.granted && refused.before < 1.0, "{refused:?}");
    // A charge is made whatever is left, at most a bucket's worth; a look spends nothing.
    let charged = store.spend_rate("token:ana", bucket, Spend::Charge(1e9)).await.unwrap();
    assert!(charged.granted && (charged.before - 3.0).abs() < 0.01, "{charged:?}");
    let looked = store.spend_rate("token:ana", bucket, Spend::Look).await.unwrap();
    assert!(looked.before.abs() < 0.01, "{looked:?}");
    assert!(!store.spend_rate("token:ana", bucket, Spend::One).await.unwrap().granted);
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(store.forget_idle_rates(Duration::from_millis(10)).await.unwrap(), 2);
    assert!(store.spend_rate("token:ci", bucket, Spend::One).await.unwrap().granted);

    let lease = Duration::from_mins(10);
    assert!(store.begin_follow_up("01CONVERSATION", lease).await.unwrap());
    assert!(!store.begin_follow_up("01CONVERSATION", lease).await.unwrap(), "one at a time");
    assert!(store.begin_follow_up("01OTHER", lease).await.unwrap());
    store.end_follow_up("01CONVERSATION").await.unwrap();
    assert!(store.begin_follow_up("01CONVERSATION", Duration::ZERO).await.unwrap());
    // A lease that ran out (its server died) lets the next follow-up start.
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert!(store.begin_follow_up("01CONVERSATION", lease).await.unwrap());

    // A Slack event is handled once, however often it comes.
    assert!(store.first_slack_event("Ev0A1B2C3").await.unwrap());
    assert!(!store.first_slack_event("Ev0A1B2C3").await.unwrap(), "a retry");
    assert!(store.first_slack_event("Ev0D4E5F6").await.unwrap());
    // A Slack thread is a conversation's once it is connected to it, and can be made another's;
    // a conversation connected again leaves its old thread.
    assert_eq!(store.slack_thread("C1", "1700000000.000100").await.unwrap(), None);
    connect_thread(store, "C1", "1700000000.000100", "01CONVERSATION").await;
    connect_thread(store, "C2", "1700000000.000100", "01OTHER").await;
    let found = store.slack_thread("C1", "1700000000.000100").await.unwrap();
    assert_eq!(found.as_deref(), Some("01CONVERSATION"));
    connect_thread(store, "C1", "1700000000.000100", "01OTHER").await;
    let moved = store.slack_thread("C1", "1700000000.000100").await.unwrap();
    assert_eq!(moved.as_deref(), Some("01OTHER"));
    assert_eq!(store.slack_thread("C2", "1700000000.000100").await.unwrap(), None);
}

/// `conversation` connected to `channel` by Ana, nothing posted yet.
fn connection(conversation: &str, channel: &str) -> llmtool_registry::SlackSync {
    llmtool_registry::SlackSync {
        conversation: conversation.into(),
        channel: channel.into(),
        thread_ts: None,
        posted: 0,
        part: 0,
        connected_by: "ana@example.test".into(),
        connected_at: "2026-12-05T10:00:00Z".into(),
        failures: 0,
        last_error: None,
    }
}

/// Connects `conversation` to `channel` with its first message already posted as `thread_ts`,
/// as `/llmtool`'s answer and a mention's first turn do.
async fn connect_thread(store: &dyn Store, channel: &str, thread_ts: &str, conversation: &str) {
    let sync = llmtool_registry::SlackSync {
        thread_ts: Some(thread_ts.into()),
        posted: 1,
        ..connection(conversation, channel)
    };
    store.connect_slack(&sync).await.unwrap();
}

/// A member's conversations are paged newest first (past equal times), found by title or by
/// their turns' words, renamed, archived and deleted: a deleted one's runs keep their cost and
/// tokens and lose their text, and the audit log says so.
async fn conversation_pages_search_edit_and_delete(store: &dyn Store) {
    use llmtool_log::Grouping;
    let charge = Charge::default();
    // Five conversations of Ana's, two of them last answered at the same time, and one of Bo's.
    for (n, day) in [(1, 10), (2, 11), (3, 12), (4, 12), (5, 13)] {
        let turn = llmtool_log::Record {
            conversation: Some(format!("01jqpage{n:018}")),
            turn: Some(1),
            prompt: Some(format!("Write about tides number{n}")),
            answer: Some(if n == 2 { "The moon pulls the sea.".into() } else { "Waves.".into() }),
            ..run("chatty", "gpt-4o", Some(0.5), day)
        };
        store.log_run("chatty", 1, Some("ana"), &turn, &charge, None).await.unwrap();
    }
    let bos = llmtool_log::Record {
        conversation: Some("01jqpagebo0000000000000000".into()),
        turn: Some(1),
        prompt: Some("the moon".into()),
        ..run("chatty", "gpt-4o", None, 14)
    };
    store.log_run("chatty", 1, Some("bo"), &bos, &charge, None).await.unwrap();
    let anas = |text: Option<&'static str>, archived: Option<bool>| ConversationQuery {
        owner: Some("token:ana"),
        archived,
        text,
        limit: 200,
        ..ConversationQuery::default()
    };
    let ids = |listed: &[llmtool_registry::ConversationInfo]| -> Vec<String> {
        listed.iter().map(|c| c.summary.id.trim_start_matches("01jqpage").to_owned()).collect()
    };

    // Pages of two, past the two conversations of the same time, each once.
    let mut paged = Vec::new();
    let mut after = None;
    loop {
        let query = ConversationQuery { limit: 2, after: after.as_ref(), ..anas(None, None) };
        let page = store.conversations(&query).await.unwrap();
        paged.extend(ids(&page));
        match page.last() {
            Some(last) if page.len() == 2 => after = Some(last.summary.after()),
            _ => break,
        }
    }
    let five: Vec<String> = [5, 4, 3, 2, 1].iter().map(|n| format!("{n:018}")).collect();
    assert_eq!(paged, five, "newest first, the same time by id, each once");

    // Found by the words of a turn (a prefix), or by a piece of the title; only Ana's.
    let by_words = store.conversations(&anas(Some("MOON pull"), None)).await.unwrap();
    assert_eq!(ids(&by_words), [format!("{:018}", 2)]);
    let by_prefix = store.conversations(&anas(Some("number3"), None)).await.unwrap();
    assert_eq!(ids(&by_prefix), [format!("{:018}", 3)]);
    let id = |n: u32| format!("01jqpage{n:018}");
    let renamed =
        ConversationEdit { title: TitleChange::Rename("  Tide tables ".into()), archived: None };
    let info = store.edit_conversation(&id(1), &renamed).await.unwrap();
    assert_eq!(info.summary.title, "Tide tables", "trimmed");
    let by_title = store.conversations(&anas(Some("tide TAB"), None)).await.unwrap();
    assert_eq!(ids(&by_title), [format!("{:018}", 1)]);
    assert!(store.conversations(&anas(Some("!!!"), None)).await.unwrap().is_empty());
    for bad in ["", "   ", "two\nlines", &"x".repeat(201)] {
        let edit = ConversationEdit { title: TitleChange::Rename(bad.into()), archived: None };
        let refused = store.edit_conversation(&id(1), &edit).await;
        assert!(matches!(refused, Err(StoreError::BadTitle(_))), "{bad:?}");
    }
    let reset = ConversationEdit { title: TitleChange::Default, archived: None };
    let info = store.edit_conversation(&id(1), &reset).await.unwrap();
    assert_eq!(info.summary.title, "chatty: tides", "the default again");

    // Archived: out of the list of the others, in the archived list.
    let archive = ConversationEdit { title: TitleChange::Keep, archived: Some(true) };
    assert!(store.edit_conversation(&id(4), &archive).await.unwrap().archived);
    let kept = store.conversations(&anas(None, Some(false))).await.unwrap();
    assert!(!ids(&kept).contains(&format!("{:018}", 4)));
    let archived = store.conversations(&anas(None, Some(true))).await.unwrap();
    assert_eq!(ids(&archived), [format!("{:018}", 4)]);
    let nobody = store.edit_conversation("01jqnosuchconversation0000", &archive).await;
    assert!(matches!(nobody, Err(StoreError::NoSuchConversation(_))));

    // Deleted: gone, its text too, its cost kept.
    let before = store.usage(Grouping::Tool, None, &Visibility::Everything).await.unwrap();
    connect_thread(store, "C1", "1700000000.000100", &id(2)).await;
    let deleted = store.delete_conversation(&id(2)).await.unwrap();
    assert_eq!((deleted.turns, deleted.pictures), (1, 0));
    assert!(store.conversation(&id(2)).await.unwrap().is_none());
    // Its Slack thread is a conversation's no more.
    assert_eq!(store.slack_thread("C1", "1700000000.000100").await.unwrap(), None);
    assert!(store.conversations(&anas(Some("moon"), None)).await.unwrap().is_empty());
    let after = store.usage(Grouping::Tool, None, &Visibility::Everything).await.unwrap();
    assert_eq!(before, after, "the spend and usage do not change");
    let audit = store.audit(&AuditQuery { limit: 5, ..AuditQuery::default() }).await.unwrap();
    let entry = &audit.records[0].entry;
    assert_eq!(
        (entry.action.as_str(), entry.target.as_str()),
        ("conversation.delete", id(2).as_str())
    );
    assert!(matches!(
        store.delete_conversation(&id(2)).await,
        Err(StoreError::NoSuchConversation(_))
    ));
}

/// Collaborators join a conversation while it is open, leave it, and go with it: when it is
/// closed or deleted, and when the member is removed.
async fn collaborators_join_leave_and_go_with_the_conversation(store: &dyn Store) {
    let bo = NewMember {
        email: "bo@example.org".into(),
        name: "Bo".into(),
        role: Role::Viewer,
        teams: Vec::new(),
    };
    store.add_members(&[bo]).await.unwrap();
    store.create_token("bo-laptop", Role::Viewer, "bo-hash", Some("bo@example.org")).await.unwrap();
    let bo = store.token("bo-hash").await.unwrap().unwrap().member_id;
    let turn = |id: &str| llmtool_log::Record {
        conversation: Some(id.into()),
        turn: Some(1),
        ..run("chatty", "gpt-4o", None, 10)
    };
    let charge = Charge::default();
    for id in ["01jqcollab0000000000000001", "01jqcollab0000000000000002"] {
        store.log_run("chatty", 1, Some("ana"), &turn(id), &charge, None).await.unwrap();
        store.open_collaboration(id, &format!("link-{id}")).await.unwrap();
        assert_eq!(
            store.collaboration_by_link(&format!("link-{id}")).await.unwrap().as_deref(),
            Some(id)
        );
        let joined = store.join_conversation(&format!("link-{id}"), &bo).await.unwrap();
        assert_eq!(joined.as_deref(), Some(id));
        store.join_conversation(&format!("link-{id}"), &bo).await.unwrap();
    }
    let first = "01jqcollab0000000000000001";
    let listed = store.collaborators(first).await.unwrap();
    assert_eq!((listed.len(), listed[0].name.as_str()), (1, "Bo"), "once, by name");
    let theirs = ConversationQuery {
        owner: Some("token:nobody"),
        collaborator: Some(&bo),
        limit: 10,
        ..ConversationQuery::default()
    };
    assert_eq!(store.conversations(&theirs).await.unwrap().len(), 2, "listed with theirs");
    assert!(store.drop_collaborator(first, &bo, "conversation.leave").await.unwrap());
    assert!(!store.drop_collaborator(first, &bo, "conversation.leave").await.unwrap());
    store.join_conversation(&format!("link-{first}"), &bo).await.unwrap();
    assert_eq!(store.close_collaboration(first).await.unwrap(), 1);
    assert!(!store.is_collaborator(first, &bo).await.unwrap());
    assert!(store.collaboration_by_link(&format!("link-{first}")).await.unwrap().is_none());
    let closed = store.join_conversation(&format!("link-{first}"), &bo).await.unwrap();
    assert_eq!(closed, None, "a link turned off joins nobody");

    let second = "01jqcollab0000000000000002";
    store.delete_conversation(second).await.unwrap();
    assert!(!store.is_collaborator(second, &bo).await.unwrap(), "gone with the conversation");
    let third = "01jqcollab0000000000000003";
    store.log_run("chatty", 1, Some("ana"), &turn(third), &charge, None).await.unwrap();
    store.open_collaboration(third, "link-third").await.unwrap();
    store.join_conversation("link-third", &bo).await.unwrap();
    // One of Bo's own, open to another member.
    let fourth = "01jqcollab0000000000000004";
    let bos = Charge { member: "bo@example.org".into(), ..Charge::default() };
    store.log_run("chatty", 1, Some("bo-laptop"), &turn(fourth), &bos, None).await.unwrap();
    store.open_collaboration(fourth, "link-fourth").await.unwrap();
    store.join_conversation("link-fourth", "another-member").await.unwrap();
    store.remove_member("bo@example.org").await.unwrap();
    assert!(
        store.collaboration_by_link("link-fourth").await.unwrap().is_none(),
        "their links join nobody"
    );
    assert!(
        !store.is_collaborator(fourth, "another-member").await.unwrap(),
        "nor does anyone go on"
    );
    assert!(
        !store.is_collaborator("01jqcollab0000000000000003", &bo).await.unwrap(),
        "gone with the member"
    );
}

async fn public_snapshots_kept_listed_revoked_and_gone_with_their_owner(store: &dyn Store) {
    let bo = NewMember {
        email: "bo@example.org".into(),
        name: "Bo".into(),
        role: Role::Viewer,
        teams: Vec::new(),
    };
    store.add_members(&[bo]).await.unwrap();
    let turn = |id: &str| llmtool_log::Record {
        conversation: Some(id.into()),
        turn: Some(1),
        ..run("chatty", "gpt-4o", None, 10)
    };
    let id = "01jqsnap000000000000000001";
    store.log_run("chatty", 1, Some("ana"), &turn(id), &Charge::default(), None).await.unwrap();
    let new = |n: u32, hash: &'static str| NewSnapshot {
        id: ["snap-a", "snap-b"][n as usize % 2],
        token_hash: hash,
        conversation: id,
        created_by: "token:ana",
        turns: 1,
        body: r#"{"messages":[]}"#,
    };
    let kept = store.publish_snapshot(&new(0, "hash-a")).await.unwrap();
    assert_eq!((kept.id.as_str(), kept.turns), ("snap-a", 1));
    store.publish_snapshot(&new(1, "hash-b")).await.unwrap();
    let read = store.snapshot(SnapshotOf::TokenHash("hash-a")).await.unwrap().unwrap();
    assert_eq!((read.conversation.as_str(), read.body.as_str()), (id, r#"{"messages":[]}"#));
    let by_id = store.snapshot(SnapshotOf::Id { conversation: id, id: "snap-b" }).await.unwrap();
    assert_eq!(by_id.map(|kept| kept.info.id).as_deref(), Some("snap-b"));
    let elsewhere = SnapshotOf::Id { conversation: "01jqsnap000000000000000009", id: "snap-b" };
    assert_eq!(store.snapshot(elsewhere).await.unwrap(), None, "an id names one conversation's");
    let listed = store.snapshots(id).await.unwrap();
    assert_eq!(listed.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(), ["snap-a", "snap-b"]);

    // Bounded: a body over 8 MiB, and a 21st snapshot, are refused.
    let huge = "x".repeat(MAX_SNAPSHOT_BYTES + 1);
    let too_large =
        NewSnapshot { id: "snap-huge", token_hash: "hash-huge", body: &huge, ..new(0, "") };
    let refused = store.publish_snapshot(&too_large).await;
    assert!(matches!(refused, Err(StoreError::SnapshotTooLarge(_))), "{refused:?}");
    let ids: Vec<String> = (2..MAX_SNAPSHOTS).map(|n| format!("snap-{n}")).collect();
    let hashes: Vec<String> = (2..MAX_SNAPSHOTS).map(|n| format!("hash-{n}")).collect();
    for (id, hash) in ids.iter().zip(&hashes) {
        let more = NewSnapshot { id, token_hash: hash, ..new(0, "") };
        store.publish_snapshot(&more).await.unwrap();
    }
    let full = NewSnapshot { id: "snap-21", token_hash: "hash-21", ..new(0, "") };
    let refused = store.publish_snapshot(&full).await;
    assert!(matches!(refused, Err(StoreError::SnapshotsFull(_))), "{refused:?}");

    // Revoked by its address's token, or by its id: gone, once.
    assert!(store.revoke_snapshot(SnapshotOf::TokenHash("hash-a")).await.unwrap());
    assert!(!store.revoke_snapshot(SnapshotOf::TokenHash("hash-a")).await.unwrap());
    assert_eq!(store.snapshot(SnapshotOf::TokenHash("hash-a")).await.unwrap(), None);
    let b = SnapshotOf::Id { conversation: id, id: "snap-b" };
    assert!(store.revoke_snapshot(b).await.unwrap());
    assert_eq!(store.snapshot(SnapshotOf::TokenHash("hash-b")).await.unwrap(), None);
    let audited = store
        .audit(&AuditQuery { target: Some(id.into()), limit: 50, ..AuditQuery::default() })
        .await
        .unwrap();
    let actions: Vec<&str> = audited.records.iter().map(|r| r.entry.action.as_str()).collect();
    assert_eq!(actions.iter().filter(|a| **a == "conversation.snapshot").count(), 20);
    assert_eq!(actions.iter().filter(|a| **a == "conversation.snapshot_revoke").count(), 2);
    assert!(
        audited.records.iter().all(|r| !format!("{:?}", r.entry).contains("hash-")),
        "no token in the audit log"
    );

    // Gone with their conversation.
    store.delete_conversation(id).await.unwrap();
    assert_eq!(store.snapshot(SnapshotOf::TokenHash("hash-2")).await.unwrap(), None);
    assert!(store.snapshots(id).await.unwrap().is_empty());

    // And with their owner: a member removed leaves nobody to revoke theirs.
    let bos_id = "01jqsnap000000000000000002";
    let bos = Charge { member: "bo@example.org".into(), ..Charge::default() };
    store.log_run("chatty", 1, Some("bo-laptop"), &turn(bos_id), &bos, None).await.unwrap();
    let owner = store.conversation(bos_id).await.unwrap().unwrap().info.owner;
    let theirs = NewSnapshot {
        id: "snap-bo",
        token_hash: "hash-bo",
        conversation: bos_id,
        created_by: &owner,
        turns: 1,
        body: "{}",
    };
    store.publish_snapshot(&theirs).await.unwrap();
    store.remove_member("bo@example.org").await.unwrap();
    assert_eq!(store.snapshot(SnapshotOf::TokenHash("hash-bo")).await.unwrap(), None);
}

/// A library keeps conversations by the contract the run log keeps its own by.
async fn conversation_rows(store: &dyn Store) {
    llmtool_log::contract::check_store(&LibraryRows(store)).await;
}

/// A library as the conversations' contract sees it: runs kept as the server keeps them.
struct LibraryRows<'s>(&'s dyn Store);

impl llmtool_log::contract::ConversationRows for LibraryRows<'_> {
    async fn keep(&self, records: &[llmtool_log::Record]) {
        for record in records {
            let slug = record.tool_name.as_deref().unwrap_or("chatty");
            self.0.log_run(slug, 1, Some("ci"), record, &Charge::default(), None).await.unwrap();
        }
    }

    async fn page(
        &self,
        after: Option<&llmtool_log::After>,
        limit: u32,
    ) -> Vec<llmtool_log::Summary> {
        let query = ConversationQuery { after, limit, ..ConversationQuery::default() };
        let listed = self.0.conversations(&query).await.unwrap();
        listed.into_iter().map(|c| c.summary).collect()
    }

    async fn whole(&self, id: &str) -> Option<llmtool_log::Conversation> {
        self.0.conversation(id).await.unwrap().map(|kept| kept.conversation)
    }
}

/// Slack: the app kept (never a secret in the audit log), its secrets sealed again only over
/// the ones read, "Add to Slack" states taken once, and a connected conversation's posting:
/// due while turns are left, advanced message by message, held back after a failure,
/// disconnected with its thread.
async fn the_slack_app_and_connected_conversations(store: &dyn Store) {
    use llmtool_registry::{SlackApp, SlackSync};
    let admin = store.acting_as(Actor { name: "ada@example.test".into(), address: None });
    assert_eq!(store.slack_app().await.unwrap(), None);
    let app = SlackApp {
        client_id: "123.456".into(),
        sealed_client_secret: "v1.old.client".into(),
        sealed_signing_secret: "v1.old.signing".into(),
        sealed_bot_token: None,
        team_id: None,
        team_name: None,
        bot_user_id: None,
        enabled: false,
        disabled_reason: Some("not added to Slack yet".into()),
        installed_by: None,
        installed_at: None,
        updated_at: String::new(),
    };
    admin.put_slack_app(&app).await.unwrap();
    let kept = store.slack_app().await.unwrap().unwrap();
    assert_eq!((kept.client_id.as_str(), kept.sealed_bot_token.as_deref()), ("123.456", None));
    // Sealed again over the secrets read; over stale ones, refused.
    let resealed = SlackApp {
        sealed_client_secret: "v1.new.client".into(),
        sealed_signing_secret: "v1.new.signing".into(),
        ..kept.clone()
    };
    admin.reseal_slack_app(&kept, &resealed).await.unwrap();
    let stale = admin.reseal_slack_app(&kept, &resealed).await;
    assert!(matches!(stale, Err(StoreError::KeyChanged(_))), "{stale:?}");
    assert_eq!(store.slack_app().await.unwrap().unwrap().sealed_client_secret, "v1.new.client");
    // Turned off once, whichever server meets the revoked token first.
    let installed =
        SlackApp { sealed_bot_token: Some("v1.new.token".into()), enabled: true, ..resealed };
    admin.put_slack_app(&installed).await.unwrap();
    // An older installation's token turns nothing off.
    assert!(!store.disable_slack_app("token_revoked", "v1.old.token").await.unwrap());
    assert!(store.disable_slack_app("token_revoked", "v1.new.token").await.unwrap());
    assert!(!store.disable_slack_app("token_revoked", "v1.new.token").await.unwrap());
    let audit = store.audit(&AuditQuery { limit: 10, ..AuditQuery::default() }).await.unwrap();
    let actions: Vec<&str> = audit.records.iter().map(|r| r.entry.action.as_str()).collect();
    assert_eq!(actions, ["slack.disable", "slack.set", "slack.rotate", "slack.set"]);
    let logged = serde_json::to_string(&audit.records).unwrap();
    assert!(!logged.contains("v1."), "a sealed secret in the audit log: {logged}");

    // An "Add to Slack" state is good once.
    store.add_slack_state("hash-1", "ada@example.test").await.unwrap();
    assert_eq!(
        store.take_slack_state("hash-1").await.unwrap().as_deref(),
        Some("ada@example.test")
    );
    assert_eq!(store.take_slack_state("hash-1").await.unwrap(), None);
    assert_eq!(store.take_slack_state("hash-unknown").await.unwrap(), None);
    // An admin holds a few at once: starting again forgets the oldest, not another admin's.
    store.add_slack_state("hash-grace", "grace@example.test").await.unwrap();
    for n in 0..=llmtool_registry::slack::OAUTH_STATES_PER_ADMIN {
        store.add_slack_state(&format!("hash-many-{n}"), "ada@example.test").await.unwrap();
    }
    assert_eq!(store.take_slack_state("hash-many-0").await.unwrap(), None, "the oldest");
    for n in 1..=llmtool_registry::slack::OAUTH_STATES_PER_ADMIN {
        let kept = store.take_slack_state(&format!("hash-many-{n}")).await.unwrap();
        assert_eq!(kept.as_deref(), Some("ada@example.test"), "state {n}");
    }
    let other = store.take_slack_state("hash-grace").await.unwrap();
    assert_eq!(other.as_deref(), Some("grace@example.test"));

    // A conversation of two turns, connected: due until both are posted.
    let conversation = "01jqslack00000000000000001";
    for turn in 1..=2 {
        let record = llmtool_log::Record {
            conversation: Some(conversation.into()),
            turn: Some(turn),
            prompt: Some(format!("question {turn}")),
            ..run("chatty", "gpt-4o", None, 10)
        };
        store.log_run("chatty", 1, Some("ana"), &record, &Charge::default(), None).await.unwrap();
    }
    let sync = connection(conversation, "CSALES");
    store.connect_slack(&sync).await.unwrap();
    let due = store.slack_due(16).await.unwrap();
    assert_eq!((due.len(), due[0].turns), (1, 2));
    // Claimed: another server asking now gets nothing to post.
    assert!(store.slack_due(16).await.unwrap().is_empty(), "one server posts it");
    let claim = due[0].claim.clone();
    assert!(store.slack_progress(conversation, &claim, "1700000000.000100", 1, 0).await.unwrap());
    let thread = store.slack_thread("CSALES", "1700000000.000100").await.unwrap();
    assert_eq!(thread.as_deref(), Some(conversation), "its thread is the conversation's");
    // A failure holds it back, and says why; progress clears the failure.
    store.slack_failed(conversation, &claim, 3_600.0, "Slack could not be reached").await.unwrap();
    assert!(store.slack_due(16).await.unwrap().is_empty());
    let waiting = store.slack_sync(conversation).await.unwrap().unwrap();
    assert_eq!((waiting.posted, waiting.failures), (1, 1));
    assert_eq!(waiting.last_error.as_deref(), Some("Slack could not be reached"));
    // Let go on failing: a write under the old claim records nothing.
    assert!(!store.slack_progress(conversation, &claim, "1700000000.000100", 2, 0).await.unwrap());
    assert_eq!(store.slack_sync(conversation).await.unwrap().unwrap().posted, 1);
    store
        .connect_slack(&SlackSync {
            thread_ts: Some("1700000000.000100".into()),
            posted: 1,
            ..sync.clone()
        })
        .await
        .unwrap();
    let due = store.slack_due(16).await.unwrap();
    let claim = due[0].claim.clone();
    assert!(store.slack_progress(conversation, &claim, "1700000000.000100", 2, 0).await.unwrap());
    let done = store.slack_sync(conversation).await.unwrap().unwrap();
    assert_eq!((done.posted, done.failures, done.last_error), (2, 0, None));
    assert!(store.slack_due(16).await.unwrap().is_empty(), "nothing left to post");
    // A third turn, while the poster still holds it, is posted once it lets go.
    let third = llmtool_log::Record {
        conversation: Some(conversation.into()),
        turn: Some(3),
        prompt: Some("question 3".into()),
        ..run("chatty", "gpt-4o", None, 11)
    };
    store.log_run("chatty", 1, Some("ana"), &third, &Charge::default(), None).await.unwrap();
    assert!(store.slack_due(16).await.unwrap().is_empty(), "still held");
    store.slack_release(conversation, &claim).await.unwrap();
    let due = store.slack_due(16).await.unwrap();
    assert_eq!((due.len(), due[0].sync.posted, due[0].turns), (1, 2, 3));
    // Connected again meanwhile: the old claim is gone, and its poster stops.
    store.connect_slack(&sync).await.unwrap();
    assert!(
        !store
            .slack_progress(conversation, &due[0].claim, "1700000000.000200", 3, 0)
            .await
            .unwrap()
    );
    // Disconnected: its thread is no conversation's any more.
    assert!(store.disconnect_slack(conversation).await.unwrap());
    assert!(!store.disconnect_slack(conversation).await.unwrap());
    assert_eq!(store.slack_thread("CSALES", "1700000000.000100").await.unwrap(), None);
    assert!(admin.remove_slack_app().await.unwrap());
    assert_eq!(store.slack_app().await.unwrap(), None);
}

/// Each scenario as a test of its own on each backend, on a library of its own (so that one
/// failing hides none of the others): `on_sqlite::NAME` and `on_postgres::NAME`. A scenario
/// that needs `Arc<dyn Store>` (it runs work at once) is listed after `shared:`.
macro_rules! scenarios {
    (borrowed: $($scenario:ident),* ; shared: $($shared:ident),* $(,)?) => {
        mod on_sqlite {
            use super::*;
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $scenario() {
                    let (store, _dir) = sqlite_store().await;
                    super::$scenario(store.as_ref()).await;
                }
            )*
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $shared() {
                    let (store, _dir) = sqlite_store().await;
                    super::$shared(store).await;
                }
            )*
        }
        mod on_postgres {
            use super::*;
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $scenario() {
                    let Some(database) = llmtool_testkit::postgres::database().await else { return };
                    let store = SqlStore::connect_postgres(&database.url).await.unwrap();
                    super::$scenario(&store).await;
                }
            )*
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $shared() {
                    let Some(database) = llmtool_testkit::postgres::database().await else { return };
                    let store = SqlStore::connect_postgres(&database.url).await.unwrap();
                    super::$shared(Arc::new(store)).await;
                }
            )*
        }
    };
}

scenarios! {
    borrowed: healthy, shared_buckets_and_leases, versions_tags_labels_and_deletion,
        search_filters_and_pages, word_search_ranks_pages_and_follows_changes, tokens, changes_and_current, runs_and_usage, conversations,
        conversation_rows, conversation_pages_search_edit_and_delete,
        collaborators_join_leave_and_go_with_the_conversation,
        public_snapshots_kept_listed_revoked_and_gone_with_their_owner,
        pictures_kept_with_their_runs, sessions_tags_and_kept_runs, members_and_teams,
        invites_single_sign_ons_and_the_workspace, the_audit_log, personal_tokens_and_device_grants,
        the_slack_app_and_connected_conversations;
    shared: concurrent_publishes, concurrent_tags_and_labels_stay_under_the_caps,
}

/// Personal tokens: a member lists and revokes only their own, each with its expiry and its
/// last use; an expired token is nobody; and a terminal's device grant becomes a token of the
/// member who allowed it, once, while a denied, unanswered or expired one never does.
async fn personal_tokens_and_device_grants(store: &dyn Store) {
    store
        .add_members(&[
            newcomer("sam@example.org", Role::Editor, &[]),
            newcomer("pat@example.org", Role::Viewer, &[]),
        ])
        .await
        .unwrap();
    let laptop = NewToken {
        name: "sam-laptop",
        role: Role::Editor,
        token_hash: "hash-laptop",
        member: Some("sam@example.org"),
        days: Some(DEFAULT_TOKEN_DAYS),
    };
    let made = store.issue_token(&laptop).await.unwrap();
    assert_eq!((made.role, made.last_used_at.as_deref()), (Role::Editor, None));
    let expires = made.expires_at.clone().unwrap();
    assert!(expires > made.created_at, "{expires} after {}", made.created_at);
    for days in [0, MAX_TOKEN_DAYS + 1] {
        let token =
            NewToken { name: "sam-long", token_hash: "hash-long", days: Some(days), ..laptop };
        assert!(matches!(store.issue_token(&token).await, Err(StoreError::BadTokenDays(_))));
    }
    let pats = NewToken {
        name: "pat-ci",
        role: Role::Viewer,
        token_hash: "hash-pat",
        member: Some("pat@example.org"),
        days: None,
    };
    store.issue_token(&pats).await.unwrap();

    // A use is written down; the member's own list has their tokens only.
    assert_eq!(holder(store, "hash-laptop").await, Some(("sam-laptop".into(), Role::Editor)));
    let sams = store.tokens(TokensOf::Member("Sam@example.org")).await.unwrap();
    assert_eq!(sams.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["sam-laptop"]);
    assert!(sams[0].last_used_at.is_some());
    assert_eq!(store.tokens(TokensOf::Everyone).await.unwrap().len(), 2);

    // Nobody revokes another member's token by its name; an admin's `Everyone` does.
    assert!(matches!(
        store.revoke_token("pat-ci", TokensOf::Member("sam@example.org")).await,
        Err(StoreError::NoSuchToken(_))
    ));
    store.revoke_token("sam-laptop", TokensOf::Member("sam@example.org")).await.unwrap();
    assert_eq!(store.token("hash-laptop").await.unwrap(), None);
    store.revoke_token("pat-ci", TokensOf::Everyone).await.unwrap();

    // A device grant: waiting, then allowed by a member, then a token of theirs, once.
    let grant = store.open_device_grant("device-1", "BCDF-GHJK", "sam's laptop").await.unwrap();
    assert_eq!((grant.state.as_str(), grant.client.as_str()), ("waiting", "sam's laptop"));
    assert!(matches!(
        store.open_device_grant("device-2", "BCDF-GHJK", "again").await,
        Err(StoreError::GrantCodeTaken)
    ));
    assert_eq!(
        store.redeem_device_grant("device-1", "login-1", "hash-login").await.unwrap(),
        Redeemed::Waiting
    );
    assert_eq!(store.device_grant("BCDF-GHJK").await.unwrap().unwrap().client, "sam's laptop");
    store.answer_device_grant("BCDF-GHJK", "sam@example.org", true).await.unwrap();
    assert!(matches!(
        store.answer_device_grant("BCDF-GHJK", "pat@example.org", false).await,
        Err(StoreError::NoSuchGrant(_))
    ));
    let Redeemed::Issued(token) =
        store.redeem_device_grant("device-1", "login-1", "hash-login").await.unwrap()
    else {
        panic!("an allowed grant makes a token");
    };
    assert_eq!((token.role, token.member.as_deref()), (Role::Editor, Some("sam@example.org")));
    assert!(token.expires_at.is_some());
    assert_eq!(holder(store, "hash-login").await, Some(("login-1".into(), Role::Editor)));
    assert_eq!(
        store.redeem_device_grant("device-1", "login-2", "hash-again").await.unwrap(),
        Redeemed::Expired
    );
    assert_eq!(store.device_grant("BCDF-GHJK").await.unwrap(), None);

    // A denied grant says so once, and makes nothing.
    store.open_device_grant("device-3", "LMNP-QRST", "somewhere").await.unwrap();
    store.answer_device_grant("LMNP-QRST", "pat@example.org", false).await.unwrap();
    assert_eq!(
        store.redeem_device_grant("device-3", "login-3", "hash-3").await.unwrap(),
        Redeemed::Denied
    );
    assert_eq!(store.token("hash-3").await.unwrap(), None);
    assert_eq!(
        store.redeem_device_grant("device-3", "login-3", "hash-3").await.unwrap(),
        Redeemed::Expired
    );
}

/// A library of its own in a temporary folder (kept while the folder is).
async fn sqlite_store() -> (Arc<dyn Store>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = SqlStore::open_sqlite(&dir.path().join("library.db")).await.unwrap();
    (Arc::new(store), dir)
}

/// A backup is a library of its own, with everything in it; it never overwrites a file; and a
/// library whose schema is newer than this program's is not current.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_sqlite_backup_is_a_whole_library() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqlStore::open_sqlite(&dir.path().join("library.db")).await.unwrap();
    versions_tags_labels_and_deletion(&store).await;
    concurrent_publishes(Arc::new(store.clone())).await;
    let copy = dir.path().join("backup.db");
    store.backup(&copy).await.unwrap();
    let restored = SqlStore::open_sqlite(&copy).await.unwrap();
    assert_eq!(restored.versions("busy").await.unwrap().len(), 50);
    assert_eq!(restored.version("haiku-writer", &Selector::Latest).await.unwrap().version, 3);
    assert!(matches!(store.backup(&copy).await, Err(StoreError::Backup(_))));
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", copy.display())).await.unwrap();
    a_newer_schema_is_not_current(&restored, async {
        sqlx::query(NEWER_MIGRATION).execute(&pool).await.unwrap();
    })
    .await;
}

/// A run whose record cannot be read is left out of its page, and the history goes on past
/// it: the page still says where the next one starts.
#[tokio::test]
async fn an_unreadable_run_does_not_end_a_tools_history() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("library.db");
    let store = SqlStore::open_sqlite(&path).await.unwrap();
    runs_and_usage(&store).await;
    let runs = store.runs("echo", 10, None, None).await.unwrap();
    let ids: Vec<i64> = runs.runs.iter().filter_map(|run| run.record.id).collect();
    assert_eq!((ids.len(), runs.next), (2, None), "two runs, all on the first page");
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", path.display())).await.unwrap();
    sqlx::query("UPDATE runs SET record = 'not a record' WHERE id = ?")
        .bind(ids[0])
        .execute(&pool)
        .await
        .unwrap();

    let first = store.runs("echo", 1, None, None).await.unwrap();
    assert!(first.runs.is_empty(), "the unreadable run is left out");
    assert_eq!(first.next, Some(ids[0]), "and the next page starts past it");
    let second = store.runs("echo", 1, first.next, None).await.unwrap();
    assert_eq!(second.runs.iter().map(|r| r.record.id).collect::<Vec<_>>(), [Some(ids[1])]);
    let last = store.runs("echo", 1, second.next, None).await.unwrap();
    assert_eq!((last.runs.len(), last.next), (0, None), "a page short of full is the last");
}

/// A row of sqlx's migrations table for a migration no program here has.
const NEWER_MIGRATION: &str = "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) VALUES (99999, 'newer', TRUE, X'00', 0)";

/// On PostgreSQL (a fresh database on the test command's cluster), the audit log refuses to be
/// changed by SQL, and a newer schema is not current.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_keeps_the_audit_log_append_only_and_knows_a_newer_schema() {
    let Some(database) = llmtool_testkit::postgres::database().await else { return };
    let store = SqlStore::connect_postgres(&database.url).await.unwrap();
    the_audit_log(&store).await;
    // The audit log is append-only here too.
    let pool = sqlx::PgPool::connect(&database.url).await.unwrap();
    for change in ["UPDATE audit SET actor = 'eve'", "DELETE FROM audit"] {
        let refused = sqlx::query(change).execute(&pool).await.unwrap_err();
        assert!(refused.to_string().contains("append-only"), "{refused}");
    }
    let store = SqlStore::connect_postgres(&database.url).await.unwrap();
    let newer = NEWER_MIGRATION.replace("X'00'", "'\\x00'::bytea");
    a_newer_schema_is_not_current(&store, async {
        sqlx::query(&newer).execute(&pool).await.unwrap();
    })
    .await;
}

/// A library moved to PostgreSQL and back keeps its runs' pictures, byte for byte.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pictures_move_between_the_backends_unchanged() {
    use llmtool_registry::{NewPicture, PicturesOf, RunPictures as _};
    let Some(database) = llmtool_testkit::postgres::database().await else { return };
    let dir = tempfile::tempdir().unwrap();
    let sqlite = SqlStore::open_sqlite(&dir.path().join("library.db")).await.unwrap();
    let record = llmtool_log::Record {
        conversation: Some("01jqmoved00000000000000000".into()),
        turn: Some(1),
        ..run("painter", "gpt-image-1", Some(0.04), 20)
    };
    let id = sqlite.log_run("painter", 1, Some("ana"), &record, &Charge::default(), None).await;
    let id = id.unwrap();
    let bytes: Vec<u8> = (0..=255).rev().chain(0..=255).collect();
    let picture = NewPicture { format: "png", width: 2, height: 2, data: &bytes };
    sqlite.keep_pictures(id, &[picture], 1 << 20).await.unwrap();

    let postgres = SqlStore::connect_postgres(&database.url).await.unwrap();
    let moved = llmtool_registry::transfer::migrate(&sqlite, &postgres).await.unwrap();
    assert_eq!(moved.tables["run_pictures"].rows, 1);
    let there = postgres.picture("01jqmoved00000000000000000", id, 1).await.unwrap().unwrap();
    assert_eq!(there.data, bytes);
    let back = SqlStore::open_sqlite(&dir.path().join("back.db")).await.unwrap();
    llmtool_registry::transfer::migrate(&postgres, &back).await.unwrap();
    let home = back.pictures_of(PicturesOf::Conversation("01jqmoved00000000000000000")).await;
    assert_eq!(home.unwrap()[0].sha256, there.info.sha256);
    // Compared across the backends, where each JSON value is read in its canonical form.
    let (there, home) = llmtool_registry::transfer::compare(&postgres, &back).await.unwrap();
    assert_eq!(there, home);
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

/// The database itself refuses to change or delete a row of the audit log.
#[tokio::test]
async fn the_audit_log_is_append_only() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("library.db");
    let store = SqlStore::open_sqlite(&path).await.unwrap();
    store.create_team("ops", false).await.unwrap();
    let options = sqlx::sqlite::SqliteConnectOptions::new().filename(&path);
    let pool = sqlx::SqlitePool::connect_with(options).await.unwrap();
    for change in ["UPDATE audit SET actor = 'eve'", "DELETE FROM audit"] {
        let refused = sqlx::query(change).execute(&pool).await.unwrap_err();
        assert!(refused.to_string().contains("append-only"), "{refused}");
    }
}

/// A library made before members existed: its tokens keep working, each with a member made
/// for it, and its tools reach everyone (tagged `all`).
#[tokio::test]
async fn a_library_from_before_members_keeps_its_tokens_and_tools() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    let options = sqlx::sqlite::SqliteConnectOptions::new().filename(&path).create_if_missing(true);
    let pool = sqlx::SqlitePool::connect_with(options.clone()).await.unwrap();
    let mut before = llmtool_log::migrations::migrator(llmtool_registry::migrations::SQLITE);
    before.migrations = before.migrations.iter().filter(|m| m.version < 5).cloned().collect();
    before.run(&pool).await.unwrap();
    for statement in [
        "INSERT INTO tokens (name, role, token_hash, created_at) VALUES ('CI', 'editor', 'h1', '2026-01-01T00:00:00.000Z')",
        "INSERT INTO tokens (name, role, token_hash, created_at) VALUES ('ana', 'admin', 'h2', '2026-01-02T00:00:00.000Z')",
        "INSERT INTO tools (id, slug, latest, created_at) VALUES (1, 'old-tool', 1, '2026-01-01T00:00:00.000Z')",
        "INSERT INTO sessions (id_hash, token_name, csrf, created_at, expires_at) VALUES ('s1', 'CI', 'c1', '2026-01-01T00:00:00.000Z', '2999-01-01T00:00:00.000Z')",
    ] {
        sqlx::query(statement).execute(&pool).await.unwrap();
    }
    pool.close().await;

    let store = SqlStore::open_sqlite(&path).await.unwrap();
    assert_eq!(holder(&store, "h1").await, Some(("CI".to_owned(), Role::Editor)));
    let session = store.session("s1").await.unwrap().expect("a session from before lives on");
    assert_eq!((session.holder.name.as_str(), session.csrf.as_str()), ("CI", "c1"));
    let members = store.members().await.unwrap();
    let made: Vec<_> =
        members.iter().map(|m| (m.email.as_str(), m.name.as_str(), m.role)).collect();
    assert_eq!(
        made,
        [("ana@tokens.invalid", "ana", Role::Admin), ("ci@tokens.invalid", "CI", Role::Editor)]
    );
    let tokens = store.tokens(TokensOf::Everyone).await.unwrap();
    assert!(
        tokens.iter().all(|t| t.member.as_deref().is_some_and(|m| m.ends_with("@tokens.invalid")))
    );
    let pool = sqlx::SqlitePool::connect_with(options).await.unwrap();
    let tags: Vec<(String,)> =
        sqlx::query_as("SELECT tag FROM tags WHERE tool_id = 1").fetch_all(&pool).await.unwrap();
    assert_eq!(tags, [("all".to_owned(),)]);
}

/// The tool files of the search columns' fill-in tests: a picture, none, a smart tool, a
/// creator and none; and what publishing each puts in the columns, by slug.
fn files_from_before_the_search_columns() -> Vec<(&'static str, Publication)> {
    let smart = serde_json::json!({"version": "0.1", "metadata": {"tool_name": "Word counter",
        "tool_code": "def execute(variables):\n    return 'one'\n",
        "description": "Counts words.", "timestamp": "2026-11-27T00:00:00Z",
        "creator": {"name": "Ana"}, "variables": [{"name": "text", "description": "What."}]}});
    let plain = serde_json::json!({"model_prompt": "Hi {{name}}.",
        "metadata": {"prompt_name": "Plain", "variables": [{"name": "name"}]}});
    let files = [
        ("pair-programmer", include_str!("../../../examples/pair-programmer.json").to_owned()),
        ("sql-assistant", include_str!("../../../examples/sql-assistant.json").to_owned()),
        ("word-counter", smart.to_string()),
        ("plain", plain.to_string()),
    ];
    let files: Vec<_> = files
        .into_iter()
        .map(|(slug, text)| (slug, Publication::from_text(&text, "tool.json").unwrap()))
        .collect();
    let (pictured, smart) = (|p: &Publication| p.has_avatar, |p: &Publication| p.smart);
    assert!(files.iter().any(|(_, p)| pictured(p)) && files.iter().any(|(_, p)| !pictured(p)));
    assert!(files.iter().any(|(_, p)| smart(p)) && files.iter().any(|(_, p)| p.creator.is_none()));
    files
}

/// Checks that `store` (migrated from a library holding `files` as bare rows) shows each as
/// publishing it would have: creator, picture, kind.
async fn filled_in_as_published(store: &dyn Store, files: &[(&str, Publication)]) {
    let shown = |slug: &str, creator: Option<String>, pictured: bool, smart: bool| {
        (slug.to_owned(), creator, pictured, if smart { "smart" } else { "prompt" }.to_owned())
    };
    let mut expected: Vec<_> = files
        .iter()
        .map(|(slug, p)| shown(slug, p.creator.clone(), p.has_avatar, p.smart))
        .collect();
    let page = store.search(&Query { limit: 10, ..Query::default() }).await.unwrap();
    let mut found: Vec<_> = page
        .tools
        .into_iter()
        .map(|t| shown(&t.slug, t.creator, t.has_avatar, t.kind == "smart"))
        .collect();
    found.sort();
    expected.sort();
    assert_eq!(found, expected);
}

/// Versions kept before the search read its columns (creator, picture, smart tool) get them
/// filled in by the migration exactly as publishing fills them now.
#[tokio::test]
async fn versions_from_before_the_search_columns_are_filled_in_as_publishing_fills_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    let options = sqlx::sqlite::SqliteConnectOptions::new().filename(&path).create_if_missing(true);
    let pool = sqlx::SqlitePool::connect_with(options).await.unwrap();
    let mut before = llmtool_log::migrations::migrator(llmtool_registry::migrations::SQLITE);
    before.migrations = before.migrations.iter().filter(|m| m.version < 11).cloned().collect();
    before.run(&pool).await.unwrap();
    let files = files_from_before_the_search_columns();
    for (id, (slug, publication)) in (1_i64..).zip(&files) {
        sqlx::query(
            "INSERT INTO tools (id, slug, latest, created_at) VALUES (?, ?, 1, '2026-01-01')",
        )
        .bind(id)
        .bind(slug)
        .execute(&pool)
        .await
        .unwrap();
        sqlx::query(
            "INSERT INTO versions (tool_id, number, content_hash, body, prompt, variable_types,
                 models, published_at) VALUES (?, 1, ?, ?, '', ' ', '[]', '2026-01-01')",
        )
        .bind(id)
        .bind(&publication.content_hash)
        .bind(&publication.text)
        .execute(&pool)
        .await
        .unwrap();
    }
    pool.close().await;
    filled_in_as_published(&SqlStore::open_sqlite(&path).await.unwrap(), &files).await;
}

/// The same on PostgreSQL.
#[tokio::test]
async fn versions_from_before_the_search_columns_are_filled_in_on_postgres() {
    let Some(database) = llmtool_testkit::postgres::database().await else { return };
    let pool = sqlx::PgPool::connect(&database.url).await.unwrap();
    let mut before = llmtool_log::migrations::migrator(llmtool_registry::migrations::POSTGRES);
    before.migrations = before.migrations.iter().filter(|m| m.version < 11).cloned().collect();
    before.run(&pool).await.unwrap();
    let files = files_from_before_the_search_columns();
    for (id, (slug, publication)) in (1_i64..).zip(&files) {
        sqlx::query(
            "INSERT INTO tools (id, slug, latest, created_at) VALUES ($1, $2, 1, '2026-01-01')",
        )
        .bind(id)
        .bind(slug)
        .execute(&pool)
        .await
        .unwrap();
        sqlx::query(
            "INSERT INTO versions (tool_id, number, content_hash, body, prompt, variable_types,
                 models, published_at) VALUES ($1, 1, $2, $3, '', '{}', '{}', '2026-01-01')",
        )
        .bind(id)
        .bind(&publication.content_hash)
        .bind(&publication.text)
        .execute(&pool)
        .await
        .unwrap();
    }
    pool.close().await;
    let store = SqlStore::connect_postgres(&database.url).await.unwrap();
    filled_in_as_published(&store, &files).await;
}

/// A change of the workspace's `built_ins` setting alone.
fn built_ins(on: bool) -> WorkspaceChange {
    WorkspaceChange { built_ins: Some(on), ..WorkspaceChange::default() }
}
