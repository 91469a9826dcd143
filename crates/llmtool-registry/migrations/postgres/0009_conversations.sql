-- Conversations: a run of a tool's version, then the follow-ups its owner asked after the
-- answer, each a run of its own (`runs.conversation`, `runs.turn`).
CREATE TABLE conversations (
    -- A ULID (it sorts by when the conversation started).
    id TEXT PRIMARY KEY,
    started_at TEXT NOT NULL,
    -- Who started it: `member:E-MAIL` (signed in, or with a member's token) or `token:NAME`
    -- (a token of no member); only they may go on with it.
    owner TEXT NOT NULL,
    -- The version it started on: follow-ups use it, whatever the tool became.
    slug TEXT NOT NULL,
    version INTEGER NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    -- The data-loss prevention policy it started under.
    dlp TEXT,
    -- The placeholders data-loss prevention gave the values it hid, with the values (a JSON
    -- object), so that a value keeps its placeholder in every turn and its owner sees it.
    placeholders TEXT,
    -- SHA-256 of its share link's token, when shared; the link shows the runs it had then (up
    -- to this run's id).
    share_hash TEXT UNIQUE,
    shared_run BIGINT
);

CREATE INDEX conversations_by_owner ON conversations (owner, id);

ALTER TABLE runs ADD COLUMN conversation TEXT;
ALTER TABLE runs ADD COLUMN turn INTEGER;

CREATE INDEX runs_by_conversation ON runs (conversation, turn);
