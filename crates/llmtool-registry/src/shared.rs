//! What the servers of one library share through its database besides the library: the rate
//! limits' buckets (so that a caller's limit is the same whichever server answers) and the
//! follow-ups under way (one a conversation at a time, across servers), and the Slack events
//! handled (each once, whichever server a retry reaches). Each is one statement, the same on
//! both backends: an upsert that reads the row as it was and writes it anew.

use std::time::Duration;

use crate::db::{Db, statement};
use crate::store::StoreError;

/// A rate limit's bucket: how many requests it holds when full, and how fast it refills.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bucket {
    pub capacity: f64,
    pub per_second: f64,
}

/// What a request takes from its bucket.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Spend {
    /// One request, if the bucket holds one; else nothing.
    One,
    /// `cost` requests' worth, whatever the bucket holds (it may go below empty: a debt).
    Charge(f64),
    /// Nothing: only how full it is.
    Look,
}

/// How full a bucket was, refilled to now, before the spend; and whether the spend was made.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Taken {
    pub before: f64,
    pub granted: bool,
}

/// Seconds since 1970, the times the shared rows keep.
pub(crate) fn epoch_seconds() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// The bucket refilled to `$3` (now) at `$6` a second, at most `$2`.
const REFILLED: &str = "(CASE WHEN rate_limits.tokens + ($3 - rate_limits.seen) * $6 >= $2 THEN $2
        ELSE rate_limits.tokens + ($3 - rate_limits.seen) * $6 END)";

/// Spends `spend` from the bucket `key` (made full on first use).
pub(crate) async fn spend(
    db: &Db,
    key: &str,
    bucket: Bucket,
    spend: Spend,
) -> Result<Taken, StoreError> {
    // `$4`: what is taken; `$5`: the least the bucket must hold for it to be taken.
    let (cost, least) = match spend {
        Spend::One => (1.0, 1.0),
        Spend::Charge(cost) => (cost.clamp(0.0, bucket.capacity), f64::MIN),
        Spend::Look => (0.0, f64::MIN),
    };
    let sql = format!(
        "INSERT INTO rate_limits (key, tokens, seen, granted) VALUES ($1, $2 - $4, $3, 1)
         ON CONFLICT (key) DO UPDATE SET
             tokens = {REFILLED} - CASE WHEN {REFILLED} >= $5 THEN $4 ELSE 0 END,
             granted = CASE WHEN {REFILLED} >= $5 THEN 1 ELSE 0 END,
             seen = $3
         RETURNING tokens, granted"
    );
    let upsert = statement(sql)
        .bind(key)
        .bind(bucket.capacity)
        .bind(epoch_seconds())
        .bind(cost)
        .bind(least)
        .bind(bucket.per_second);
    let (after, granted): (f64, i64) = db.optional(upsert).await?.unwrap_or((0.0, 0));
    let granted = granted != 0;
    Ok(Taken { before: if granted { after + cost } else { after }, granted })
}

/// Deletes the buckets idle for `idle` (a full bucket is what a forgotten caller gets back;
/// idle that long, a bucket has refilled).
pub(crate) async fn forget_idle(db: &Db, idle: Duration) -> Result<u64, StoreError> {
    let before = epoch_seconds() - idle.as_secs_f64();
    Ok(db.execute(statement("DELETE FROM rate_limits WHERE seen < $1").bind(before)).await?)
}

/// Holds `conversation` for a follow-up for `lease` (or until [`end_follow_up`]): `false`
/// when another follow-up holds it. A lease its server never ended (it died) runs out.
pub(crate) async fn begin_follow_up(
    db: &Db,
    conversation: &str,
    lease: Duration,
) -> Result<bool, StoreError> {
    let now = epoch_seconds();
    let upsert = statement(
        "INSERT INTO follow_ups (conversation, lease_until) VALUES ($1, $2)
         ON CONFLICT (conversation) DO UPDATE SET lease_until = $2
          WHERE follow_ups.lease_until < $3
         RETURNING conversation",
    )
    .bind(conversation)
    .bind(now + lease.as_secs_f64())
    .bind(now);
    let held: Option<(String,)> = db.optional(upsert).await?;
    Ok(held.is_some())
}

/// Lets `conversation` go: its next follow-up may start.
pub(crate) async fn end_follow_up(db: &Db, conversation: &str) -> Result<(), StoreError> {
    db.execute(statement("DELETE FROM follow_ups WHERE conversation = $1").bind(conversation))
        .await?;
    Ok(())
}

/// How long an event id is remembered: Slack retries within minutes.
const SLACK_EVENTS_KEPT: f64 = 24.0 * 3600.0;

/// Records Slack's event `event_id` as handled: `false` when it was already (a retry, or
/// another server took it first). Ids older than a day are forgotten as new ones come.
pub(crate) async fn first_slack_event(db: &Db, event_id: &str) -> Result<bool, StoreError> {
    let now = epoch_seconds();
    db.execute(
        statement("DELETE FROM slack_events WHERE received_at < $1").bind(now - SLACK_EVENTS_KEPT),
    )
    .await?;
    let insert = statement(
        "INSERT INTO slack_events (event_id, received_at) VALUES ($1, $2)
         ON CONFLICT (event_id) DO NOTHING
         RETURNING event_id",
    )
    .bind(event_id)
    .bind(now);
    let first: Option<(String,)> = db.optional(insert).await?;
    Ok(first.is_some())
}
