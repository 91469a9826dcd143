//! The batch's bookkeeping, tested where it lives: the journal (rows done, the output's
//! committed length, runs and their setup, rows dropped and replaced, provider batches from
//! written down to collected), the output cut back to what the journal committed, and row
//! keys that follow a row wherever it moves.

use llmtool_batch::Journal;
use llmtool_batch::journal::{Entry, Met};
use llmtool_batch::keys::{Occurrences, work_hash};
use llmtool_batch::output::{OutputFile, OutputFormat, OutputRecord};
use llmtool_batch::submitted::SubmittedRow;

fn entry(key: &str, row_index: u64, outcome: &str, cost: Option<f64>) -> Entry {
    Entry {
        key: key.to_owned(),
        row_index,
        row_id: format!("row-{row_index}"),
        outcome: outcome.to_owned(),
        cost_usd: cost,
        record: format!("{{\"key\":\"{key}\"}}\n"),
        replaces: false,
    }
}

#[tokio::test]
async fn the_journal_keeps_rows_and_the_committed_length_together_across_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.jsonl.journal");
    let journal = Journal::open(&path).await.unwrap();
    let start = journal.start("tool=a model=m").await.unwrap();
    assert_eq!((start.pass, start.setup_changed), (1, false));
    assert_eq!(journal.committed_bytes().await.unwrap(), 0);
    let done = [entry("k1", 0, "ok", Some(0.25)), entry("k2", 1, "failed", None)];
    journal.commit(&done, &[], start.pass, 42).await.unwrap();
    drop(journal);

    let journal = Journal::open(&path).await.unwrap();
    assert_eq!(journal.committed_bytes().await.unwrap(), 42);
    assert_eq!(journal.count().await.unwrap(), 2);
    let outcomes = journal.outcomes(&["k1", "k2", "k3"]).await.unwrap();
    assert_eq!(outcomes.get("k1").map(String::as_str), Some("ok"));
    assert_eq!(outcomes.get("k2").map(String::as_str), Some("failed"));
    assert!(!outcomes.contains_key("k3"));
    assert!((journal.cost().await.unwrap() - 0.25).abs() < 1e-12);
    assert!(journal.outcomes(&[]).await.unwrap().is_empty());

    // Another setup is noticed; the same one is not.
    let second = journal.start("tool=a model=other").await.unwrap();
    assert_eq!((second.pass, second.setup_changed), (2, true));
    let third = journal.start("tool=a model=other").await.unwrap();
    assert_eq!((third.pass, third.setup_changed), (3, false));
}

#[tokio::test]
async fn rows_not_met_again_are_dropped_and_a_replaced_row_asks_for_a_rewrite() {
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::open(&dir.path().join("j")).await.unwrap();
    let first = journal.start("s").await.unwrap().pass;
    let rows =
        [entry("a", 0, "ok", None), entry("b", 1, "ok", None), entry("c", 2, "failed", None)];
    journal.commit(&rows, &[], first, 30).await.unwrap();
    assert!(!journal.rewrite_pending().await.unwrap());

    // The next run meets `a` at a new place and runs `c` again; `b` left the dataset.
    let second = journal.start("s").await.unwrap().pass;
    let again = Entry { replaces: true, ..entry("c", 0, "ok", None) };
    let met = [Met { key: "a".into(), row_index: 1 }];
    journal.commit(&[again], &met, second, 40).await.unwrap();
    assert!(journal.rewrite_pending().await.unwrap(), "c's old record is in the output");
    assert_eq!(journal.drop_unmet(second).await.unwrap(), 1);
    assert_eq!(journal.count().await.unwrap(), 2);

    // The output is written again in row order, a page at a time.
    let page = journal.records_after(None, 1).await.unwrap();
    assert_eq!(page[0].0, (0, "c".to_owned()));
    let rest = journal.records_after(Some(&page[0].0), 10).await.unwrap();
    assert_eq!(rest.iter().map(|(at, _)| at.1.as_str()).collect::<Vec<_>>(), ["a"]);
    journal.rewritten(25).await.unwrap();
    assert!(!journal.rewrite_pending().await.unwrap());
    assert_eq!(journal.committed_bytes().await.unwrap(), 25);
}

#[tokio::test]
async fn a_provider_batch_goes_from_written_down_to_sent_to_collected_without_losing_a_row() {
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::open(&dir.path().join("j")).await.unwrap();
    let pass = journal.start("s").await.unwrap().pass;
    let row = |key: &str, index: u64| SubmittedRow {
        custom_id: format!("id-{key}"),
        key: key.to_owned(),
        row_index: index,
        record: "{}".into(),
        worst_cost: Some(0.5),
    };
    // Written down before sending: its rows are pending and their worst cost is held.
    journal.begin_submission("b1", "openai", &[row("x", 0), row("y", 1)]).await.unwrap();
    journal.begin_submission("b2", "openai", &[row("z", 2)]).await.unwrap();
    assert_eq!(journal.pending_keys().await.unwrap().len(), 3);
    assert!((journal.reserved_cost().await.unwrap() - 1.5).abs() < 1e-12);
    // b1 is taken by the provider; b2's sending never finished (a crash): it is forgotten,
    // and its row is to do again.
    journal.submitted("b1", "batch_123").await.unwrap();
    assert_eq!(journal.forget_unsent().await.unwrap(), 1);
    let batches = journal.provider_batches().await.unwrap();
    assert_eq!(batches.len(), 1);
    assert_eq!(batches[0].batch_id.as_deref(), Some("batch_123"));
    assert_eq!(journal.submitted_rows("b1").await.unwrap().len(), 2);

    // Collected: the answers become rows done, and the batch holds nothing more.
    let answers = [entry("x", 0, "ok", Some(0.1)), entry("y", 1, "rejected", Some(0.2))];
    journal.collect("b1", &answers, pass, 10).await.unwrap();
    assert!(journal.pending_keys().await.unwrap().is_empty());
    assert!(journal.reserved_cost().await.unwrap().abs() < 1e-12);
    assert_eq!(journal.count().await.unwrap(), 2);
    assert!(journal.provider_batches().await.unwrap()[0].collected_at.is_some());
}

#[test]
fn the_output_is_cut_back_to_what_the_journal_committed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.jsonl");
    std::fs::write(&path, "{\"row\":0}\n{\"row\":1}\n{\"half").unwrap();
    let mut output = OutputFile::open(&path, 20).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"row\":0}\n{\"row\":1}\n");
    output.append("{\"row\":2}\n").unwrap();
    assert_eq!(output.sync().unwrap(), 30);
    // A file shorter than its journal was changed by something else: refused, not guessed.
    std::fs::write(&path, "{}\n").unwrap();
    let error = OutputFile::open(&path, 30).unwrap_err();
    assert!(error.to_string().contains("shorter"), "{error}");
}

#[test]
fn a_csv_record_reads_back_whatever_its_answer_holds() {
    assert_eq!(OutputFormat::of(std::path::Path::new("x.NDJSON")), Some(OutputFormat::Jsonl));
    assert_eq!(OutputFormat::of(std::path::Path::new("x.txt")), None);
    let record = OutputRecord {
        id: "7".into(),
        row: 7,
        outcome: "ok".into(),
        output: Some("a, \"quoted\"\nanswer".into()),
        error: None,
        provider: Some("mock".into()),
        model: Some("m".into()),
        input_tokens: Some(3),
        output_tokens: None,
        cost_usd: Some(0.5),
        latency_ms: None,
        key: "k".into(),
    };
    let text = OutputFormat::Csv.header() + &record.line(OutputFormat::Csv);
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let row = reader.records().next().unwrap().unwrap();
    assert_eq!(&row[3], "a, \"quoted\"\nanswer");
    assert_eq!((&row[0], &row[9], &row[11]), ("7", "0.5", "k"));
    let line = record.line(OutputFormat::Jsonl);
    assert_eq!(serde_json::from_str::<OutputRecord>(&line).unwrap(), record);
}

#[test]
fn a_rows_key_follows_the_row_when_the_dataset_is_reordered() {
    let works = [work_hash("t", "a", "{}"), work_hash("t", "b", "{}"), work_hash("t", "a", "{}")];
    let keys = |order: &[usize]| {
        let mut occurrences = Occurrences::default();
        order.iter().map(|&i| (i, occurrences.key(&works[i]))).collect::<Vec<_>>()
    };
    let before = keys(&[0, 1, 2]);
    let mut after = keys(&[1, 0, 2]);
    after.sort();
    assert_eq!(before, after, "each row keeps its key, the repeated row its number");
    assert!(before[2].1.ends_with("/2"));
}
