//! The rows the store selects, and what they become.

use llmtool_log::{Grouping, Total};

use crate::model::{Page, Role, Summary, ToolVersion};
use crate::tokens::TokenInfo;

/// A version's columns: number, content hash, body, note, published at, published by.
pub(crate) type VersionRow = (i64, String, String, Option<String>, String, Option<String>);

/// The columns of [`VersionRow`], for `SELECT`.
pub(crate) const VERSION_COLUMNS: &str =
    "number, content_hash, body, note, published_at, published_by";

/// A token's columns: name, role, created at, revoked at, member, expires at, last used at.
pub(crate) type TokenRow =
    (String, String, String, Option<String>, Option<String>, Option<String>, Option<String>);

/// A search result's columns: slug, latest version, name, description, output type, the tags
/// joined by spaces, the creator's name, whether there is an avatar, the models as a JSON
/// array, and whether it is a smart tool.
pub(crate) type SummaryRow = (
    String,
    i64,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    bool,
    String,
    bool,
);

pub(crate) fn tool_version(
    slug: &str,
    row: VersionRow,
    tags: Vec<String>,
    labels: Vec<String>,
) -> ToolVersion {
    let (number, content_hash, text, note, published_at, published_by) = row;
    ToolVersion {
        slug: slug.to_owned(),
        version: u32::try_from(number).unwrap_or(0),
        content_hash,
        text,
        note,
        published_at,
        published_by,
        tags,
        labels,
    }
}

pub(crate) fn token_info(row: TokenRow) -> TokenInfo {
    let (name, role, created_at, revoked_at, member, expires_at, last_used_at) = row;
    TokenInfo {
        name,
        role: Role::parse(&role).unwrap_or(Role::Viewer),
        member,
        created_at,
        expires_at,
        last_used_at,
        revoked: revoked_at.is_some(),
    }
}

pub(crate) fn summary(row: SummaryRow) -> Summary {
    let (slug, latest, name, description, output_type, tags, creator, has_avatar, models, smart) =
        row;
    Summary {
        slug,
        version: u32::try_from(latest).unwrap_or(0),
        name,
        description,
        tags: tags.map(|t| t.split(' ').map(str::to_owned).collect()).unwrap_or_default(),
        output_type,
        models: serde_json::from_str(&models).unwrap_or_default(),
        creator,
        has_avatar,
        kind: if smart { "smart" } else { "prompt" }.to_owned(),
    }
}

/// A page of `limit` results out of `found`, which holds one more when a next page exists.
pub(crate) fn page(mut found: Vec<Summary>, limit: u32) -> Page {
    let more = found.len() > limit as usize;
    found.truncate(limit as usize);
    let next = if more { found.last().map(|t| t.slug.clone()) } else { None };
    Page { tools: found, next }
}

/// A usage total's columns: key, runs, input and output tokens, cost, unpriced runs.
pub(crate) type TotalRow = (String, i64, i64, i64, f64, i64);

/// The query of [`crate::Store::usage`]: the totals of the runs since `since` (a parameter,
/// `$1`) that `seen` (a condition) keeps.
pub(crate) fn usage_sql(by: Grouping, since: &str, seen: &str) -> String {
    let (key, order) = match by {
        Grouping::Tool => ("slug", "cost DESC, key"),
        Grouping::Model => ("provider || '/' || model", "cost DESC, key"),
        Grouping::Day => ("substr(started_at, 1, 10)", "key"),
        Grouping::Origin => ("origin", "cost DESC, key"),
    };
    format!(
        "SELECT {key} AS key, COUNT(*) AS runs,
            CAST(COALESCE(SUM(input_tokens), 0) AS BIGINT) AS input,
            CAST(COALESCE(SUM(output_tokens), 0) AS BIGINT) AS output,
            CAST(COALESCE(SUM(cost_usd), 0.0) AS DOUBLE PRECISION) AS cost,
            CAST(COALESCE(SUM(CASE WHEN cost_usd IS NULL THEN 1 ELSE 0 END), 0) AS BIGINT) AS unpriced
         FROM runs WHERE ({since} IS NULL OR started_at >= {since}) AND {seen}
         GROUP BY key ORDER BY {order}"
    )
}

pub(crate) fn total(row: TotalRow) -> Total {
    let count = |n: i64| u64::try_from(n).unwrap_or(0);
    let (key, runs, input, output, cost_usd, unpriced) = row;
    Total {
        key,
        runs: count(runs),
        input_tokens: count(input),
        output_tokens: count(output),
        cost_usd,
        unpriced_runs: count(unpriced),
    }
}

/// A token count as the database keeps it.
pub(crate) fn tokens(count: Option<u64>) -> Option<i64> {
    count.and_then(|n| i64::try_from(n).ok())
}

/// A kept run's columns: id, slug, version, run by, and the record as JSON text.
pub(crate) type RunRow = (i64, String, i64, Option<String>, String);

pub(crate) fn kept_run(row: RunRow) -> Option<crate::KeptRun> {
    let (id, slug, version, run_by, record) = row;
    let mut record: llmtool_log::Record = serde_json::from_str(&record).ok()?;
    record.id = Some(id);
    Some(crate::KeptRun { slug, version: u32::try_from(version).unwrap_or(0), run_by, record })
}

pub(crate) fn tag_count((tag, tools): (String, i64)) -> crate::TagCount {
    crate::TagCount { tag, tools: u64::try_from(tools).unwrap_or(0) }
}
