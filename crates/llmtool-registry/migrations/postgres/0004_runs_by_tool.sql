-- A tool's page lists its newest runs: found by tool, newest first, without a scan.
CREATE INDEX runs_by_tool ON runs (slug, id);
