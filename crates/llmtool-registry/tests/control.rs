//! The Control Center's storage, on each backend: integrations (their sealed keys never in the
//! audit log), prices, budgets, the spend's totals, and reservations that no number of runs at
//! once can push past a hard budget.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use llmtool_registry::{
    Actor, AuditQuery, Budget, Charge, Integration, IntegrationTest, NewMember, Period,
    PriceOverride, Role, Scope, SpendQuery, SqlStore, Store, StoreError,
};

fn integration(name: &str, sealed: &str, teams: &[(&str, &[&str])]) -> Integration {
    Integration {
        name: name.into(),
        api: None,
        base_url: Some("http://127.0.0.1:9/v1".into()),
        sealed_key: Some(sealed.into()),
        key_hint: Some("wxyz".into()),
        models: vec!["gpt-4o-mini".into()],
        enabled: true,
        teams: teams
            .iter()
            .map(|(team, models)| {
                ((*team).to_owned(), models.iter().map(|m| (*m).to_owned()).collect())
            })
            .collect::<BTreeMap<_, _>>(),
        created_at: String::new(),
        updated_at: String::new(),
        last_test: None,
        // Kept as given, whatever the integration's kind (each store's round trip is checked).
        tools: vec!["sql-assistant-db".into()],
    }
}

fn record(slug: &str, model: &str, cost: f64, started_at: &str) -> llmtool_log::Record {
    llmtool_log::Record {
        id: None,
        started_at: started_at.into(),
        origin: "server".into(),
        tool_path: Some(format!("registry:{slug}@1")),
        tool_name: Some(slug.into()),
        tool_hash: "0".repeat(64),
        variables: None,
        prompt: None,
        variables_hash: "1".repeat(64),
        provider: "openai".into(),
        model: model.into(),
        input_tokens: Some(1000),
        cached_input_tokens: None,
        cache_write_tokens: None,
        output_tokens: Some(100),
        reasoning_tokens: None,
        cost_usd: Some(cost),
        price_entry: None,
        latency_ms: Some(5),
        first_token_ms: None,
        repairs: 0,
        outcome: llmtool_log::Outcome::Ok,
        error: None,
        answer: None,
        redactions: BTreeMap::new(),
        conversation: None,
        turn: None,
        calls: Vec::new(),
        thread: None,
    }
}

fn charge(member: &str, team: &str) -> Charge {
    Charge { member: member.into(), team: team.into() }
}

fn budget(scope: Scope, name: &str, limit_usd: f64) -> Budget {
    Budget {
        scope,
        name: name.into(),
        period: Period::Month,
        limit_usd,
        warn_at: 0.8,
        hard: true,
        updated_at: String::new(),
    }
}

async fn integrations_and_prices(store: &dyn Store) {
    let admin = store.acting_as(Actor { name: "ana".into(), address: None });
    admin.create_team("sales", false).await.unwrap();
    assert!(
        admin.put_integration(&integration("openai", "v1.k1.SEALED-ONE", &[]), true).await.unwrap()
    );
    let again = integration("openai", "v1.k1.SEALED-ONE", &[]);
    assert!(matches!(
        admin.put_integration(&again, true).await,
        Err(StoreError::IntegrationExists(_))
    ));
    assert!(!admin.put_integration(&again, false).await.unwrap(), "saved as it was: no record");
    let with_teams = integration("openai", "v1.k1.SEALED-TWO", &[("sales", &["gpt-4o-mini"])]);
    assert!(!admin.put_integration(&with_teams, false).await.unwrap());
    let nowhere = integration("openai", "v1.k1.SEALED-3", &[("nowhere", &[])]);
    assert!(matches!(admin.put_integration(&nowhere, false).await, Err(StoreError::NoSuchTeam(_))));
    let bad = integration("Open AI", "x", &[]);
    assert!(matches!(admin.put_integration(&bad, true).await, Err(StoreError::BadIntegration(_))));
    let listed = store.integrations().await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].sealed_key.as_deref(), Some("v1.k1.SEALED-TWO"), "the failed put left it");
    assert_eq!(listed[0].teams["sales"], ["gpt-4o-mini"]);
    // A test's result is kept; the key is resealed, all or none.
    let test = IntegrationTest {
        at: "2026-11-26T10:00:00Z".into(),
        ok: true,
        detail: "pong".into(),
        model: "gpt-4o-mini".into(),
        latency_ms: 12,
    };
    store.record_integration_test("openai", &test).await.unwrap();
    assert_eq!(store.integrations().await.unwrap()[0].last_test, Some(test));
    // A team an integration names cannot go (the integration would be open to every team).
    let refused = admin.remove_team("sales").await;
    assert!(matches!(refused, Err(StoreError::TeamInUse { .. })), "{refused:?}");
    let resealed = [
        ("openai".to_owned(), "v1.k1.SEALED-TWO".to_owned(), "v2.k2.NEW".to_owned()),
        ("ghost".into(), "x".into(), "y".into()),
    ];
    assert!(matches!(admin.reseal_integrations(&resealed).await, Err(StoreError::KeyChanged(_))));
    let stale = [("openai".to_owned(), "v0.old".to_owned(), "v2.k2.NEW".to_owned())];
    assert!(matches!(admin.reseal_integrations(&stale).await, Err(StoreError::KeyChanged(_))));
    admin.reseal_integrations(&resealed[..1]).await.unwrap();
    assert_eq!(store.integrations().await.unwrap()[0].sealed_key.as_deref(), Some("v2.k2.NEW"));

    // Prices: set, changed, removed; a bad one refused.
    let mut price = PriceOverride {
        model: "openai/gpt-4o-mini".into(),
        input: Some(0.1),
        cached_input: None,
        output: Some(0.4),
        batch_input: None,
        batch_output: None,
        image_output: None,
        per_image: None,
        markup_percent: None,
        note: Some("contract 7".into()),
        updated_at: String::new(),
    };
    admin.set_price_override(&price).await.unwrap();
    admin.set_price_override(&price).await.unwrap(); // the same again: no record
    price.output = Some(0.3);
    admin.set_price_override(&price).await.unwrap();
    let markup = PriceOverride {
        model: "*".into(),
        input: None,
        output: None,
        markup_percent: Some(10.0),
        ..price.clone()
    };
    admin.set_price_override(&markup).await.unwrap();
    let prices = store.price_overrides().await.unwrap();
    assert_eq!(
        prices.iter().map(|p| p.model.as_str()).collect::<Vec<_>>(),
        ["*", "openai/gpt-4o-mini"]
    );
    assert_eq!(prices[1].output, Some(0.3));
    let negative = PriceOverride { input: Some(-1.0), ..price.clone() };
    assert!(matches!(admin.set_price_override(&negative).await, Err(StoreError::BadPrice(_))));
    // An image model's prices: by picture token and by picture, kept and read back.
    let pictures = PriceOverride {
        model: "openai/dall-e-3".into(),
        input: None,
        output: None,
        image_output: Some(40.0),
        per_image: Some(0.04),
        ..price.clone()
    };
    admin.set_price_override(&pictures).await.unwrap();
    let kept = store.price_overrides().await.unwrap();
    let kept = kept.iter().find(|p| p.model == "openai/dall-e-3").unwrap();
    assert_eq!((kept.image_output, kept.per_image), (Some(40.0), Some(0.04)));
    let free_lunch = PriceOverride { per_image: Some(f64::NAN), ..pictures.clone() };
    assert!(matches!(admin.set_price_override(&free_lunch).await, Err(StoreError::BadPrice(_))));
    admin.remove_price_override("openai/dall-e-3").await.unwrap();
    admin.remove_price_override("*").await.unwrap();
    assert!(matches!(admin.remove_price_override("*").await, Err(StoreError::NoSuchPrice(_))));

    admin.remove_integration("openai").await.unwrap();
    assert!(store.integrations().await.unwrap().is_empty());
    assert!(matches!(
        admin.remove_integration("openai").await,
        Err(StoreError::NoSuchIntegration(_))
    ));

    // Every change is in the audit log, and no sealed key is.
    let log = store
        .audit(&AuditQuery { actor: Some("ana".into()), limit: 100, ..AuditQuery::default() })
        .await
        .unwrap();
    let actions: Vec<&str> = log.records.iter().rev().map(|r| r.entry.action.as_str()).collect();
    assert_eq!(
        actions,
        [
            "team.create",
            "integration.add",
            "integration.edit",
            "integration.rotate",
            "price.set",
            "price.set",
            "price.set",
            "price.set",
            "price.remove",
            "price.remove",
            "integration.remove"
        ]
    );
    let edit = &log.records.iter().find(|r| r.entry.action == "integration.edit").unwrap().entry;
    assert_eq!(edit.after.as_ref().unwrap()["key_changed"], true);
    assert_eq!(edit.after.as_ref().unwrap()["teams"]["sales"], serde_json::json!(["gpt-4o-mini"]));
    let written = serde_json::to_string(&log).unwrap();
    assert!(!written.contains("SEALED") && !written.contains("v2.k2.NEW"), "{written}");
    let changed_price =
        &log.records.iter().rev().filter(|r| r.entry.action == "price.set").nth(1).unwrap().entry;
    assert_eq!(changed_price.before.as_ref().unwrap()["output"], 0.4);
    assert_eq!(changed_price.after.as_ref().unwrap()["output"], 0.3);
}

/// The spend's totals by day, team, member, tool and model, for a period, one member's alone.
async fn spend_reports(store: &dyn Store) {
    let runs = [
        ("pitch", "gpt-4o", 0.5, "2026-10-01T09:00:00.000Z", charge("bo@example.org", "sales")),
        ("pitch", "gpt-4o", 0.25, "2026-10-01T17:00:00.000Z", charge("bo@example.org", "sales")),
        (
            "triage",
            "gpt-4o-mini",
            0.01,
            "2026-10-02T09:00:00.000Z",
            charge("cy@example.org", "support"),
        ),
        (
            "pitch",
            "gpt-4o-mini",
            0.02,
            "2026-10-02T10:00:00.000Z",
            charge("cy@example.org", "sales"),
        ),
        ("pitch", "gpt-4o", 9.0, "2026-10-09T10:00:00.000Z", charge("bo@example.org", "sales")),
    ];
    for (slug, model, cost, at, charged) in &runs {
        store.log_run(slug, 1, None, &record(slug, model, *cost, at), charged, None).await.unwrap();
    }
    let week =
        SpendQuery { from: "2026-10-01".into(), to: "2026-10-08".into(), ..SpendQuery::default() };
    let report = store.spend(&week).await.unwrap();
    assert_eq!(report.totals.runs, 4);
    assert!((report.totals.cost_usd - 0.78).abs() < 1e-9, "{:?}", report.totals);
    assert_eq!((report.totals.input_tokens, report.totals.output_tokens), (4000, 400));
    let days: Vec<(&str, &str, u64)> =
        report.by_day.iter().map(|d| (d.day.as_str(), d.team.as_str(), d.totals.runs)).collect();
    assert_eq!(
        days,
        [("2026-10-01", "sales", 2), ("2026-10-02", "sales", 1), ("2026-10-02", "support", 1)]
    );
    let keys = |lines: &[llmtool_registry::SpendLine]| {
        lines.iter().map(|l| l.key.clone()).collect::<Vec<_>>()
    };
    assert_eq!(keys(&report.by_team), ["sales", "support"]);
    assert_eq!(keys(&report.by_member), ["bo@example.org", "cy@example.org"]);
    assert_eq!(keys(&report.by_tool), ["pitch", "triage"]);
    assert_eq!(keys(&report.by_model), ["openai/gpt-4o", "openai/gpt-4o-mini"]);
    let cy = SpendQuery { member: Some("cy@example.org".into()), ..week.clone() };
    let theirs = store.spend(&cy).await.unwrap();
    assert_eq!(theirs.totals.runs, 2);
    assert_eq!(keys(&theirs.by_member), ["cy@example.org"]);
    let rows = store.spend_rows(&week).await.unwrap();
    assert_eq!(rows.len(), 3, "the two runs of one day, team, member, tool and model are one line");
    assert_eq!((rows[0].totals.runs, rows[0].tool.as_str()), (2, "pitch"));
}

/// Budgets: warnings past their share, refusals past a hard limit, reservations released by
/// the run kept, and no overshoot however many runs reserve at once.
async fn budgets_and_reservations(store: Arc<dyn Store>) {
    let today = jiff::Timestamp::now().strftime("%Y-%m-%d").to_string();
    let now = jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string();
    store.create_team("support", false).await.unwrap();
    store
        .add_members(&[NewMember {
            email: "dee@example.org".into(),
            name: "Dee".into(),
            role: Role::Viewer,
            teams: vec!["support".into()],
        }])
        .await
        .unwrap();
    let absent = budget(Scope::Team, "nowhere", 1.0);
    assert!(matches!(store.set_budget(&absent).await, Err(StoreError::NoSuchTeam(_))));
    let bad = Budget { warn_at: 1.5, ..budget(Scope::Team, "support", 1.0) };
    assert!(matches!(store.set_budget(&bad).await, Err(StoreError::BadBudget(_))));
    store.set_budget(&budget(Scope::Team, "support", 1.0)).await.unwrap();
    let soft = Budget { hard: false, ..budget(Scope::Member, "Dee@Example.org", 0.5) };
    store.set_budget(&soft).await.unwrap();
    let dee = charge("dee@example.org", "support");
    store
        .log_run("triage", 1, None, &record("triage", "gpt-4o", 0.6, &now), &dee, None)
        .await
        .unwrap();

    let hour = Duration::from_hours(1);
    let held = store.reserve(&dee, 0.3, hour).await.unwrap();
    // 0.9 of the team's 1.0 and 1.8 times Dee's soft 0.5: both warned of, neither refused.
    let warned: Vec<(Scope, &str)> =
        held.warnings.iter().map(|s| (s.budget.scope, s.budget.name.as_str())).collect();
    assert_eq!(warned, [(Scope::Team, "support"), (Scope::Member, "dee@example.org")]);
    let refused = store.reserve(&dee, 0.2, hour).await.unwrap_err();
    let StoreError::OverBudget(over) = &refused else { panic!("{refused}") };
    assert_eq!((over.status.budget.name.as_str(), over.status.period_start.len()), ("support", 10));
    assert!(
        (over.status.spent_usd - 0.6).abs() < 1e-9 && (over.status.reserved_usd - 0.3).abs() < 1e-9
    );
    assert!(refused.to_string().contains("support"), "{refused}");
    // A run of another team, or of no team, is not this budget's concern.
    store
        .release(store.reserve(&charge("eve@example.org", "sales"), 5.0, hour).await.unwrap().id)
        .await
        .unwrap();
    // The run kept releases its reservation: its cost counts instead.
    store
        .log_run("triage", 1, None, &record("triage", "gpt-4o", 0.3, &now), &dee, Some(held.id))
        .await
        .unwrap();
    let statuses = store.budget_statuses(&today).await.unwrap();
    let team = statuses.iter().find(|s| s.budget.scope == Scope::Team).unwrap();
    assert!((team.spent_usd - 0.9).abs() < 1e-9 && team.reserved_usd == 0.0, "{team:?}");
    assert!(matches!(store.reserve(&dee, 0.2, hour).await, Err(StoreError::OverBudget(_))));
    let small = store.reserve(&dee, 0.05, hour).await.unwrap();
    store.release(small.id).await.unwrap();

    // Twenty runs at once, each holding 0.015 of the 0.1 left: exactly six are let through.
    let mut at_once = Vec::new();
    for _ in 0..20 {
        let (store, dee) = (Arc::clone(&store), dee.clone());
        at_once.push(tokio::spawn(async move { store.reserve(&dee, 0.015, hour).await }));
    }
    let mut through = 0;
    for run in at_once {
        match run.await.unwrap() {
            Ok(_) => through += 1,
            Err(StoreError::OverBudget(_)) => {}
            Err(other) => panic!("{other}"),
        }
    }
    assert_eq!(through, 6, "0.9 spent: six runs hold 0.09, a seventh would pass 1.0");
}

/// A renamed team keeps its budget and its spend; a removed one loses its budget.
async fn teams_carry_their_budgets(store: &dyn Store) {
    let today = jiff::Timestamp::now().strftime("%Y-%m-%d").to_string();
    store.rename_team("support", "helpdesk").await.unwrap();
    let statuses = store.budget_statuses(&today).await.unwrap();
    let team = statuses.iter().find(|s| s.budget.scope == Scope::Team).unwrap();
    assert_eq!(team.budget.name, "helpdesk");
    assert!(team.spent_usd > 0.89, "{team:?}");
    store.remove_team("helpdesk").await.unwrap();
    let statuses = store.budget_statuses(&today).await.unwrap();
    assert!(statuses.iter().all(|s| s.budget.scope == Scope::Member), "{statuses:?}");
    store.remove_member("dee@example.org").await.unwrap();
    assert!(store.budgets().await.unwrap().is_empty());
    // Each budget that went with its team or member is recorded as removed.
    let removed = store
        .audit(&AuditQuery {
            action: Some("budget.remove".into()),
            limit: 10,
            ..AuditQuery::default()
        })
        .await
        .unwrap();
    let targets: Vec<&str> = removed.records.iter().map(|r| r.entry.target.as_str()).collect();
    assert_eq!(targets, ["member:dee@example.org", "team:helpdesk"]);
}

async fn suite(store: Arc<dyn Store>) {
    integrations_and_prices(store.as_ref()).await;
    spend_reports(store.as_ref()).await;
    budgets_and_reservations(Arc::clone(&store)).await;
    teams_carry_their_budgets(store.as_ref()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqlStore::open_sqlite(&dir.path().join("library.db")).await.unwrap();
    suite(Arc::new(store)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres() {
    let Some(database) = llmtool_testkit::postgres::database().await else { return };
    let store = SqlStore::connect_postgres(&database.url).await.unwrap();
    suite(Arc::new(store)).await;
}
