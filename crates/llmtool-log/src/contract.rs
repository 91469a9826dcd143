//! What every store of conversations must do, as a test each store runs on itself: the run
//! log (its own tests) and a team library on SQLite and PostgreSQL (the registry's suite). The
//! same turns kept give the same summaries, pages and conversations, by the rules of
//! [`crate::conversation`].

use std::collections::BTreeMap;

use crate::{After, Conversation, Outcome, Record, Summary, Thread};

/// A store of runs and their conversations, seen as the contract sees it.
#[allow(async_fn_in_trait, reason = "used only by tests, on concrete stores; never `dyn`")]
pub trait ConversationRows {
    /// Keeps `records`, in order, as the store keeps runs (a turn's conversation with it).
    async fn keep(&self, records: &[Record]);
    /// A page of at most `limit` conversations, newest last turn first, starting `after` one.
    async fn page(&self, after: Option<&After>, limit: u32) -> Vec<Summary>;
    /// The conversation `id` whole, if the store has it.
    async fn whole(&self, id: &str) -> Option<Conversation>;
}

/// A run of the tool `chatty` on `day` (of November 2026), with `values`, as turn `turn` of the
/// conversation `conversation` (when given) whose hidden values so far are `placeholders`.
pub fn turn(
    conversation: Option<&str>,
    turn: u32,
    day: u8,
    cost_usd: Option<f64>,
    values: serde_json::Value,
    placeholders: &[(&str, &str)],
) -> Record {
    let thread = Thread {
        tool: Some(r#"{"model_prompt": "Say {{text}}"}"#.to_owned()),
        dlp: Some("redact".to_owned()),
        placeholders: placeholders
            .iter()
            .map(|(p, v)| ((*p).to_owned(), (*v).to_owned()))
            .collect(),
    };
    Record {
        id: None,
        started_at: format!("2026-11-{day:02}T10:00:00.000Z"),
        origin: "run".to_owned(),
        tool_path: Some("chatty.json".to_owned()),
        tool_name: Some("chatty".to_owned()),
        tool_hash: "0".repeat(64),
        variables: Some(values),
        prompt: Some(format!("question {turn}")),
        variables_hash: "1".repeat(64),
        provider: "openai".to_owned(),
        model: "gpt-4o-mini".to_owned(),
        input_tokens: Some(100),
        cached_input_tokens: None,
        cache_write_tokens: None,
        output_tokens: Some(20),
        reasoning_tokens: None,
        cost_usd,
        price_entry: None,
        latency_ms: Some(5),
        first_token_ms: None,
        repairs: 0,
        outcome: Outcome::Ok,
        error: None,
        answer: Some(format!("answer {turn}")),
        redactions: BTreeMap::new(),
        conversation: conversation.map(str::to_owned),
        turn: conversation.map(|_| turn),
        // A second turn that called a function, so that each store is seen to keep calls.
        calls: if turn == 2 {
            vec![crate::Call {
                name: "fetch_url".to_owned(),
                arguments: r#"{"url": "http://127.0.0.1/"}"#.to_owned(),
                result: "a page".to_owned(),
                failed: false,
                ms: 3,
            }]
        } else {
            Vec::new()
        },
        thread: conversation.map(|_| thread),
    }
}

/// The two conversations the contract keeps: the first started earlier and was answered later.
const FIRST: &str = "01jqcontract00000000000001";
const SECOND: &str = "01jqcontract00000000000002";

/// Runs the contract on `store`, which holds no conversations yet.
pub async fn check_store(store: &impl ConversationRows) {
    let hidden = [("[EMAIL_1]", "ann@example.com")];
    let more_hidden = [("[EMAIL_1]", "someone@example.com"), ("[EMAIL_2]", "bo@example.com")];
    store
        .keep(&[
            turn(
                Some(FIRST),
                1,
                10,
                Some(0.25),
                serde_json::json!({"text": "", "about": "mail ann@example.com\nsoon"}),
                &hidden,
            ),
            turn(None, 1, 11, Some(1.0), serde_json::json!({"text": "alone"}), &[]),
            turn(Some(SECOND), 1, 12, Some(0.5), serde_json::json!({"text": "tides"}), &[]),
            turn(Some(FIRST), 2, 13, None, serde_json::json!({}), &more_hidden),
        ])
        .await;

    let listed = store.page(None, 10).await;
    let ids: Vec<&str> = listed.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, [FIRST, SECOND], "newest last turn first; a run of no conversation is none");
    let first = &listed[0];
    assert_eq!(first.started_at, "2026-11-10T10:00:00.000Z");
    assert_eq!(first.last_at, "2026-11-13T10:00:00.000Z");
    assert_eq!((first.turns, first.cost_usd), (2, 0.25), "an unpriced turn adds no cost");
    assert_eq!(first.title, "chatty: mail [EMAIL_1] soon", "its first value, a hidden one masked");
    assert_eq!((first.provider.as_str(), first.model.as_str()), ("openai", "gpt-4o-mini"));
    assert_eq!((listed[1].turns, listed[1].cost_usd), (1, 0.5));
    assert_eq!(listed[1].title, "chatty: tides");

    let one = store.page(None, 1).await;
    assert_eq!(one, listed[..1], "a page holds at most `limit`");
    let next = store.page(Some(&one[0].after()), 1).await;
    assert_eq!(next, listed[1..], "the next page starts after the last one listed");
    assert!(store.page(Some(&next[0].after()), 1).await.is_empty(), "and ends");

    let whole = store.whole(FIRST).await.expect("the conversation is kept");
    assert_eq!((whole.id.as_str(), whole.started_at.as_str()), (FIRST, first.started_at.as_str()));
    let turns: Vec<_> = whole.turns.iter().map(|t| (t.turn, t.prompt.as_deref())).collect();
    assert_eq!(turns, [(Some(1), Some("question 1")), (Some(2), Some("question 2"))]);
    assert_eq!(whole.thread.dlp.as_deref(), Some("redact"));
    let values: Vec<&str> = whole.thread.placeholders.values().map(String::as_str).collect();
    assert_eq!(
        values,
        ["ann@example.com", "bo@example.com"],
        "a placeholder keeps its first value"
    );
    assert!(store.whole("01jqnosuchconversation0000").await.is_none());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RunLog;

    impl ConversationRows for RunLog {
        async fn keep(&self, records: &[Record]) {
            // One at a time and all at once: a log keeps runs both ways.
            let (first, rest) = records.split_at(1);
            self.append(&first[0]).await.unwrap();
            self.append_all(rest).await.unwrap();
        }

        async fn page(&self, after: Option<&After>, limit: u32) -> Vec<Summary> {
            let listed = self.conversations(after, limit).await.unwrap();
            listed.into_iter().map(|c| c.summary).collect()
        }

        async fn whole(&self, id: &str) -> Option<Conversation> {
            self.conversation(id).await.unwrap()
        }
    }

    #[tokio::test]
    async fn the_run_log_keeps_conversations_by_the_contract() {
        let folder = tempfile::tempdir().unwrap();
        let log = RunLog::open(&folder.path().join("log.db")).await.unwrap();
        check_store(&log).await;
        let listed = log.conversations(None, 10).await.unwrap();
        assert_eq!(listed[0].tool, "chatty");
    }
}
