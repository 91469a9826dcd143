-- A batch's journal, beside its output: every row done (by its key), with its record, and how
-- many bytes of the output file are committed. Bytes past that are a write a crash cut short,
-- and are dropped on the next run.
CREATE TABLE batch (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    out_bytes INTEGER NOT NULL
);
CREATE TABLE rows (
    key TEXT PRIMARY KEY,
    row_index INTEGER NOT NULL,
    row_id TEXT NOT NULL,
    outcome TEXT NOT NULL,
    cost_usd REAL,
    record TEXT NOT NULL
);
CREATE INDEX rows_by_index ON rows (row_index);
