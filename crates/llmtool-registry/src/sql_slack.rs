//! Slack for [`SqlStore`]: the app (one row), the states of "Add to Slack" under way, and the
//! connected conversations' posting, which the server's poster advances turn by turn.

use crate::audit;
use crate::db::{Arg, statement};
use crate::shared::epoch_seconds;
use crate::slack::{
    OAUTH_STATE_SECONDS, OAUTH_STATES_PER_ADMIN, POSTING_LEASE_SECONDS, SlackApp, SlackDue,
    SlackSync,
};
use crate::slack_threads::thread_of;
use crate::sql_store::SqlStore;
use crate::store::{StoreError, now};

/// The app's columns, in [`AppRow`]'s order.
const APP_COLUMNS: &str = "client_id, client_secret, signing_secret, bot_token, team_id, team_name, bot_user_id, enabled, disabled_reason, installed_by, installed_at, updated_at";

type AppRow = (
    String,
    String,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    bool,
    Option<String>,
    Option<String>,
    Option<String>,
    String,
);

/// A connected conversation's columns, in [`SyncRow`]'s order.
const SYNC_COLUMNS: &str = "s.conversation, s.channel, s.thread_ts, s.posted, s.part, s.connected_by, s.connected_at, s.failures, s.last_error";

type SyncRow = (String, String, Option<String>, i64, i64, String, String, i64, Option<String>);

fn app_of(row: AppRow) -> SlackApp {
    let (client_id, client_secret, signing_secret, bot_token, team_id, team_name, bot_user_id) =
        (row.0, row.1, row.2, row.3, row.4, row.5, row.6);
    SlackApp {
        client_id,
        sealed_client_secret: client_secret,
        sealed_signing_secret: signing_secret,
        sealed_bot_token: bot_token,
        team_id,
        team_name,
        bot_user_id,
        enabled: row.7,
        disabled_reason: row.8,
        installed_by: row.9,
        installed_at: row.10,
        updated_at: row.11,
    }
}

/// The app as the audit log shows it: what [`SlackApp`] serializes (never a secret).
fn shown(app: &SlackApp) -> serde_json::Value {
    serde_json::to_value(app).unwrap_or_default()
}

fn count(value: i64) -> u32 {
    u32::try_from(value.max(0)).unwrap_or(u32::MAX)
}

fn sync_of(row: SyncRow) -> SlackSync {
    SlackSync {
        conversation: row.0,
        channel: row.1,
        thread_ts: row.2,
        posted: count(row.3),
        part: count(row.4),
        connected_by: row.5,
        connected_at: row.6,
        failures: count(row.7),
        last_error: row.8,
    }
}

impl SqlStore {
    pub(crate) async fn slack_app_row(&self) -> Result<Option<SlackApp>, StoreError> {
        let select = statement(format!("SELECT {APP_COLUMNS} FROM slack_app WHERE id = 1"));
        let found: Option<AppRow> = self.db.optional(select).await?;
        Ok(found.map(app_of))
    }

    pub(crate) async fn put_slack_app_row(&self, app: &SlackApp) -> Result<(), StoreError> {
        let mut tx = self.db.begin_write().await?;
        let select = statement(format!("SELECT {APP_COLUMNS} FROM slack_app WHERE id = 1"));
        let before: Option<AppRow> = tx.optional(select).await?;
        let before = before.map(app_of);
        let upsert = statement(format!(
            "INSERT INTO slack_app (id, {APP_COLUMNS})
             VALUES (1, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
             ON CONFLICT (id) DO UPDATE SET client_id = $1, client_secret = $2,
                 signing_secret = $3, bot_token = $4, team_id = $5, team_name = $6,
                 bot_user_id = $7, enabled = $8, disabled_reason = $9, installed_by = $10,
                 installed_at = $11, updated_at = $12"
        ))
        .bind(app.client_id.as_str())
        .bind(app.sealed_client_secret.as_str())
        .bind(app.sealed_signing_secret.as_str())
        .bind(app.sealed_bot_token.clone())
        .bind(app.team_id.clone())
        .bind(app.team_name.clone())
        .bind(app.bot_user_id.clone())
        .bind(Arg::Bool(Some(app.enabled)))
        .bind(app.disabled_reason.clone())
        .bind(app.installed_by.clone())
        .bind(app.installed_at.clone())
        .bind(now());
        tx.execute(upsert).await?;
        // What changed, never a secret: whether each sealed value changed.
        let secrets_changed = before.as_ref().is_none_or(|before| {
            before.sealed_client_secret != app.sealed_client_secret
                || before.sealed_signing_secret != app.sealed_signing_secret
                || before.sealed_bot_token != app.sealed_bot_token
        });
        let mut after = shown(app);
        if let Some(after) = after.as_object_mut() {
            after.insert("secrets_changed".into(), secrets_changed.into());
        }
        let change = audit::Change::new("slack.set", "slack").after(after);
        self.record(&mut tx, audit::Change { before: before.as_ref().map(shown), ..change })
            .await?;
        tx.commit().await?;
        Ok(())
    }

    pub(crate) async fn reseal_slack_app_row(
        &self,
        before: &SlackApp,
        after: &SlackApp,
    ) -> Result<(), StoreError> {
        let mut tx = self.db.begin_write().await?;
        // `IS NOT DISTINCT FROM`: the bot token may be absent on both sides.
        let reseal = statement(
            "UPDATE slack_app SET client_secret = $1, signing_secret = $2, bot_token = $3
             WHERE id = 1 AND client_secret = $4 AND signing_secret = $5
               AND bot_token IS NOT DISTINCT FROM $6",
        )
        .bind(after.sealed_client_secret.as_str())
        .bind(after.sealed_signing_secret.as_str())
        .bind(after.sealed_bot_token.clone())
        .bind(before.sealed_client_secret.as_str())
        .bind(before.sealed_signing_secret.as_str())
        .bind(before.sealed_bot_token.clone());
        if tx.execute(reseal).await? == 0 {
            return Err(StoreError::KeyChanged("slack".into()));
        }
        let change = audit::Change::new("slack.rotate", "slack")
            .after(serde_json::json!({ "secrets_changed": true }));
        self.record(&mut tx, change).await?;
        tx.commit().await?;
        Ok(())
    }
    pub(crate) async fn remove_slack_app_row(&self) -> Result<bool, StoreError> {
        let mut tx = self.db.begin_write().await?;
        let select = statement(format!("SELECT {APP_COLUMNS} FROM slack_app WHERE id = 1"));
        let before: Option<AppRow> = tx.optional(select).await?;
        let Some(before) = before.map(app_of) else {
            return Ok(false);
        };
        tx.execute(statement("DELETE FROM slack_app WHERE id = 1")).await?;
        let change = audit::Change::new("slack.remove", "slack").before(shown(&before));
        self.record(&mut tx, change).await?;
        tx.commit().await?;
        Ok(true)
    }

    pub(crate) async fn disable_slack_app_row(
        &self,
        reason: &str,
        bot_token: &str,
    ) -> Result<bool, StoreError> {
        let mut tx = self.db.begin_write().await?;
        let disable = statement(
            "UPDATE slack_app SET enabled = $1, disabled_reason = $2, updated_at = $3
             WHERE id = 1 AND enabled = $4 AND bot_token = $5",
        )
        .bind(Arg::Bool(Some(false)))
        .bind(reason)
        .bind(now())
        .bind(Arg::Bool(Some(true)))
        .bind(bot_token);
        if tx.execute(disable).await? == 0 {
            return Ok(false);
        }
        let after = serde_json::json!({ "enabled": false, "disabled_reason": reason });
        self.record(&mut tx, audit::Change::new("slack.disable", "slack").after(after)).await?;
        tx.commit().await?;
        Ok(true)
    }

    pub(crate) async fn add_slack_state_row(
        &self,
        state_hash: &str,
        member: &str,
    ) -> Result<(), StoreError> {
        let now = epoch_seconds();
        let stale = statement("DELETE FROM slack_oauth_states WHERE created_at < $1")
            .bind(now - OAUTH_STATE_SECONDS);
        self.db.execute(stale).await?;
        let insert = statement(
            "INSERT INTO slack_oauth_states (state_hash, member, created_at) VALUES ($1, $2, $3)",
        )
        .bind(state_hash)
        .bind(member)
        .bind(now);
        let mut tx = self.db.begin_write().await?;
        tx.execute(insert).await?;
        let oldest = statement(
            "DELETE FROM slack_oauth_states WHERE member = $1 AND state_hash NOT IN (
                 SELECT state_hash FROM slack_oauth_states WHERE member = $1
                 ORDER BY created_at DESC LIMIT $2)",
        )
        .bind(member)
        .bind(OAUTH_STATES_PER_ADMIN);
        tx.execute(oldest).await?;
        tx.commit().await?;
        Ok(())
    }

    pub(crate) async fn take_slack_state_row(
        &self,
        state_hash: &str,
    ) -> Result<Option<String>, StoreError> {
        let take = statement(
            "DELETE FROM slack_oauth_states WHERE state_hash = $1 AND created_at >= $2
             RETURNING member",
        )
        .bind(state_hash)
        .bind(epoch_seconds() - OAUTH_STATE_SECONDS);
        let taken: Option<(String,)> = self.db.optional(take).await?;
        Ok(taken.map(|(member,)| member))
    }

    pub(crate) async fn connect_slack_row(&self, sync: &SlackSync) -> Result<(), StoreError> {
        let mut tx = self.db.begin_write().await?;
        let upsert = statement(
            "INSERT INTO slack_syncs (conversation, channel, thread_ts, posted, part,
                 connected_by, connected_at, failures, next_attempt, last_error)
             VALUES ($1, $2, $3, $4, $5, $6, $7, 0, 0, NULL)
             ON CONFLICT (conversation) DO UPDATE SET channel = $2, thread_ts = $3,
                 posted = $4, part = $5, connected_by = $6, connected_at = $7, failures = 0,
                 next_attempt = 0, last_error = NULL, claim = NULL, claimed_until = 0",
        )
        .bind(sync.conversation.as_str())
        .bind(sync.channel.as_str())
        .bind(sync.thread_ts.clone())
        .bind(i64::from(sync.posted))
        .bind(i64::from(sync.part))
        .bind(sync.connected_by.as_str())
        .bind(sync.connected_at.as_str());
        tx.execute(upsert).await?;
        // Connected again: a mention in the old thread is no turn of it any more.
        let threads = statement("DELETE FROM slack_threads WHERE conversation = $1");
        tx.execute(threads.bind(sync.conversation.as_str())).await?;
        if let Some(thread_ts) = &sync.thread_ts {
            tx.execute(thread_of(&sync.channel, thread_ts, &sync.conversation)).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    pub(crate) async fn disconnect_slack_row(
        &self,
        conversation: &str,
    ) -> Result<bool, StoreError> {
        let mut tx = self.db.begin_write().await?;
        let removed = tx
            .execute(
                statement("DELETE FROM slack_syncs WHERE conversation = $1").bind(conversation),
            )
            .await?;
        // A mention in its thread is no turn of it any more.
        let threads = statement("DELETE FROM slack_threads WHERE conversation = $1");
        tx.execute(threads.bind(conversation)).await?;
        tx.commit().await?;
        Ok(removed > 0)
    }

    pub(crate) async fn slack_sync_row(
        &self,
        conversation: &str,
    ) -> Result<Option<SlackSync>, StoreError> {
        let select = statement(format!(
            "SELECT {SYNC_COLUMNS} FROM slack_syncs s WHERE s.conversation = $1"
        ))
        .bind(conversation);
        let found: Option<SyncRow> = self.db.optional(select).await?;
        Ok(found.map(sync_of))
    }

    pub(crate) async fn slack_due_rows(&self, limit: u32) -> Result<Vec<SlackDue>, StoreError> {
        type DueRow =
            (String, String, Option<String>, i64, i64, String, String, i64, Option<String>, i64);
        let now = epoch_seconds();
        // Claimed in one statement: of two servers asking at once, each row goes to one (the
        // other's update finds it claimed when it gets the row).
        let claim = ulid::Ulid::new().to_string();
        let claiming = statement(
            "UPDATE slack_syncs SET claimed_until = $3, claim = $4
              WHERE claimed_until <= $1 AND conversation IN (
                  SELECT s.conversation FROM slack_syncs s
                    JOIN conversations c ON c.id = s.conversation
                   WHERE s.next_attempt <= $1 AND s.claimed_until <= $1
                     AND (s.posted < c.turns OR s.thread_ts IS NULL)
                   ORDER BY s.next_attempt, s.conversation
                   LIMIT $2)
              RETURNING conversation",
        )
        .bind(now)
        .bind(i64::from(limit))
        .bind(now + POSTING_LEASE_SECONDS)
        .bind(claim.as_str());
        let claimed: Vec<(String,)> = self.db.all(claiming).await?;
        let mut due = Vec::with_capacity(claimed.len());
        for (conversation,) in claimed {
            let select = statement(format!(
                "SELECT {SYNC_COLUMNS}, c.turns FROM slack_syncs s
                   JOIN conversations c ON c.id = s.conversation
                  WHERE s.conversation = $1"
            ))
            .bind(conversation);
            if let Some(r) = self.db.optional::<DueRow>(select).await? {
                due.push(SlackDue {
                    turns: count(r.9),
                    sync: sync_of((r.0, r.1, r.2, r.3, r.4, r.5, r.6, r.7, r.8)),
                    claim: claim.clone(),
                });
            }
        }
        due.sort_by(|a, b| a.sync.conversation.cmp(&b.sync.conversation));
        Ok(due)
    }
    pub(crate) async fn slack_release_row(
        &self,
        conversation: &str,
        claim: &str,
    ) -> Result<(), StoreError> {
        let release = statement(
            "UPDATE slack_syncs SET claimed_until = 0, claim = NULL
             WHERE conversation = $1 AND claim = $2",
        );
        self.db.execute(release.bind(conversation).bind(claim)).await?;
        Ok(())
    }
    pub(crate) async fn slack_progress_row(
        &self,
        conversation: &str,
        claim: &str,
        thread_ts: &str,
        posted: u32,
        part: u32,
    ) -> Result<bool, StoreError> {
        let mut tx = self.db.begin_write().await?;
        let update = statement(
            "UPDATE slack_syncs SET thread_ts = $2, posted = $3, part = $4, failures = 0,
                 next_attempt = 0, last_error = NULL, claimed_until = $5
             WHERE conversation = $1 AND claim = $6 RETURNING channel",
        )
        .bind(conversation)
        .bind(thread_ts)
        .bind(i64::from(posted))
        .bind(i64::from(part))
        .bind(epoch_seconds() + POSTING_LEASE_SECONDS)
        .bind(claim);
        let channel: Option<(String,)> = tx.optional(update).await?;
        let Some((channel,)) = channel else {
            return Ok(false);
        };
        tx.execute(thread_of(&channel, thread_ts, conversation)).await?;
        tx.commit().await?;
        Ok(true)
    }
    pub(crate) async fn slack_failed_row(
        &self,
        conversation: &str,
        claim: &str,
        retry_in: f64,
        error: &str,
    ) -> Result<(), StoreError> {
        let update = statement(
            "UPDATE slack_syncs SET failures = failures + 1, next_attempt = $2, last_error = $3,
                 claimed_until = 0, claim = NULL
             WHERE conversation = $1 AND claim = $4",
        )
        .bind(conversation)
        .bind(epoch_seconds() + retry_in)
        .bind(error)
        .bind(claim);
        self.db.execute(update).await?;
        Ok(())
    }
}
