-- Batches submitted to a provider's own batch engine (`--via provider-batch`), and the rows
-- each carries until its answers are collected into `rows`.
CREATE TABLE provider_batches (
    -- Ours, known before the provider answers: the run and the batch's place in it.
    label TEXT PRIMARY KEY,
    provider TEXT NOT NULL,
    -- The provider's id; NULL while it is being submitted (a crash then leaves it unknown
    -- whether the provider took it).
    batch_id TEXT,
    submitted_at TEXT NOT NULL,
    -- When its answers went into `rows` (and its `submitted_rows` were deleted).
    collected_at TEXT
);
CREATE TABLE submitted_rows (
    label TEXT NOT NULL REFERENCES provider_batches (label),
    -- The row's id in the provider's batch (made from its key).
    custom_id TEXT NOT NULL,
    key TEXT NOT NULL,
    row_index INTEGER NOT NULL,
    -- The row's output record so far (JSON), completed by its answer.
    record TEXT NOT NULL,
    -- The worst case of its cost, held against the budget until it is answered.
    worst_cost REAL,
    PRIMARY KEY (label, custom_id)
);
CREATE INDEX submitted_by_key ON submitted_rows (key);
