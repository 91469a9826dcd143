-- Conversations: a tool's run, then the follow-ups asked after its answer, each a run of its
-- own (its `prompt` is what was asked in that turn, as it was sent).
CREATE TABLE conversations (
    -- A ULID: sorts by when the conversation started.
    id TEXT PRIMARY KEY,
    started_at TEXT NOT NULL,
    origin TEXT NOT NULL,
    tool_path TEXT,
    tool_name TEXT,
    -- The tool as it ran (its JSON), so that a follow-up uses the version it started with.
    tool TEXT,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    -- The data-loss prevention policy it started under (off, warn, redact, block): follow-ups
    -- keep it unless told otherwise.
    dlp TEXT,
    -- The placeholders data-loss prevention gave the values it hid, and the values, as a JSON
    -- object ({"[EMAIL_1]": "ann@example.com"}): so that a value keeps its placeholder in
    -- every turn and the owner sees it. NULL when none were hid, or only hashes are kept.
    placeholders TEXT
);

ALTER TABLE runs ADD COLUMN conversation TEXT REFERENCES conversations (id);
-- The run's place in its conversation: 1 for the tool's own run, 2 for the first follow-up.
ALTER TABLE runs ADD COLUMN turn INTEGER;

CREATE INDEX runs_by_conversation ON runs (conversation, turn) WHERE conversation IS NOT NULL;
