-- The runs of the library's tools made through the server (`POST /tools/{slug}/run` and MCP
-- tool calls), with their cost: what `GET /usage` totals. `record` is the whole run as the run
-- log keeps it; the other columns are what totals and filters need.
CREATE TABLE runs (
    id BIGSERIAL PRIMARY KEY,
    started_at TEXT NOT NULL,
    origin TEXT NOT NULL,
    slug TEXT NOT NULL,
    version BIGINT NOT NULL,
    run_by TEXT,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    input_tokens BIGINT,
    output_tokens BIGINT,
    cost_usd DOUBLE PRECISION,
    outcome TEXT NOT NULL,
    record JSONB NOT NULL
);
CREATE INDEX runs_started_at ON runs (started_at);
