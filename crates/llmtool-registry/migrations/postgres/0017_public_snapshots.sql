-- Public snapshots: a conversation's turns frozen when its owner published them, served
-- without sign-in to whoever has the address (while the workspace's `public_snapshots`
-- setting is on). The address's token is kept as its SHA-256; `id` names a snapshot to its
-- owner (to list and revoke it). The body is the transcript as published: the values
-- data-loss prevention hid stay placeholders, and it names no member.
CREATE TABLE snapshots (
    id TEXT PRIMARY KEY,
    token_hash TEXT NOT NULL UNIQUE,
    conversation TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    -- Who published it: `member:ID`, as conversations name their owners.
    created_by TEXT NOT NULL,
    created_at TEXT NOT NULL,
    turns BIGINT NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX snapshots_by_conversation ON snapshots (conversation, created_at);
