-- One row per run of a tool: what ran, on which model, what it used and cost, how it ended.
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    -- When the run started, RFC 3339 in UTC (sorts as text).
    started_at TEXT NOT NULL,
    -- What recorded it: run, mcp, batch, test, server.
    origin TEXT NOT NULL,
    tool_path TEXT,
    tool_name TEXT,
    -- SHA-256 of the tool file's text.
    tool_hash TEXT NOT NULL,
    -- The values as JSON; NULL when only their hash is kept (--no-log-values).
    variables TEXT,
    variables_hash TEXT NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    input_tokens INTEGER,
    cached_input_tokens INTEGER,
    cache_write_tokens INTEGER,
    output_tokens INTEGER,
    reasoning_tokens INTEGER,
    -- US dollars; NULL when the model is unpriced.
    cost_usd REAL,
    price_entry TEXT,
    latency_ms INTEGER,
    first_token_ms INTEGER,
    repairs INTEGER NOT NULL DEFAULT 0,
    -- ok, rejected (the answer missed the expected output), failed, cancelled.
    outcome TEXT NOT NULL,
    error TEXT,
    answer TEXT
);

CREATE INDEX runs_by_time ON runs (started_at);
CREATE INDEX runs_by_tool ON runs (tool_name, started_at);
CREATE INDEX runs_by_model ON runs (model, started_at);
