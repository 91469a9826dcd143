-- The runs of the library's tools made through the server (`POST /tools/{slug}/run` and MCP
-- tool calls), with their cost: what `GET /usage` totals. `record` is the whole run as the run
-- log keeps it (JSON); the other columns are what totals and filters need.
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    started_at TEXT NOT NULL,
    origin TEXT NOT NULL,
    slug TEXT NOT NULL,
    version INTEGER NOT NULL,
    run_by TEXT,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    input_tokens INTEGER,
    output_tokens INTEGER,
    cost_usd REAL,
    outcome TEXT NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX runs_started_at ON runs (started_at);
