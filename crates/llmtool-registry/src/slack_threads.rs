//! The Slack threads that are conversations: where `/llmtool`'s answer was posted (or where a
//! conversation is connected), so that a mention of the app in that thread is a turn of it.

use crate::db::{Db, Statement, statement};
use crate::store::StoreError;

/// The statement that makes the thread `thread_ts` of `channel` the conversation's.
pub(crate) fn thread_of(channel: &str, thread_ts: &str, conversation: &str) -> Statement {
    statement(
        "INSERT INTO slack_threads (channel, thread_ts, conversation) VALUES ($1, $2, $3)
         ON CONFLICT (channel, thread_ts) DO UPDATE SET conversation = $3",
    )
    .bind(channel)
    .bind(thread_ts)
    .bind(conversation)
}

/// The conversation of the thread `thread_ts` of `channel`, if it is one.
pub(crate) async fn conversation_of(
    db: &Db,
    channel: &str,
    thread_ts: &str,
) -> Result<Option<String>, StoreError> {
    let select =
        statement("SELECT conversation FROM slack_threads WHERE channel = $1 AND thread_ts = $2")
            .bind(channel)
            .bind(thread_ts);
    let found: Option<(String,)> = db.optional(select).await?;
    Ok(found.map(|(conversation,)| conversation))
}
