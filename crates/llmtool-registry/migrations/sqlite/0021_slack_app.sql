-- Slack from the Control Center (docs/slack.md). The app an admin added: its client id, and its
-- client secret, signing secret and bot token sealed with the server's integration keys (never
-- in the clear); the workspace "Add to Slack" installed it in; whether it is on, and why not
-- (a revoked token turns it off).
CREATE TABLE slack_app (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    client_id TEXT NOT NULL,
    client_secret TEXT NOT NULL,
    signing_secret TEXT NOT NULL,
    bot_token TEXT,
    team_id TEXT,
    team_name TEXT,
    bot_user_id TEXT,
    enabled INTEGER NOT NULL DEFAULT 0,
    disabled_reason TEXT,
    installed_by TEXT,
    installed_at TEXT,
    updated_at TEXT NOT NULL
);

-- The state of each "Add to Slack" under way (its SHA-256): for the admin who started it,
-- taken once, within ten minutes.
CREATE TABLE slack_oauth_states (
    state_hash TEXT PRIMARY KEY,
    member TEXT NOT NULL,
    -- Seconds since 1970 (UTC).
    created_at REAL NOT NULL
);

-- Conversations connected to a Slack channel: the thread their turns go to (once its first
-- message is posted), how many turns are posted whole and how many messages of the next one,
-- so that a turn is posted once, in order, and whatever Slack could not take waits for the
-- next attempt.
CREATE TABLE slack_syncs (
    conversation TEXT PRIMARY KEY,
    channel TEXT NOT NULL,
    thread_ts TEXT,
    posted INTEGER NOT NULL,
    part INTEGER NOT NULL DEFAULT 0,
    connected_by TEXT NOT NULL,
    connected_at TEXT NOT NULL,
    failures INTEGER NOT NULL DEFAULT 0,
    -- Seconds since 1970 (UTC): not before then.
    next_attempt REAL NOT NULL DEFAULT 0,
    last_error TEXT,
    -- The server posting it (a random claim) holds it until `claimed_until`, seconds since 1970
    -- (UTC): of several servers one posts each conversation, renewing the claim at each
    -- message; a poster whose claim is gone (reconnected, disconnected, taken over) stops.
    claim TEXT,
    claimed_until REAL NOT NULL DEFAULT 0
);
CREATE INDEX slack_syncs_due ON slack_syncs (next_attempt);
