-- A batch's journal, beside its output: every row done (by its key), with its record, and how
-- many bytes of the output file are committed. Bytes past that are a write a crash cut short,
-- and are dropped on the next run.
CREATE TABLE batch (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    out_bytes INTEGER NOT NULL,
    -- Counts the runs: each row done or met is stamped with the run that last saw it, so a run
    -- that reads the whole dataset can drop the rows no longer in it.
    pass INTEGER NOT NULL DEFAULT 0,
    -- What the rows were run with (the tool and model), to say when that changes.
    setup TEXT,
    -- The output holds records that the journal replaced or dropped: write it again.
    rewrite_pending INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE rows (
    key TEXT PRIMARY KEY,
    row_index INTEGER NOT NULL,
    row_id TEXT NOT NULL,
    outcome TEXT NOT NULL,
    cost_usd REAL,
    record TEXT NOT NULL,
    pass INTEGER NOT NULL
);
CREATE INDEX rows_in_order ON rows (row_index, key);
