//! [`Store`]: what the library's storage does, whatever the database.

use async_trait::async_trait;

use llmtool_log::{Grouping, Record, Total};

use crate::Visibility;
use crate::changes::Changes;
use crate::model::{
    Holder, Page, Published, Query, Role, RunsPage, Selector, SessionInfo, TagCount, ToolVersion,
};
use crate::people::People;
use crate::publication::{Publication, Rejection};
use crate::tokens::{DeviceGrant, NewToken, Redeemed, TokenInfo, TokensOf};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("no tool `{0}`")]
    NoSuchTool(String),
    #[error("no version of `{slug}` is {selector}")]
    NoSuchVersion { slug: String, selector: String },
    #[error(
        "`{0}` is not a slug: lowercase letters, digits and single `-`, a letter first, at most 64 characters"
    )]
    BadSlug(String),
    #[error(
        "`{0}` is not a tag or label: lowercase letters, digits, `-`, `_` and `.`, at most 64 characters"
    )]
    BadName(String),
    #[error("a token named `{0}` exists")]
    TokenExists(String),
    #[error(
        "a token `{other}` exists, whose name differs from `{name}` only in case: each token of no member is a member of its own, named in lower case, so give this one another name"
    )]
    TokenNameClash { name: String, other: String },
    #[error("no token `{0}`")]
    NoSuchToken(String),
    #[error("`{0}` is not an e-mail address")]
    BadEmail(String),
    #[error(
        "`{0}` mixes scripts within a part (Latin and Cyrillic letters, say), so it can pass for another address: write each part in one script"
    )]
    MixedScriptEmail(String),
    #[error("`{0}` is not a member's name: some text, at most 200 characters, on one line")]
    BadMemberName(String),
    #[error("`{0}` is not a conversation's title: some text, at most 200 characters, on one line")]
    BadTitle(String),
    #[error("no member `{0}`")]
    NoSuchMember(String),
    #[error("a member `{0}` exists")]
    MemberExists(String),
    #[error("`{0}` is the library's last owner: make another member an owner first")]
    LastOwner(String),
    #[error("the token would be `{role}`, more than its member `{member}` is")]
    TokenAboveMember { member: String, role: &'static str },
    #[error("no team `{0}`")]
    NoSuchTeam(String),
    #[error("a team `{0}` exists")]
    TeamExists(String),
    #[error(
        "{tools} tool(s) carry the tag `{team}` already, put on before the team existed: the team's members would see them at once. Take the tag off them first, or make the team adopting them (`--adopt-tagged`, or `\"adopt_tagged\": true`)"
    )]
    TaggedAhead { team: String, tools: u64 },
    #[error("`{0}` cannot be a team: the tags `all` and `built-in` are the library's own")]
    ReservedTeam(String),
    #[error("this sign-in link {0}: ask an admin for a new invite")]
    BadInvite(InviteProblem),
    #[error(
        "`{0}` cannot name an integration: lowercase letters, digits and `-`, a letter first, at most 64 characters"
    )]
    BadIntegration(String),
    #[error("no integration `{0}`")]
    NoSuchIntegration(String),
    #[error("an integration `{0}` exists: change it, or remove it first")]
    IntegrationExists(String),
    #[error("the key of `{0}` changed meanwhile: nothing was sealed again; try again")]
    KeyChanged(String),
    #[error(
        "the integration `{integration}` names the team `{team}`: take the team out of it first (else it would be open to every team)"
    )]
    TeamInUse { team: String, integration: String },
    #[error(
        "`{0}`: a price is `provider/model` (or `*`, for a markup alone) with amounts of at least 0 and a markup between -100 and 1000 percent"
    )]
    BadPrice(String),
    #[error("no price of `{0}` is set")]
    NoSuchPrice(String),
    #[error("the budget of `{0}`: a limit of at least 0, a warning share between 0 and 1")]
    BadBudget(String),
    #[error("no budget of `{0}`")]
    NoSuchBudget(String),
    #[error("`{0}` is not a day: write it YYYY-MM-DD")]
    BadDay(String),
    #[error("no conversation `{0}`")]
    NoSuchConversation(String),
    #[error("a token lives from 1 to 366 days, not {0}")]
    BadTokenDays(u32),
    #[error("`{0}` holds 100 live tokens already, the most a member may: revoke one first")]
    TokensFull(String),
    #[error("too many sign-ins are waiting to be answered: try again in a few minutes")]
    GrantsFull,
    #[error("the sign-in code drawn is in use: ask for another")]
    GrantCodeTaken,
    #[error(
        "no sign-in `{0}` is waiting: it was answered, or it expired (ask for a new one with `llmtool login`)"
    )]
    NoSuchGrant(String),
    #[error(
        "the {} budget of `{}` ({} a {}) would be passed: {} spent since {}, {} held by runs in flight, and this run may cost up to {}",
        .0.status.budget.scope.as_str(), .0.status.budget.name, crate::spend::usd(.0.status.budget.limit_usd),
        .0.status.budget.period.as_str(), crate::spend::usd(.0.status.spent_usd), .0.status.period_start,
        crate::spend::usd(.0.status.reserved_usd), crate::spend::usd(.0.cost_usd)
    )]
    OverBudget(Box<crate::spend::OverBudget>),
    #[error("`{slug}` is at version {latest} now, not {base}: someone published meanwhile")]
    Conflict { slug: String, base: u32, latest: u32 },
    #[error("the conversation `{0}` has 100 collaborators already, the most it may have")]
    CollaboratorsFull(String),
    #[error(
        "the conversation `{0}` has 20 public snapshots already, the most it may have: revoke one first"
    )]
    SnapshotsFull(String),
    #[error("the snapshot would be {0} bytes, more than the 8 MiB one may have")]
    SnapshotTooLarge(usize),
    #[error("the cursor is not one this library gave")]
    BadCursor,
    #[error("`{slug}` has {max} {what} already, the most a tool may have: remove one first")]
    TooMany { slug: String, what: &'static str, max: u32 },
    #[error("{0}")]
    Backup(String),
    #[error(transparent)]
    Rejected(#[from] Rejection),
    #[error("the database: {0}")]
    Database(#[from] sqlx::Error),
    #[error("the database's migrations: {0}")]
    Migration(#[from] sqlx::migrate::MigrateError),
}

/// The library's storage. Versions are immutable and numbered from 1 without gaps; a deleted
/// tool is hidden, not erased.
#[async_trait]
pub trait Store:
    People
    + crate::Audit
    + crate::Control
    + crate::Spending
    + crate::Conversations
    + crate::RunPictures
    + Send
    + Sync
{
    /// This store, recording every change made through it as `actor`'s (in the audit log, in
    /// the change's own transaction). A store opened afresh acts as [`crate::Actor::system`].
    fn acting_as(&self, actor: crate::Actor) -> std::sync::Arc<dyn Store>;

    /// Publishes `publication` as the next version of `slug` (creating the tool, or bringing a
    /// deleted one back), unless it is the content of the latest version already.
    async fn publish(
        &self,
        slug: &str,
        publication: &Publication,
        note: Option<&str>,
        by: Option<&str>,
    ) -> Result<Published, StoreError>;

    /// The version of `slug` that `selector` picks.
    async fn version(&self, slug: &str, selector: &Selector) -> Result<ToolVersion, StoreError>;

    /// Every version of `slug`, newest first.
    async fn versions(&self, slug: &str) -> Result<Vec<ToolVersion>, StoreError>;

    async fn add_tag(&self, slug: &str, tag: &str) -> Result<(), StoreError>;
    async fn remove_tag(&self, slug: &str, tag: &str) -> Result<(), StoreError>;

    /// Points `label` of `slug` at `version` (moving it if it pointed elsewhere).
    async fn set_label(&self, slug: &str, label: &str, version: u32) -> Result<(), StoreError>;

    /// Hides `slug` from reads and search; publishing to it again brings it back.
    async fn delete(&self, slug: &str) -> Result<(), StoreError>;

    /// The tools `query` finds, a page at a time: with words, best first (each word the start
    /// of one of a tool's words, ranked by BM25); without, in slug order.
    async fn search(&self, query: &Query) -> Result<Page, StoreError>;

    /// Builds what word searches need (the index of every tool), so that the first search
    /// does not wait for it; a store that needs nothing does nothing.
    async fn warm_search(&self) -> Result<(), StoreError> {
        Ok(())
    }

    /// Makes `token`: for its member, whose role it may not pass, or with no member for a
    /// member made for it (`NAME@tokens.invalid`, with the token's role); at most
    /// [`MAX_TOKENS_PER_MEMBER`](crate::MAX_TOKENS_PER_MEMBER) live ones a member.
    async fn issue_token(&self, token: &NewToken<'_>) -> Result<TokenInfo, StoreError>;
    /// [`Store::issue_token`] for a token that lives until revoked.
    async fn create_token(
        &self,
        name: &str,
        role: Role,
        token_hash: &str,
        member: Option<&str>,
    ) -> Result<(), StoreError> {
        let token = NewToken { name, role, token_hash, member, days: None };
        self.issue_token(&token).await.map(drop)
    }
    /// The tokens of `of`, by name, revoked and expired ones too.
    async fn tokens(&self, of: TokensOf<'_>) -> Result<Vec<TokenInfo>, StoreError>;
    /// Revokes the live token `name`, if it is one of `of`'s (else: no such token).
    async fn revoke_token(&self, name: &str, of: TokensOf<'_>) -> Result<(), StoreError>;

    /// Opens a device grant for a terminal (`client`), known to it by the SHA-256 of its
    /// device code and to the member by `user_code`; expired grants are dropped first, and at
    /// most [`MAX_WAITING_GRANTS`](crate::MAX_WAITING_GRANTS) wait at once.
    async fn open_device_grant(
        &self,
        device_hash: &str,
        user_code: &str,
        client: &str,
    ) -> Result<DeviceGrant, StoreError>;
    /// The grant `user_code` names, while it lives.
    async fn device_grant(&self, user_code: &str) -> Result<Option<DeviceGrant>, StoreError>;
    /// The member `member` allows or denies the waiting grant `user_code`.
    async fn answer_device_grant(
        &self,
        user_code: &str,
        member: &str,
        allow: bool,
    ) -> Result<(), StoreError>;
    /// What the grant whose device code hashes to `device_hash` has come to; once allowed, a
    /// token named `name` (stored as `token_hash`) of the member who allowed it, with their
    /// role, is made and the grant forgotten.
    async fn redeem_device_grant(
        &self,
        device_hash: &str,
        name: &str,
        token_hash: &str,
    ) -> Result<Redeemed, StoreError>;
    /// Who the live token whose hash is `token_hash` stands for: its name, its role (or its
    /// member's, when that is lower) and its member's teams.
    async fn token(&self, token_hash: &str) -> Result<Option<Holder>, StoreError>;

    /// Opens a session for a token or a member for `lifetime`, known by the SHA-256 of its
    /// cookie (`id_hash`); expired sessions are dropped, and a member keeps at most
    /// [`MAX_SESSIONS`] (their oldest go first).
    async fn create_session(
        &self,
        id_hash: &str,
        opened_for: crate::SessionFor<'_>,
        csrf: &str,
        lifetime: std::time::Duration,
    ) -> Result<(), StoreError>;
    /// The live session whose cookie hashes to `id_hash`, if its member is still one and the
    /// token it was opened with (if any) is live too.
    async fn session(&self, id_hash: &str) -> Result<Option<SessionInfo>, StoreError>;
    async fn delete_session(&self, id_hash: &str) -> Result<(), StoreError>;
    /// How many studio sessions are open (not expired, not signed out).
    async fn open_sessions(&self) -> Result<u64, StoreError>;

    /// The newest `limit` runs of `slug` made through the server (older than the run
    /// `before`, for the next page), newest first: everyone's, or (`Some`) only those of one
    /// caller.
    async fn runs(
        &self,
        slug: &str,
        limit: u32,
        before: Option<i64>,
        only: Option<RunsOf<'_>>,
    ) -> Result<RunsPage, StoreError>;

    /// Every tag on a tool not deleted that `visible` lets be seen, with how many such tools
    /// carry it, most used first.
    async fn tags(&self, visible: &Visibility) -> Result<Vec<TagCount>, StoreError>;

    /// Writes a consistent copy of the whole library to the new file `to`, while it serves.
    async fn backup(&self, to: &std::path::Path) -> Result<(), StoreError>;

    /// The changes from now on: this process's writes and, on PostgreSQL, every server's.
    async fn changes(&self) -> Result<Changes, StoreError>;

    /// Asks the database which migrations it has applied (an error: it does not answer).
    async fn health(&self) -> Result<crate::Health, StoreError>;

    /// How the database's connections are used now (asks nothing of the database).
    fn pool_use(&self) -> crate::PoolUse;

    /// Whether several servers may share this library (PostgreSQL): what they must agree on
    /// (rate limits) is then kept in the database rather than in each server's memory.
    fn shared_by_servers(&self) -> bool;

    /// Spends from the rate-limit bucket `key`, kept in the database for every server.
    async fn spend_rate(
        &self,
        key: &str,
        bucket: crate::Bucket,
        spend: crate::Spend,
    ) -> Result<crate::Taken, StoreError>;

    /// Deletes the rate-limit buckets idle for `idle`; how many.
    async fn forget_idle_rates(&self, idle: std::time::Duration) -> Result<u64, StoreError>;

    /// Records Slack's event `event_id` as handled: `false` when it was already (a retry, or
    /// another server of the library took it first).
    async fn first_slack_event(&self, event_id: &str) -> Result<bool, StoreError>;

    /// The conversation of the Slack thread `thread_ts` of `channel`, if it is one.
    async fn slack_thread(
        &self,
        channel: &str,
        thread_ts: &str,
    ) -> Result<Option<String>, StoreError>;

    /// The library's Slack app, if an admin added one.
    async fn slack_app(&self) -> Result<Option<crate::SlackApp>, StoreError>;

    /// Keeps `app` as the library's Slack app.
    async fn put_slack_app(&self, app: &crate::SlackApp) -> Result<(), StoreError>;

    /// Replaces the Slack app's sealed secrets of `before` with those of `after` (sealed again
    /// with the current integration key); [`StoreError::KeyChanged`] when an admin changed
    /// them meanwhile.
    async fn reseal_slack_app(
        &self,
        before: &crate::SlackApp,
        after: &crate::SlackApp,
    ) -> Result<(), StoreError>;

    /// Removes the library's Slack app: whether there was one.
    async fn remove_slack_app(&self) -> Result<bool, StoreError>;

    /// Turns the Slack app off for `reason`, if it is still the installation of the sealed
    /// bot token `bot_token`: whether it was on (so that one of several servers meeting a
    /// revoked token reports it once, and a newer installation is left on).
    async fn disable_slack_app(&self, reason: &str, bot_token: &str) -> Result<bool, StoreError>;

    /// Keeps an "Add to Slack" state (its SHA-256) for the admin `member`, who keeps at most
    /// [`crate::slack::OAUTH_STATES_PER_ADMIN`] (the oldest are forgotten).
    async fn add_slack_state(&self, state_hash: &str, member: &str) -> Result<(), StoreError>;

    /// Takes the "Add to Slack" state `state_hash`, once: the admin it was for, when it is
    /// known and recent ([`crate::slack::OAUTH_STATE_SECONDS`]).
    async fn take_slack_state(&self, state_hash: &str) -> Result<Option<String>, StoreError>;

    /// Connects a conversation to a channel (again, from the start, when it was).
    async fn connect_slack(&self, sync: &crate::SlackSync) -> Result<(), StoreError>;

    /// Disconnects `conversation` from its channel: whether it was connected.
    async fn disconnect_slack(&self, conversation: &str) -> Result<bool, StoreError>;

    /// How `conversation` is connected to Slack, if it is.
    async fn slack_sync(&self, conversation: &str) -> Result<Option<crate::SlackSync>, StoreError>;

    /// Up to `limit` connected conversations with something to post, no wait pending and no
    /// other server posting them, each claimed for this caller for
    /// [`crate::slack::POSTING_LEASE_SECONDS`] (until [`Store::slack_release`] or
    /// [`Store::slack_failed`]).
    async fn slack_due(&self, limit: u32) -> Result<Vec<crate::SlackDue>, StoreError>;

    /// Lets go of `conversation` (claimed as `claim`), posted as far as it could be.
    async fn slack_release(&self, conversation: &str, claim: &str) -> Result<(), StoreError>;

    /// Records that `conversation`'s thread is `thread_ts` and that `posted` turns and `part`
    /// messages of the next are posted, and renews the claim: `false` (nothing recorded) when
    /// `claim` is no longer the conversation's (reconnected, disconnected, taken over), so
    /// that its poster stops.
    async fn slack_progress(
        &self,
        conversation: &str,
        claim: &str,
        thread_ts: &str,
        posted: u32,
        part: u32,
    ) -> Result<bool, StoreError>;

    /// Records that posting `conversation` failed with `error`, and lets go of it; the next
    /// attempt waits `retry_in` seconds. Nothing, when `claim` is no longer its.
    async fn slack_failed(
        &self,
        conversation: &str,
        claim: &str,
        retry_in: f64,
        error: &str,
    ) -> Result<(), StoreError>;

    /// Holds `conversation` for a follow-up, on every server, for at most `lease`: `false`
    /// while another follow-up holds it.
    async fn begin_follow_up(
        &self,
        conversation: &str,
        lease: std::time::Duration,
    ) -> Result<bool, StoreError>;

    /// Lets `conversation` go for its next follow-up.
    async fn end_follow_up(&self, conversation: &str) -> Result<(), StoreError>;

    /// Keeps `run`, a run of version `version` of `slug` through the server by the token
    /// named `by`, charged to `charge` (added to the spend's totals at once), releasing its
    /// budget `reservation`; its id.
    async fn log_run(
        &self,
        slug: &str,
        version: u32,
        by: Option<&str>,
        run: &Record,
        charge: &crate::Charge,
        reservation: Option<i64>,
    ) -> Result<i64, StoreError>;

    /// The totals of the runs since `since` (RFC 3339) of the tools `visible` lets be seen,
    /// by tool (slug), model or day, largest cost first (by day: in date order).
    async fn usage(
        &self,
        by: Grouping,
        since: Option<&str>,
        visible: &Visibility,
    ) -> Result<Vec<Total>, StoreError>;

    /// The tags of every tool not deleted: (slug, tag) pairs, by slug.
    async fn tags_of_tools(&self) -> Result<Vec<(String, String)>, StoreError>;

    /// The tags of the tool `slug`, deleted or not (a deleted tool published again comes back
    /// with them); `None` when no tool ever had the slug.
    async fn tags_of(&self, slug: &str) -> Result<Option<Vec<String>>, StoreError>;

    /// The slug, version number and canonical text of every tool not deleted, by slug: its
    /// latest version, or the version `label` points at (a tool without it is left out).
    async fn current(&self, label: Option<&str>) -> Result<Vec<(String, u32, String)>, StoreError>;
}

/// The most sessions a member keeps at once.
pub const MAX_SESSIONS: i64 = 16;

/// When a session opened now for `lifetime` ends, as the library writes times.
pub(crate) fn expiry(lifetime: std::time::Duration) -> String {
    let end = jiff::Timestamp::now()
        .checked_add(jiff::SignedDuration::try_from(lifetime).unwrap_or(jiff::SignedDuration::ZERO))
        .unwrap_or_else(|_| jiff::Timestamp::now());
    stamp(end)
}

/// The time `span` ago, written as the store writes times.
pub(crate) fn ago(span: std::time::Duration) -> String {
    let then = jiff::Timestamp::now()
        .checked_sub(jiff::SignedDuration::try_from(span).unwrap_or(jiff::SignedDuration::ZERO))
        .unwrap_or_else(|_| jiff::Timestamp::now());
    stamp(then)
}

/// A time as the store writes it: UTC, to the millisecond, so that text order is time order.
fn stamp(time: jiff::Timestamp) -> String {
    time.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// Refuses a publication edited from `base` when `latest` is another version.
pub(crate) fn check_base(
    slug: &str,
    publication: &Publication,
    latest: i64,
) -> Result<(), StoreError> {
    match publication.base {
        Some(base) if i64::from(base) != latest => Err(StoreError::Conflict {
            slug: slug.to_owned(),
            base,
            latest: u32::try_from(latest).unwrap_or(0),
        }),
        _ => Ok(()),
    }
}

/// The most tags one tool may carry (its own tags, not the library's).
pub const MAX_TAGS: u32 = 64;

/// The most labels one tool may have.
pub const MAX_LABELS: u32 = 64;

/// Whether `name` can be a tag or a label.
/// Why an invite's link does not sign in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InviteProblem {
    Unknown,
    Used,
    Expired,
}

impl std::fmt::Display for InviteProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            InviteProblem::Unknown => "is not one the library made (or its member was removed)",
            InviteProblem::Used => "was used already: each signs in once",
            InviteProblem::Expired => "has expired",
        })
    }
}

pub(crate) fn check_name(name: &str) -> Result<(), StoreError> {
    let good = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-_.".contains(&b));
    if good { Ok(()) } else { Err(StoreError::BadName(name.to_owned())) }
}

pub(crate) fn check_slug(slug: &str) -> Result<(), StoreError> {
    if crate::publication::is_slug(slug) {
        Ok(())
    } else {
        Err(StoreError::BadSlug(slug.to_owned()))
    }
}

/// Now, as the library writes times: RFC 3339 in UTC with milliseconds.
pub(crate) fn now() -> String {
    stamp(jiff::Timestamp::now())
}

/// The selector as words, for messages.
pub(crate) fn shown(selector: &Selector) -> String {
    match selector {
        Selector::Latest => "the latest".into(),
        Selector::Version(n) => format!("number {n}"),
        Selector::Label(label) => format!("labelled `{label}`"),
    }
}

/// One caller's runs ([`Store::runs`]): those made by the token (or studio session) named
/// `run_by`, and those charged to the member `member` (none when it is empty).
#[derive(Debug, Clone, Copy)]
pub struct RunsOf<'a> {
    pub run_by: &'a str,
    pub member: &'a str,
}
