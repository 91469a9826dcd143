//! The run log on a real SQLite file: records come back as written, filters pick the right
//! runs, totals add up by tool, model and day, and an unpriced run is counted apart.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use llmtool_log::{Filter, Grouping, Outcome, Record, RunLog};

fn record(started_at: &str, tool: &str, model: &str, cost: Option<f64>) -> Record {
    Record {
        id: None,
        started_at: started_at.into(),
        origin: "run".into(),
        tool_path: Some(format!("tools/{tool}.json")),
        tool_name: Some(tool.into()),
        tool_hash: "ab".repeat(32),
        variables: Some(serde_json::json!({ "topic": "tides" })),
        prompt: Some("Teach me about tides.".into()),
        variables_hash: "cd".repeat(32),
        provider: "openai".into(),
        model: model.into(),
        input_tokens: Some(100),
        cached_input_tokens: Some(40),
        cache_write_tokens: None,
        output_tokens: Some(20),
        reasoning_tokens: Some(5),
        cost_usd: cost,
        price_entry: cost.map(|_| model.to_owned()),
        latency_ms: Some(812),
        first_token_ms: Some(120),
        repairs: 1,
        outcome: Outcome::Ok,
        error: None,
        answer: Some("Tides come from the Moon.".into()),
        redactions: [("email".to_owned(), 2)].into(),
        conversation: None,
        turn: None,
        calls: Vec::new(),
        thread: None,
    }
}

#[tokio::test]
async fn records_come_back_filtered_and_totalled() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("deeper/runs.db");
    let log = RunLog::open(&path).await.unwrap();
    let runs = [
        record("2026-11-20T10:00:00Z", "teach", "gpt-4o", Some(0.5)),
        record("2026-11-21T10:00:00Z", "teach", "gpt-4o-mini", Some(0.25)),
        record("2026-11-21T11:00:00Z", "review", "gpt-4o", None),
    ];
    for run in &runs {
        log.append(run).await.unwrap();
    }
    // Reopened: the records are on disk.
    drop(log);
    let log = RunLog::open_existing(&path).await.unwrap().unwrap();
    let all = log.recent(&Filter { limit: 10, ..Filter::default() }).await.unwrap();
    assert_eq!(all.len(), 3);
    assert_eq!(all[0].tool_name.as_deref(), Some("review"), "newest first");
    let mut first = all[2].clone();
    first.id = None;
    assert_eq!(first, runs[0], "a record comes back exactly as written");

    let teach = Filter { limit: 10, tool: Some("teach".into()), ..Filter::default() };
    assert_eq!(log.recent(&teach).await.unwrap().len(), 2);
    let model = Filter { limit: 10, model: Some("openai/gpt-4o".into()), ..Filter::default() };
    assert_eq!(log.recent(&model).await.unwrap().len(), 2);
    let since =
        Filter { limit: 10, since: Some("2026-11-21T00:00:00Z".into()), ..Filter::default() };
    assert_eq!(log.recent(&since).await.unwrap().len(), 2);
    assert_eq!(log.recent(&Filter { limit: 1, ..Filter::default() }).await.unwrap().len(), 1);

    let by_tool = log.totals(Grouping::Tool, None).await.unwrap();
    assert_eq!(by_tool[0].key, "teach");
    assert_eq!((by_tool[0].runs, by_tool[0].input_tokens), (2, 200));
    assert!((by_tool[0].cost_usd - 0.75).abs() < 1e-12);
    assert_eq!((by_tool[1].key.as_str(), by_tool[1].unpriced_runs), ("review", 1));
    let by_day = log.totals(Grouping::Day, None).await.unwrap();
    let days: Vec<_> = by_day.iter().map(|t| (t.key.as_str(), t.runs)).collect();
    assert_eq!(days, [("2026-11-20", 1), ("2026-11-21", 2)]);
    let by_model = log.totals(Grouping::Model, Some("2026-11-21T00:00:00Z")).await.unwrap();
    assert_eq!(by_model.len(), 2);
    assert_eq!(by_model[0].key, "openai/gpt-4o-mini");
}

#[tokio::test]
async fn a_missing_log_is_none_and_a_folder_that_cannot_exist_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    assert!(RunLog::open_existing(&dir.path().join("runs.db")).await.unwrap().is_none());
    let file = dir.path().join("a-file");
    std::fs::write(&file, "not a folder").unwrap();
    let error = RunLog::open(&file.join("runs.db")).await.unwrap_err();
    assert!(error.to_string().contains("a-file"), "{error}");
}

#[tokio::test]
async fn a_locked_log_is_an_error_after_a_short_wait_not_a_hang() {
    use sqlx::Connection as _;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.db");
    let log = RunLog::open(&path).await.unwrap();
    // Another writer holds the database.
    let options = sqlx::sqlite::SqliteConnectOptions::new().filename(&path);
    let mut holder = sqlx::SqliteConnection::connect_with(&options).await.unwrap();
    sqlx::query("BEGIN EXCLUSIVE").execute(&mut holder).await.unwrap();
    let error = log.append(&record("2026-11-20T10:00:00.000Z", "t", "m", None)).await.unwrap_err();
    assert!(error.to_string().contains("locked"), "{error}");
    // Once it lets go, writing works again.
    sqlx::query("COMMIT").execute(&mut holder).await.unwrap();
    log.append(&record("2026-11-20T10:00:01.000Z", "t", "m", None)).await.unwrap();
}

#[tokio::test]
async fn records_appended_together_come_back_whole_under_the_ids_given() {
    // More records than one statement takes, so that the ids of several statements line up.
    let dir = tempfile::tempdir().unwrap();
    let log = RunLog::open(&dir.path().join("runs.db")).await.unwrap();
    log.append(&record("2026-11-19T09:00:00Z", "before", "gpt-4o", None)).await.unwrap();
    let runs: Vec<Record> = (0..600)
        .map(|n| {
            let cost = (n % 3 != 0).then_some(f64::from(n) / 100.0);
            record(
                &format!("2026-11-20T10:{:02}:{:02}Z", n / 60, n % 60),
                &format!("t{n}"),
                "m",
                cost,
            )
        })
        .collect();
    let ids = log.append_all(&runs).await.unwrap();
    assert_eq!(ids.len(), 600);
    for (id, run) in ids.iter().zip(&runs) {
        let back = log.get(*id).await.unwrap().unwrap();
        assert_eq!(Record { id: None, ..back }, *run, "id {id} holds its own record");
    }
    assert!(log.append_all(&[]).await.unwrap().is_empty());
}
