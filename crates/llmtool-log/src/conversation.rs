//! Conversations, in the run log and the team server's library alike: each turn is a run
//! (with its conversation's id and its turn number), and the conversation's own row keeps the
//! tool as it started, the placeholders of the values data-loss prevention hid, and a summary
//! that the lists read (title, last turn, turns, cost). The rules both stores follow live
//! here: how placeholders merge, what a conversation is called, how its summary grows. The
//! log's own statements follow; `llmtool reply` and `run -c` read a conversation back to go
//! on with it, and `llmtool logs --conversations` lists them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sqlx::Row as _;

use crate::record::{Record, Thread};
use crate::store::{LogError, RunLog, record};

/// A conversation as the log keeps it: where it started, on which model, and its turns in
/// order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Conversation {
    pub id: String,
    pub started_at: String,
    /// What started it: `run` or `chat`.
    pub origin: String,
    pub tool_path: Option<String>,
    pub tool_name: Option<String>,
    pub provider: String,
    pub model: String,
    pub turns: Vec<Record>,
    /// The tool as it started, and the placeholders' values: private, never listed.
    #[serde(skip)]
    pub thread: Thread,
}

/// A conversation as a list shows it, from the summary its row keeps: the same in the run log
/// and in a library.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = ConversationSummary))]
pub struct Summary {
    pub id: String,
    pub started_at: String,
    /// When its last turn started.
    pub last_at: String,
    /// The tool's name and its first value (as [`default_title`] makes it).
    pub title: String,
    pub provider: String,
    pub model: String,
    pub turns: u64,
    /// US dollars, over the turns whose cost is known.
    pub cost_usd: f64,
}

/// Where the next page of a list starts: after the conversation last listed. Lists are newest
/// last turn first, and a page goes on from the one before it even while turns are added.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct After {
    pub last_at: String,
    pub id: String,
}

impl Summary {
    /// Where the page after this conversation starts.
    pub fn after(&self) -> After {
        After { last_at: self.last_at.clone(), id: self.id.clone() }
    }
}

impl After {
    /// The page's cursor as a client carries it: `LAST_AT~ID`.
    pub fn cursor(&self) -> String {
        format!("{}~{}", self.last_at, self.id)
    }

    /// A cursor [`After::cursor`] gave, or `None` for anything else (a time as the log writes
    /// it, and an id of letters and digits).
    pub fn from_cursor(cursor: &str) -> Option<After> {
        let (last_at, id) = cursor.split_once('~')?;
        let time = last_at.len() == 24
            && last_at.ends_with('Z')
            && last_at.bytes().all(|b| b.is_ascii_digit() || b"-:.TZ".contains(&b));
        let named = (1..=64).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric());
        (time && named).then(|| After { last_at: last_at.to_owned(), id: id.to_owned() })
    }
}

/// One line of `llmtool logs --conversations`: the summary, and the tool's name or path.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConversationSummary {
    #[serde(flatten)]
    pub summary: Summary,
    pub tool: String,
}

/// How many characters of a conversation's title [`default_title`] makes at most.
pub const TITLE_CHARS: usize = 60;

/// The placeholders a conversation keeps after a turn: those `kept` so far, and the turn's new
/// ones. A placeholder keeps the value it was first kept with (a turn that says otherwise
/// changes nothing), so that what a turn sends can never rewrite an earlier value.
pub fn merge_placeholders(
    kept: BTreeMap<String, String>,
    turn: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut merged = kept;
    for (placeholder, value) in turn {
        merged.entry(placeholder.clone()).or_insert_with(|| value.clone());
    }
    merged
}

/// What a conversation is called until renamed: the tool's name, then its first value that is
/// not blank, on one line, with each value data-loss prevention hid shown as its placeholder,
/// at most [`TITLE_CHARS`] characters.
pub fn default_title(
    tool: &str,
    variables: Option<&serde_json::Value>,
    placeholders: &BTreeMap<String, String>,
) -> String {
    let first = variables
        .and_then(serde_json::Value::as_object)
        .into_iter()
        .flat_map(|values| values.values())
        .map(value_text)
        .find(|text| !text.trim().is_empty());
    let mut title = match first {
        Some(value) => format!("{tool}: {}", masked(&value, placeholders)),
        None => tool.to_owned(),
    };
    title = title.split_whitespace().collect::<Vec<_>>().join(" ");
    if title.chars().count() > TITLE_CHARS {
        let kept: String = title.chars().take(TITLE_CHARS - 1).collect();
        return format!("{}…", kept.trim_end());
    }
    title
}

/// A value as a title shows it: text as it is, a list of choices joined by commas.
pub fn value_text(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(text) => text.clone(),
        serde_json::Value::Array(items) => {
            items.iter().map(value_text).collect::<Vec<_>>().join(", ")
        }
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// `text` with every value of `placeholders` replaced by its placeholder, longest value first
/// (so that a value inside a longer one never shows a piece of it).
pub fn masked(text: &str, placeholders: &BTreeMap<String, String>) -> String {
    let mut by_length: Vec<_> = placeholders.iter().filter(|(_, v)| !v.is_empty()).collect();
    by_length.sort_by_key(|(_, value)| std::cmp::Reverse(value.len()));
    by_length.into_iter().fold(text.to_owned(), |text, (placeholder, value)| {
        text.replace(value.as_str(), placeholder)
    })
}

/// How many characters of a turn [`turn_words`] gives a search index at most.
pub const TURN_WORDS_CHARS: usize = 32_768;

/// What a search finds a turn by: the prompt as it was sent and the answer as it was kept
/// (both with data-loss prevention's placeholders, never the hidden values), at most
/// [`TURN_WORDS_CHARS`] characters.
pub fn turn_words(turn: &Record) -> String {
    let text = [turn.prompt.as_deref(), turn.answer.as_deref()];
    let words = text.into_iter().flatten().collect::<Vec<_>>().join("\n");
    match words.char_indices().nth(TURN_WORDS_CHARS) {
        Some((end, _)) => words[..end].to_owned(),
        None => words,
    }
}

/// The placeholders as a conversation's row keeps them: a JSON object, or `NULL` for none.
pub fn placeholders_text(placeholders: &BTreeMap<String, String>) -> Option<String> {
    (!placeholders.is_empty()).then(|| serde_json::to_string(placeholders).unwrap_or_default())
}

/// The placeholders a conversation's row keeps, read back (none when unreadable).
pub fn placeholders_from(text: Option<String>) -> BTreeMap<String, String> {
    text.and_then(|text| serde_json::from_str(&text).ok()).unwrap_or_default()
}

/// The statement that reads a conversation's kept placeholders (`$1`: its id), before a turn's
/// are merged in.
pub const KEPT_PLACEHOLDERS: &str = "SELECT placeholders FROM conversations WHERE id = $1";

/// The statement that adds a turn to its conversation's summary, in the transaction that keeps
/// the turn's run: `$1` the conversation, `$2` when the turn started, `$3` its cost (`NULL`
/// when unknown). Written in PostgreSQL's syntax ([`crate::sql::for_sqlite`] for SQLite).
pub const KEEP_SUMMARY: &str = "UPDATE conversations SET
        last_at = CASE WHEN last_at < $2::text THEN $2::text ELSE last_at END,
        turns = turns + 1,
        cost_usd = cost_usd + COALESCE($3::float8, 0)
     WHERE id = $1";

/// The columns of a [`Summary`], in its order, of the table aliased `c` (a library's and the
/// log's `conversations` alike).
pub const SUMMARY_COLUMNS: &str =
    "c.id, c.started_at, c.last_at, c.title, c.provider, c.model, c.turns, c.cost_usd";

/// The condition of a page that starts after a conversation (`at`: the parameter holding its
/// last turn, `id`: its id), in the order of [`NEWEST_FIRST`].
pub fn after_condition(at: &str, id: &str) -> String {
    format!("(c.last_at, c.id) < ({at}, {id})")
}

/// The order of every list of conversations: newest last turn first.
pub const NEWEST_FIRST: &str = "ORDER BY c.last_at DESC, c.id DESC";

/// A row of [`SUMMARY_COLUMNS`].
pub type SummaryRow = (String, String, String, String, String, String, i64, f64);

impl From<SummaryRow> for Summary {
    fn from(row: SummaryRow) -> Summary {
        let (id, started_at, last_at, title, provider, model, turns, cost_usd) = row;
        Summary {
            id,
            started_at,
            last_at,
            title,
            provider,
            model,
            turns: u64::try_from(turns).unwrap_or(0),
            cost_usd,
        }
    }
}

/// Writes the conversation of each record that has one (before the runs, which refer to it):
/// created by its first record to arrive, its placeholders merged with each turn's
/// ([`merge_placeholders`]), its summary grown by each turn ([`KEEP_SUMMARY`]).
pub(crate) async fn keep_threads(
    connection: &mut sqlx::SqliteConnection,
    records: &[Record],
) -> Result<(), sqlx::Error> {
    let kept_placeholders = crate::sql::for_sqlite(KEPT_PLACEHOLDERS);
    let keep_summary = crate::sql::for_sqlite(KEEP_SUMMARY);
    for record in records {
        let Some(id) = &record.conversation else { continue };
        let thread = record.thread.clone().unwrap_or_default();
        let kept: Option<Option<String>> = sqlx::query_scalar(&kept_placeholders)
            .bind(id)
            .fetch_optional(&mut *connection)
            .await?;
        let placeholders =
            merge_placeholders(placeholders_from(kept.flatten()), &thread.placeholders);
        let tool = record.tool_name.as_deref().or(record.tool_path.as_deref()).unwrap_or("");
        let title = default_title(tool, record.variables.as_ref(), &placeholders);
        sqlx::query(
            "INSERT INTO conversations (id, started_at, origin, tool_path, tool_name, tool,
                provider, model, placeholders, dlp, title, last_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?2)
             ON CONFLICT (id) DO UPDATE SET
                tool = COALESCE(conversations.tool, excluded.tool),
                dlp = COALESCE(conversations.dlp, excluded.dlp),
                placeholders = excluded.placeholders",
        )
        .bind(id)
        .bind(&record.started_at)
        .bind(&record.origin)
        .bind(&record.tool_path)
        .bind(&record.tool_name)
        .bind(&thread.tool)
        .bind(&record.provider)
        .bind(&record.model)
        .bind(placeholders_text(&placeholders))
        .bind(&thread.dlp)
        .bind(title)
        .execute(&mut *connection)
        .await?;
        sqlx::query(&keep_summary)
            .bind(id)
            .bind(&record.started_at)
            .bind(record.cost_usd)
            .execute(&mut *connection)
            .await?;
    }
    Ok(())
}

/// A row of the log's list: [`SUMMARY_COLUMNS`], then the tool's name or path.
type LogListRow = (String, String, String, String, String, String, i64, f64, String);

impl RunLog {
    /// The conversation `id`, with its turns in order; `None` when the log has none by that
    /// id.
    pub async fn conversation(&self, id: &str) -> Result<Option<Conversation>, LogError> {
        let Some(row) = sqlx::query("SELECT * FROM conversations WHERE id = ?1")
            .bind(id)
            .fetch_optional(&self.pool)
            .await
            .map_err(|e| self.error(e))?
        else {
            return Ok(None);
        };
        let turns = sqlx::query("SELECT * FROM runs WHERE conversation = ?1 ORDER BY turn, id")
            .bind(id)
            .fetch_all(&self.pool)
            .await
            .map_err(|e| self.error(e))?;
        let read = || -> Result<Conversation, sqlx::Error> {
            Ok(Conversation {
                id: row.try_get("id")?,
                started_at: row.try_get("started_at")?,
                origin: row.try_get("origin")?,
                tool_path: row.try_get("tool_path")?,
                tool_name: row.try_get("tool_name")?,
                provider: row.try_get("provider")?,
                model: row.try_get("model")?,
                turns: turns.iter().map(record).collect::<Result<_, _>>()?,
                thread: Thread {
                    tool: row.try_get("tool")?,
                    dlp: row.try_get("dlp")?,
                    placeholders: placeholders_from(row.try_get("placeholders")?),
                },
            })
        };
        read().map(Some).map_err(|e| self.error(e))
    }

    /// The conversation whose last turn is the newest among those `origins` started (`run`
    /// and `chat`, for `llmtool reply`): what `-c` goes on with.
    pub async fn latest_conversation(&self, origins: &[&str]) -> Result<Option<String>, LogError> {
        let origins = serde_json::to_string(origins).unwrap_or_default();
        sqlx::query_scalar(
            "SELECT runs.conversation FROM runs JOIN conversations ON conversations.id = runs.conversation
             WHERE conversations.origin IN (SELECT value FROM json_each(?1))
             ORDER BY runs.started_at DESC, runs.id DESC LIMIT 1",
        )
        .bind(origins)
        .fetch_optional(&self.pool)
        .await
        .map_err(|e| self.error(e))
    }

    /// A page of `limit` conversations, newest last turn first, starting `after` one.
    pub async fn conversations(
        &self,
        after: Option<&After>,
        limit: u32,
    ) -> Result<Vec<ConversationSummary>, LogError> {
        let page = crate::sql::for_sqlite(&format!(
            "SELECT {SUMMARY_COLUMNS}, COALESCE(c.tool_name, c.tool_path, '')
             FROM conversations c WHERE $1::text IS NULL OR {} {NEWEST_FIRST} LIMIT $3",
            after_condition("$1", "$2")
        ));
        let rows: Vec<LogListRow> = sqlx::query_as(&page)
            .bind(after.map(|a| &a.last_at))
            .bind(after.map(|a| &a.id))
            .bind(i64::from(limit))
            .fetch_all(&self.pool)
            .await
            .map_err(|e| self.error(e))?;
        let listed =
            rows.into_iter().map(|(id, started, last, title, provider, model, n, cost, tool)| {
                let summary = (id, started, last, title, provider, model, n, cost).into();
                ConversationSummary { summary, tool }
            });
        Ok(listed.collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(p, v)| ((*p).to_owned(), (*v).to_owned())).collect()
    }

    #[test]
    fn a_turn_is_found_by_its_prompt_and_answer_as_kept_within_a_bound() {
        let turn = crate::contract::turn(Some("c"), 2, 1, None, serde_json::json!({}), &[]);
        assert_eq!(turn_words(&turn), "question 2\nanswer 2");
        let long = Record { answer: Some("é".repeat(40_000)), prompt: None, ..turn };
        assert_eq!(turn_words(&long).chars().count(), TURN_WORDS_CHARS);
    }

    #[test]
    fn a_cursor_reads_back_and_nothing_else_reads_as_one() {
        let after = After { last_at: "2026-11-23T10:00:00.000Z".into(), id: "01JQABC".into() };
        assert_eq!(After::from_cursor(&after.cursor()), Some(after));
        for bad in [
            "",
            "~",
            "2026-11-23T10:00:00.000Z~",
            "yesterday~01JQ",
            "2026-11-23T10:00:00.000Z~a b",
            "2026-11-23T10:00:00.000Z~a'--",
        ] {
            assert_eq!(After::from_cursor(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_placeholder_keeps_the_value_it_was_first_kept_with() {
        let kept = map(&[("[EMAIL_1]", "ann@example.com")]);
        let turn = map(&[("[EMAIL_1]", "eve@example.com"), ("[EMAIL_2]", "bo@example.com")]);
        let merged = merge_placeholders(kept, &turn);
        assert_eq!(
            merged,
            map(&[("[EMAIL_1]", "ann@example.com"), ("[EMAIL_2]", "bo@example.com")])
        );
    }

    #[test]
    fn a_title_is_the_tool_and_its_first_value_on_one_line_hidden_values_masked() {
        let none = BTreeMap::new();
        let values = serde_json::json!({"topic": "  ", "tone": ["dry", "short"], "n": 3});
        assert_eq!(default_title("Haiku", Some(&values), &none), "Haiku: dry, short");
        assert_eq!(default_title("Haiku", None, &none), "Haiku", "no values kept: the tool alone");
        assert_eq!(default_title("Haiku", Some(&serde_json::json!({})), &none), "Haiku");

        // The longer value is masked first, so no piece of it shows under a shorter one.
        let hidden = map(&[("[EMAIL_1]", "ann@example.com"), ("[NAME_1]", "ann")]);
        let values = serde_json::json!({"text": "write to\n ann@example.com, ann"});
        assert_eq!(
            default_title("Mail", Some(&values), &hidden),
            "Mail: write to [EMAIL_1], [NAME_1]"
        );

        let long = serde_json::json!({"text": "é".repeat(200)});
        let title = default_title("Long", Some(&long), &none);
        assert_eq!(title.chars().count(), TITLE_CHARS);
        assert!(title.ends_with('…'));
    }
}
